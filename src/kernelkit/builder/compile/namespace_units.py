"""Which units of a ``[torch]`` project need the op namespace as a token.

The id changes with the sources (``generate.ids``), so whatever carries it recompiles when any
source changes. ``registration.h``'s ``TORCH_LIBRARY_EXPAND``, ``TORCH_LIBRARY_IMPL_EXPAND`` and
``REGISTER_EXTENSION`` applied to ``TORCH_EXTENSION_NAME`` take the namespace at run time from
the generated ``kernelkit_ops_id.c``, so a unit that uses only those needs nothing. A unit that
uses ``TORCH_EXTENSION_NAME`` otherwise (``STABLE_TORCH_LIBRARY_EXPAND``, ``PYBIND11_MODULE``,
``STRINGIFY``, its own macros), or whose ``registration.h`` is not kernelkit's, gets it as a
token (``-include cmake/kernelkit_ops_id.h``), and a project header that uses it gives it to
every unit. Comments are not uses. Read from the sources each build; the result goes into the
generated CMakeLists.txt.
"""

from __future__ import annotations

import re
from pathlib import Path

from kernelkit.generate.python import template
from kernelkit.manifest.model import KernelComponent, Manifest, TorchFramework

EVERY_UNIT = ("*",)
SOURCE_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".cu"})
HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl"})

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_TOKEN = re.compile(r"\bTORCH_EXTENSION_NAME\b")
_RUNTIME_USE = re.compile(r"\b(?:TORCH_LIBRARY_EXPAND|TORCH_LIBRARY_IMPL_EXPAND|"
                          r"REGISTER_EXTENSION)\s*\(\s*TORCH_EXTENSION_NAME\b")
_INCLUDES_REGISTRATION = re.compile(r'^[ \t]*#[ \t]*include[ \t]*["<]registration\.h[">]', re.M)


def _code(path: Path) -> str:
    try:
        return _COMMENTS.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return ""


def _groups(manifest: Manifest) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(sources, include dirs) of the binding and of each kernel component."""
    fw = manifest.framework
    assert isinstance(fw, TorchFramework)
    comps: list[KernelComponent] = sorted(manifest.kernels, key=lambda k: k.name)
    return [(fw.src, fw.include), *((k.src, k.include) for k in comps)]


def _shadowed(unit: Path, includes: list[Path], ours: str) -> bool:
    """Does ``#include "registration.h"`` in ``unit`` find a file that is not kernelkit's
    (the unit's directory first, then its include directories)?"""
    for d in [unit.parent, *includes]:
        found = d / "registration.h"
        if found.is_file():
            return found.read_text(encoding="utf-8", errors="replace") != ours
    return False


def _needs_token(unit: Path, includes: list[Path], ours: str) -> bool:
    code = _code(unit)
    uses = len(_TOKEN.findall(code))
    if not uses:
        return False
    runtime = len(_RUNTIME_USE.findall(code))
    return (runtime < uses or not _INCLUDES_REGISTRATION.search(code)
            or _shadowed(unit, includes, ours))


def _project_headers(root: Path, groups: list[tuple[tuple[str, ...], tuple[str, ...]]]
                     ) -> set[Path]:
    headers: set[Path] = set()
    for srcs, incs in groups:
        for rel in srcs:
            path = root / rel
            headers.update(p for p in path.parent.glob("*") if p.suffix in HEADER_SUFFIXES)
        for rel in incs:
            headers.update(p for p in (root / rel).rglob("*") if p.suffix in HEADER_SUFFIXES)
    return {h for h in headers if h.is_file() and h.name != "registration.h"}


def namespace_units(manifest: Manifest) -> tuple[str, ...]:
    """The project-relative sources that get ``TORCH_EXTENSION_NAME`` as a token, sorted;
    :data:`EVERY_UNIT` when a project header uses it."""
    if not isinstance(manifest.framework, TorchFramework):
        return ()
    root = manifest.root.resolve()
    groups = _groups(manifest)
    if any(_TOKEN.search(_code(h)) for h in sorted(_project_headers(root, groups))):
        return EVERY_UNIT
    ours = template("registration.h")
    units: set[str] = set()
    for srcs, incs in groups:
        dirs = [root / i for i in incs]
        units.update(rel for rel in srcs if Path(rel).suffix in SOURCE_SUFFIXES
                     and _needs_token(root / rel, dirs, ours))
    return tuple(sorted(units))
