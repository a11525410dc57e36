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

from kernelkit.errors import Rejection, VariantNotFoundError
from kernelkit.loader.cache import RepoCache
from kernelkit.loader.importer import LoadedKernel, RepoInfo, import_variant, loaded_kernels
from kernelkit.loader.install import LazyHub, ensure_variant
from kernelkit.loader.resolve import Resolved, TrustCheck, resolve_in
from kernelkit.loader.settings import Settings, read_settings
from kernelkit.loader.trust import check_trust
from kernelkit.variants.choose import Decision, best_variant, rank_variants
from kernelkit.variants.host import System, detect_system

if TYPE_CHECKING:  # not imported at run time: warm loads never need a hub
    from kernelkit.hub.port import Hub

__all__ = [
    "LoadedKernel",
    "RepoInfo",
    "get_kernel",
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
    hub: Hub | None = None,
    cache_dir: Path | None = None,
) -> ModuleType:
    """Load a kernel from the hub: pick the variant for this machine, download and verify it
    once into the cache, import it under its unique module name.

    Exactly one of ``revision`` (branch, tag or commit id, short ids too) and ``version`` must
    be given: an integer major version (branch ``v<N>``) or a version specifier over release
    tags ``v<x.y.z>`` (``">=1.1,<2"``, ``"~=1.2"``; the newest matching release).
    ``LOCAL_KERNELS=repo=path:...`` overrides a repository with a local directory.
    ``user_agent`` is accepted for upstream compatibility; the local and git hubs send none.

    A download of at least 16 MiB (``KERNELKIT_PROGRESS_MIN_BYTES``) reports its progress:
    one ``INFO`` record on the ``kernelkit.download`` logger when it ends (the library draws
    nothing on the terminal; ``kernelkit``'s commands do). ``KERNELKIT_PROGRESS=0`` turns this
    off; ``kernelkit.loader.progress.set_progress_reporter(callable)`` (or the ``with``-block
    form ``use_progress_reporter``) sends each ``DownloadStatus`` to your own callable instead
    (``kernelkit.cli.render_download.LineReporter(sys.stderr)`` draws the one-line bar). The
    signature stays upstream's: progress is configured by the environment and that setter.
    """
    settings = read_settings(cache_dir=cache_dir)
    if settings.local_kernels is not None:
        from kernelkit.loader.local import parse_local_kernels

        local = parse_local_kernels(settings.local_kernels).get(repo_id)
        if local is not None:  # as upstream: no trust check, no version check, backend ignored
            return get_local_kernel(local)
    def trust(repo: str) -> None:  # every repository on the way: the asked one, a redirect's
        check_trust(repo, trust_remote_code, settings.trusted_publishers)

    trust(repo_id)  # before any hub call: an untrusted repository downloads nothing
    variant_dir, resolved = _install(repo_id, revision, version, backend, hub, settings,
                                     offline=settings.offline, trust=trust)
    return import_variant(variant_dir, RepoInfo(resolved.repo_id, resolved.commit))


def install_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | str | None = None,
    local_files_only: bool = False,
    backend: str | None = None,
    hub: Hub | None = None,
    cache_dir: Path | None = None,
) -> Path:
    """Download (if needed) and verify this machine's variant; return its cache directory.
    No trust check and no import (as upstream). ``version`` as for :func:`get_kernel`."""
    settings = read_settings(cache_dir=cache_dir)
    return _install(repo_id, revision, version, backend, hub, settings,
                    offline=local_files_only or settings.offline)[0]


def has_kernel(
    repo_id: str,
    revision: str | None = None,
    version: int | str | None = None,
    backend: str | None = None,
    *,
    hub: Hub | None = None,
    cache_dir: Path | None = None,
) -> bool:
    """Whether the repository (after a ``kernel-status.toml`` redirect) has a variant for this
    machine (with a ``metadata.json``)."""
    settings, lazy, resolved, decisions = _rank(repo_id, revision, version, backend, hub,
                                                cache_dir)
    best = best_variant(decisions)
    if best is None:
        return False
    rc, commit = resolved.cache, resolved.commit
    if (rc.variant_dir(commit, best) / "metadata.json").is_file():
        return True
    if settings.offline:
        return False
    return lazy.get().read_file(rc.repo_id, commit, f"build/{best}/metadata.json") is not None


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


def get_local_kernel(repo_path: Path | str, backend: str | None = None) -> ModuleType:
    """Import a kernel from a local directory: a repository root, its ``build/`` directory,
    or one variant directory."""
    from kernelkit.loader.local import find_local_variant

    variant_dir = find_local_variant(Path(repo_path), detect_system(backend))
    return import_variant(variant_dir.resolve())


def get_loaded_kernels() -> list[LoadedKernel]:
    """A new list of every kernel loaded in this process."""
    return loaded_kernels()


def _install(repo_id: str, revision: str | None, version: int | str | None, backend: str | None,
             hub: Hub | None, settings: Settings, *, offline: bool,
             trust: TrustCheck | None = None) -> tuple[Path, Resolved]:
    system = detect_system(backend)  # validates `backend` before any hub call
    lazy = LazyHub(hub, settings.open_hub, settings.refs_stamp)
    rc = RepoCache.of(settings.cache_dir, repo_id, settings.hub_identity(hub))
    return _install_in(lazy, rc, revision, version, system, settings, offline=offline,
                       trust=trust)


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
                trust: TrustCheck | None = None) -> tuple[Path, Resolved]:
    resolved = resolve_in(lazy, rc, revision, version, offline=offline, trust=trust)
    decisions = rank_variants(resolved.variants, system)
    variant = best_variant(decisions)
    if variant is None:
        raise _no_variant(resolved, decisions, system)
    return ensure_variant(lazy, resolved.cache, resolved.commit, variant, offline=offline,
                          progress=settings.progress_plan), resolved


def _no_variant(resolved: Resolved, decisions: list[Decision],
                system: System) -> VariantNotFoundError:
    return VariantNotFoundError(resolved.repo_id, resolved.label,
                                [Rejection(d.variant, d.reason) for d in decisions],
                                system=system.describe())
