"""Import a variant directory under its unique module name (upstream-loader.md §2.7).

The module name is ``metadata.id`` (``_<python_name>_<backend>_<unique>``), so two versions of
one kernel live side by side, each with its torch ops under ``torch.ops.<id>``. The process
registry is keyed by variant path: loading the same variant twice returns the same module.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelModuleNotFoundError
from kernelkit.loader.deps import validate_python_depends

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
_by_id: dict[str, LoadedKernel] = {}  # metadata.id -> first loaded kernel with that id
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
    metadata = Metadata.read(variant_dir / "metadata.json")
    same_id = _by_id.get(metadata.id)
    if same_id is not None:
        # Same id = same source tree (the id embeds its git tree hash): the copy already loaded
        # is that kernel; importing again would register its torch ops twice.
        log.debug("%s has the id of an already loaded kernel (%s); reusing it", variant_dir,
                  metadata.id)
        module = same_id.module
    else:
        _warn_if_dirty(metadata, variant_dir)
        validate_python_depends(metadata)
        module = _exec(metadata.id, _entry_file(variant_dir, metadata))
    loaded = LoadedKernel(metadata, module, repo_info)
    _loaded[key] = loaded
    _by_id.setdefault(metadata.id, loaded)
    return module


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


def _exec(name: str, init: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, init)
    if spec is None or spec.loader is None:  # pragma: no cover - only for non-.py paths
        raise KernelModuleNotFoundError(f"cannot import {init} as a Python package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


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
