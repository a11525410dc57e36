"""The `activation` scaffold template: what it renders, and (slow) the real thing: built for CPU
with kernelkit's builder, its own project tests run against the build, then published to a
local git hub and swapped into a model by ``kernelize``."""

from __future__ import annotations

import ast
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from kernelkit.layers import (
    LayerRepository,
    Mode,
    kernelize,
    use_kernel_forward_from_hub,
    use_kernel_mapping,
)
from kernelkit.scaffold.init import init_project, plan_project

REPO_ID = "kernels-community/activation"


def test_renders_sources_per_backend() -> None:
    both = plan_project(name=REPO_ID, template="activation", backends=["cpu", "cuda"])
    assert {"activation_cpu/silu_and_mul_cpu.cpp", "activation_cuda/silu_and_mul.cu",
            "torch-ext/activation/__init__.py", "torch-ext/activation/_silu_and_mul.py",
            "torch-ext/activation/layers.py", "tests/test_activation.py",
            "torch-ext/torch_binding.cpp", "build.toml", "CARD.md"} <= set(both)
    assert "[kernel.activation]" in both["build.toml"]
    assert "[kernel.activation_cpu]" in both["build.toml"]
    cpu = plan_project(name=REPO_ID, template="activation", backends=["cpu"])
    assert "activation_cuda/silu_and_mul.cu" not in cpu
    assert 'backend = "cuda"' not in cpu["build.toml"]


def test_python_sources_register_ops_in_the_build_namespace() -> None:
    files = plan_project(name="acme/my-act", template="activation", backends=["cpu"])
    for rel, text in files.items():
        if rel.endswith(".py"):
            ast.parse(text, filename=rel)  # valid Python after rendering
    ops = files["torch-ext/my_act/_silu_and_mul.py"]
    assert 'register_fake(add_op_namespace_prefix("silu_and_mul_fn"))' in ops
    # thin wrappers: the checks and the allocation live in the C++ ops
    assert "return ops.silu_and_mul_fn.default(x)" in ops
    assert "raise" not in ops and "new_empty(_out_shape(x))" not in ops.split("register_fake")[0]
    binding = files["torch-ext/torch_binding.cpp"]
    assert 'ops.def("silu_and_mul_fn(Tensor input) -> Tensor")' in binding
    assert 'ops.def("silu_and_mul(Tensor! out, Tensor input) -> ()")' in binding
    assert "TORCH_CHECK_VALUE(input.dim() >= 1 && input.size(-1) % 2 == 0" in binding
    # autograd in C++ too (no Python on a call), calling the ops through the dispatcher
    assert 'ops.impl("silu_and_mul_fn", c10::DispatchKey::Autograd' in binding
    assert '"::silu_and_mul_backward_fn"' in binding
    assert "::" not in ops.replace('"::"', "")  # no hard-coded op namespace
    layer = ast.parse(files["torch-ext/my_act/layers.py"])
    cls = next(n for n in layer.body if isinstance(n, ast.ClassDef) and n.name == "SiluAndMul")
    methods = [n.name for n in cls.body if isinstance(n, ast.FunctionDef)]
    assert methods == ["forward"]  # pure kernel layer: no __init__, no helpers


def test_rendered_manifest_loads(tmp_path: Path) -> None:
    from kernelkit.manifest import load_manifest  # type: ignore[attr-defined]

    init_project(tmp_path / "act", name=REPO_ID, template="activation", git=False)
    manifest = load_manifest(tmp_path / "act")
    assert manifest.general.name == "activation"
    assert sorted(k.backend for k in manifest.kernels) == ["cpu", "cuda"]


# --- slow: the real build -------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``kernelkit init --template activation`` + a real CPU build (once per module)."""
    from kernelkit.builder.api import build

    project = tmp_path_factory.mktemp("activation") / "activation"
    init_project(project, name=REPO_ID, template="activation", backends=["cpu"])
    build(project, python=Path(sys.executable), backends=["cpu"])
    return project


@use_kernel_forward_from_hub("SiluAndMul")
class SiluAndMul(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]


def make_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(24, 64), SiluAndMul(), nn.Linear(32, 3))


@pytest.mark.slow
def test_build_is_compliant(built: Path) -> None:
    """kernelkit check passes: e.g. no exp@GLIBC_2.29 from the CPU kernel's math (the shim)."""
    from kernelkit.check import check_build

    report = check_build(built / "build", python=Path(sys.executable))
    assert [str(f.message) for f in report.findings if f.severity == "error"] == []


@pytest.mark.slow
def test_project_tests_pass_against_the_build(built: Path) -> None:
    env = {**os.environ, "KERNEL_BUILD_DIR": str(built / "build")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests", "-q", "-p",
                           "no:cacheprovider"], cwd=built, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout.splitlines()[-1]


@pytest.mark.slow
def test_shipped_benchmark_runs_verified_against_the_build(built: Path, tmp_path: Path) -> None:
    """`kernelkit init` projects benchmark out of the box (the img2gray template's run, with
    torch.compile and charts, is tests/integration/test_benchmark_img2gray.py)."""
    import json

    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "kernelkit", "benchmark", str(built),
                           "--no-compile", "--no-roofline", "--min-time", "0.02", "--max-time",
                           "0.5", "--output", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    cases = json.loads(out.read_text())["cases"]
    assert [c["name"] for c in cases] == ["SiluAndMulBenchmark.large", "SiluAndMulBenchmark.small"]
    assert all(c["status"] == "ok" and c["series"]["reference"]["status"] == "timed"
               for c in cases)


@pytest.fixture
def hub_repo(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LayerRepository:
    from kernelkit.hub.local import LocalGitHub
    from kernelkit.publish.upload import upload

    for var in ("LOCAL_KERNELS", "KERNELKIT_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "hub"))
    monkeypatch.setenv("KERNELKIT_CACHE", str(tmp_path / "cache"))
    upload(built, LocalGitHub(tmp_path / "hub"))
    return LayerRepository(REPO_ID, layer_name="SiluAndMul", version=1)


@pytest.mark.slow
def test_kernelize_with_the_built_kernel(hub_repo: LayerRepository, caplog: Any) -> None:
    reference, model = make_model(), make_model()
    mapping = {"SiluAndMul": {"cpu": {Mode.TRAINING | Mode.TORCH_COMPILE: hub_repo}}}
    with use_kernel_mapping(mapping), caplog.at_level(logging.INFO, "kernelkit.layers"):
        kernelize(model, mode=Mode.TRAINING | Mode.TORCH_COMPILE)
    bound: Any = model[1].forward
    assert bound.__func__.__module__.endswith(".layers")  # the kernel's SiluAndMul.forward
    assert any("using `kernels-community/activation` (revision: " in r.getMessage()
               for r in caplog.records)

    x = torch.randn(6, 24)
    out = model(x)
    want = reference(x)
    torch.testing.assert_close(out, want)
    out.square().sum().backward()
    want.square().sum().backward()
    for p, p_ref in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.grad, p_ref.grad)

    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(model, backend=counter, fullgraph=True)
    x2 = torch.randn(5, 24, requires_grad=True)
    x2_ref = x2.detach().clone().requires_grad_()
    torch.testing.assert_close(compiled(x2), reference(x2_ref))
    compiled(x2).sum().backward()
    reference(x2_ref).sum().backward()
    torch.testing.assert_close(x2.grad, x2_ref.grad)
    assert counter.frame_count == 1


@pytest.mark.slow
def test_only_cuda_mapped_falls_back_on_cpu(hub_repo: LayerRepository, caplog: Any) -> None:
    model = make_model()
    x = torch.randn(2, 24)
    expected = model(x)
    with use_kernel_mapping({"SiluAndMul": {"cuda": hub_repo}}, inherit_mapping=False), \
            caplog.at_level(logging.INFO, "kernelkit.layers"):
        kernelize(model, mode=Mode.INFERENCE)
    assert "forward" not in model[1].__dict__
    torch.testing.assert_close(model(x), expected)
    assert any("original forward (no kernel mapping for `SiluAndMul` with device type `cpu`"
               in r.getMessage() for r in caplog.records)
