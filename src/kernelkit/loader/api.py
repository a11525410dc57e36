"""The public loader API: ``get_kernel`` & friends (upstream-loader.md §1.1).

Each public function reads the environment once (:func:`read_settings`) and passes explicit
values down. The hub is constructed only when a hub call is needed: a warm load pinned to a full
commit id (``revision=<40 hex>``, already cached) touches nothing but the cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import Rejection, VariantNotFoundError
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.importer import (
    LoadDeps,
    LoadedKernel,
    RepoInfo,
    import_variant,
    loaded_kernels,
)
from kernelkit.loader.install import LazyHub, ensure_variant
from kernelkit.loader.resolve import Resolved, TrustCheck, resolve_in
from kernelkit.loader.settings import Settings, read_settings
from kernelkit.loader.trust import check_trust
from kernelkit.variants.choose import Decision, best_variant, rank_variants
from kernelkit.variants.host import System, detect_system

if TYPE_CHECKING:  # not imported at run time: warm loads never need a hub
    from kernelkit.hub.port import Hub
    from kernelkit.loader.provider import VariantProvider

__all__ = [
    "LoadedKernel",
    "RepoInfo",
    "get_kernel",
    "get_kernel_dep",
    "get_kernel_variants",
    "get_loaded_kernels",
    "get_local_kernel",
    "has_kernel",
    "install_kernel",
]


def get_kernel(
    repo_id: str,
    revision: str | None = None,
    version: int | str | None = None,
    backend: str | None = None,
    user_agent: str | dict[str, str] | None = None,
    trust_remote_code: bool | Sequence[str] = False,
    *,
    check_arch: bool = True,
    hub: Hub | None = None,
    cache_dir: Path | None = None,
    require_signature: bool | None = None,
    variant_provider: VariantProvider | None = None,
) -> ModuleType:
    """Load a kernel from the hub: pick the variant for this machine, download and verify it
    once into the cache, import it under its unique module name.

    Exactly one of ``revision`` (branch, tag or commit id, short ids too) and ``version`` must
    be given: an integer major version (branch ``v<N>``) or a version specifier over release
    tags ``v<x.y.z>`` (``">=1.1,<2"``, ``"~=1.2"``; the newest matching release).
    ``LOCAL_KERNELS=repo=path:...`` overrides a repository with a local directory.
    ``user_agent`` is accepted for upstream compatibility; the local and git hubs send none.
    ``check_arch`` (default on, as upstream): refuse a build whose ``backend.archs`` do not
    cover the current GPU (``UnsupportedArchError``); pass ``False`` for a kernel whose declared
    archs are incomplete (a Triton fallback). The kernel's ``kernel-depends`` are loaded
    first, from the same hub, with the same trust, ``check_arch`` and ``require_signature``.

    Signatures (docs/security.md): a kernel whose organisation the trust policy lists
    (``KERNELKIT_TRUST_POLICY``) must be signed by one of its identities; with
    ``require_signature=True`` (default: ``KERNELKIT_REQUIRE_SIGNED``) every kernel must be
    (``SignatureError`` before anything of it is imported).

    A download of at least 16 MiB (``KERNELKIT_PROGRESS_MIN_BYTES``) reports its progress:
    one ``INFO`` record on the ``kernelkit.download`` logger when it ends (the library draws
    nothing on the terminal; ``kernelkit``'s commands do). ``KERNELKIT_PROGRESS=0`` turns this
    off; ``kernelkit.loader.progress.set_progress_reporter(callable)`` (or the ``with``-block
    form ``use_progress_reporter``) sends each ``DownloadStatus`` to your own callable instead
    (``kernelkit.cli.render_download.LineReporter(sys.stderr)`` draws the one-line bar). The
    signature stays upstream's: progress is configured by the environment and that setter.

    ``variant_provider`` (``kernelkit.loader.provider``): asked for a variant when no published
    one fits (``kernelkit.get_kernel(..., build_missing=True)`` passes the one that builds it
    from the published sources); the kernel's dependencies get it too.
    """
    settings = read_settings(cache_dir=cache_dir)
    if settings.local_kernels is not None:
        from kernelkit.loader.local import parse_local_kernels

        local = parse_local_kernels(settings.local_kernels).get(repo_id)
        if local is not None:  # as upstream: no trust check, no version check, backend ignored
            return get_local_kernel(local, check_arch=check_arch)

    def trust(repo: str) -> None:  # every repository on the way: the asked one, a redirect's
        check_trust(repo, trust_remote_code, settings.trusted_publishers)

    trust(repo_id)  # before any hub call: an untrusted repository downloads nothing
    variant_dir, resolved = _install(repo_id, revision, version, backend, hub, settings,
                                     offline=settings.offline, trust=trust,
                                     provider=variant_provider)
    from kernelkit.loader.signatures import check_signature

    check_signature(variant_dir, resolved.repo_id, settings=settings, require=require_signature,
                    hub=LazyHub(hub, settings.open_hub), commit=resolved.commit)
    deps = hub_dependency_loader(resolved.repo_id, backend=backend,
                                 trust_remote_code=trust_remote_code, check_arch=check_arch,
                                 hub=hub, cache_dir=cache_dir,
                                 require_signature=require_signature,
                                 variant_provider=variant_provider)
    return import_variant(variant_dir, RepoInfo(resolved.repo_id, resolved.commit),
                          check_arch=check_arch, load_deps=deps)


def hub_dependency_loader(root: str, *, backend: str | None,
                          trust_remote_code: bool | Sequence[str], check_arch: bool,
                          hub: Hub | None, cache_dir: Path | None,
                          require_signature: bool | None = None,
                          variant_provider: VariantProvider | None = None) -> LoadDeps:
    """What loads the ``kernel-depends`` of ``root``: ``get_kernel`` of each, depth first."""

    def load(metadata: Metadata, variant_dir: Path) -> dict[str, ModuleType]:
        from kernelkit.loader.kernel_deps import kernel_dependencies, load_dependencies

        return load_dependencies(
            root, kernel_dependencies(metadata, variant_dir / "metadata.json"),
            lambda dep: get_kernel(dep.repo_id, revision=dep.revision, version=dep.version,
                                   backend=backend, trust_remote_code=trust_remote_code,
                                   check_arch=check_arch, hub=hub, cache_dir=cache_dir,
                                   require_signature=require_signature,
                                   variant_provider=variant_provider))

    return load


def install_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | str | None = None,
    local_files_only: bool = False,
    backend: str | None = None,
    hub: Hub | None = None,
    cache_dir: Path | None = None,
    variant_provider: VariantProvider | None = None,
) -> Path:
    """Download (if needed) and verify this machine's variant; return its cache directory.
    No trust check and no import (as upstream). ``version`` and ``variant_provider`` as for
    :func:`get_kernel`."""
    settings = read_settings(cache_dir=cache_dir)
    return _install(repo_id, revision, version, backend, hub, settings,
                    offline=local_files_only or settings.offline, provider=variant_provider)[0]


def has_kernel(
    repo_id: str,
    revision: str | None = None,
    version: int | str | None = None,
    backend: str | None = None,
    *,
    check_arch: bool = True,
    hub: Hub | None = None,
    cache_dir: Path | None = None,
) -> bool:
    """Whether the repository (after a ``kernel-status.toml`` redirect) has a variant for this
    machine (with a ``metadata.json``); with ``check_arch`` (the default) its ``backend.archs``
    must also cover the current GPU."""
    settings, lazy, resolved, decisions = _rank(repo_id, revision, version, backend, hub,
                                                cache_dir)
    best = best_variant(decisions)
    if best is None:
        return False
    rc, commit = resolved.cache, resolved.commit
    cached = rc.variant_dir(commit, best) / "metadata.json"
    if cached.is_file():
        raw: bytes | None = cached.read_bytes()
    elif settings.offline:
        return False
    else:
        raw = lazy.get().read_file(rc.repo_id, commit, f"build/{best}/metadata.json")
    if raw is None:
        return False
    return not check_arch or _arch_fits(Metadata.loads(raw, f"{rc.repo_id}:build/{best}"), best)


def _arch_fits(metadata: Metadata, variant: str) -> bool:
    from kernelkit.errors import UnsupportedArchError
    from kernelkit.loader.arch import check_arch

    try:
        check_arch(metadata, Path(variant))
    except UnsupportedArchError:
        return False
    return True


def get_kernel_variants(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | str | None = None,
    backend: str | None = None,
    hub: Hub | None = None,
    cache_dir: Path | None = None,
) -> list[Decision]:
    """Every variant of the repository (after a ``kernel-status.toml`` redirect) with whether
    it fits this machine and why; accepted first, the preferred one leading."""
    return _rank(repo_id, revision, version, backend, hub, cache_dir)[3]


def rank_kernel_variants(repo_id: str, *, revision: str | None = None,
                         version: int | str | None = None, backend: str | None = None,
                         hub: Hub | None = None, cache_dir: Path | None = None
                         ) -> tuple[str, list[Decision]]:
    """:func:`get_kernel_variants` with the commit the revision or version resolved to."""
    _, _, resolved, decisions = _rank(repo_id, revision, version, backend, hub, cache_dir)
    return resolved.commit, decisions


def get_kernel_versions(repo_id: str, *, hub: Hub | None = None,
                        cache_dir: Path | None = None) -> dict[int, str]:
    """The major versions of ``repo_id`` (branches ``v<N>``) -> commit, from the hub (and
    recorded for offline use), or in offline mode from the refs recorded in the cache."""
    from kernelkit.loader.offline import cached_refs, record_refs
    from kernelkit.loader.versions import major_versions

    settings = read_settings(cache_dir=cache_dir)
    rc = RepoCache.of(settings.cache_dir, repo_id, settings.hub_identity(hub))
    if settings.offline:
        return major_versions(cached_refs(rc))
    refs = LazyHub(hub, settings.open_hub).get().list_refs(repo_id)
    record_refs(rc, refs)
    return major_versions(refs)


def _rank(repo_id: str, revision: str | None, version: int | str | None, backend: str | None,
          hub: Hub | None, cache_dir: Path | None
          ) -> tuple[Settings, LazyHub, Resolved, list[Decision]]:
    """Resolve the request and rank the variants for this machine (no download)."""
    settings = read_settings(cache_dir=cache_dir)
    system = detect_system(backend)
    lazy = LazyHub(hub, settings.open_hub, settings.refs_stamp)
    rc = RepoCache.of(settings.cache_dir, repo_id, settings.hub_identity(hub))
    resolved = resolve_in(lazy, rc, revision, version, offline=settings.offline)
    return settings, lazy, resolved, rank_variants(resolved.variants, system)


def get_local_kernel(repo_path: Path | str, backend: str | None = None, *,
                     check_arch: bool = True,
                     trust_remote_code: bool | Sequence[str] = False) -> ModuleType:
    """Import a kernel from a local directory: a repository root, its ``build/`` directory,
    or one variant directory. ``check_arch`` as for :func:`get_kernel`. Its
    ``kernel-depends`` are loaded from the hub (``trust_remote_code`` applies to them)."""
    from kernelkit.loader.local import find_local_variant

    variant_dir = find_local_variant(Path(repo_path), detect_system(backend)).resolve()
    deps = hub_dependency_loader(str(repo_path), backend=backend,
                                 trust_remote_code=trust_remote_code, check_arch=check_arch,
                                 hub=None, cache_dir=None)
    return import_variant(variant_dir, check_arch=check_arch, load_deps=deps)


def get_loaded_kernels() -> list[LoadedKernel]:
    """A new list of every kernel loaded in this process."""
    return loaded_kernels()


def get_kernel_dep(repo_id: str) -> ModuleType:
    """For a kernel's own code, while it is loaded: its dependency ``repo_id`` (from
    ``kernel-depends`` in its build.toml), already loaded (``loader/kernel_deps.py``)."""
    from kernelkit.loader.kernel_deps import get_kernel_dep as dep

    return dep(repo_id)


def _install(repo_id: str, revision: str | None, version: int | str | None, backend: str | None,
             hub: Hub | None, settings: Settings, *, offline: bool,
             trust: TrustCheck | None = None,
             provider: VariantProvider | None = None) -> tuple[Path, Resolved]:
    system = detect_system(backend)  # validates `backend` before any hub call
    lazy = LazyHub(hub, settings.open_hub, settings.refs_stamp)
    rc = RepoCache.of(settings.cache_dir, repo_id, settings.hub_identity(hub))
    return _install_in(lazy, rc, revision, version, system, settings, offline=offline,
                       trust=trust, provider=provider)


def install_from_folder(root: Path, repo_id: str, commit: str, *, backend: str | None = None,
                        cache_dir: Path | None = None) -> Path:
    """Offline install of ``commit`` from one given cache folder (``root``), whatever hub it
    was recorded for: only for a caller that verifies the result against a hash it already
    holds (``kernelkit.lock``'s ``load_kernel`` and the lock hash)."""
    settings = read_settings(cache_dir=cache_dir)
    rc = RepoCache(root, repo_id, f"(the cache folder {root.name})")
    lazy = LazyHub(None, settings.open_hub)
    return _install_in(lazy, rc, commit, None, detect_system(backend), settings, offline=True)[0]


def _install_in(lazy: LazyHub, rc: RepoCache, revision: str | None, version: int | str | None,
                system: System, settings: Settings, *, offline: bool,
                trust: TrustCheck | None = None,
                provider: VariantProvider | None = None) -> tuple[Path, Resolved]:
    resolved = resolve_in(lazy, rc, revision, version, offline=offline, trust=trust)
    decisions = rank_variants(resolved.variants, system)
    variant = best_variant(decisions)
    if variant is None:
        if provider is None:
            raise _no_variant(resolved, decisions, system)
        from kernelkit.loader.provider import MissingVariant

        return provider.provide(MissingVariant(resolved, decisions, system, lazy, settings,
                                               offline)), resolved
    return ensure_variant(lazy, resolved.cache, resolved.commit, variant, offline=offline,
                          progress=settings.progress_plan), resolved


def _no_variant(resolved: Resolved, decisions: list[Decision],
                system: System) -> VariantNotFoundError:
    return VariantNotFoundError(resolved.repo_id, resolved.label,
                                [Rejection(d.variant, d.reason) for d in decisions],
                                system=system.describe())
