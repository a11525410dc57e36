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
from typing import TYPE_CHECKING

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import (
    KernelNotLockedError,
    LockMismatchError,
    OfflineError,
    VariantNotFoundError,
)
from kernelkit.hub.port import Hub
from kernelkit.loader.importer import LoadDeps
from kernelkit.lock.discover import find_kernels_lock
from kernelkit.lock.lockfile import REWRITE_HINT, KernelLock, lock_entry, read_lock_file
from kernelkit.lock.verify import (
    has_lfs_record,
    record_lfs,
    verify_locked_variant,
)

if TYPE_CHECKING:
    from kernelkit.loader.provider import MissingVariant, VariantProvider

__all__ = ["LockedSet", "get_locked_kernel", "load_kernel", "locked_entry"]


class LockedSet:
    """The entries of one ``kernels.lock``, read once (a value: it pickles with its content,
    so a locked layer repository unpickled elsewhere loads the same commits without the file)."""

    def __init__(self, path: Path, locks: list[KernelLock]) -> None:
        self.path = path
        self.locks = list(locks)

    @classmethod
    def read(cls, lockfile: Path | str | None) -> LockedSet:
        """``lockfile`` (a file, or a directory holding one); ``None`` finds the caller's lock
        file (:mod:`kernelkit.lock.discover`)."""
        path = find_kernels_lock(lockfile)
        read = read_lock_file(path)
        if read.legacy:
            warnings.warn(f"{path} is in kernelkit's previous kernels.lock format, which "
                          f"upstream kernels cannot read; {REWRITE_HINT}", FutureWarning,
                          stacklevel=4)
        return cls(path, read.locks)

    def entry(self, repo_id: str) -> KernelLock:
        lock = lock_entry(self.locks, repo_id)
        if lock is None:
            raise KernelNotLockedError(
                f"Kernel `{repo_id}` is not locked in {self.path}. Please lock it with "
                "`kernelkit lock <project>` and then reinstall the project.",
                hint=f'add "{repo_id}" = <version> to [tool.kernels.dependencies] and run '
                     "`kernelkit lock`",
            )
        return lock

    def has(self, repo_id: str) -> bool:
        return lock_entry(self.locks, repo_id) is not None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LockedSet) and self.path == other.path
                and self.locks == other.locks)

    def __hash__(self) -> int:
        return hash((self.path, tuple(lock.repo_id for lock in self.locks)))

    def __repr__(self) -> str:
        return f"LockedSet({str(self.path)!r}, {len(self.locks)} entries)"


def locked_entry(repo_id: str, lockfile: Path | str | None) -> KernelLock:
    """The lock entry of ``repo_id`` in ``lockfile`` (a file, or a directory holding one);
    ``None`` finds the caller's lock file (:mod:`kernelkit.lock.discover`)."""
    return LockedSet.read(lockfile).entry(repo_id)


def get_locked_kernel(repo_id: str, *, lockfile: Path | str | None = None,
                      backend: str | None = None, check_arch: bool = True,
                      trust_remote_code: bool | list[str] = False, hub: Hub | None = None,
                      cache_dir: Path | None = None,
                      require_signature: bool | None = None,
                      variant_provider: VariantProvider | None = None) -> ModuleType:
    """Load the locked commit of ``repo_id``, downloading this machine's variant if needed.
    ``check_arch`` and ``require_signature`` as for ``get_kernel``; a signer recorded in
    ``kernels.lock.hashes`` must have signed the variant. Its ``kernel-depends`` load the same
    way: locked ones at their locked commit, others by their version through ``get_kernel``
    (``trust_remote_code`` applies to those). ``variant_provider``: see :func:`load_locked`."""
    return load_locked(repo_id, LockedSet.read(lockfile), offline=False, backend=backend,
                       check_arch=check_arch, trust_remote_code=trust_remote_code, hub=hub,
                       cache_dir=cache_dir, require_signature=require_signature,
                       variant_provider=variant_provider)


def load_kernel(repo_id: str, *, lockfile: Path | str | None, backend: str | None = None,
                check_arch: bool = True, cache_dir: Path | None = None,
                require_signature: bool | None = None,
                variant_provider: VariantProvider | None = None) -> ModuleType:
    """Load the locked commit of ``repo_id`` from the cache alone: no hub, no network.
    ``check_arch`` and ``require_signature`` as for ``get_kernel`` (signatures are verified
    offline, from what the download recorded); its ``kernel-depends`` must be locked too."""
    return load_locked(repo_id, LockedSet.read(lockfile), offline=True, backend=backend,
                       check_arch=check_arch, cache_dir=cache_dir,
                       require_signature=require_signature,
                       variant_provider=variant_provider)


def load_locked(repo_id: str, locked: LockedSet, *, offline: bool, backend: str | None = None,
                check_arch: bool = True, trust_remote_code: bool | list[str] = False,
                hub: Hub | None = None, cache_dir: Path | None = None,
                require_signature: bool | None = None,
                variant_provider: VariantProvider | None = None) -> ModuleType:
    """``get_locked_kernel`` (``offline=False``) or ``load_kernel`` (``offline=True``) over
    entries already read. ``variant_provider`` (``kernelkit.loader.provider``) supplies a
    variant when none of the locked commit fits, pinned to the sources digest the lock
    records (``kernels.lock.hashes``); such a variant is held to that digest instead of a
    variant hash."""
    from kernelkit.loader.importer import RepoInfo, import_variant

    lock = locked.entry(repo_id)
    deps = _locked_dependency_loader(repo_id, locked, offline=offline, backend=backend,
                                     check_arch=check_arch, hub=hub, cache_dir=cache_dir,
                                     trust_remote_code=trust_remote_code,
                                     require_signature=require_signature,
                                     variant_provider=variant_provider)
    provider = PinnedSources(variant_provider, lock) if variant_provider is not None else None
    variant_dir = (_installed_offline(lock, backend, cache_dir, provider) if offline
                   else _installed_online(lock, backend, hub, cache_dir, provider))
    _check_locked_signature(variant_dir, lock, offline=offline, hub=hub, cache_dir=cache_dir,
                            require=require_signature)
    return import_variant(variant_dir, RepoInfo(lock.repo_id, lock.sha), check_arch=check_arch,
                          load_deps=deps)


def _check_locked_signature(variant_dir: Path, lock: KernelLock, *, offline: bool,
                            hub: Hub | None, cache_dir: Path | None,
                            require: bool | None) -> None:
    """The trust policy, and the signer ``kernels.lock.hashes`` pins for this variant."""
    from kernelkit.loader.install import LazyHub
    from kernelkit.loader.settings import read_settings
    from kernelkit.loader.signatures import check_signature

    settings = read_settings(cache_dir=cache_dir)
    entry = lock.variants.get(variant_dir.name)
    check_signature(variant_dir, lock.repo_id, settings=settings, require=require,
                    locked_signer=entry.signer if entry is not None else None,
                    hub=None if offline else LazyHub(hub, settings.open_hub), commit=lock.sha)


class PinnedSources:
    """A variant provider held to the lock: it is told the load is locked and which sources
    digest the lock pins (``None``: the lock records none, and a locked build refuses)."""

    def __init__(self, inner: VariantProvider, lock: KernelLock) -> None:
        self.inner = inner
        self.lock = lock

    def provide(self, missing: MissingVariant) -> Path:
        return self.inner.provide(missing._replace(locked=True,
                                                   pinned_sources=self.lock.sources))


def _installed_online(lock: KernelLock, backend: str | None, hub: Hub | None,
                      cache_dir: Path | None, provider: VariantProvider | None = None) -> Path:
    from kernelkit.loader.api import install_kernel
    from kernelkit.loader.provider import is_built_locally

    variant_dir = install_kernel(lock.repo_id, revision=lock.sha, backend=backend, hub=hub,
                                 cache_dir=cache_dir, variant_provider=provider)
    if is_built_locally(variant_dir):
        return variant_dir  # built from the sources the lock pins (PinnedSources)
    _verify_online(variant_dir, lock, hub)
    return variant_dir


def _installed_offline(lock: KernelLock, backend: str | None, cache_dir: Path | None,
                       provider: VariantProvider | None = None) -> Path:
    from kernelkit.loader.api import install_kernel
    from kernelkit.loader.provider import is_built_locally

    try:
        variant_dir = install_kernel(lock.repo_id, revision=lock.sha, local_files_only=True,
                                     backend=backend, cache_dir=cache_dir,
                                     variant_provider=provider)
        if is_built_locally(variant_dir):
            return variant_dir
    except (OfflineError, VariantNotFoundError) as exc:
        found = _from_any_hub(lock, backend, cache_dir) if lock.variants else None
        if found is not None:
            return found
        raise OfflineError(
            f"Locked kernel `{lock.repo_id}` ({lock.sha}) was not downloaded or does not have "
            f"an applicable variant. Make sure it's downloaded locally via "
            f"`kernelkit download <project>`.\n{exc}",
            hint="run `kernelkit download <project>` (add --dest DIR and pass cache_dir=DIR "
                 "for a separate directory) while online",
        ) from exc
    verify_locked_variant(variant_dir, lock)
    return variant_dir


def _locked_dependency_loader(root: str, locked: LockedSet, *, offline: bool,
                              backend: str | None, check_arch: bool, hub: Hub | None,
                              cache_dir: Path | None,
                              trust_remote_code: bool | list[str],
                              require_signature: bool | None = None,
                              variant_provider: VariantProvider | None = None) -> LoadDeps:
    """``kernel-depends`` of a locked kernel: a dependency locked in the same file loads at its
    locked commit (from the cache alone when ``offline``); any other through ``get_kernel``
    online, and offline it must be locked (``KernelNotLockedError``)."""
    from kernelkit.loader.kernel_deps import KernelDep, kernel_dependencies, load_dependencies

    def load_one(dep: KernelDep) -> ModuleType:
        if offline or locked.has(dep.repo_id):
            return load_locked(dep.repo_id, locked, offline=offline, backend=backend,
                               check_arch=check_arch, trust_remote_code=trust_remote_code,
                               hub=hub, cache_dir=cache_dir,
                               require_signature=require_signature,
                               variant_provider=variant_provider)
        from kernelkit.loader.api import get_kernel

        return get_kernel(dep.repo_id, revision=dep.revision, version=dep.version,
                          backend=backend, trust_remote_code=trust_remote_code,
                          check_arch=check_arch, hub=hub, cache_dir=cache_dir,
                          require_signature=require_signature,
                          variant_provider=variant_provider)

    def load(metadata: Metadata, variant_dir: Path) -> dict[str, ModuleType]:
        return load_dependencies(
            root, kernel_dependencies(metadata, variant_dir / "metadata.json"), load_one)

    return load


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
