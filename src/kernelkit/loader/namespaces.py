"""Native op namespaces: two different builds never register one namespace in one process.

A compiled kernel registers its torch ops with ``TORCH_LIBRARY(<namespace>, m)`` when its
extension is loaded, and torch *aborts the interpreter* (SIGABRT, no Python exception) when a
second library registers a namespace that is already taken. Two builds of one repository from
two hubs, or two rebuilds of one source tree, share the namespace (``_<name>_<backend>_<tree
id>``) but differ, so loading both used to kill the process (issue 24).

The namespace is known before anything is loaded: kernelkit's and upstream's builders name the
extension module after it (``<namespace>.abi3.so`` beside ``__init__.py``), so the extension
file names of a variant are its claims (:func:`extension_names`). :func:`check_claims` refuses a
variant whose claim is held by a different kernel loaded earlier in this process, by kernelkit
(:func:`claim`) or by anything else that imported an extension module of that name (upstream
``kernels``, a development build): ``OpNamespaceClashError`` naming both, raised before any of
the variant's code runs. The *same* kernel loaded twice (byte-identical ``metadata.json`` with a
digest) is reused by the importer and never reaches this check.

Limit: a kernel that registers a namespace its file names do not show (a hand-written extension
named otherwise) cannot be checked before it is loaded.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from kernelkit.errors import OpNamespaceClashError

_SUFFIXES = tuple(sorted({*EXTENSION_SUFFIXES, ".so", ".pyd"}, key=len, reverse=True))
_claims: dict[str, tuple[str, str]] = {}  # namespace -> (variant path, who loaded it)


def extension_names(package_dir: Path) -> set[str]:
    """The module names of the native extensions directly in ``package_dir`` (where builders
    put them): ``_relu_cuda_1a2b3c4.abi3.so`` -> ``_relu_cuda_1a2b3c4``."""
    names = set()
    try:
        with os.scandir(package_dir) as entries:
            for entry in entries:
                if entry.name.endswith(_SUFFIXES) and entry.is_file(follow_symlinks=False):
                    stem = entry.name.split(".", 1)[0]
                    if stem.isidentifier():
                        names.add(stem)
    except (FileNotFoundError, NotADirectoryError):
        pass
    return names


def check_claims(names: set[str], variant_dir: Path, who: str) -> None:
    """Raise ``OpNamespaceClashError`` if a namespace of ``names`` is already held by another
    kernel in this process (see the module docstring)."""
    for namespace in sorted(names):
        held = _claims.get(namespace)
        if held is not None and held[0] != str(variant_dir):
            raise OpNamespaceClashError(namespace, held[1], who)
        if held is None:
            foreign = _foreign_holder(namespace)
            if foreign is not None:
                raise OpNamespaceClashError(namespace, foreign, who)


def claim(names: set[str], variant_dir: Path, who: str) -> None:
    """Record that ``variant_dir`` (described as ``who``) registers ``names`` (before its code
    runs: a load that fails half-way may have registered them already)."""
    for namespace in names:
        _claims.setdefault(namespace, (str(variant_dir), who))


def _foreign_holder(namespace: str) -> str | None:
    """An extension module of that name imported by other means (``sys.modules``)."""
    for name, module in list(sys.modules.items()):
        if name != namespace and not name.endswith("." + namespace):
            continue
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(_SUFFIXES):
            return f"the extension module {name} ({file})"
    return None
