"""What a build from source would make here, or the one-line refusal saying what to install,
decided from this machine and the published variant names alone (``source_build.target``,
issue 29). CUDA cases use this machine's real nvcc with a described (not detected) system; the
build tools and nvcc are asked (processes), so this lives in tests/integration."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from kernelkit.errors import NotBuildableError
from kernelkit.source_build.target import plan_target, unsupported_capability
from kernelkit.variants.host import System

PY = Path(sys.executable)
CPU = System((2, 13), True, "cpu", None, "x86_64", "linux")
CU130 = System((2, 14), True, "cuda", (13, 0), "x86_64", "linux")
PUBLISHED = ["torch212-cxx11-cpu-x86_64-linux", "torch212-cxx11-cu130-x86_64-linux"]


def _refusal(system: System, published: list[str] = PUBLISHED,
             **env: str) -> NotBuildableError:
    with pytest.raises(NotBuildableError) as err:
        plan_target(system, published, what="acme/k@0123456789ab", python=PY,
                    environ={**os.environ, **env})
    assert "\n" not in err.value.message
    return err.value


def test_a_cpu_machine_builds_its_own_variant() -> None:
    target = plan_target(CPU, PUBLISHED, what="w", python=PY, environ=dict(os.environ))
    assert (target.variant, target.backend, target.cuda_capabilities) == (
        "torch213-cxx11-cpu-x86_64-linux", "cpu", None)


def test_what_kernelkit_or_the_project_cannot_do_is_said_so() -> None:
    assert "torch is not installed" in _refusal(System(None, None, "cpu", None, "x86_64",
                                                       "linux")).message
    rocm = _refusal(System((2, 13), True, "rocm", (7, 0), "x86_64", "linux"))
    assert rocm.who == "unsupported" and "builds cpu and cuda variants on Linux" in rocm.message
    project = _refusal(CPU, ["torch212-cxx11-cu130-x86_64-linux"])
    assert project.who == "project"
    assert "publishes cuda variants only, so its sources build no cpu variant" in project.message


def test_missing_build_tools_are_named_with_what_to_install(tmp_path: Path) -> None:
    err = _refusal(CPU, CXX=str(tmp_path / "missing-c++"))
    assert err.who == "machine" and "CXX=" in err.message and "is not an executable" in err.message


needs_nvcc = pytest.mark.skipif(
    not any(Path(p, "nvcc").is_file() for p in ["/usr/local/cuda/bin",
                                                *os.environ.get("PATH", "").split(os.pathsep)]),
    reason="no nvcc on this machine")


@needs_nvcc
def test_cuda_refusals_name_the_toolkit_to_install() -> None:
    from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit

    toolkit = find_cuda_toolkit()
    assert toolkit is not None
    major = int(toolkit.version.split(".")[0])
    other = System((2, 14), True, "cuda", (major - 1, 8), "x86_64", "linux")
    err = _refusal(other)
    assert f"is not a CUDA {major - 1} toolkit" in err.message
    assert err.hint is not None and f"install the CUDA {major - 1}.8 toolkit" in err.hint
    this = System((2, 14), True, "cuda", tuple(map(int, toolkit.version.split("."))),
                  "x86_64", "linux")
    too_new = _refusal(this, KERNELKIT_CUDA_CAPABILITIES="99.0")
    assert "cannot compile for capability 99.0" in too_new.message
    target = plan_target(this, PUBLISHED, what="w", python=PY,
                         environ={**os.environ, "KERNELKIT_CUDA_CAPABILITIES": "9.0"})
    assert target.cuda_capabilities == ("9.0",) and target.toolkit == toolkit.version


@needs_nvcc
def test_no_gpu_visible_means_no_architecture_to_build_for() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: its capability is used")
    env = {k: v for k, v in os.environ.items() if k != "KERNELKIT_CUDA_CAPABILITIES"}
    with pytest.raises(NotBuildableError) as err:
        plan_target(CU130, PUBLISHED, what="w", python=PY, environ=env)
    assert "no CUDA device is visible" in err.value.message
    assert err.value.hint is not None and "KERNELKIT_CUDA_CAPABILITIES" in err.value.hint


def test_toolkit_capability_table() -> None:
    assert unsupported_capability("9.0", "13.0") is None
    assert unsupported_capability("10.3", "13.0") is None  # between the table's rows
    assert unsupported_capability("7.0", "13.0") == "the toolkit dropped it; it needs CUDA 12.8"
    assert unsupported_capability("12.0", "12.4") == (
        "it is newer than the toolkit knows; it needs CUDA 12.8 or newer")
