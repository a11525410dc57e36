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
    """The Python call that loads (online: fetches) what was asked for, trust included."""
    from kernelkit.util.usage import load_call

    return load_call(repo_id, version=version, revision=revision if version is None else None)


def fetch_hint(repo_id: str, revision: str | None, version: VersionRequest | None) -> str:
    """What to run (online) to fetch what an offline load missed."""
    return ("go online once and fetch it, e.g. "
            f"`{fetch_command(repo_id, revision, version)}`, or for a locked project run "
            "`kernelkit download <project>` (add --dest DIR and load with cache_dir=DIR or "
            "KERNELKIT_CACHE=DIR)")


def other_hubs(cache: RepoCache) -> list[tuple[str, Refs]]:
    """The same repository cached from other hubs (another ``KERNELKIT_HUB``, ``HF_ENDPOINT``
    or hub directory than the configured one): ``(hub identity, its cached refs)``, only those
    with a ref whose commit is in the cache."""
    from kernelkit.loader.cache_admin import read_identity

    prefix = cache.root.name[: -len("--") - 16]  # "<org>--<name>"; "--<16 hex>" is the hub's
    found = []
    try:
        folders = sorted(cache.root.parent.iterdir())
    except OSError:
        return []
    for folder in folders:
        if folder == cache.root or not folder.name.startswith(prefix + "--") \
                or len(folder.name) != len(cache.root.name):
            continue
        repo_id, hub = read_identity(folder)
        if repo_id != cache.repo_id or hub is None or hub == cache.hub:
            continue
        refs = cached_refs(RepoCache(folder, repo_id, hub))
        if refs.branches or refs.tags:
            found.append((hub, refs))
    return found


def _elsewhere(cache: RepoCache, revision: str | None,
               version: VersionRequest | None) -> str:
    """Lines naming the other hubs' copies and the setting and call that load one."""
    from kernelkit.hub.hubid import settings_for

    lines = []
    for hub, refs in other_hubs(cache):
        names = ", ".join(sorted({*refs.branches, *refs.tags}))
        env = " ".join(f"{k}={v}" for k, v in settings_for(hub).items())
        lines.append(f"  - {hub} (cached: {names}): with {env}, "
                     f"{fetch_command(cache.repo_id, revision, version)}")
    if not lines:
        return ""
    return (f"\n  the cache holds {cache.repo_id} from other hubs; each loads offline with its "
            "own hub setting:\n" + "\n".join(lines))


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
        elsewhere = _elsewhere(cache, revision, version)
        hint = fetch_hint(repo_id, revision, version)
        raise OfflineError(
            f"{asked} of {repo_id} is not in the local cache of hub {cache.hub} ({cache.root}) "
            "and offline mode is on (KERNELKIT_OFFLINE/HF_HUB_OFFLINE); "
            f"cached refs of this hub: {known} ({exc.message}){elsewhere}",
            hint=("set the hub setting of one of the copies above, or " + hint) if elsewhere
            else hint,
        ) from None
