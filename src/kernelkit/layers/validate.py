"""Purity checks: a kernel layer must be a stateless drop-in for the layer it replaces.

Its ``forward`` is bound to the *original* module instance, so it may only use that module's
attributes: it must not define ``__init__``, must add no members beyond ``forward`` and the
``can_torch_compile`` / ``has_backward`` class flags, and its ``forward`` must take the same
parameters (count and kinds) as the original's.
"""

from __future__ import annotations

import inspect
from typing import Any

from kernelkit.errors import KernelLayerError

ALLOWED_EXTRA_MEMBERS = frozenset({"can_torch_compile", "has_backward"})


def validate_layer(layer: Any, original: type, repo: object) -> None:
    """Raise ``KernelLayerError`` unless ``layer`` can replace ``original.forward``."""
    from torch import nn

    what = f"kernel layer `{getattr(layer, '__name__', layer)}` from {repo}"
    if not (inspect.isclass(layer) and issubclass(layer, nn.Module)):
        raise KernelLayerError(f"{what} is not a torch.nn.Module subclass",
                               hint="kernel layers are nn.Module classes with only a forward")
    if layer.__init__ is not nn.Module.__init__:
        raise KernelLayerError(
            f"{what} must not override nn.Module constructor (it defines __init__)",
            hint="kernel layers are stateless: forward uses the replaced module's attributes")
    extra = sorted(set(dir(layer)) - set(dir(nn.Module)) - ALLOWED_EXTRA_MEMBERS)
    if extra:
        raise KernelLayerError(
            f"{what} must not contain additional members compared to `{original.__name__}`: "
            f"{', '.join(extra)}",
            hint="only forward and the class flags can_torch_compile / has_backward are "
                 "allowed; move helpers to module-level functions")
    _check_forward_signature(layer, original, what)


def _check_forward_signature(layer: type, original: type, what: str) -> None:
    params = list(inspect.signature(layer.forward).parameters.values())  # type: ignore[attr-defined]
    ref = list(inspect.signature(original.forward).parameters.values())  # type: ignore[attr-defined]
    shown = f"{what}: forward{_fmt(params)} vs `{original.__name__}`.forward{_fmt(ref)}"
    if len(params) != len(ref):
        raise KernelLayerError(f"Forward signature does not match, different number of "
                               f"arguments: {shown}",
                               hint="the kernel layer's forward must accept exactly the "
                                    "original forward's parameters")
    for p, r in zip(params, ref, strict=True):
        if p.kind != r.kind:
            raise KernelLayerError(f"Forward signature does not match, different kind of "
                                   f"arguments ({p.name}: {p.kind.description}, {r.name}: "
                                   f"{r.kind.description}): {shown}",
                                   hint="use the same positional/keyword kinds as the original")


def _fmt(params: list[inspect.Parameter]) -> str:
    return "(" + ", ".join(str(p) for p in params) + ")"


def unsupported_mode(layer: type, mode: Any) -> str | None:
    """Why ``layer`` cannot serve the requested kernelize ``mode``, or ``None``."""
    from kernelkit.layers.mode import Mode

    if Mode.TORCH_COMPILE in mode and not getattr(layer, "can_torch_compile", False):
        return "the kernel layer does not support torch.compile (can_torch_compile is not True)"
    if Mode.TRAINING in mode and not getattr(layer, "has_backward", True):
        return "the kernel layer does not support backward (has_backward = False)"
    return None
