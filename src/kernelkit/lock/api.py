"""Locked loading: ``get_locked_kernel`` and ``load_kernel`` (upstream-loader.md §1.1, §3).

Both load exactly the commit pinned in ``kernels.lock`` and verify the variant's files against
the lock's hash (``kernels.lock.hashes``) before importing (``LockMismatchError``, both a
``LockError`` and an ``IntegrityError``); a lock without hashes (upstream's) pins the commit, and
the variant is held to its digest. ``get_locked_kernel`` downloads what is missing (unless
offline mode is on); ``load_kernel`` never constructs a hub: it works from the cache, or from a
directory written by ``kernelkit download --dest DIR`` (pass ``cache_dir=DIR``). The cache is
keyed by hub; a locked load looks in the configured hub's folder first, then, when the lock has
the variant's hash, in any hub's folder holding the locked commit (the hash pins the content, so
the hub it came from does not matter; a commit id alone is only what one hub says it is).
kernelkit's previous lock format still loads, with a ``FutureWarning`` that says how to rewrite
it.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import ModuleType

from kernelkit.errors import (
    KernelNotLockedError,
    LockMismatchError,
    OfflineError,
    VariantNotFoundError,
)
from kernelkit.hub.port import Hub
from kernelkit.lock.discover import find_kernels_lock
from kernelkit.lock.lockfile import REWRITE_HINT, KernelLock, lock_entry, read_lock_file
from kernelkit.lock.verify import (
    has_lfs_record,
    record_lfs,
    verify_locked_variant,
)

__all__ = ["get_locked_kernel", "load_kernel", "locked_entry"]


def locked_entry(repo_id: str, lockfile: Path | str | None) -> KernelLock:
    """The lock entry of ``repo_id`` in ``lockfile`` (a file, or a directory holding one);
    ``None`` finds the caller's lock file (:mod:`kernelkit.lock.discover`)."""
    path = find_kernels_lock(lockfile)
    read = read_lock_file(path)
    if read.legacy:
        warnings.warn(f"{path} is in kernelkit's previous kernels.lock format, which upstream "
                      f"kernels cannot read; {REWRITE_HINT}", FutureWarning, stacklevel=3)
    lock = lock_entry(read.locks, repo_id)
    if lock is None:
        raise KernelNotLockedError(
            f"Kernel `{repo_id}` is not locked in {path}. Please lock it with "
            "`kernelkit lock <project>` and then reinstall the project.",
            hint=f'add "{repo_id}" = <version> to [tool.kernels.dependencies] and run '
                 "`kernelkit lock`",
        )
    return lock


def get_locked_kernel(repo_id: str, *, lockfile: Path | str | None = None,
                      backend: str | None = None, hub: Hub | None = None,
                      cache_dir: Path | None = None) -> ModuleType:
    """Load the locked commit of ``repo_id``, downloading this machine's variant if needed."""
    from kernelkit.loader.api import install_kernel
    from kernelkit.loader.importer import import_variant

    lock = locked_entry(repo_id, lockfile)
    variant_dir = install_kernel(repo_id, revision=lock.sha, backend=backend, hub=hub,
                                 cache_dir=cache_dir)
    _verify_online(variant_dir, lock, hub)
    return import_variant(variant_dir)


def load_kernel(repo_id: str, *, lockfile: Path | str | None, backend: str | None = None,
                cache_dir: Path | None = None) -> ModuleType:
    """Load the locked commit of ``repo_id`` from the cache alone: no hub, no network."""
    from kernelkit.loader.api import install_kernel
    from kernelkit.loader.importer import import_variant

    lock = locked_entry(repo_id, lockfile)
    try:
        variant_dir = install_kernel(repo_id, revision=lock.sha, local_files_only=True,
                                     backend=backend, cache_dir=cache_dir)
    except (OfflineError, VariantNotFoundError) as exc:
        found = _from_any_hub(lock, backend, cache_dir) if lock.variants else None
        if found is not None:
            return import_variant(found)
        raise OfflineError(
            f"Locked kernel `{repo_id}` ({lock.sha}) was not downloaded or does not have an "
            f"applicable variant. Make sure it's downloaded locally via "
            f"`kernelkit download <project>`.\n{exc}",
            hint="run `kernelkit download <project>` (add --dest DIR and pass cache_dir=DIR "
                 "for a separate directory) while online",
        ) from exc
    verify_locked_variant(variant_dir, lock)
    return import_variant(variant_dir)


def _from_any_hub(lock: KernelLock, backend: str | None, cache_dir: Path | None) -> Path | None:
    """The locked commit's variant from the cache folder of any hub (the cache is keyed by hub,
    and ``kernelkit download --hub X`` wrote X's folder): the lock hash, verified here, pins the
    content, so which hub served it does not matter. ``None`` if no folder has the variant;
    ``LockMismatchError`` if folders have it but none matches the lock."""
    from kernelkit.loader.api import install_from_folder
    from kernelkit.loader.identity import cache_folder_prefix
    from kernelkit.loader.settings import read_settings

    root = read_settings(cache_dir=cache_dir).cache_dir
    prefix = cache_folder_prefix(lock.repo_id)
    try:
        folders = sorted(p for p in root.iterdir() if p.name.startswith(prefix))
    except OSError:
        return None
    mismatch: LockMismatchError | None = None
    for folder in folders:
        if not (folder / lock.sha).is_dir():
            continue
        try:
            found = install_from_folder(folder, lock.repo_id, lock.sha, backend=backend,
                                        cache_dir=cache_dir)
            verify_locked_variant(found, lock)
        except (OfflineError, VariantNotFoundError):
            continue
        except LockMismatchError as exc:
            mismatch = mismatch or exc
            continue
        return found
    if mismatch is not None:
        raise mismatch
    return None


def _verify_online(variant_dir: Path, lock: KernelLock, hub: Hub | None) -> None:
    """Verify; on a mismatch with no LFS record yet, ask the hub which files are LFS files (the
    Hugging Face Hub hashes those by SHA-256, not by git blob id) and verify once more."""
    from kernelkit.loader.settings import read_settings

    if not lock.variants:
        return  # commit + digest (verified by the download) pin it
    try:
        verify_locked_variant(variant_dir, lock)
        return
    except LockMismatchError:
        if has_lfs_record(variant_dir) or read_settings().offline:
            raise
    real_hub = hub if hub is not None else read_settings().open_hub()
    listing = real_hub.list_files(lock.repo_id, lock.sha, f"build/{variant_dir.name}")
    record_lfs(variant_dir, listing)
    verify_locked_variant(variant_dir, lock)
