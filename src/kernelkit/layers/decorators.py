"""Mark layers (and functions) as replaceable by hub kernels."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from inspect import Parameter, Signature
from typing import Any, TypeVar

from kernelkit.errors import KernelMappingError

T = TypeVar("T")
Condition = Callable[[Any], bool]


def replace_kernel_forward_from_hub(cls: type, layer_name: str,
                                    condition: Condition | None = None) -> None:
    """Make ``cls`` (e.g. a third-party layer) kernelizable under ``layer_name``.

    ``condition(module) -> bool``, when given, is asked per instance at kernelize time;
    ``False`` keeps that instance's original forward.
    """
    if not isinstance(layer_name, str) or not layer_name:
        raise KernelMappingError(f"layer name for {cls!r} must be a non-empty string, "
                                 f"got {layer_name!r}")
    cls.kernel_layer_name = layer_name  # type: ignore[attr-defined]
    # staticmethod: reading it through an instance must not bind the module as `self`.
    cls.kernel_condition = staticmethod(condition) if condition else None  # type: ignore[attr-defined]


def use_kernel_forward_from_hub(layer_name: str,
                                condition: Condition | None = None) -> Callable[[Any], Any]:
    """Decorator: ``@use_kernel_forward_from_hub("SiluAndMul")`` on an ``nn.Module`` class marks
    it kernelizable and returns it unchanged. On a function, it returns an *instance* of a new
    ``nn.Module`` whose ``forward`` calls the function (attach it to a model with
    ``use_kernelized_func`` so that ``kernelize`` sees it)."""

    def decorator(obj: Any) -> Any:
        if inspect.isclass(obj):
            replace_kernel_forward_from_hub(obj, layer_name, condition)
            return obj
        if inspect.isfunction(obj):
            module_cls = module_from_function(obj)
            replace_kernel_forward_from_hub(module_cls, layer_name, condition)
            return module_cls()
        raise TypeError("@use_kernel_forward_from_hub can only be applied to classes or "
                        f"functions, not {type(obj).__name__}")

    return decorator


def module_from_function(func: Callable[..., Any]) -> type:
    from torch import nn

    def forward(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    sig = inspect.signature(func)
    forward.__signature__ = Signature(  # type: ignore[attr-defined]
        [Parameter("self", Parameter.POSITIONAL_OR_KEYWORD), *sig.parameters.values()],
        return_annotation=sig.return_annotation)
    attrs = {
        "forward": forward,
        "can_torch_compile": getattr(func, "can_torch_compile", False),
        "has_backward": getattr(func, "has_backward", True),
        "__doc__": func.__doc__,
        "__module__": func.__module__,
        "__qualname__": f"{func.__qualname__}.<kernel layer>",
    }
    return type(func.__name__, (nn.Module,), attrs)


def use_kernelized_func(*funcs: Any) -> Callable[[type[T]], type[T]]:
    """Class decorator: attach functions decorated with ``@use_kernel_forward_from_hub`` to
    every instance (as plain attributes, not sub-modules) so that ``kernelize`` sees them."""
    for fn in funcs:
        if not hasattr(fn, "kernel_layer_name"):
            name = getattr(fn, "__name__", repr(fn))
            raise KernelMappingError(f"Function `{name}` is not decorated with "
                                     "@use_kernel_forward_from_hub and cannot be used with "
                                     "@use_kernelized_func")

    def decorator(cls: type[T]) -> type[T]:
        original_init = cls.__init__

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            attached = self.__dict__.setdefault("_kernel_funcs", {})
            for fn in funcs:
                attached[getattr(fn, "__name__", None) or fn.kernel_layer_name] = fn

        cls.__init__ = __init__  # type: ignore[method-assign]
        return cls

    return decorator
