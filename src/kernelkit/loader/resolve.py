"""The one resolve path: (repository, revision or version) -> the repository whose code runs,
its immutable commit and the variant names there.

``get_kernel``, ``install_kernel``, ``has_kernel``, ``get_kernel_variants`` (the variant
listing behind ``kernelkit variants``), ``kernelkit info`` and ``kernelkit lock`` all go
through :func:`resolve_in`, so they agree on what a request means, ``kernel-status.toml``
redirects included (one hop, as upstream, in the same hub; see ``status.py``). Trust is
decided on the repository whose code runs: the caller's ``trust`` callback is called for a
redirect's destination before anything of it is asked for.

The selection rules live in :mod:`kernelkit.loader.versions` (over a hub's refs) and
:mod:`kernelkit.loader.offline` (offline, over the refs recorded in the cache); this module
decides where the refs come from. ``revision`` (a branch, tag or short commit id) is resolved
online by the hub itself; ``version`` (``int``: branch ``v<N>``; a string specifier: the newest
matching release tag) from one ``list_refs``, recorded in the cache (``refs/listing.json``) with
the hub's refs stamp. While the stamp still matches (a directory hub: a few ``stat`` calls, no
git; ``kernelkit.hub.refstamp``), the recorded listing *is* the hub's answer, so a warm
``get_kernel(repo, version=1)`` runs no process at all; a branch or tag name is answered from
it too. A full commit id whose variant list is cached needs no hub call, nor even the
selection code.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kernelkit.errors import HubError, OfflineError
from kernelkit.loader.cache import RepoCache, is_full_commit
from kernelkit.loader.identity import check_revision, is_variant_name

if TYPE_CHECKING:
    from kernelkit.hub.port import Hub
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.versions import AnyRefs, Selected

log = logging.getLogger(__name__)

TrustCheck = Callable[[str], None]  # raises TrustError for a repository id it does not trust


class Resolved(NamedTuple):
    """Where a request leads: ``cache`` is the folder of the repository whose code runs (the
    redirect's destination if there was one), ``commit`` its full commit id, ``variants`` the
    variant names under ``build/`` there. ``asked`` says what was asked, for messages; ``ref``
    is the branch or tag the commit came from (``None`` for a commit id)."""

    cache: RepoCache
    commit: str
    variants: list[str]
    asked: str
    ref: str | None = None
    redirected_from: str | None = None

    @property
    def repo_id(self) -> str:
        return self.cache.repo_id

    @property
    def label(self) -> str:
        """``v1 = 0123456789ab`` (or the commit alone when a commit was asked for)."""
        return self.commit if self.asked == self.commit else f"{self.asked} = {self.commit[:12]}"


def resolve_kernel(repo_id: str, *, revision: str | None = None,
                   version: int | str | None = None, hub: Hub | None = None,
                   cache_dir: Path | None = None, newest_by_default: bool = False,
                   trust: TrustCheck | None = None) -> Resolved:
    """:func:`resolve_in` with the settings of the environment (the entry point of ``info`` and
    ``lock``). ``newest_by_default``: with neither ``revision`` nor ``version``, the highest
    ``v<N>`` branch, else ``main`` (what ``kernelkit info`` shows)."""
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.settings import read_settings

    settings = read_settings(cache_dir=cache_dir)
    lazy = LazyHub(hub, settings.open_hub, settings.refs_stamp)
    rc = RepoCache.of(settings.cache_dir, repo_id, settings.hub_identity(hub))
    if newest_by_default and revision is None and version is None:
        revision, version = newest_request(lazy, rc, offline=settings.offline)
    return resolve_in(lazy, rc, revision, version, offline=settings.offline, trust=trust)


def resolve_in(hub: LazyHub, rc: RepoCache, revision: str | None, version: int | str | None,
               *, offline: bool, trust: TrustCheck | None = None) -> Resolved:
    """The request resolved in the repository folder ``rc``: commit, redirect, variant names."""
    rc.check()
    commit, ref = resolve_ref(hub, rc, revision, version, offline=offline)
    asked = (revision if revision is not None
             else f"v{version}" if isinstance(version, int) else f"version {version!r}")
    redirect = _follow_redirect(hub, rc, commit, offline=offline, trust=trust)
    if redirect is None:
        return Resolved(rc, commit, variant_names(hub, rc, commit, offline=offline), asked, ref)
    target, (target_commit, target_ref), target_revision = redirect
    return Resolved(target, target_commit,
                    variant_names(hub, target, target_commit, offline=offline), target_revision,
                    target_ref, redirected_from=rc.repo_id)


def resolve_commit(hub: LazyHub, rc: RepoCache, revision: str | None,
                   version: int | str | None, *, offline: bool) -> str:
    """The full commit id to load; raises the upstream errors for bad arguments
    (``VersionRequestError``, ``VersionNotFoundError``: both ``ValueError``)."""
    return resolve_ref(hub, rc, revision, version, offline=offline)[0]


def resolve_ref(hub: LazyHub, rc: RepoCache, revision: str | None,
                version: int | str | None, *, offline: bool) -> tuple[str, str | None]:
    """``(full commit id, the branch or tag it came from, None for a commit id)``."""
    if revision is not None:
        check_revision(revision)  # "main\n" must never reach a hub or name a ref file
    if version is not None:
        from kernelkit.loader.versions import parse_version_request

        parse_version_request(version)  # a bad request fails before any hub call
    if (version is None and revision is not None and is_full_commit(revision)
            and (offline or rc.read_variants(revision) is not None)):
        return revision, None  # immutable and known: no hub call (the warm pinned path)
    from kernelkit.loader.versions import check_request

    check_request(revision, version)
    if offline:
        from kernelkit.loader.offline import select_offline

        selected = select_offline(rc, revision=revision, version=version)
    elif version is not None:
        from kernelkit.loader.versions import select_ref

        selected = select_ref(current_refs(hub, rc), rc.repo_id, version=version)
    else:
        assert revision is not None
        commit = _resolve_name(hub, rc, revision)
        return commit, None if commit.startswith(revision.lower()) else revision
    _warn_if_older(rc.repo_id, version, selected)
    return _checked_commit(rc, revision or f"version {version!r}", selected.commit), selected.ref


def current_refs(hub: LazyHub, rc: RepoCache) -> AnyRefs:
    """The hub's branches and tags now: the recorded listing while the hub's refs stamp still
    matches it, else one ``list_refs`` (recorded, with the stamp taken before it)."""
    stamp = hub.refs_stamp(rc.repo_id)
    if stamp is not None:
        listing = rc.read_listing()
        if listing is not None and listing.stamp == stamp:
            return listing
    from kernelkit.loader.offline import record_refs

    refs = hub.get().list_refs(rc.repo_id)
    record_refs(rc, refs, stamp=stamp)
    return refs


def _resolve_name(hub: LazyHub, rc: RepoCache, revision: str) -> str:
    """A branch, tag or short commit id, online: from the stamped listing when it is current
    (branch first, then tag, as the hub resolves), else by the hub (and remembered by name)."""
    stamp = None if is_full_commit(revision) else hub.refs_stamp(rc.repo_id)
    if stamp is not None:
        listing = rc.read_listing()
        if listing is not None and listing.stamp == stamp:
            found = listing.branches.get(revision) or listing.tags.get(revision)
            if found is not None:
                return found
    commit = _checked_commit(rc, revision, hub.get().resolve(rc.repo_id, revision))
    if not commit.startswith(revision.lower()):  # a branch or tag: remember it offline
        from kernelkit.loader.offline import record_resolved

        record_resolved(rc, revision, commit)
    return commit


def newest_request(hub: LazyHub, rc: RepoCache, *,
                   offline: bool) -> tuple[str | None, int | None]:
    """``(revision, version)`` when the caller asked for neither: ``(None, N)`` for the
    highest ``v<N>`` branch, else ``("main", None)`` (``info``, ``variants``,
    ``verify-signature``)."""
    from kernelkit.loader.versions import major_versions

    refs: AnyRefs
    if offline:
        from kernelkit.loader.offline import cached_refs

        refs = cached_refs(rc)
    else:
        rc.check()
        refs = current_refs(hub, rc)
    majors = major_versions(refs)
    return (None, max(majors)) if majors else ("main", None)


def _follow_redirect(hub: LazyHub, rc: RepoCache, commit: str, *, offline: bool,
                     trust: TrustCheck | None
                     ) -> tuple[RepoCache, tuple[str, str | None], str] | None:
    """Apply the commit's ``kernel-status.toml`` redirect, if any (one hop, as upstream, in
    the same hub): ``(destination folder, its commit, the revision asked of it)``. The
    destination must pass ``trust`` before the hub is asked anything about it."""
    from kernelkit.loader.status import redirect_of

    redirect = redirect_of(hub, rc, commit, offline=offline)
    if redirect is None:
        return None
    destination, dest_revision = redirect
    target = RepoCache.of(rc.root.parent, destination, rc.hub)  # HubError for a bad id
    if trust is not None:
        trust(destination)
    warnings.warn(f"'{rc.repo_id}' redirected to '{destination}'", UserWarning,
                  stacklevel=_caller_level())
    target.check()
    return target, resolve_ref(hub, target, dest_revision, None, offline=offline), dest_revision


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside kernelkit (the user's call), for a warning
    raised deep in the resolve path whatever the entry point."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
            "kernelkit."):
        frame, level = frame.f_back, level + 1
    return level


def _checked_commit(rc: RepoCache, asked: str, commit: object) -> str:
    """A hub's answer becomes a cache path: it must be a full commit id, nothing else."""
    if not isinstance(commit, str) or not is_full_commit(commit):
        raise HubError(f"the hub resolved {asked} of {rc.repo_id} to {str(commit)[:80]!r}, "
                       "which is not a full commit id", hint="the hub is broken or hostile; "
                       "nothing was downloaded")
    return commit


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
