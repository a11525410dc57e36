"""Version/revision -> immutable commit id, and the variant names at a commit.

``version=N`` is the commit of branch ``v<N>``; ``revision`` is a branch, tag or (short) commit
id. A full commit id whose variant list is cached needs no hub call at all. Each ref resolved
online is recorded under ``refs/`` in the cache, so offline mode can resolve it later.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING

from kernelkit.errors import KernelkitError, OfflineError
from kernelkit.loader.cache import RepoCache, is_full_commit

if TYPE_CHECKING:
    from kernelkit.loader.install import LazyHub

log = logging.getLogger(__name__)

_VERSION_BRANCH_RE = re.compile(r"^v(\d+)$")
_HEX_RE = re.compile(r"^[0-9a-f]{4,64}$")


class RevisionArgumentError(KernelkitError, ValueError):
    """Neither or both of ``revision`` and ``version`` given (a ``ValueError``, as upstream)."""


class VersionNotFoundError(KernelkitError, ValueError):
    """``version=N`` has no ``v<N>`` branch (a ``ValueError``, as upstream)."""

    def __init__(self, repo_id: str, version: int, available: list[int]) -> None:
        self.repo_id = repo_id
        self.version = version
        self.available = available
        listed = ", ".join(str(v) for v in available) or "none"
        super().__init__(
            f"Version {version} not found, available versions: {listed}",
            hint=f"{repo_id} publishes versions as branches v<N>; pick one of those",
        )


def check_revision_args(revision: str | None, version: int | None) -> None:
    if revision is not None and version is not None:
        raise RevisionArgumentError("Only one of `revision` or `version` must be specified.")
    if revision is None and version is None:
        raise RevisionArgumentError(
            "A kernel version or revision must be specified.",
            hint="pass version=<major version> (e.g. version=1) or revision=<branch, tag or "
                 "commit>; loading without either was removed upstream in kernels 0.15",
        )


def resolve_commit(hub: LazyHub, rc: RepoCache, revision: str | None, version: int | None, *,
                   offline: bool) -> str:
    """The full commit id to load; raises the upstream errors for bad arguments."""
    check_revision_args(revision, version)
    if version is not None:
        return _resolve_version(hub, rc, version, offline=offline)
    assert revision is not None
    if is_full_commit(revision) and (offline or rc.read_variants(revision) is not None):
        return revision  # immutable and known: no hub call
    if offline:
        return _resolve_offline(rc, revision)
    commit = hub.get().resolve(rc.repo_id, revision)
    if not commit.startswith(revision):  # a branch or tag: remember it for offline use
        rc.write_ref(revision, commit)
    return commit


def _resolve_version(hub: LazyHub, rc: RepoCache, version: int, *, offline: bool) -> str:
    if offline:
        versions = rc.cached_versions()
        if not versions:
            raise OfflineError(
                f"Version {version} of '{rc.repo_id}' is not available in the local cache and "
                "offline mode is on",
                hint="load it once online (or run `kernelkit download`) so its ref is cached",
            )
    else:
        refs = hub.get().list_refs(rc.repo_id)
        versions = {int(m.group(1)): commit for name, commit in refs.branches.items()
                    if (m := _VERSION_BRANCH_RE.match(name))}
    if version not in versions:
        raise VersionNotFoundError(rc.repo_id, version, sorted(versions))
    newest = max(versions)
    if version < newest:
        log.warning("You are using version %d of '%s', but version %d is available.",
                    version, rc.repo_id, newest)
    commit = versions[version]
    if not offline:
        rc.write_ref(f"v{version}", commit)
    return commit


def _resolve_offline(rc: RepoCache, revision: str) -> str:
    commit = rc.read_ref(revision)
    if commit is not None:
        return commit
    if _HEX_RE.match(revision):
        matches = [c for c in rc.commits() if c.startswith(revision)]
        if len(matches) == 1:
            return matches[0]
    raise OfflineError(
        f"revision {revision!r} of '{rc.repo_id}' is not in the local cache ({rc.root}) and "
        "offline mode is on",
        hint="load it once online so it is cached, or pass a cached full commit id",
    )


def variant_names(hub: LazyHub, rc: RepoCache, commit: str, *, offline: bool) -> list[str]:
    """The variant directory names under ``build/`` at ``commit`` (cached after one listing)."""
    names = rc.read_variants(commit)
    if names is not None:
        return names
    if offline:
        # no listing was recorded: fall back to the variants that were downloaded
        try:
            return sorted(n for n in os.listdir(rc.commit_dir(commit) / "build")
                          if not n.startswith("."))
        except FileNotFoundError:
            raise OfflineError(
                f"'{rc.repo_id}' at {commit} is not in the local cache ({rc.root}) and offline "
                "mode is on",
                hint="download it first without KERNELKIT_OFFLINE/HF_HUB_OFFLINE set",
            ) from None
    names = hub.get().list_dirs(rc.repo_id, commit, "build")
    rc.write_variants(commit, names)
    return names
