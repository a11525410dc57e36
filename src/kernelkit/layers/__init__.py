"""Layers API (upstream ``kernels`` names): mark layers kernelizable, map layer names to hub
kernel layers per device and mode, and ``kernelize`` a model.

Importing this package does not import torch; functions that need it import it when called.
"""

from kernelkit.layers.decorators import (
    replace_kernel_forward_from_hub,
    use_kernel_forward_from_hub,
    use_kernelized_func,
)
from kernelkit.layers.device import CUDAProperties, Device, ROCMProperties
from kernelkit.layers.fallback import KernelizeFallback
from kernelkit.layers.funcs import (
    FuncRepository,
    LocalFuncRepository,
    LockedFuncRepository,
    use_kernel_func_from_hub,
)
from kernelkit.layers.kernelize import kernelize
from kernelkit.layers.kernelized import (
    KernelizedFunc,
    KernelizedLayer,
    KernelizedLayers,
    get_kernelized_layers,
)
from kernelkit.layers.mapping import register_kernel_mapping, use_kernel_mapping
from kernelkit.layers.mode import Mode
from kernelkit.layers.repos import LayerRepository, LocalLayerRepository, LockedLayerRepository

__all__ = [
    "CUDAProperties",
    "Device",
    "FuncRepository",
    "KernelizeFallback",
    "KernelizedFunc",
    "KernelizedLayer",
    "KernelizedLayers",
    "LayerRepository",
    "LocalFuncRepository",
    "LocalLayerRepository",
    "LockedFuncRepository",
    "LockedLayerRepository",
    "Mode",
    "ROCMProperties",
    "get_kernelized_layers",
    "kernelize",
    "register_kernel_mapping",
    "replace_kernel_forward_from_hub",
    "use_kernel_forward_from_hub",
    "use_kernel_func_from_hub",
    "use_kernel_mapping",
    "use_kernelized_func",
]
