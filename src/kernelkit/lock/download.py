"""``kernelkit download``: fetch the locked kernels of a project for offline use.

Everything goes into a kernelkit cache root (the default cache, or ``--dest DIR``), the layout
``get_kernel``/``load_kernel``/``get_locked_kernel`` read (pass ``cache_dir=DIR`` or set
``KERNELKIT_CACHE=DIR``). Per locked kernel: one ``list_refs`` (to record every ref for offline
lookups by version, branch or tag, with ``v<N>`` of a ``= N`` dependency set to the locked commit),
one ``list_dirs`` (recorded variant list), one ``list_files`` of ``build/`` (which files are
LFS files), and one ``fetch`` per variant.
Each downloaded variant is verified against its digest and against the lock hash (when
``kernels.lock.hashes`` has one for the locked commit; an upstream lock pins the commit only).

Like every cache write, a download goes into the folders of the hub it came from (``--hub``, else
the configured one; ``kernelkit.hub.hubid``), so ``get_kernel`` finds it (refs included) with that
hub configured. ``load_kernel`` needs no hub: the lock hash pins the content, so it also accepts
the locked commit from any other hub's folder of the repository (see ``kernelkit.lock.api``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kernelkit.errors import CommandError, HubError, LockError, RevisionNotFoundError
from kernelkit.hub.port import Hub, Refs
from kernelkit.lock.lockfile import LOCK_NAME, KernelLock, read_locks
from kernelkit.lock.project import read_dependencies
from kernelkit.lock.verify import record_lfs, verify_locked_variant

if TYPE_CHECKING:
    from kernelkit.loader.provider import VariantProvider


@dataclass(frozen=True)
class Downloaded:
    repo_id: str
    sha: str
    variant: str
    path: Path


def _dependency_versions(project_dir: Path) -> dict[str, int | str]:
    try:
        return {d.repo_id: d.version for d in read_dependencies(project_dir)}
    except LockError:
        return {}


def record_locked_refs(hub: Hub, cache_dir: Path, lock: KernelLock,
                       version: int | str | None) -> None:
    """Record every ref of the hub (for offline lookups by branch, tag or version), and make
    ``v<N>`` of a ``= N`` dependency point at the locked commit, which is what gets downloaded."""
    from kernelkit.loader.cache import RepoCache
    from kernelkit.loader.offline import record_refs

    rc = RepoCache.of(cache_dir, lock.repo_id, hub.hub_identity)
    refs = hub.list_refs(lock.repo_id)
    if isinstance(version, int) or (isinstance(version, str) and version.isdigit()):
        refs = Refs(branches={**refs.branches, f"v{int(version)}": lock.sha}, tags=refs.tags)
    record_refs(rc, refs)  # no hub stamp: this listing was edited, online loads list again


def download_lock(hub: Hub, cache_dir: Path, lock: KernelLock, *, all_variants: bool,
                  backend: str | None = None,
                  variant_provider: VariantProvider | None = None) -> list[Downloaded]:
    """This machine's variant of ``lock`` (or every variant), verified; with a
    ``variant_provider``, a variant no published one could be is built from the sources the lock
    pins (``kernelkit.lock.api.PinnedSources``), which also caches them for offline use."""
    from kernelkit.loader.api import install_kernel
    from kernelkit.loader.cache import RepoCache
    from kernelkit.loader.install import LazyHub, ensure_variant
    from kernelkit.loader.provider import is_built_locally
    from kernelkit.loader.resolve import variant_names
    from kernelkit.loader.settings import read_settings
    from kernelkit.lock.api import PinnedSources

    rc = RepoCache.of(cache_dir, lock.repo_id, hub.hub_identity)
    lazy = LazyHub(hub, lambda: hub)
    try:
        names = variant_names(lazy, rc, lock.sha, offline=False)
    except (CommandError, HubError) as exc:
        if _commit_missing(hub, lock):
            raise LockError(
                f"{LOCK_NAME} pins {lock.repo_id} to commit {lock.sha}, which the hub {hub} does "
                "not have", hint="the repository's history was rewritten, or the lock was made "
                "against another hub: run `kernelkit lock <project>` to lock what the hub has "
                "now, or pass the hub the lock was made with (--hub)") from exc
        raise
    if all_variants:
        progress = read_settings(cache_dir=cache_dir).progress_plan
        dirs = [ensure_variant(lazy, rc, lock.sha, v, offline=False, progress=progress)
                for v in names]
    else:
        provider = (PinnedSources(variant_provider, lock) if variant_provider is not None
                    else None)
        dirs = [install_kernel(lock.repo_id, revision=lock.sha, backend=backend, hub=hub,
                               cache_dir=cache_dir, variant_provider=provider)]
    listing = hub.list_files(lock.repo_id, lock.sha, "build")
    out = []
    for vdir in dirs:
        if is_built_locally(vdir):  # held to the sources the lock pins, not a variant hash
            out.append(Downloaded(lock.repo_id, lock.sha, vdir.name, vdir))
            continue
        record_lfs(vdir, listing)
        verify_locked_variant(vdir, lock)
        out.append(Downloaded(lock.repo_id, lock.sha, vdir.name, vdir))
    return out


def _commit_missing(hub: Hub, lock: KernelLock) -> bool:
    """Whether the hub says it has no commit ``lock.sha`` (asked only after a failure)."""
    try:
        hub.resolve(lock.repo_id, lock.sha)
    except RevisionNotFoundError:
        return True
    except (CommandError, HubError):
        return False
    return False


def download_locked(project_dir: Path, hub: Hub, cache_dir: Path, *, all_variants: bool = False,
                    backend: str | None = None,
                    variant_provider: VariantProvider | None = None) -> list[Downloaded]:
    """Download every kernel of ``project_dir/kernels.lock`` into ``cache_dir``."""
    path = project_dir / LOCK_NAME
    if not path.exists():  # anything else there is read_locks' to refuse, with a reason
        raise LockError(f"No kernels.lock file found in: {project_dir}",
                        hint=f"create it with `kernelkit lock {project_dir}`")
    versions = _dependency_versions(project_dir)
    out: list[Downloaded] = []
    for lock in read_locks(path):
        record_locked_refs(hub, cache_dir, lock, versions.get(lock.repo_id, lock.version))
        out += download_lock(hub, cache_dir, lock, all_variants=all_variants, backend=backend,
                             variant_provider=variant_provider)
    return out
