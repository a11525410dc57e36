"""Import a variant in the ``zip`` build layout (``metadata.json`` ``"build-layout": "zip"``,
kernels >= 0.19): the Python package is the archive ``<metadata id>.zip`` (``__init__.py`` at
its root), compiled extensions sit beside it in the variant directory.

The package's submodule search path is the variant directory and then the archive, so
``from . import <extension>`` finds the ``.so`` on disk and ``from ._ops import ops`` the module
inside the archive (through the standard ``zipimport`` path hook). Package data is read from
the archive with ``importlib.resources``. The archive is a file of the variant, covered by the
digest like any other, and verified before this runs.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import zipfile
import zipimport
from pathlib import Path
from types import ModuleType
from typing import Any

from kernelkit.errors import KernelModuleNotFoundError

if sys.version_info >= (3, 11):
    from importlib.resources.abc import TraversableResources
else:  # pragma: no cover - Python 3.10
    from importlib.abc import TraversableResources


def archive_path(variant_dir: Path, kernel_id: str) -> Path:
    """``<variant>/<id>.zip``: where a zip-layout variant keeps its package."""
    return variant_dir / f"{kernel_id}.zip"


class _ArchiveResources(TraversableResources):
    def __init__(self, archive: Path) -> None:
        self._archive = archive

    def files(self) -> Any:
        return zipfile.Path(self._archive)


class _ArchivePackageLoader(importlib.abc.Loader):
    """Executes the archive's ``__init__.py`` as the package module."""

    def __init__(self, archive: Path) -> None:
        self._archive = archive
        self._zip = zipimport.zipimporter(str(archive))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        code = self._zip.get_code("__init__")
        exec(code, module.__dict__)

    def get_resource_reader(self, fullname: str) -> _ArchiveResources:
        return _ArchiveResources(self._archive)


def zip_spec(module_name: str, variant_dir: Path,
             kernel_id: str) -> importlib.machinery.ModuleSpec:
    """The spec of the package in ``<variant_dir>/<kernel_id>.zip``, imported as
    ``module_name``; :class:`KernelModuleNotFoundError` if the archive or its ``__init__.py``
    is missing."""
    archive = archive_path(variant_dir, kernel_id)
    try:
        with zipfile.ZipFile(archive) as zf:
            has_init = "__init__.py" in zf.namelist()
    except (OSError, zipfile.BadZipFile) as exc:
        raise KernelModuleNotFoundError(
            f"No kernel archive found at: {archive} ({exc})",
            hint="metadata.json says build-layout zip: the package must be <id>.zip in the "
                 "variant directory; rebuild or re-download the variant") from None
    if not has_init:
        raise KernelModuleNotFoundError(
            f"{archive} has no __init__.py at its root",
            hint="a zip-layout package keeps __init__.py at the archive's root; rebuild it")
    spec = importlib.machinery.ModuleSpec(module_name, _ArchivePackageLoader(archive),
                                          origin=f"{archive}/__init__.py", is_package=True)
    spec.submodule_search_locations = [str(variant_dir), str(archive)]
    spec.has_location = True
    return spec
