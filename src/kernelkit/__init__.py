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
    # loader
    "get_kernel": "kernelkit.loader.api",
    "get_local_kernel": "kernelkit.loader.api",
    "has_kernel": "kernelkit.loader.api",
    "install_kernel": "kernelkit.loader.api",
    "get_loaded_kernels": "kernelkit.loader.api",
    "get_kernel_variants": "kernelkit.loader.api",
    "get_kernel_dep": "kernelkit.loader.api",
    "LoadedKernel": "kernelkit.loader.api",
    "RepoInfo": "kernelkit.loader.api",
    # locking and offline deployment
    "load_kernel": "kernelkit.lock.api",
    "get_locked_kernel": "kernelkit.lock.api",
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

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from kernelkit.artifact.digest import Digest as Digest
    from kernelkit.artifact.metadata import Metadata as Metadata


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kernelkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
