"""Version and revision lookups from the cache alone (offline mode).

The cache records the commit every branch/tag pointed to when it was last seen online
(``<cache>/<org>--<name>--<hash of hub and id>/refs/<ref>``, one folder per hub, see
``kernelkit.loader.cache``; written by :func:`record_refs` after each ``list_refs``, and by the
loader for a branch or tag it resolved by name). Offline, the configured hub's refs
stand in for the hub's: ``v<N>`` names are major-version branches, ``v<x.y.z>`` names release
tags, anything else a plain branch. Only refs whose commit has something in the cache are
considered, so an offline load never picks a version it would then fail to find.
"""

from __future__ import annotations

import re

from kernelkit.errors import OfflineError, RevisionNotFoundError
from kernelkit.hub.port import Refs
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.versions import Selected, VersionRequest, check_request, select_ref

_TAG_RE = re.compile(r"^v\d+\.\d+\.\d+")


def cached_refs(cache: RepoCache, *, only_cached_commits: bool = True) -> Refs:
    """The refs recorded in the cache, split into branches and (release) tags."""
    have = set(cache.commits())
    branches: dict[str, str] = {}
    tags: dict[str, str] = {}
    for ref, commit in cache.refs().items():
        if only_cached_commits and commit not in have:
            continue
        (tags if _TAG_RE.match(ref) else branches)[ref] = commit
    return Refs(branches=branches, tags=tags)


def record_refs(cache: RepoCache, refs: Refs) -> None:
    """Remember every branch and tag of an online listing, for later offline lookups.

    The one writer of hub listings into the cache's ``refs/`` (called after every online
    ``list_refs`` of the loader and of ``kernelkit download``); the file format is
    :meth:`RepoCache.write_ref`'s. A tag and a branch of the same name share one file (the tag
    wins): offline, names are told apart by their form, as described above. ``cache`` is the
    folder of the hub the listing came from: another hub's refs are never touched."""
    for ref, commit in {**refs.branches, **refs.tags}.items():
        cache.write_ref(ref, commit)


def fetch_command(repo_id: str, revision: str | None, version: VersionRequest | None) -> str:
    arg = f"version={version!r}" if version is not None else f"revision={revision!r}"
    return f"python -c \"import kernelkit; kernelkit.get_kernel('{repo_id}', {arg})\""


def fetch_hint(repo_id: str, revision: str | None, version: VersionRequest | None) -> str:
    """What to run (online) to fetch what an offline load missed."""
    return ("go online once and fetch it, e.g. "
            f"`{fetch_command(repo_id, revision, version)}`, or for a locked project run "
            "`kernelkit download <project>` (add --dest DIR and load with cache_dir=DIR or "
            "KERNELKIT_CACHE=DIR)")


def select_offline(cache: RepoCache, *, revision: str | None = None,
                   version: VersionRequest | None = None) -> Selected:
    """``select_ref`` over the refs cached for the repository on one hub (``cache``: the folder
    of the configured hub); ``OfflineError`` that names what is missing."""
    check_request(revision, version)
    repo_id = cache.repo_id
    refs = cached_refs(cache)
    asked = f"version {version!r}" if version is not None else f"revision {revision!r}"
    try:
        return select_ref(refs, repo_id, revision=revision, version=version,
                      known_commits=tuple(cache.commits()))
    except RevisionNotFoundError as exc:  # also VersionNotFoundError; a bad request propagates
        known = ", ".join(sorted({**refs.branches, **refs.tags})) or "none"
        raise OfflineError(
            f"{asked} of {repo_id} is not in the local cache of hub {cache.hub} ({cache.root}) "
            "and offline mode is on (KERNELKIT_OFFLINE/HF_HUB_OFFLINE); "
            f"cached refs: {known} ({exc.message})",
            hint=fetch_hint(repo_id, revision, version),
        ) from None
