"""Version/revision -> immutable commit id, and the variant names at a commit.

The selection rules live in :mod:`kernelkit.loader.versions` (online, over the hub's refs) and
:mod:`kernelkit.loader.offline` (offline, over the refs recorded in the cache); this module only
decides where the refs come from. ``revision`` (a branch, tag or short commit id) is resolved
online by the hub itself; ``version`` (``int``: branch ``v<N>``; a string specifier: the newest
matching release tag) from one ``list_refs``, all of whose refs are then recorded under
``refs/`` in the cache so offline mode can resolve versions, branches and tags later. A full
commit id whose variant list is cached needs no hub call, nor even the selection code.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from kernelkit.errors import HubError, OfflineError
from kernelkit.loader.cache import RepoCache, is_full_commit
from kernelkit.loader.identity import check_revision, is_variant_name

if TYPE_CHECKING:
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.versions import Selected

log = logging.getLogger(__name__)


def resolve_commit(hub: LazyHub, rc: RepoCache, revision: str | None,
                   version: int | str | None, *, offline: bool) -> str:
    """The full commit id to load; raises the upstream errors for bad arguments
    (``VersionRequestError``, ``VersionNotFoundError``: both ``ValueError``)."""
    if revision is not None:
        check_revision(revision)  # "main\n" must never reach a hub or name a ref file
    if version is not None:
        from kernelkit.loader.versions import parse_version_request

        parse_version_request(version)  # a bad request fails before any hub call
    if (version is None and revision is not None and is_full_commit(revision)
            and (offline or rc.read_variants(revision) is not None)):
        return revision  # immutable and known: no hub call (the warm pinned path)
    from kernelkit.loader.versions import check_request

    check_request(revision, version)
    if offline:
        from kernelkit.loader.offline import select_offline

        selected = select_offline(rc, revision=revision, version=version)
    elif version is not None:
        selected = _select_online(hub, rc, version)
    else:
        assert revision is not None
        commit = _checked_commit(rc, revision, hub.get().resolve(rc.repo_id, revision))
        if not commit.startswith(revision.lower()):  # a branch or tag: remember it offline
            from kernelkit.loader.offline import record_resolved

            record_resolved(rc, revision, commit)
        return commit
    _warn_if_older(rc.repo_id, version, selected)
    return _checked_commit(rc, revision or f"version {version!r}", selected.commit)


def _checked_commit(rc: RepoCache, asked: str, commit: object) -> str:
    """A hub's answer becomes a cache path: it must be a full commit id, nothing else."""
    if not isinstance(commit, str) or not is_full_commit(commit):
        raise HubError(f"the hub resolved {asked} of {rc.repo_id} to {str(commit)[:80]!r}, "
                       "which is not a full commit id", hint="the hub is broken or hostile; "
                       "nothing was downloaded")
    return commit


def _select_online(hub: LazyHub, rc: RepoCache, version: int | str) -> Selected:
    from kernelkit.loader.offline import record_refs
    from kernelkit.loader.versions import select_ref

    refs = hub.get().list_refs(rc.repo_id)
    record_refs(rc, refs)
    return select_ref(refs, rc.repo_id, version=version)


def _warn_if_older(repo_id: str, version: int | str | None, selected: Selected) -> None:
    if selected.newest_major is not None:
        log.warning("You are using version %s of '%s', but version %d is available.",
                    (selected.ref or f"v{version}")[1:], repo_id, selected.newest_major)


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
            from kernelkit.loader.offline import fetch_hint

            raise OfflineError(
                f"'{rc.repo_id}' at {commit} is not in the local cache ({rc.root}) and offline "
                "mode is on (KERNELKIT_OFFLINE/HF_HUB_OFFLINE)",
                hint=fetch_hint(rc.repo_id, commit, None),
            ) from None
    names = [n for n in hub.get().list_dirs(rc.repo_id, commit, "build") if is_variant_name(n)]
    rc.write_variants(commit, names)
    return names
