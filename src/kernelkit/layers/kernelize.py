"""``kernelize``: swap the forward of kernelizable layers for hub kernel layers.

Per layer instance the decision is made ahead of time (so ``torch.compile`` sees a plain
method): the mapping picks a repository (``mapping.choose_repository``), the kernel layer is
loaded once per repository and checked for purity, and the instance's ``forward`` is bound to
the kernel layer's ``forward`` (the repository is recorded on the instance, for
``get_kernelized_layers``). When nothing fits, or the kernel layer lacks what the mode needs
(``has_backward = False`` for ``Mode.TRAINING``, ``can_torch_compile`` for
``Mode.TORCH_COMPILE``), the original forward is kept, as upstream 0.19; ``use_fallback``
(a bool or ``KernelizeFallback`` flags) says in which cases a ``KernelMappingError`` is raised
instead. Every decision is logged on the ``kernelkit.layers`` logger.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MethodType
from typing import TYPE_CHECKING, Any

from kernelkit.errors import (
    KernelMappingError,
    KernelModuleNotFoundError,
    KernelNotFoundError,
    OfflineError,
    UsageError,
    VariantNotFoundError,
)
from kernelkit.layers.device import DEVICE_TYPES
from kernelkit.layers.fallback import FALLBACK_OF_MISS, KernelizeFallback, fallback_flags
from kernelkit.layers.mapping import (
    Choice,
    Miss,
    RepositoryProtocol,
    choose_repository,
    current_mapping,
    device_capability,
)
from kernelkit.layers.mode import Mode, validate_kernelize_mode
from kernelkit.layers.validate import unsupported_mode, validate_layer
from kernelkit.settings import DISABLE_KERNEL_MAPPING, process_environ

if TYPE_CHECKING:
    import torch
    from torch import nn

logger = logging.getLogger("kernelkit.layers")

# repository -> loaded kernel layer class; (repository, original class) pairs validated.
_LAYER_CACHE: dict[RepositoryProtocol, type] = {}
_VALIDATED: set[tuple[RepositoryProtocol, type]] = set()

#: the kernel is unavailable here, not refused: ``KernelizeFallback.CANNOT_LOAD`` may fall back
CANNOT_LOAD_ERRORS = (VariantNotFoundError, OfflineError, KernelNotFoundError,
                      KernelModuleNotFoundError, FileNotFoundError)
#: key of the repository a kernelized instance uses, in its ``__dict__`` (as upstream)
KERNEL_REPO_ATTR = "_kernel_repo"


def kernel_mapping_disabled(env: Mapping[str, str]) -> bool:
    """``DISABLE_KERNEL_MAPPING`` as a bool (``1``/``0``, also ``true``/``false``); another
    word is a ``KernelMappingError``."""
    try:
        return DISABLE_KERNEL_MAPPING.read(env)
    except UsageError as exc:
        raise KernelMappingError(exc.message, hint=exc.hint) from None


def kernelize(model: nn.Module, *, mode: Mode, device: str | torch.device | None = None,
              use_fallback: bool | KernelizeFallback = True) -> nn.Module:
    """Replace the forward of every kernelizable layer in ``model`` with the kernel layer the
    current mapping registers for ``device`` and ``mode``; returns ``model``.

    ``mode`` contains ``Mode.INFERENCE`` or ``Mode.TRAINING``, optionally ``| Mode.TORCH_COMPILE``.
    ``device`` defaults to the device of the model's first parameter (a ``torch.device`` with
    an index picks that GPU's capability). ``use_fallback``: ``True`` (``KernelizeFallback.
    DEFAULT``) keeps the original forward of layers without a fitting kernel, ``False``
    (``NONE``) raises ``KernelMappingError`` instead, ``KernelizeFallback`` flags choose per
    case (``ALL`` also falls back when a kernel cannot be loaded).
    ``DISABLE_KERNEL_MAPPING=1`` restores every original forward.
    """
    validate_kernelize_mode(mode)
    flags = fallback_flags(use_fallback)
    device_type = _device_type(model, device)
    disabled = kernel_mapping_disabled(process_environ())
    index = getattr(device, "index", None) if device is not None else None
    capability = None if disabled else device_capability(device_type, index)
    if disabled:
        logger.info("DISABLE_KERNEL_MAPPING is set: every kernelizable layer keeps its "
                    "original forward")
    for path, module in model.named_modules():
        for fname, func_module in getattr(module, "_kernel_funcs", {}).items():
            _kernelize_one(f"{path or '<model>'}.{fname}", func_module, mode, device_type,
                           capability, flags, disabled)
        if hasattr(type(module), "kernel_layer_name"):
            _kernelize_one(path or "<model>", module, mode, device_type, capability,
                           flags, disabled)
    return model


def _kernelize_one(path: str, module: nn.Module, mode: Mode, device_type: str,
                   capability: int | None, flags: KernelizeFallback, disabled: bool) -> None:
    cls = type(module)
    layer_name: str = cls.kernel_layer_name  # type: ignore[attr-defined]
    where = (f"kernelize: `{path}` ({cls.__name__}, layer `{layer_name}`) on {device_type}, "
             f"mode {mode.describe()}")
    if disabled:
        return _keep_original(module, f"{where}: original forward (DISABLE_KERNEL_MAPPING)")
    condition = getattr(cls, "kernel_condition", None)
    if condition is not None and not condition(module):
        return _keep_original(module, f"{where}: original forward (kernel_condition is False "
                                      f"for this instance)")
    choice = choose_repository(current_mapping(), layer_name, device_type, capability, mode)
    if choice.repo is None:
        assert choice.miss is not None
        return _fallback(module, where, choice.reason, flags, FALLBACK_OF_MISS[choice.miss],
                         level=logging.WARNING if choice.miss is Miss.NO_LAYER else logging.INFO)
    _apply_choice(module, choice, mode, where, flags)


def _apply_choice(module: nn.Module, choice: Choice, mode: Mode, where: str,
                  flags: KernelizeFallback) -> None:
    assert choice.repo is not None
    try:
        layer = load_layer(choice.repo, type(module))
    except CANNOT_LOAD_ERRORS as exc:
        if KernelizeFallback.CANNOT_LOAD not in flags:
            raise
        return _keep_original(module, f"{where}: original forward (kernel {choice.repo} "
                                      f"could not be loaded: {exc})", logging.WARNING)
    why_not = unsupported_mode(layer, mode)
    if why_not is not None:
        reason = (f"Available kernel {choice.repo} does not support mode {mode.describe()}: "
                  f"{why_not}")
        return _fallback(module, where, reason, flags, KernelizeFallback.NO_COMPATIBLE_MODE,
                         level=logging.INFO)
    module.forward = MethodType(layer.forward, module)  # type: ignore[attr-defined]  # layer: a type
    module.__dict__[KERNEL_REPO_ATTR] = choice.repo
    logger.info("%s: using %s (%s)", where, choice.repo, choice.reason)


def _fallback(module: nn.Module, where: str, reason: str, flags: KernelizeFallback,
              case: KernelizeFallback, level: int) -> None:
    if case not in flags:
        raise KernelMappingError(f"{where}: {reason}",
                                 hint="register a kernel for this layer, device and mode, or "
                                      f"let kernelize fall back (use_fallback=True, or "
                                      f"KernelizeFallback flags with {case.name})")
    _keep_original(module, f"{where}: original forward ({reason})", level)


def _keep_original(module: nn.Module, message: str, level: int = logging.INFO) -> None:
    """Restore the class's own forward (undoing an earlier kernelize of this instance)."""
    module.__dict__.pop("forward", None)
    module.__dict__.pop(KERNEL_REPO_ATTR, None)
    logger.log(level, "%s", message)


def load_layer(repo: RepositoryProtocol, original: type) -> type:
    """The kernel layer class of ``repo`` (loaded once), checked against ``original``."""
    layer = _LAYER_CACHE.get(repo)
    if layer is None:
        layer = repo.load()
        _LAYER_CACHE[repo] = layer
    if (repo, original) not in _VALIDATED:
        validate_layer(layer, original, repo)
        _VALIDATED.add((repo, original))
    return layer


def _device_type(model: nn.Module, device: Any) -> str:
    if device is None:
        return _model_device_type(model)
    if isinstance(device, str):
        dtype = device.split(":", 1)[0]
        if dtype not in DEVICE_TYPES:
            raise KernelMappingError(f"Unsupported device type {device!r} passed to kernelize",
                                     hint=f"use one of: {', '.join(sorted(DEVICE_TYPES))}")
        return dtype
    device_attr = getattr(device, "type", None)
    if not isinstance(device_attr, str):
        raise KernelMappingError(f"kernelize device must be a string or torch.device, "
                                 f"got {device!r}")
    return device_attr


def _model_device_type(model: nn.Module) -> str:
    import torch

    tensor: torch.Tensor | None = next(model.parameters(), None)
    if tensor is None:
        tensor = next(model.buffers(), None)
    if tensor is None:
        raise KernelMappingError("Cannot determine model device, provide as `device` argument "
                                 "to `kernelize`.", hint="e.g. kernelize(model, device='cuda', "
                                                         "mode=Mode.INFERENCE)")
    dtype = tensor.device.type
    if dtype == "cuda" and getattr(torch.version, "hip", None):
        return "rocm"
    return dtype
