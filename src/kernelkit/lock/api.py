"""Locked loading: ``get_locked_kernel`` and ``load_kernel`` (upstream-loader.md §1.1, §3).

Both load exactly the commit pinned in ``kernels.lock`` and verify the variant's files against
the lock's hash before importing (``LockMismatchError``, both a ``LockError`` and an
``IntegrityError``). ``get_locked_kernel`` downloads what is missing (unless offline mode is on);
``load_kernel`` never constructs a hub: it works from the cache, or from a directory written by
``kernelkit download --dest DIR`` (pass ``cache_dir=DIR``).
"""

from __future__ import annotations

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
from kernelkit.lock.lockfile import KernelLock, lock_entry, read_locks
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
    lock = lock_entry(read_locks(path), repo_id)
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
        raise OfflineError(
            f"Locked kernel `{repo_id}` ({lock.sha}) was not downloaded or does not have an "
            f"applicable variant. Make sure it's downloaded locally via "
            f"`kernelkit download <project>`.\n{exc}",
            hint="run `kernelkit download <project>` (add --dest DIR and pass cache_dir=DIR "
                 "for a separate directory) while online",
        ) from exc
    verify_locked_variant(variant_dir, lock)
    return import_variant(variant_dir)


def _verify_online(variant_dir: Path, lock: KernelLock, hub: Hub | None) -> None:
    """Verify; on a mismatch with no LFS record yet, ask the hub which files are LFS files (the
    Hugging Face Hub hashes those by SHA-256, not by git blob id) and verify once more."""
    from kernelkit.loader.settings import read_settings

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
