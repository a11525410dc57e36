"""Import a variant directory under a unique module name (upstream-loader.md §2.7).

Upstream uses ``metadata.id`` as the module name. kernelkit does not: ``metadata.json`` is text
a hub provides, and a kernel whose id is ``json`` would replace ``sys.modules['json']``, or one
claiming another kernel's id would be returned for it. The module name comes from what kernelkit
controls (:func:`kernelkit.loader.identity.module_name`: the variant's absolute path), so two
versions of one kernel still live side by side (their torch ops stay under ``torch.ops.<id>``,
fixed in the compiled code). The registry is keyed by variant path, and a second copy of an
already loaded kernel is recognised only by identical content (same ``metadata.json`` bytes
with a digest of every file), never by its claimed id.

Kernel code runs from source only (:class:`SourceOnlyLoader`): bytecode is not covered by the
digest, so a ``.pyc`` planted in a cached variant (even one whose header matches the source)
is never read, and none is written. Two *different* builds that would register one torch op
namespace are refused before the second one's code runs (``namespaces.py``).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
import warnings
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
from kernelkit.errors import KernelkitError, KernelModuleNotFoundError
from kernelkit.loader.deps import validate_python_depends
from kernelkit.loader.identity import module_name
from kernelkit.loader.namespaces import check_claims, claim, extension_names

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


_loaded: dict[str, LoadedKernel] = {}  # variant path -> loaded kernel
_by_content: dict[str, LoadedKernel] = {}  # sha256 of a digest-carrying metadata.json -> kernel
_lock = threading.RLock()  # one import at a time, so two threads never exec a kernel twice


def loaded_kernels() -> list[LoadedKernel]:
    return list(_loaded.values())


def import_variant(variant_dir: Path, repo_info: RepoInfo | None = None) -> ModuleType:
    """Import ``variant_dir`` (absolute) once per process and return its module."""
    key = str(variant_dir)
    hit = _loaded.get(key)
    if hit is not None:
        return hit.module
    with _lock:
        hit = _loaded.get(key)
        return hit.module if hit is not None else _import_new(key, variant_dir, repo_info)


def _import_new(key: str, variant_dir: Path, repo_info: RepoInfo | None) -> ModuleType:
    raw = read_bytes(variant_dir / "metadata.json")  # the one read of a load
    metadata = Metadata.loads(raw, variant_dir / "metadata.json")
    content = _content_key(raw, metadata)
    same = _by_content.get(content) if content is not None else None
    if same is not None:
        # Byte-identical metadata.json with a digest of every file = the same kernel (the copy
        # in the cache and a local build of it): importing again would register its torch ops
        # twice. A kernel that only *claims* another's id has other bytes and is not reused.
        log.debug("%s is identical to an already loaded kernel; reusing it", variant_dir)
        module = same.module
    else:
        _warn_if_dirty(metadata, variant_dir)
        validate_python_depends(metadata)
        who = (f"{repo_info.repo_id}@{repo_info.revision[:12]} ({variant_dir})"
               if repo_info is not None else str(variant_dir))
        claims = extension_names(_extension_dir(variant_dir, metadata))  # before dlopen:
        check_claims(claims, variant_dir, who)  # torch aborts the process on a clash
        claim(claims, variant_dir, who)
        module = _exec(module_name(variant_dir, metadata.python_name), variant_dir, metadata)
    loaded = LoadedKernel(metadata, module, repo_info)
    _loaded[key] = loaded
    if content is not None:
        _by_content.setdefault(content, loaded)
    return module



def _content_key(raw: bytes, metadata: Metadata) -> str | None:
    """What identifies a kernel's content: only a metadata.json that carries a digest of every
    file pins the files too (and the caller verified that digest before importing)."""
    if metadata.digest is None or not raw:
        return None
    import hashlib

    return hashlib.sha256(raw).hexdigest()


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
