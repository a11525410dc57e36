"""Would a variant be built here, and why (not): for ``kernelkit info`` and ``variants``.

Nothing is built or downloaded: :func:`explain_build` runs the same checks as the fallback
(``target.plan_target``, then the sources digest the commit's variants record: one
``metadata.json`` read, cached) and says what ``build_missing`` would do.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelkit.errors import KernelkitError, NotBuildableError

if TYPE_CHECKING:
    from kernelkit.hub.port import Hub
    from kernelkit.variants.choose import Decision
    from kernelkit.variants.host import System


@dataclass(frozen=True)
class BuildExplanation:
    """``buildable``: whether a build here would start; ``variant``: the one it would make (as
    expected before the build) or ``None``; ``reason``: why a build is needed, or why it cannot
    be; ``sources``: the digest it would build from; ``enabled``: whether the fallback is on
    (``KERNELKIT_BUILD_MISSING``, ``--build-missing``); ``built``: a variant built here
    before, already in the cache."""

    buildable: bool
    variant: str | None
    reason: str
    sources: str | None
    enabled: bool
    built: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"buildable": self.buildable, "variant": self.variant, "reason": self.reason,
                "sources": self.sources, "enabled": self.enabled, "built": self.built}

    def line(self) -> str:
        """One line for the terminal."""
        if self.built is not None:
            return f"Built here: {self.built} (from sources {self.sources or '?'})"
        if not self.buildable:
            return f"Build from source: not possible here: {self.reason}"
        how = ("on (KERNELKIT_BUILD_MISSING/--build-missing)" if self.enabled else
               "off; turn it on with build_missing=True, KERNELKIT_BUILD_MISSING=1 or "
               "--build-missing")
        return (f"Build from source: {self.variant} would be built from sources "
                f"{self.sources} ({self.reason}); the fallback is {how}")


def explain_build(repo_id: str, commit: str, decisions: list[Decision], system: System, *,
                  enabled: bool, hub: Hub | None = None,
                  cache_dir: Path | None = None) -> BuildExplanation | None:
    """What ``build_missing`` would do for ``repo_id`` at ``commit`` here; ``None`` when a
    published variant fits (nothing would be built)."""
    if any(d.accepted for d in decisions):
        return None
    from kernelkit.loader.cache import RepoCache
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.settings import read_settings
    from kernelkit.loader.sources import published_sources
    from kernelkit.source_build.provider import built_variant
    from kernelkit.source_build.target import plan_target

    settings = read_settings(cache_dir=cache_dir)
    rc = RepoCache.of(settings.cache_dir, repo_id, settings.hub_identity(hub))
    names = [d.variant for d in decisions]
    built = built_variant(rc, commit, system)
    record = published_sources(LazyHub(hub, settings.open_hub), rc, commit, names,
                               offline=settings.offline)
    digest = record.digest if record is not None else None
    if built is not None:
        return BuildExplanation(True, built.name, "built here before", digest, enabled,
                                built=built.name)
    why = f"no published variant fits {system.describe()}"
    try:
        target = plan_target(system, names, what=f"{repo_id}@{commit[:12]}",
                             python=Path(sys.executable), environ=settings.env)
    except NotBuildableError as exc:
        return BuildExplanation(False, None, _refusal(exc), digest, enabled)
    if digest is None:
        return BuildExplanation(False, target.variant, "none of its published variants records "
                                "its sources (ask its publisher to upload with kernelkit)",
                                None, enabled)
    return BuildExplanation(True, target.describe(), why, digest, enabled)


def _refusal(exc: KernelkitError) -> str:
    hint = f" ({exc.hint})" if exc.hint else ""
    return f"{exc.message}{hint}"
