"""Dependency ids a manifest may name: C++ ``depends`` of kernels and ``python-depends``.

The Python table is data (``python_dependencies.json``, the same shape and ids as upstream's
``kernels-data/src/python_dependencies.json``): ``general`` ids are allowed for every backend,
``backends.<backend>`` ids only in ``[general.<backend>] python-depends``. A backend with no
entry (``tpu``) allows none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from kernelkit.manifest.model import General, KernelComponent, KernelDependency

# ``[kernel.*] depends`` ids (upstream ``config/deps.rs``).
DEPENDENCY_IDS: tuple[str, ...] = (
    "torch",
    "cutlass_2_10",
    "cutlass_3_5",
    "cutlass_3_6",
    "cutlass_3_8",
    "cutlass_3_9",
    "cutlass_4_0",
    "cutlass_4_4",
    "cutlass_4_5",
    "sycl_tla",
    "metal-cpp",
)



@dataclass(frozen=True)
class CutlassRelease:
    """What a ``cutlass_X_Y`` id means: the CUTLASS series, upstream's release tag (what
    upstream's CMake fetches), and the ``nvidia-cutlass`` PyPI wheel that ships the same
    headers under ``cutlass_library/source`` (``None``: no such wheel on PyPI)."""

    version: str
    tag: str
    wheel_version: str | None


CUTLASS_WHEEL = "nvidia-cutlass"
CUTLASS_WHEEL_ROOT = "cutlass_library/source"  # holds include/ and tools/util/include/

CUTLASS_RELEASES: dict[str, CutlassRelease] = {
    "cutlass_2_10": CutlassRelease("2.10", "v2.10.0", None),
    "cutlass_3_5": CutlassRelease("3.5", "v3.5.1", "3.5.1.0"),
    "cutlass_3_6": CutlassRelease("3.6", "v3.6.0", "3.6.0.0"),
    "cutlass_3_8": CutlassRelease("3.8", "v3.8.0", "3.8.0.0"),
    "cutlass_3_9": CutlassRelease("3.9", "v3.9.2", None),
    "cutlass_4_0": CutlassRelease("4.0", "v4.0.0", None),
    "cutlass_4_4": CutlassRelease("4.4", "v4.4.0", None),
    "cutlass_4_5": CutlassRelease("4.5", "v4.5.2", None),
}


def cutlass_env_var(dep_id: str) -> str:
    """The environment variable naming a local CUTLASS root for ``dep_id``."""
    return f"KERNELKIT_{dep_id.upper()}_DIR"


def cutlass_depends(kernels: tuple[KernelComponent, ...], backend: str = "cuda") -> tuple[str, ...]:
    """Sorted CUTLASS ids that the ``backend`` kernels of a manifest depend on."""
    return tuple(sorted({d for k in kernels if k.backend == backend for d in k.depends
                         if d in CUTLASS_RELEASES}))


# ``[general.<backend>]`` tables that may carry ``python-depends`` / ``kernel-depends``.
PYTHON_DEPENDS_BACKENDS: tuple[str, ...] = ("cuda", "neuron", "tpu", "xpu")
KERNEL_DEPENDS_BACKENDS: tuple[str, ...] = ("cuda", "neuron", "xpu")


@dataclass(frozen=True)
class PythonPackage:
    """One pip requirement behind a python-depends id; ``import_name`` may be unknown."""

    pkg: str
    import_name: str | None = None


@lru_cache(maxsize=1)
def python_dependency_table() -> dict[str, Any]:
    """The parsed ``python_dependencies.json``."""
    text = resources.files("kernelkit.manifest").joinpath("python_dependencies.json").read_text()
    table: dict[str, Any] = json.loads(text)
    return table


def python_dependency_ids(backend: str | None = None) -> tuple[str, ...] | None:
    """Allowed ids: general ones (``backend=None``), or a backend's; ``None`` if it has none."""
    table = python_dependency_table()
    if backend is None:
        return tuple(table["general"])
    entry = table["backends"].get(backend)
    return None if entry is None else tuple(entry)


def python_packages(dep_id: str, backend: str | None = None) -> tuple[PythonPackage, ...]:
    """The pip packages behind one id (general, or of ``backend``); KeyError if unknown."""
    table = python_dependency_table()
    scope = table["general"] if backend is None else table["backends"].get(backend, {})
    return tuple(PythonPackage(p["pkg"], p.get("import")) for p in scope[dep_id]["python"])


def python_depends_for(general: General, backend: str) -> tuple[str, ...]:
    """General python-depends ids followed by the ids of ``[general.<backend>]``.

    Upstream drops ``general.neuron.python-depends`` here (a quirk); kernelkit keeps them.
    """
    extra = getattr(general, backend, None) if backend in PYTHON_DEPENDS_BACKENDS else None
    return general.python_depends + (extra.python_depends if extra is not None else ())


def all_kernel_depends(general: General) -> tuple[KernelDependency, ...]:
    """``kernel-depends`` of ``[general]`` then of ``[general.cuda/neuron/xpu]``."""
    deps = list(general.kernel_depends)
    for backend in KERNEL_DEPENDS_BACKENDS:
        extra = getattr(general, backend)
        if extra is not None:
            deps.extend(extra.kernel_depends)
    return tuple(deps)
