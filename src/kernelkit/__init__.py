"""kernelkit: write, build, ship and load custom PyTorch kernels.

The public API is loaded lazily: ``import kernelkit`` imports neither torch nor
huggingface_hub; the first use of a name imports the module that defines it.
"""

from __future__ import annotations

import importlib

from kernelkit._version import __version__

# Not ``from typing import TYPE_CHECKING``: importing ``typing`` costs ~15 ms, most of what
# ``import kernelkit`` would cost; type checkers treat this constant the same way.
TYPE_CHECKING = False

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # loader (the loaders that can fetch are source_build's: the loader's own plus
    # `build_missing`, docs/design.md "Building a missing variant")
    "get_kernel": "kernelkit.source_build.api",
    "get_local_kernel": "kernelkit.loader.api",
    "has_kernel": "kernelkit.loader.api",
    "install_kernel": "kernelkit.source_build.api",
    "get_loaded_kernels": "kernelkit.loader.api",
    "get_kernel_variants": "kernelkit.loader.api",
    "get_kernel_dep": "kernelkit.loader.api",
    "LoadedKernel": "kernelkit.loader.api",
    "RepoInfo": "kernelkit.loader.api",
    # locking and offline deployment
    "load_kernel": "kernelkit.source_build.api",
    "get_locked_kernel": "kernelkit.source_build.api",
    # layers
    "kernelize": "kernelkit.layers",
    "Mode": "kernelkit.layers",
    "Device": "kernelkit.layers",
    "CUDAProperties": "kernelkit.layers",
    "ROCMProperties": "kernelkit.layers",
    "use_kernelized_func": "kernelkit.layers",
    "LayerRepository": "kernelkit.layers",
    "LocalLayerRepository": "kernelkit.layers",
    "LockedLayerRepository": "kernelkit.layers",
    "use_kernel_forward_from_hub": "kernelkit.layers",
    "replace_kernel_forward_from_hub": "kernelkit.layers",
    "use_kernel_mapping": "kernelkit.layers",
    "register_kernel_mapping": "kernelkit.layers",
    "KernelizeFallback": "kernelkit.layers",
    "get_kernelized_layers": "kernelkit.layers",
    "KernelizedLayer": "kernelkit.layers",
    "KernelizedFunc": "kernelkit.layers",
    "KernelizedLayers": "kernelkit.layers",
    "FuncRepository": "kernelkit.layers",
    "LocalFuncRepository": "kernelkit.layers",
    "LockedFuncRepository": "kernelkit.layers",
    "use_kernel_func_from_hub": "kernelkit.layers",
    # data
    "Metadata": "kernelkit.artifact.metadata",
    "Digest": "kernelkit.artifact.digest",
}

__all__ = ["__version__", *_EXPORTS]  # noqa: PLE0604 - the keys of a dict[str, str]

# Type checkers see every export with its real type (mypy: `kernelkit.get_kernel` is the
# function, not Any); at run time the names load lazily through __getattr__ below.
# tests/unit/test_public_api.py holds this block and _EXPORTS together.
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from kernelkit.artifact.digest import Digest as Digest
    from kernelkit.artifact.metadata import Metadata as Metadata
    from kernelkit.layers import (
        CUDAProperties as CUDAProperties,
        Device as Device,
        FuncRepository as FuncRepository,
        KernelizedFunc as KernelizedFunc,
        KernelizedLayer as KernelizedLayer,
        KernelizedLayers as KernelizedLayers,
        KernelizeFallback as KernelizeFallback,
        LayerRepository as LayerRepository,
        LocalFuncRepository as LocalFuncRepository,
        LocalLayerRepository as LocalLayerRepository,
        LockedFuncRepository as LockedFuncRepository,
        LockedLayerRepository as LockedLayerRepository,
        Mode as Mode,
        ROCMProperties as ROCMProperties,
        get_kernelized_layers as get_kernelized_layers,
        kernelize as kernelize,
        register_kernel_mapping as register_kernel_mapping,
        replace_kernel_forward_from_hub as replace_kernel_forward_from_hub,
        use_kernel_forward_from_hub as use_kernel_forward_from_hub,
        use_kernel_func_from_hub as use_kernel_func_from_hub,
        use_kernel_mapping as use_kernel_mapping,
        use_kernelized_func as use_kernelized_func,
    )
    from kernelkit.loader.api import (
        LoadedKernel as LoadedKernel,
        RepoInfo as RepoInfo,
        get_kernel_dep as get_kernel_dep,
        get_kernel_variants as get_kernel_variants,
        get_loaded_kernels as get_loaded_kernels,
        get_local_kernel as get_local_kernel,
        has_kernel as has_kernel,
    )
    from kernelkit.source_build.api import (
        get_kernel as get_kernel,
        get_locked_kernel as get_locked_kernel,
        install_kernel as install_kernel,
        load_kernel as load_kernel,
    )

def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kernelkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
