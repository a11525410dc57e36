"""``get_kernelized_layers``: which kernel each kernelized layer and function of a model uses
(upstream 0.19 names: ``KernelizedLayer``, ``KernelizedFunc``, ``KernelizedLayers``).

``kernelize`` records the repository on every instance whose forward it replaced (and removes
it when it restores the original forward), so the answer reflects the last ``kernelize``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernelkit.layers.kernelize import KERNEL_REPO_ATTR
from kernelkit.layers.mapping import RepositoryProtocol

if TYPE_CHECKING:
    from torch import nn


@dataclass(frozen=True)
class KernelizedLayer:
    """A kernelized layer (``module``) and the repository its kernel came from."""

    module: nn.Module
    repo: RepositoryProtocol


@dataclass(frozen=True)
class KernelizedFunc:
    """A kernelized function: the ``nn.Module`` wrapping it and the repository of its kernel."""

    module: nn.Module
    repo: RepositoryProtocol


@dataclass(frozen=True)
class KernelizedLayers:
    """The kernels a kernelized model uses. ``layers``: module name (as ``named_modules``
    gives it) -> layer; ``funcs``: (name of the module a function is attached to, function
    name) -> function (``use_kernelized_func``)."""

    layers: dict[str, KernelizedLayer] = field(default_factory=dict)
    funcs: dict[tuple[str, str], KernelizedFunc] = field(default_factory=dict)


def get_kernelized_layers(model: nn.Module) -> KernelizedLayers:
    """The layers and functions of ``model`` whose forward ``kernelize`` replaced, each with
    the repository it uses; layers that kept their original forward are not listed."""
    out = KernelizedLayers()
    for name, module in model.named_modules():
        repo = module.__dict__.get(KERNEL_REPO_ATTR)
        if repo is not None:
            out.layers[name] = KernelizedLayer(module, repo)
        for func_name, func_module in getattr(module, "_kernel_funcs", {}).items():
            repo = func_module.__dict__.get(KERNEL_REPO_ATTR)
            if repo is not None:
                out.funcs[(name, func_name)] = KernelizedFunc(func_module, repo)
    return out
