"""Version and revision lookups from the cache alone (offline mode).

The cache records the commit every branch/tag pointed to when it was last seen online
(``<cache>/<org>--<name>--<hash of hub and id>/refs/listing.json``, one folder per hub, see
``kernelkit.loader.cache``; written by :func:`record_refs` after each ``list_refs``, and
``refs/resolved/`` by the loader for a branch or tag it resolved by name). Offline, the
configured hub's recorded refs stand in for the hub's, branches and tags apart, as the hub
listed them. Only refs whose commit has something in the cache are
considered, so an offline load never picks a version it would then fail to find.
"""

from __future__ import annotations

from kernelkit.errors import OfflineError, RevisionNotFoundError
from kernelkit.hub.port import Refs
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.versions import Selected, VersionRequest, check_request, select_ref


def cached_refs(cache: RepoCache, *, only_cached_commits: bool = True) -> Refs:
    """The branches and tags of the last recorded listing (``refs/listing.json``)."""
    listing = cache.read_listing()
    if listing is None:
        return Refs()
    have = set(cache.commits())

    def kept(refs: dict[str, str]) -> dict[str, str]:
        return {r: c for r, c in refs.items() if not only_cached_commits or c in have}

    return Refs(branches=kept(listing.branches), tags=kept(listing.tags))


def record_refs(cache: RepoCache, refs: Refs, *, stamp: str | None = None) -> None:
    """Remember an online listing of every branch and tag, for later offline lookups and, while
    the hub's ``stamp`` (taken *before* the listing) still matches, for online ones.

    The one writer of hub listings into the cache (called after every online ``list_refs`` of
    the loader and of ``kernelkit download``): one file, ``refs/listing.json``, replaced whole
    (:meth:`RepoCache.write_listing`), so recording costs the same per ref for 10 refs or 100k.
    A branch and a tag of one name are kept apart (``branches``, ``tags``). A name resolved
    earlier by name (``refs/resolved``) that the listing holds is forgotten: the listing is
    newer. ``cache`` is the folder of the hub the listing came from: another hub's refs are
    never touched."""
    cache.write_listing(refs, stamp)
    for ref in cache.refs("resolved"):
        if ref in refs.branches or ref in refs.tags:
            cache.forget_ref("resolved", ref)


def record_resolved(cache: RepoCache, revision: str, commit: str) -> None:
    """Remember what the hub resolved the branch-or-tag name ``revision`` to (the hub says not
    which it is; ``select_offline`` prefers this answer for that name: it is the newest)."""
    cache.write_ref("resolved", revision, commit)


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
    if revision is not None:
        resolved = cache.read_ref("resolved", revision)
        if resolved is not None and resolved in cache.commits():
            return Selected(revision, resolved)
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
