"""Function repositories: a kernel's *function* as the replacement of a kernelizable function
(upstream 0.19's ``FuncRepository``, ``LocalFuncRepository``, ``LockedFuncRepository`` and
``use_kernel_func_from_hub``).

A function marked with ``use_kernel_func_from_hub("silu_and_mul")`` (the same as
``use_kernel_forward_from_hub`` on a function) becomes an ``nn.Module`` instance whose forward
calls it; attached to a model (as an attribute or with ``use_kernelized_func``), ``kernelize``
swaps that forward for the kernel's function ``func_name``, wrapped the same way. Each function
repository is the matching layer repository (same arguments, ``func_name`` for
``layer_name``) whose ``load()`` wraps ``kernel.<func_name>`` instead of reading
``kernel.layers``. Upstream marks this family deprecated in favour of the layer forms; kernelkit
keeps it working as is, and logs that note once per class (``kernelkit.layers`` logger).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from kernelkit.errors import KernelMappingError
from kernelkit.layers.decorators import module_from_function, use_kernel_forward_from_hub
from kernelkit.layers.repos import (
    LayerRepository,
    LocalLayerRepository,
    LockedLayerRepository,
    TrustArg,
)

if TYPE_CHECKING:
    from torch import nn

logger = logging.getLogger("kernelkit.layers")
_NOTED: set[str] = set()


def _note_deprecated(name: str, replacement: str) -> None:
    if name not in _NOTED:
        _NOTED.add(name)
        logger.warning("%s is deprecated upstream (kernels 0.19); use %s instead. kernelkit "
                       "keeps it working.", name, replacement)


def get_kernel_func(repo: object, kernel: ModuleType, func_name: str) -> type[nn.Module]:
    """``kernel.<func_name>`` wrapped as an ``nn.Module`` class whose forward calls it."""
    func = getattr(kernel, func_name, None)
    if func is None or not callable(func):
        names = [n for n in dir(kernel) if not n.startswith("_")
                 and callable(getattr(kernel, n)) and not isinstance(getattr(kernel, n), type)]
        raise KernelMappingError(f"Function `{func_name}` not found in `{repo}`",
                                 hint=f"functions it defines: {', '.join(names) or 'none'}")
    return module_from_function(func)


class FuncRepository(LayerRepository):
    """A function of a hub kernel: ``FuncRepository("org/name", func_name="f", version=1)``
    (arguments as ``LayerRepository``)."""

    def __init__(self, repo_id: str, *, func_name: str, revision: str | None = None,
                 version: int | None = None, trust_remote_code: TrustArg = False,
                 check_arch: bool = True) -> None:
        _note_deprecated("FuncRepository", "LayerRepository")
        super().__init__(repo_id, layer_name=func_name, revision=revision, version=version,
                         trust_remote_code=trust_remote_code, check_arch=check_arch)

    @property
    def func_name(self) -> str:
        return self.layer_name

    def load(self) -> type[nn.Module]:
        return get_kernel_func(self, self._load_kernel(), self.func_name)

    def __hash__(self) -> int:
        return hash(("hub-func", *self._key()))

    def __str__(self) -> str:
        return super().__str__().replace(", layer `", ", function `")

    __repr__ = __str__


class LocalFuncRepository(LocalLayerRepository):
    """A function of a kernel in a local directory (as ``LocalLayerRepository``)."""

    def __init__(self, repo_path: Path | str, *, func_name: str,
                 check_arch: bool = True) -> None:
        _note_deprecated("LocalFuncRepository", "LocalLayerRepository")
        super().__init__(repo_path, layer_name=func_name, check_arch=check_arch)

    @property
    def func_name(self) -> str:
        return self.layer_name

    def load(self) -> type[nn.Module]:
        return get_kernel_func(self, self._load_kernel(), self.func_name)

    def __hash__(self) -> int:
        return hash(("local-func", self.layer_name, self.repo_path, self.check_arch))

    def __str__(self) -> str:
        return f"`{self.repo_path}` (function `{self.func_name}`)"

    __repr__ = __str__


class LockedFuncRepository(LockedLayerRepository):
    """A function of a hub kernel pinned by ``kernels.lock`` (as ``LockedLayerRepository``,
    picklable the same way)."""

    def __init__(self, repo_id: str, *, lockfile: Path | str | None = None, func_name: str,
                 trust_remote_code: TrustArg = False, check_arch: bool = True) -> None:
        _note_deprecated("LockedFuncRepository", "LockedLayerRepository")
        super().__init__(repo_id, lockfile=lockfile, layer_name=func_name,
                         trust_remote_code=trust_remote_code, check_arch=check_arch)

    @property
    def func_name(self) -> str:
        return self.layer_name

    def load(self) -> type[nn.Module]:
        return get_kernel_func(self, self._load_kernel(), self.func_name)

    def __hash__(self) -> int:
        return hash(("locked-func", *self._key()))

    def __str__(self) -> str:
        return f"`{self.repo_id}` (revision: {self.revision}), function `{self.func_name}`"

    __repr__ = __str__


def use_kernel_func_from_hub(func_name: str) -> Callable[[Any], Any]:
    """Decorator: make a function kernelizable under ``func_name`` (the same as
    ``use_kernel_forward_from_hub`` on a function: it returns an ``nn.Module`` instance that
    calls the function; attach it to a model so that ``kernelize`` sees it)."""
    _note_deprecated("use_kernel_func_from_hub", "use_kernel_forward_from_hub")
    return use_kernel_forward_from_hub(func_name)
