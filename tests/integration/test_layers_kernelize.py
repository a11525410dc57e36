"""kernelize end to end with real loading: synthetic (pure-Python) kernels with a ``layers``
sub-module, laid out as sealed variant trees, loaded through ``get_local_kernel`` and, for hub
repositories, from a real local git hub and a real ``kernels.lock``."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from kernelkit.artifact.layout import seal_variant
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelLayerError, KernelMappingError
from kernelkit.layers import (
    KernelizeFallback,
    LayerRepository,
    LocalLayerRepository,
    LockedLayerRepository,
    Mode,
    kernelize,
    register_kernel_mapping,
    use_kernel_forward_from_hub,
    use_kernel_mapping,
)
from kernelkit.layers.decorators import use_kernelized_func
from kernelkit.variants.host import detect_system
from tests.helpers import build_files

HOST = detect_system().arch_variant() or "torch-cpu"
LOGGER = "kernelkit.layers"

INIT = '''\
import torch

from . import layers
from ._ops import ops, add_op_namespace_prefix

_lib = torch.library.Library({ns!r}, "DEF")
_lib.define("silu_and_mul(Tensor x) -> Tensor")


def _silu_and_mul(x):
    d = x.shape[-1] // 2
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


_lib.impl("silu_and_mul", _silu_and_mul, "CompositeImplicitAutograd")
'''

OPS = '''\
import torch

ops = getattr(torch.ops, {ns!r})


def add_op_namespace_prefix(op_name):
    return {ns!r} + "::" + op_name
'''

# `CALLS` counts kernel forwards (module state, not layer state). The other layers each break
# one rule that kernelize must enforce.
LAYERS = '''\
import torch
from torch import nn

from ._ops import ops

CALLS = []


class SiluAndMul(nn.Module):
    can_torch_compile = True
    has_backward = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        CALLS.append(tuple(x.shape))
        return ops.silu_and_mul(x)


class NoCompile(nn.Module):
    has_backward = True

    def forward(self, x):
        CALLS.append(tuple(x.shape))
        return ops.silu_and_mul(x)


class NoBackward(nn.Module):
    can_torch_compile = True
    has_backward = False

    def forward(self, x):
        return ops.silu_and_mul(x)


class WithInit(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ops.silu_and_mul(x)


class WithHelper(nn.Module):
    def forward(self, x):
        return self.helper(x)

    def helper(self, x):
        return ops.silu_and_mul(x)


class TwoInputs(nn.Module):
    def forward(self, x, y):
        return ops.silu_and_mul(x)
'''


def make_layer_kernel(root: Path, variant: str = HOST) -> Path:
    """A kernel build tree ``root/build/<variant>`` with a ``layers`` sub-module."""
    uid = uuid.uuid4().hex[:7]
    ns = f"_act_demo_cpu_{uid}"
    vdir = root / "build" / variant
    vdir.mkdir(parents=True)
    (vdir / "__init__.py").write_text(INIT.format(ns=ns))
    (vdir / "_ops.py").write_text(OPS.format(ns=ns))
    (vdir / "layers.py").write_text(LAYERS)
    seal_variant(vdir, Metadata(name="act-demo", id=ns, version=1, license="Apache-2.0",
                                backend="cpu"))
    return root


@use_kernel_forward_from_hub("SiluAndMul")
class SiluAndMul(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]


def make_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), SiluAndMul(), nn.Linear(16, 4))


def calls(model: nn.Sequential) -> list[Any]:
    forward: Any = model[1].forward
    return forward.__func__.__globals__["CALLS"]  # the kernel's layers module state


@pytest.fixture(autouse=True)
def scoped_mapping() -> Any:
    with use_kernel_mapping({}, inherit_mapping=False):
        yield


@pytest.fixture
def kernel_dir(tmp_path: Path) -> Path:
    return make_layer_kernel(tmp_path / "act")


def local(kernel_dir: Path, layer: str = "SiluAndMul") -> LocalLayerRepository:
    return LocalLayerRepository(kernel_dir, layer_name=layer)


def test_inference_uses_the_kernel_layer(kernel_dir: Path, caplog: Any) -> None:
    model = make_model()
    x = torch.randn(3, 16)
    expected = model(x)
    register_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_dir)}})
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert kernelize(model, mode=Mode.INFERENCE) is model
    assert "forward" in model[1].__dict__
    bound: Any = model[1].forward
    assert bound.__func__.__qualname__ == "SiluAndMul.forward"
    assert bound.__func__ is not SiluAndMul.forward
    torch.testing.assert_close(model(x), expected)
    assert calls(model) == [(3, 32)]
    line = next(r.getMessage() for r in caplog.records if r.name == LOGGER)
    assert "`1` (SiluAndMul, layer `SiluAndMul`) on cpu, mode INFERENCE: using" in line
    assert str(kernel_dir) in line and "registered for mode FALLBACK" in line


def test_training_gradients_match_the_original(kernel_dir: Path) -> None:
    reference, model = make_model(), make_model()
    x = torch.randn(5, 16)
    with use_kernel_mapping({"SiluAndMul": {"cpu": {Mode.TRAINING: local(kernel_dir)}}}):
        kernelize(model, mode=Mode.TRAINING)
    reference(x).square().sum().backward()
    model(x).square().sum().backward()
    assert calls(model)
    for p_ref, p in zip(reference.parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(p.grad, p_ref.grad)


def test_torch_compile_fullgraph(kernel_dir: Path) -> None:
    reference, model = make_model(), make_model()
    register_kernel_mapping({"SiluAndMul": {
        "cpu": {Mode.TRAINING | Mode.TORCH_COMPILE: local(kernel_dir)}}})
    kernelize(model, mode=Mode.TRAINING | Mode.TORCH_COMPILE)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    x = torch.randn(4, 16)
    out = compiled(x)
    torch.testing.assert_close(out, reference(x))
    out.sum().backward()
    reference(x).sum().backward()
    torch.testing.assert_close(model[0].weight.grad, reference[0].weight.grad)
    assert calls(model)  # traced through the kernel layer's forward


def test_no_kernel_for_the_device_falls_back(kernel_dir: Path, caplog: Any) -> None:
    model = make_model()
    x = torch.randn(2, 16)
    expected = model(x)
    register_kernel_mapping({"SiluAndMul": {"cuda": local(kernel_dir)}})
    with caplog.at_level(logging.INFO, logger=LOGGER):
        kernelize(model, mode=Mode.INFERENCE)  # device inferred from the parameters: cpu
    assert "forward" not in model[1].__dict__
    torch.testing.assert_close(model(x), expected)
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert any("original forward (no kernel mapping for `SiluAndMul` with device type `cpu` "
               "(mapped device types: cuda))" in m for m in messages), messages
    with pytest.raises(KernelMappingError, match="device type `cpu`"):
        kernelize(model, mode=Mode.INFERENCE, use_fallback=False)


def test_unmapped_layer_warns_and_falls_back(caplog: Any) -> None:
    model = make_model()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        kernelize(model, mode=Mode.INFERENCE, device="cpu")
    warning = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warning and "no kernel mapping for layer name `SiluAndMul`" in warning[0].getMessage()
    with pytest.raises(KernelMappingError, match="no kernel mapping for layer name"):
        kernelize(model, mode=Mode.INFERENCE, device="cpu", use_fallback=False)


def test_kernelize_again_is_reversible(kernel_dir: Path) -> None:
    model = make_model()
    register_kernel_mapping({"SiluAndMul": {"cpu": {Mode.INFERENCE: local(kernel_dir)}}})
    kernelize(model, mode=Mode.INFERENCE)
    assert "forward" in model[1].__dict__
    kernelize(model, mode=Mode.TRAINING)  # nothing registered for training: original again
    assert "forward" not in model[1].__dict__


def test_mode_unsupported_by_the_layer_falls_back(kernel_dir: Path, caplog: Any) -> None:
    model = make_model()
    register_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_dir, "NoCompile")}})
    kernelize(model, mode=Mode.INFERENCE)
    assert "forward" in model[1].__dict__  # eager inference: fine
    with caplog.at_level(logging.INFO, logger=LOGGER):
        kernelize(model, mode=Mode.INFERENCE | Mode.TORCH_COMPILE)
    assert "forward" not in model[1].__dict__
    assert any("does not support torch.compile" in r.getMessage() for r in caplog.records)
    with pytest.raises(KernelMappingError, match=r"does not support mode INFERENCE|TORCH_COMPILE"):
        kernelize(model, mode=Mode.INFERENCE | Mode.TORCH_COMPILE, use_fallback=False)


def test_training_without_backward_keeps_the_original_forward(kernel_dir: Path) -> None:
    """As upstream 0.19.1: a layer without backward serves inference, even registered for
    training, and in training mode the original forward stays (it used to raise)."""
    model = make_model()
    register_kernel_mapping({"SiluAndMul": {"cpu": {
        Mode.TRAINING: local(kernel_dir, "NoBackward")}}})
    kernelize(model, mode=Mode.INFERENCE)
    assert "forward" in model[1].__dict__
    kernelize(model, mode=Mode.TRAINING)
    assert "forward" not in model[1].__dict__
    kernelize(model, mode=Mode.TRAINING, use_fallback=KernelizeFallback.NO_COMPATIBLE_MODE)
    assert "forward" not in model[1].__dict__
    with pytest.raises(KernelMappingError, match="does not support backward"):
        kernelize(model, mode=Mode.TRAINING, use_fallback=False)
    with pytest.raises(KernelMappingError, match="does not support backward"):
        kernelize(model, mode=Mode.TRAINING, use_fallback=KernelizeFallback.NO_LAYER)


@pytest.mark.parametrize(("layer", "message"), [
    ("WithInit", "must not override nn.Module constructor"),
    ("WithHelper", "additional members.*helper"),
    ("TwoInputs", "different number of arguments"),
])
def test_impure_layers_are_rejected(kernel_dir: Path, layer: str, message: str) -> None:
    model = make_model()
    register_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_dir, layer)}})
    with pytest.raises(KernelLayerError, match=message):
        kernelize(model, mode=Mode.INFERENCE)
    assert "forward" not in model[1].__dict__


def test_missing_layer_names_what_exists(kernel_dir: Path) -> None:
    register_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_dir, "GeluAndMul")}})
    with pytest.raises(KernelMappingError, match="Layer `GeluAndMul` not found") as info:
        kernelize(make_model(), mode=Mode.INFERENCE)
    assert "SiluAndMul" in str(info.value)


def test_disable_kernel_mapping(kernel_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                caplog: Any) -> None:
    model = make_model()
    register_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_dir)}})
    kernelize(model, mode=Mode.INFERENCE)
    assert "forward" in model[1].__dict__
    monkeypatch.setenv("DISABLE_KERNEL_MAPPING", "1")
    with caplog.at_level(logging.INFO, logger=LOGGER):
        kernelize(model, mode=Mode.INFERENCE)
    assert "forward" not in model[1].__dict__
    assert any("DISABLE_KERNEL_MAPPING" in r.getMessage() for r in caplog.records)


def test_kernelized_function(kernel_dir: Path) -> None:
    @use_kernel_forward_from_hub("SiluAndMul")
    def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]

    @use_kernelized_func(silu_and_mul)
    class Block(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return silu_and_mul(x)

    block = Block()
    register_kernel_mapping({"SiluAndMul": {"cpu": local(kernel_dir)}})
    kernelize(block, mode=Mode.INFERENCE, device="cpu")
    assert "forward" in silu_and_mul.__dict__
    x = torch.randn(2, 8)
    torch.testing.assert_close(block(x), F.silu(x[..., :4]) * x[..., 4:])


def test_device_is_required_without_parameters(kernel_dir: Path) -> None:
    with pytest.raises(KernelMappingError, match="Cannot determine model device"):
        kernelize(SiluAndMul(), mode=Mode.INFERENCE)
    with pytest.raises(KernelMappingError, match="Unsupported device type 'gpu'"):
        kernelize(SiluAndMul(), mode=Mode.INFERENCE, device="gpu")


# --- hub repositories -----------------------------------------------------------------------


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from kernelkit.hub.local import LocalGitHub

    for var in ("LOCAL_KERNELS", "KERNELKIT_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KERNELKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "hub"))
    hub = LocalGitHub(tmp_path / "hub")
    build = make_layer_kernel(tmp_path / "src") / "build"
    files = build_files(build)
    sha = hub.publish("kernels-community/act-demo", "v1", files, delete_prefixes=("build/",))
    return {"hub": hub, "sha": sha, "tmp": tmp_path}


def test_layer_repository_from_a_local_hub(hub_env: dict[str, Any]) -> None:
    repo = LayerRepository("kernels-community/act-demo", layer_name="SiluAndMul", version=1)
    model = make_model()
    x = torch.randn(2, 16)
    expected = model(x)
    with use_kernel_mapping({"SiluAndMul": {"cpu": repo}}):
        kernelize(model, mode=Mode.INFERENCE)
    torch.testing.assert_close(model(x), expected)
    assert calls(model)
    assert str(repo) == (f"`kernels-community/act-demo` (revision: {hub_env['sha']}), "
                         "layer `SiluAndMul`")


def test_untrusted_layer_repository_is_refused(hub_env: dict[str, Any]) -> None:
    from kernelkit.errors import TrustError
    from kernelkit.hub.local import LocalGitHub

    build = make_layer_kernel(hub_env["tmp"] / "src2") / "build"
    files = build_files(build)
    LocalGitHub(hub_env["tmp"] / "hub").publish("someone/act-demo", "v1", files,
                                                delete_prefixes=("build/",))
    register_kernel_mapping({"SiluAndMul": {"cpu": LayerRepository(
        "someone/act-demo", layer_name="SiluAndMul", version=1)}})
    with pytest.raises(TrustError):
        kernelize(make_model(), mode=Mode.INFERENCE)
    register_kernel_mapping({"SiluAndMul": {"cpu": LayerRepository(
        "someone/act-demo", layer_name="SiluAndMul", version=1, trust_remote_code=True)}})
    kernelize(make_model(), mode=Mode.INFERENCE)


def test_locked_layer_repository(hub_env: dict[str, Any]) -> None:
    from kernelkit.lock.project import lock_project

    hub_env["hub"].tag("kernels-community/act-demo", "v1.0.0", hub_env["sha"])
    project = hub_env["tmp"] / "app"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\n\n[tool.kernels.dependencies]\n'
        '"kernels-community/act-demo" = ">=1"\n')
    lock_project(project, hub_env["hub"])
    repo = LockedLayerRepository("kernels-community/act-demo", lockfile=project,
                                 layer_name="SiluAndMul")
    assert repo.revision == hub_env["sha"]
    model = make_model()
    x = torch.randn(2, 16)
    expected = model(x)
    with use_kernel_mapping({"SiluAndMul": {"cpu": repo}}):
        kernelize(model, mode=Mode.INFERENCE)
    torch.testing.assert_close(model(x), expected)
    assert calls(model)
