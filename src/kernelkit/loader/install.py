"""Download one variant into the cache: fetch into a temporary sibling, verify, rename.

A per-(repository, commit, variant) file lock makes N processes download once; the atomic
rename keeps the cache correct even without it (a crash never leaves a half-written variant).

A cached variant whose receipt no longer matches is hashed again. If it is really corrupt:
online it is downloaded again (with a logged warning: the hub copy is the source of truth and
is verified like any download); offline ``IntegrityError`` is raised, never importing it.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.errors import HubError, IntegrityError, OfflineError
from kernelkit.loader.owned import check_entry, make_dirs, make_lock_file, seal_modes
from kernelkit.loader.receipt import read_receipt, receipt_matches, write_receipt
from kernelkit.util.fs import (
    file_lock,
    recover_dir,
    remove_stale_siblings,
    remove_stale_temp_files,
    replace_dir,
    temp_sibling,
)

if TYPE_CHECKING:  # the warm path imports neither the hub, the hashing code nor the watcher
    from kernelkit.hub.port import Hub
    from kernelkit.loader.cache import RepoCache
    from kernelkit.loader.progress import ProgressPlan

log = logging.getLogger(__name__)


class LazyHub:
    """A hub constructed on first use: warm loads never construct one. ``stamp`` gives the
    refs stamp of a repository without constructing the hub (``Settings.refs_stamp``)."""

    def __init__(self, hub: Hub | None, factory: Callable[[], Hub],
                 stamp: Callable[[str], str | None] | None = None) -> None:
        self._hub = hub
        self._factory = factory
        self._stamp = stamp

    def get(self) -> Hub:
        if self._hub is None:
            self._hub = self._factory()
        return self._hub

    def refs_stamp(self, repo_id: str) -> str | None:
        """The hub's cheap fingerprint of ``repo_id``'s refs (``kernelkit.hub.refstamp``), or
        ``None`` when it has none: then only a listing says what the refs are."""
        if self._hub is not None:
            stamp = getattr(self._hub, "refs_stamp", None)
            return stamp(repo_id) if callable(stamp) else None
        return self._stamp(repo_id) if self._stamp is not None else None


def where(rc: RepoCache, commit: str, variant: str) -> str:
    return f"{rc.repo_id}@{commit[:12]}:build/{variant}"


def ensure_variant(hub: LazyHub, rc: RepoCache, commit: str, variant: str, *,
                   offline: bool,
                   progress: Callable[[], ProgressPlan | None] | None = None) -> Path:
    """The verified cache directory of ``variant`` at ``commit``, downloading it if needed.

    ``progress`` (called only when a download really starts; ``Settings.progress_plan``) says
    how the download reports its progress; ``None``: silently."""
    final = rc.variant_dir(commit, variant)
    _check_parents(rc, commit)
    if receipt_matches(read_receipt(rc.receipt_path(commit, variant)), final):
        return final  # the warm path: one read and one stat per file, no hashing
    # Everything that writes the variant or its receipt holds the variant's lock: a receipt
    # rewritten after re-hashing included (the cleanup below removes unlocked writers' temps).
    # The repository's lock, shared, keeps `kernelkit cache rm/prune` out meanwhile.
    lock = rc.lock_path(commit, variant)
    make_lock_file(lock)
    make_lock_file(rc.repo_lock_path())
    with file_lock(rc.repo_lock_path(), shared=True), file_lock(lock):
        # the lock is ours: staging left by an interrupted (killed) download is garbage now
        recover_dir(final)
        remove_stale_siblings(final, ("fetch", "old"))
        remove_stale_temp_files(rc.receipt_path(commit, variant))
        # another process may have installed it while this one waited for the lock
        if receipt_matches(read_receipt(rc.receipt_path(commit, variant)), final):
            return final
        if final.is_dir() and _reverified(rc, commit, variant, offline=offline):
            return final
        if offline:
            from kernelkit.loader.offline import fetch_hint

            raise OfflineError(
                f"{where(rc, commit, variant)} is not in the cache ({rc.root}) and offline mode "
                "is on (KERNELKIT_OFFLINE/HF_HUB_OFFLINE)",
                hint=fetch_hint(rc.repo_id, commit, None),
            )
        download_variant(hub.get(), rc, commit, variant,
                         progress=progress() if progress is not None else None)
    return final


def _check_parents(rc: RepoCache, commit: str) -> None:
    """The folders above a variant must be the user's own too (``owned.py``)."""
    commit_dir = rc.commit_dir(commit)
    if check_entry(commit_dir):
        check_entry(commit_dir / "build")


def _reverified(rc: RepoCache, commit: str, variant: str, *, offline: bool) -> bool:
    """Hash a cached variant again; ``False`` (after a warning) if it must be downloaded again."""
    from kernelkit.errors import MetadataError
    from kernelkit.loader.verify import reverify

    label = where(rc, commit, variant)
    try:
        reverify(rc.variant_dir(commit, variant), rc.receipt_path(commit, variant), label)
        return True
    except (IntegrityError, MetadataError) as exc:
        if offline and isinstance(exc, IntegrityError):
            raise IntegrityError(
                exc.file, exc.expected, exc.actual,
                hint=f"the cached copy is corrupt and offline mode is on; delete "
                     f"{rc.variant_dir(commit, variant)} and download it again online",
            ) from exc
        if offline:
            raise
        log.warning("cached %s is corrupt (%s); downloading it again", label, exc.message)
        return False


def download_variant(hub: Hub, rc: RepoCache, commit: str, variant: str, *,
                     progress: ProgressPlan | None = None) -> None:
    """Fetch ``build/<variant>/`` at ``commit``, verify its digest, move it into place.

    With a ``progress`` plan, a variant of at least ``progress.min_bytes`` (the listed sizes)
    reports the bytes written while the hub fetches it (``kernelkit.loader.progress``)."""
    from kernelkit.loader.verify import verify_variant

    label = where(rc, commit, variant)
    entries = [e for e in hub.list_files(rc.repo_id, commit, f"build/{variant}")
               if not _is_bytecode(e.path)]
    paths = [e.path for e in entries]
    if not paths:
        raise HubError(f"{label}: the hub lists no files for this variant",
                       hint="the repository layout is broken; ask its publisher to re-upload")
    final = rc.variant_dir(commit, variant)
    make_dirs(final.parent)
    stage = temp_sibling(final, "fetch")
    stage.mkdir(mode=0o700)
    try:
        with _watched(progress, stage, f"{rc.repo_id}@{commit[:7]} {variant}",
                      sum(e.size for e in entries)):
            hub.fetch(rc.repo_id, commit, paths, stage)
        staged = stage / "build" / variant
        verified = verify_variant(staged, label)  # before it can ever be imported
        seal_modes(staged)  # the fetch honoured the umask: nobody else may write the cache
        replace_dir(staged, final)
        from kernelkit.loader.sigrecord import record_signature

        record_signature(hub, rc.repo_id, commit, final)  # before the receipt: see signatures.py
        write_receipt(rc.receipt_path(commit, variant), final,
                      own_digest=None if verified.metadata.digest else verified.digest,
                      metadata_raw=verified.metadata_raw)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _watched(plan: ProgressPlan | None, stage: Path, label: str,
             total: int) -> AbstractContextManager[None]:
    if plan is None or total < plan.min_bytes:
        return nullcontext()
    from kernelkit.loader.progress import watch_download

    return watch_download(stage, label, total, plan)


def _is_bytecode(path: str) -> bool:
    return path.endswith(".pyc") or "/__pycache__/" in f"/{path}"
