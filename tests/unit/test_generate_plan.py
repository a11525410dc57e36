"""Planning a variant build (pure): names, namespaces, C++ standard, capabilities, refusals."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kernelkit.builder.plan.variant_plan import plan_variant
from kernelkit.builder.toolchain.probe import TorchEnv
from kernelkit.builder.toolchain.toolkit import CudaToolkit
from kernelkit.errors import KernelkitError, NotBuildableError
from kernelkit.manifest import parse_manifest

MANIFEST = """
[general]
name = "img2gray"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[torch]
src = ["torch-ext/torch_binding.cpp"]
{torch_extra}

[kernel.img2gray]
backend = "cuda"
depends = ["torch"]
src = ["img2gray_cuda/img2gray.cu"]
{cuda_extra}

[kernel.img2gray_cpu]
backend = "cpu"
depends = ["torch"]
src = ["img2gray_cpu/img2gray_cpu.cpp"]
"""

CPU_ENV = TorchEnv(
    python=Path("/env/bin/python"), python_version="3.11.7", python_include=Path("/inc"),
    torch_version="2.13.0+cpu", cuda=None, hip=None, cxx11_abi=True,
    cmake_prefix_path=Path("/t/share/cmake"), torch_dir=Path("/t"), site_packages=(),
    nvidia_include_dirs=(), machine="x86_64", os="linux")
CUDA_ENV = dataclasses.replace(CPU_ENV, torch_version="2.14.1+cu130", cuda="13.0")
TOOLKIT = CudaToolkit(root=Path("/usr/local/cuda"), nvcc=Path("/usr/local/cuda/bin/nvcc"),
                      version="13.0")


def manifest(torch_extra: str = "", cuda_extra: str = ""):  # type: ignore[no-untyped-def]
    return parse_manifest(MANIFEST.format(torch_extra=torch_extra, cuda_extra=cuda_extra))


def test_cpu_plan() -> None:
    plan = plan_variant(manifest(), CPU_ENV, "cpu", "abc1234")
    assert plan.variant == "torch213-cxx11-cpu-x86_64-linux"
    assert plan.ops_name == "_img2gray_cpu_abc1234"
    assert plan.cxx_standard == 20
    assert plan.archs is None
    assert plan.cmake_defines() == {"KK_BACKEND": "cpu"}


def test_cxx17_before_torch_2_12() -> None:
    env = dataclasses.replace(CPU_ENV, torch_version="2.11.0")
    assert plan_variant(manifest(), env, "cpu", "x").cxx_standard == 17


def test_cuda_plan_defaults_and_override() -> None:
    plan = plan_variant(manifest(), CUDA_ENV, "cuda", "abc1234", toolkit=TOOLKIT)
    assert plan.variant == "torch214-cxx11-cu130-x86_64-linux"
    assert plan.component_archs["img2gray"][-1] == "12.1+PTX"
    assert plan.archs is not None and plan.archs[0] == "10.0"  # plain string sort
    quick = plan_variant(manifest(), CUDA_ENV, "cuda", "u", toolkit=TOOLKIT,
                         cuda_capabilities=["9.0"])
    assert quick.archs == ("9.0",)
    assert quick.cmake_defines() == {"KK_BACKEND": "cuda", "KK_CUDA_ARCHS_img2gray": "9.0"}


def test_cuda_component_capabilities_are_intersected() -> None:
    m = manifest(cuda_extra='cuda-capabilities = ["5.0", "8.0", "9.0a"]')
    plan = plan_variant(m, CUDA_ENV, "cuda", "u", toolkit=TOOLKIT)
    assert plan.component_archs == {"img2gray": ["8.0", "9.0a"]}
    bad = manifest(cuda_extra='cuda-capabilities = ["99999.0"]')
    with pytest.raises(NotBuildableError,
                       match="CUDA kernel: img2gray, empty set of capabilities") as e:
        plan_variant(bad, CUDA_ENV, "cuda", "u", toolkit=TOOLKIT)
    assert e.value.what == "variant torch214-cxx11-cu130-x86_64-linux"
    assert e.value.who == "project"


def test_cuda_minver_skips_component() -> None:
    m = manifest(cuda_extra='cuda-minver = "13.2"')
    assert plan_variant(m, CUDA_ENV, "cuda", "u", toolkit=TOOLKIT).component_archs == {}


def test_toolkit_must_match_torch() -> None:
    old = dataclasses.replace(TOOLKIT, version="12.8")
    with pytest.raises(NotBuildableError, match=r"12.8 but torch was built with CUDA 13.0"):
        plan_variant(manifest(), CUDA_ENV, "cuda", "u", toolkit=old)
    with pytest.raises(NotBuildableError, match="no CUDA toolkit"):
        plan_variant(manifest(), CUDA_ENV, "cuda", "u", toolkit=None)


def test_backends_that_cannot_be_built() -> None:
    with pytest.raises(NotBuildableError, match="has no CUDA support"):
        plan_variant(manifest(), CPU_ENV, "cuda", "u", toolkit=TOOLKIT)
    rocm = parse_manifest(MANIFEST.format(torch_extra="", cuda_extra="").replace(
        'backends = ["cpu", "cuda"]', 'backends = ["cpu", "cuda", "rocm"]'))
    with pytest.raises(NotBuildableError, match="kernelkit does not support this yet") as info:
        plan_variant(rocm, CPU_ENV, "rocm", "u")
    assert info.value.who == "unsupported"
    with pytest.raises(KernelkitError, match=r"not in general.backends"):
        plan_variant(manifest(), CPU_ENV, "xpu", "u")


@pytest.mark.parametrize(("bounds", "version", "ok"), [
    ('minver = "2.13"', "2.13.0", True),
    ('minver = "2.14"', "2.13.0", False),
    ('maxver = "2.13"', "2.13.1", True),
    ('maxver = "2.12"', "2.13.0", False),
])
def test_torch_bounds(bounds: str, version: str, ok: bool) -> None:
    env = dataclasses.replace(CPU_ENV, torch_version=version)
    if ok:
        plan_variant(manifest(torch_extra=bounds), env, "cpu", "u")
    else:
        with pytest.raises(NotBuildableError, match=r"\[torch\] (minver|maxver)"):
            plan_variant(manifest(torch_extra=bounds), env, "cpu", "u")
