"""Loader settings: read from the environment once, at the public entry point.

Lower layers take these values as explicit arguments and never read the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kernelkit.settings import (
    HF_HUB_OFFLINE,
    KERNELKIT_HUB,
    KERNELKIT_OFFLINE,
    KERNELKIT_REQUIRE_SIGNED,
    KERNELKIT_SIGSTORE_TRUSTED_ROOT,
    KERNELKIT_TRUST_POLICY,
    KERNELKIT_TRUSTED_PUBLISHERS,
    LOCAL_KERNELS,
    process_environ,
)
from kernelkit.util.paths import default_cache_dir, user_config_dir
from kernelkit.util.publishers import DEFAULT_TRUSTED_PUBLISHERS as DEFAULT_TRUSTED_PUBLISHERS

if TYPE_CHECKING:
    from kernelkit.hub.port import Hub
    from kernelkit.loader.progress import ProgressPlan
    from kernelkit.signing.policy import TrustPolicy


class Settings(NamedTuple):
    """Everything the loader takes from the environment (a NamedTuple: cheaper to define than
    a dataclass on the warm import path)."""

    cache_dir: Path
    offline: bool
    trusted_publishers: tuple[str, ...]
    local_kernels: str | None
    hub_spec: str | None
    env: Mapping[str, str]
    #: the trust policy file (``KERNELKIT_TRUST_POLICY``, else ``~/.config/kernelkit/trust.toml``
    #: when it exists); ``KERNELKIT_REQUIRE_SIGNED``; ``KERNELKIT_SIGSTORE_TRUSTED_ROOT``
    trust_policy_path: Path | None = None
    require_signed: bool = False
    sigstore_trusted_root: Path | None = None

    def trust_policy(self) -> TrustPolicy | None:
        """The trust policy (read once per file version in a process); ``None`` without one
        (nothing of ``kernelkit.signing`` is imported then)."""
        if self.trust_policy_path is None:
            return None
        from kernelkit.signing.policy import cached_policy

        return cached_policy(self.trust_policy_path)

    def open_hub(self) -> Hub:
        """Construct the configured hub (only when a hub call is really needed)."""
        from kernelkit.hub import open_hub  # type: ignore[attr-defined,unused-ignore]

        hub: Hub = open_hub(self.hub_spec, env=self.env)
        return self.watch_fetches(hub)

    def watch_fetches(self, hub: Hub) -> Hub:
        """``hub``, showing its fetches as download progress where it has them of its own (a
        git remote: the network bytes move in ``git fetch``, before any download starts)."""
        if hasattr(hub, "fetch_observer"):
            from kernelkit.loader.progress import FetchReporter

            hub.fetch_observer = FetchReporter(self.progress_plan)
        return hub

    def hub_identity(self, hub: Hub | None = None) -> str:
        """The identity of ``hub``, else of the configured hub, computed from the settings
        alone (no hub constructed, no network): the key of the cache folders it uses."""
        if hub is not None:
            return hub.hub_identity
        from kernelkit.hub.hubid import identity_of

        return identity_of(self.hub_spec, self.env)

    def refs_stamp(self, repo_id: str) -> str | None:
        """The configured hub's refs stamp of ``repo_id`` without constructing the hub: a
        directory hub has one (``kernelkit.hub.refstamp``, a few ``stat`` calls), remote hubs
        none."""
        from kernelkit.hub.hubid import classify

        kind, value = classify(self.hub_spec, self.env)
        if kind != "local":
            return None
        from kernelkit.hub.refstamp import local_refs_stamp

        return local_refs_stamp(Path(value), repo_id)

    def progress_plan(self) -> ProgressPlan | None:
        """How a download reports progress (``KERNELKIT_PROGRESS``,
        ``KERNELKIT_PROGRESS_MIN_BYTES``, a reporter set with
        ``kernelkit.loader.progress.set_progress_reporter``; else one log record). Worked out
        only when a download really starts: warm loads never import the watcher."""
        from kernelkit.loader.progress import current_progress_reporter, plan_progress

        return plan_progress(self.env, reporter=current_progress_reporter())


def read_settings(env: Mapping[str, str] | None = None, *,
                  cache_dir: Path | None = None) -> Settings:
    """Read ``KERNELKIT_CACHE``, ``KERNELKIT_OFFLINE``/``HF_HUB_OFFLINE``,
    ``KERNELKIT_TRUSTED_PUBLISHERS``, ``LOCAL_KERNELS``, ``KERNELKIT_HUB`` and the signature
    settings (``KERNELKIT_TRUST_POLICY``, ``KERNELKIT_REQUIRE_SIGNED``,
    ``KERNELKIT_SIGSTORE_TRUSTED_ROOT``)."""
    env = dict(process_environ() if env is None else env)
    extra = KERNELKIT_TRUSTED_PUBLISHERS.read(env)
    return Settings(
        # absolute: variant paths key the import registry
        cache_dir=Path(os.path.abspath(cache_dir if cache_dir is not None
                                       else default_cache_dir(env))),
        offline=KERNELKIT_OFFLINE.read(env) or HF_HUB_OFFLINE.read(env),
        trusted_publishers=DEFAULT_TRUSTED_PUBLISHERS + extra,
        local_kernels=LOCAL_KERNELS.read(env),
        hub_spec=KERNELKIT_HUB.read(env),
        env=env,
        trust_policy_path=_trust_policy_path(env),
        require_signed=KERNELKIT_REQUIRE_SIGNED.read(env),
        sigstore_trusted_root=KERNELKIT_SIGSTORE_TRUSTED_ROOT.read(env),
    )


def _trust_policy_path(env: Mapping[str, str]) -> Path | None:
    """``KERNELKIT_TRUST_POLICY`` (must exist: a policy named but missing is an error when it
    is read), else ``$XDG_CONFIG_HOME/kernelkit/trust.toml`` if there is one."""
    named = KERNELKIT_TRUST_POLICY.read(env)
    if named is not None:
        return named
    default = user_config_dir(env) / "trust.toml"
    return default if default.is_file() else None
