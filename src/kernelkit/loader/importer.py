"""Import a variant directory under a unique module name (upstream-loader.md §2.7).

Upstream uses ``metadata.id`` as the module name. kernelkit does not: ``metadata.json`` is text
a hub provides, and a kernel whose id is ``json`` would replace ``sys.modules['json']``. The
module name comes from what kernelkit controls (:func:`kernelkit.loader.identity.module_name`:
the variant's absolute path).

Loaded kernels are deduplicated by ``metadata.id``, as upstream 0.19: ids are unique per build
(the torch ops live under ``torch.ops.<id>``, fixed in the compiled code), so a second variant
with an id already loaded is the same kernel (a local build of a hub kernel, the same commit
from two caches) and gets the loaded module, after a digest comparison: a different build under
the same id (other files) raises :class:`KernelIdConflictError` and is never returned for the
loaded one, nor imported. Where neither build carries a digest, kernelkit hashes both trees
(upstream then reuses without comparing). The registry of ``get_loaded_kernels`` stays keyed by
variant path.

Before anything of a variant executes: ``kernels-minver`` (``loader/compat.py``), the device
arch (``check_arch``, ``loader/arch.py``), ``python-depends``, then its kernel dependencies
(``loader/kernel_deps.py``), which ``get_kernel_dep`` returns while the kernel's code runs.

Kernel code runs from source only (:class:`SourceOnlyLoader`): bytecode is not covered by the
digest, so a ``.pyc`` planted in a cached variant (even one whose header matches the source)
is never read, and none is written. Two *different* builds that would register one torch op
namespace (the extension's name, known before it is loaded) are refused before the second
one's code runs (``namespaces.py``): torch would abort the process.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib.machinery import (
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    SourceFileLoader,
)
from pathlib import Path
from types import CodeType, ModuleType

from kernelkit.artifact.metadata import Metadata, read_bytes
from kernelkit.errors import KernelIdConflictError, KernelkitError, KernelModuleNotFoundError
from kernelkit.loader.compat import check_kernels_minver
from kernelkit.loader.deps import validate_python_depends
from kernelkit.loader.identity import module_name
from kernelkit.loader.namespaces import check_claims, claim, extension_names

#: loads a kernel's ``kernel-depends`` (given its metadata and variant directory) -> repo id
#: -> module; each entry point passes the one that resolves them as it resolves the kernel
LoadDeps = Callable[[Metadata, Path], dict[str, ModuleType]]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RepoInfo:
    """Where a kernel loaded by ``get_kernel`` came from; ``revision`` is the full commit id."""

    repo_id: str
    revision: str


@dataclass(frozen=True)
class LoadedKernel:
    metadata: Metadata
    module: ModuleType
    repo_info: RepoInfo | None


@dataclass(frozen=True)
class _FirstBuild:
    """The first build imported for a ``metadata.id``: what later ones are compared with."""

    metadata: Metadata
    module: ModuleType
    variant_dir: Path


_loaded: dict[str, LoadedKernel] = {}  # variant path -> loaded kernel
_by_id: dict[str, _FirstBuild] = {}  # metadata.id -> the build imported for it
_lock = threading.RLock()  # one import at a time (reentrant: a kernel's dependencies load inside)


def loaded_kernels() -> list[LoadedKernel]:
    return list(_loaded.values())


def import_variant(variant_dir: Path, repo_info: RepoInfo | None = None, *,
                   check_arch: bool = True, load_deps: LoadDeps | None = None) -> ModuleType:
    """Import ``variant_dir`` (absolute) once per process and return its module.

    ``check_arch``: refuse a build whose ``backend.archs`` do not cover the current GPU.
    ``load_deps`` loads the kernel's ``kernel-depends`` first (none are loaded without it)."""
    key = str(variant_dir)
    hit = _loaded.get(key)
    if hit is None:
        with _lock:
            hit = _loaded.get(key)
            if hit is None:
                return _import_new(key, variant_dir, repo_info, check_arch, load_deps)
    if check_arch:  # loaded earlier, perhaps with check_arch=False
        _check_arch(hit.metadata, variant_dir)
    return hit.module


def _check_arch(metadata: Metadata, variant_dir: Path) -> None:
    if metadata.archs:  # the arch module (and torch) only for a build that declares archs
        from kernelkit.loader.arch import check_arch

        check_arch(metadata, variant_dir)


def _import_new(key: str, variant_dir: Path, repo_info: RepoInfo | None, check_arch: bool,
                load_deps: LoadDeps | None) -> ModuleType:
    meta_path = variant_dir / "metadata.json"
    metadata = Metadata.loads(read_bytes(meta_path), meta_path)  # the one read of a load
    check_kernels_minver(metadata, variant_dir)
    if check_arch:
        _check_arch(metadata, variant_dir)
    first = _by_id.get(metadata.id)
    if first is not None:
        # The same id: the same kernel (importing again would register its torch ops twice),
        # unless the digests differ, then one of the two is not what it claims.
        _check_same_build(first, metadata, variant_dir)
        log.debug("%s is the already loaded kernel %s; reusing it", variant_dir, metadata.id)
        module = first.module
    else:
        _warn_if_dirty(metadata, variant_dir)
        validate_python_depends(metadata)
        module = _exec_with_deps(metadata, variant_dir, load_deps, repo_info)
        _by_id[metadata.id] = _FirstBuild(metadata, module, variant_dir)
    _loaded[key] = LoadedKernel(metadata, module, repo_info)
    return module


def _exec_with_deps(metadata: Metadata, variant_dir: Path, load_deps: LoadDeps | None,
                    repo_info: RepoInfo | None) -> ModuleType:
    from kernelkit.loader.kernel_deps import providing

    who = (f"{repo_info.repo_id}@{repo_info.revision[:12]} ({variant_dir})"
           if repo_info is not None else str(variant_dir))
    claims = extension_names(_extension_dir(variant_dir, metadata))  # before dlopen: torch
    check_claims(claims, variant_dir, who)  # aborts the process on a namespace clash

    deps = load_deps(metadata, variant_dir) if load_deps and metadata.kernel_depends else {}
    claim(claims, variant_dir, who)
    with providing(deps):
        return _exec(module_name(variant_dir, metadata.python_name), variant_dir, metadata)


def _check_same_build(first: _FirstBuild, metadata: Metadata, variant_dir: Path) -> None:
    """``KernelIdConflictError`` unless ``variant_dir`` is the build ``first`` was imported from:
    the same file digests (and, where both carry kernelkit's, the same metadata digest)."""
    if first.variant_dir == variant_dir:
        return
    mine, theirs = metadata.digest, first.metadata.digest
    if mine is None and theirs is None:  # neither is sealed: hash both trees
        from kernelkit.artifact.digest import Digest

        mine, theirs = Digest.of_variant(variant_dir), Digest.of_variant(first.variant_dir)
    if mine is None or theirs is None:
        which = "the loaded build" if mine is None else "this build"
        differences = [f"{which} has a digest, the other does not"]
    else:
        differences = _differences(theirs.algorithm, theirs.files, mine.algorithm, mine.files)
        if not differences and mine.metadata and theirs.metadata \
                and mine.metadata != theirs.metadata:
            differences = ["metadata.json: different content"]
    if differences:
        raise KernelIdConflictError(kernel=metadata.name, variant=str(variant_dir),
                                    kernel_id=metadata.id, loaded=str(first.variant_dir),
                                    differences=differences)


def _differences(alg_a: str, a: dict[str, str], alg_b: str, b: dict[str, str]) -> list[str]:
    if alg_a != alg_b:
        return [f"digest algorithm: {alg_a} (loaded) vs {alg_b} (this build)"]
    out = [f"{p}: different content" for p in sorted(a.keys() & b.keys()) if a[p] != b[p]]
    out += [f"{p}: only in the loaded build" for p in sorted(a.keys() - b.keys())]
    out += [f"{p}: only in this build" for p in sorted(b.keys() - a.keys())]
    return out


def _entry_file(variant_dir: Path, metadata: Metadata) -> Path:
    flat = variant_dir / "__init__.py"
    if flat.is_file():
        return flat
    nested = variant_dir / metadata.python_name / "__init__.py"
    if nested.is_file():
        return nested
    raise KernelModuleNotFoundError(
        f"No kernel module found at: {variant_dir} (looked for __init__.py and "
        f"{metadata.python_name}/__init__.py)",
        hint="the variant directory is incomplete; rebuild or re-download it",
    )


def _extension_dir(variant_dir: Path, metadata: Metadata) -> Path:
    """Where the variant's compiled extensions are: beside ``<id>.zip`` for the zip layout,
    else in the package directory."""
    if metadata.build_layout == "zip":
        return variant_dir
    return _entry_file(variant_dir, metadata).parent


def _spec(name: str, variant_dir: Path, metadata: Metadata) -> importlib.machinery.ModuleSpec:
    """The package's spec: ``__init__.py`` on disk (imported from source only), or inside
    ``<id>.zip`` (build-layout zip; the archive itself is covered by the digest)."""
    if metadata.build_layout == "zip":
        from kernelkit.loader.zip_layout import zip_spec

        return zip_spec(name, variant_dir, metadata.id)
    init = _entry_file(variant_dir, metadata)
    package = init.parent
    _source_only(package)
    spec = importlib.util.spec_from_file_location(
        name, init, loader=SourceOnlyLoader(name, str(init)),
        submodule_search_locations=[str(package)])
    if spec is None or spec.loader is None:  # pragma: no cover - only for non-.py paths
        raise KernelModuleNotFoundError(f"cannot import {init} as a Python package")
    return spec


def _exec(name: str, variant_dir: Path, metadata: Metadata) -> ModuleType:
    if name in sys.modules:  # pragma: no cover - module_name is unique per variant path
        raise KernelkitError(f"module name {name} is already taken; {variant_dir} was not "
                             "imported")
    spec = _spec(name, variant_dir, metadata)
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


class SourceOnlyLoader(SourceFileLoader):
    """Kernel code runs from its verified source only: bytecode (``__pycache__``, ``.pyc``) is
    outside the digest, so it is neither read nor written (issue 24)."""

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


def _source_only(package: Path) -> None:
    """Make every module under ``package`` import through :class:`SourceOnlyLoader` (and
    extensions as usual; no sourceless ``.pyc``): the path finder asks
    ``sys.path_importer_cache`` for each directory of a package's ``__path__``."""
    loaders = ((ExtensionFileLoader, EXTENSION_SUFFIXES), (SourceOnlyLoader, SOURCE_SUFFIXES))
    for directory, dirs, _ in os.walk(package):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        sys.path_importer_cache[directory] = FileFinder(directory, *loaders)


def _warn_if_dirty(metadata: Metadata, variant_dir: Path) -> None:
    prov = metadata.provenance
    if prov is None or not prov.dirty:
        return
    sources = []
    if prov.kernel is not None and prov.kernel.dirty:
        sources.append("kernel source")
    if prov.builder_commit is not None and prov.builder_commit.dirty:
        sources.append("kernel-builder")
    warnings.warn(
        f"kernel {metadata.name} ({variant_dir}) was built from a dirty "
        f"{' and '.join(sources)} checkout; the build may not be reproducible",
        UserWarning,
        stacklevel=4,
    )
