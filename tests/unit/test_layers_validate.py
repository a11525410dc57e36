"""Purity checks of kernel layers and the decorators that mark layers kernelizable."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch
from torch import nn

from kernelkit.errors import KernelLayerError
from kernelkit.layers import Mode, replace_kernel_forward_from_hub, use_kernel_forward_from_hub
from kernelkit.layers.decorators import use_kernelized_func
from kernelkit.layers.validate import unsupported_mode, validate_layer


class Original(nn.Module):
    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        return x * self.scale


class Good(nn.Module):
    can_torch_compile = True
    has_backward = False

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        return x * self.scale * 2  # type: ignore[operator]  # the replaced module's attribute


def test_pure_layer_passes() -> None:
    validate_layer(Good, Original, "repo")


def test_layer_with_init_is_rejected() -> None:
    class WithInit(nn.Module):
        def __init__(self) -> None:
            super().__init__()

        def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
            return x

    with pytest.raises(KernelLayerError, match=r"must not override nn.Module constructor"):
        validate_layer(WithInit, Original, "repo")


@pytest.mark.parametrize("member", ["helper", "eps"])
def test_layer_with_extra_members_is_rejected(member: str) -> None:
    attrs = {"forward": Good.forward, member: (lambda self: 1) if member == "helper" else 1e-6}
    layer = type("Extra", (nn.Module,), attrs)
    with pytest.raises(KernelLayerError, match=f"additional members.*{member}") as info:
        validate_layer(layer, Original, "repo")
    assert isinstance(info.value, TypeError)  # upstream raises TypeError


def test_forward_signature_must_match() -> None:
    class FewerArgs(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    class KeywordOnly(nn.Module):
        def forward(self, x: torch.Tensor, *, y: torch.Tensor | None = None) -> torch.Tensor:
            return x

    with pytest.raises(KernelLayerError, match="different number of arguments"):
        validate_layer(FewerArgs, Original, "repo")
    with pytest.raises(KernelLayerError, match="different kind of arguments") as info:
        validate_layer(KeywordOnly, Original, "repo")
    assert "keyword-only" in str(info.value)


def test_non_module_is_rejected() -> None:
    class NotAModule:
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    with pytest.raises(KernelLayerError, match=r"not a torch.nn.Module"):
        validate_layer(NotAModule, Original, "repo")


def test_mode_support_flags() -> None:
    class Plain(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    # defaults as upstream: has_backward True, can_torch_compile False
    assert unsupported_mode(Plain, Mode.TRAINING) is None
    assert "torch.compile" in str(unsupported_mode(Plain, Mode.INFERENCE | Mode.TORCH_COMPILE))
    assert "backward" in str(unsupported_mode(Good, Mode.TRAINING))
    assert unsupported_mode(Good, Mode.INFERENCE | Mode.TORCH_COMPILE) is None


def test_class_decorator_marks_and_returns_the_class() -> None:
    @use_kernel_forward_from_hub("Act")
    class Act(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    assert isinstance(Act, type) and Act.kernel_layer_name == "Act"  # type: ignore[attr-defined]

    class ThirdParty(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    replace_kernel_forward_from_hub(ThirdParty, "TP", condition=lambda m: False)
    assert ThirdParty.kernel_layer_name == "TP"  # type: ignore[attr-defined]
    cond: Any = getattr(ThirdParty(), "kernel_condition")  # noqa: B009
    assert cond(ThirdParty()) is False  # not bound as a method


def test_function_decorator_builds_a_module_instance() -> None:
    def scale(x: torch.Tensor, factor: float = 2.0) -> torch.Tensor:
        return x * factor

    scale.can_torch_compile = True  # type: ignore[attr-defined]
    module = use_kernel_forward_from_hub("Scale")(scale)
    assert isinstance(module, nn.Module)
    cls: Any = type(module)
    assert cls.kernel_layer_name == "Scale"
    assert cls.can_torch_compile is True and cls.has_backward is True
    assert list(inspect.signature(cls.forward).parameters) == ["self", "x", "factor"]
    assert torch.equal(module(torch.ones(2)), torch.full((2,), 2.0))


def test_decorator_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="classes or functions"):
        use_kernel_forward_from_hub("X")(42)


def test_use_kernelized_func_needs_decorated_functions() -> None:
    def plain(x: torch.Tensor) -> torch.Tensor:
        return x

    with pytest.raises(ValueError, match="not decorated with @use_kernel_forward_from_hub"):
        use_kernelized_func(plain)
