"""The hint after a build for a slow unit that includes an umbrella header."""

from __future__ import annotations

from pathlib import Path

from kernelkit.artifact.metadata import Metadata
from kernelkit.builder.compile.events import BuildResult, Outcome
from kernelkit.builder.compile.source_cost import umbrella_hints, umbrella_includes
from kernelkit.cli.render_build import report_lines


def test_umbrella_includes_reads_the_include_lines_only() -> None:
    source = """// #include <torch/all.h>  (a comment, not an include)
#include <ATen/core/Tensor.h>
  #  include "ATen/ATen.h"
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
const char *s = "#include <torch/torch.h>";
"""
    assert umbrella_includes(source) == ["ATen/ATen.h", "torch/extension.h"]
    assert umbrella_includes("#include <ATen/core/Tensor.h>\n") == []


def project_with_units(root: Path) -> Path:
    (root / "k_cuda").mkdir(parents=True)
    (root / "k_cuda" / "k.cu").write_text("#include <torch/all.h>\n__global__ void k() {}\n")
    (root / "k_cpu").mkdir()
    (root / "k_cpu" / "k.cpp").write_text("#include <ATen/ATen.h>\nvoid k() {}\n")
    (root / "torch-ext").mkdir()
    (root / "torch-ext" / "binding.cpp").write_text("#include <torch/library.h>\n")
    (root.parent / "outside.cu").write_text("#include <torch/all.h>\n")
    return root


def test_a_slow_unit_with_an_umbrella_header_gets_a_hint(tmp_path: Path) -> None:
    project = project_with_units(tmp_path / "p")
    times = {"../outside.cu": 30.0, "k_cuda/k.cu": 12.5, "torch-ext/binding.cpp": 8.0,
             "gone/removed.cu": 7.0, "k_cpu/k.cpp": 2.0}
    hints = dict(umbrella_hints(project, times))
    # the .cu: slow and an umbrella; the binding: slow but lean; the CPU file: an umbrella but
    # fast; outside the project or gone: passed over
    assert list(hints) == ["k_cuda/k.cu"]
    assert "k_cuda/k.cu took 12.5 s and includes <torch/all.h>" in hints["k_cuda/k.cu"]
    assert "once per GPU architecture" in hints["k_cuda/k.cu"]
    assert "<ATen/core/Tensor.h>" in hints["k_cuda/k.cu"]
    cpu = dict(umbrella_hints(project, {"k_cpu/k.cpp": 6.0}))
    assert "includes <ATen/ATen.h>" in cpu["k_cpu/k.cpp"]
    assert "the compiler parses all of it" in cpu["k_cpu/k.cpp"]
    assert "<ATen/Parallel.h>" in cpu["k_cpu/k.cpp"] and "c10/cuda" not in cpu["k_cpu/k.cpp"]


def outcome(variant: str, tmp: Path, unit_times: dict[str, float]) -> Outcome:
    meta = Metadata(name="k", id="_k_cuda_1", version=1, license="Apache-2.0", backend="cuda")
    result = BuildResult(variant=variant, path=tmp / variant, log_path=tmp / "build.log",
                         metadata=meta, unit_times=unit_times)
    return Outcome(variant=variant, status="built", path=tmp / variant, result=result)


def test_the_build_report_gives_each_hint_once(tmp_path: Path) -> None:
    project = project_with_units(tmp_path / "p")
    times = {"k_cuda/k.cu": 20.0, "torch-ext/binding.cpp": 6.0}
    outcomes = [outcome("torch211-cxx11-cu126-x86_64-linux", tmp_path, times),
                outcome("torch211-cxx11-cu130-x86_64-linux", tmp_path, times)]
    lines = report_lines(outcomes, project=project)
    units = "k_cuda/k.cu 20.0 s, torch-ext/binding.cpp 6.0 s"
    assert [line for line in lines if line.startswith("slowest units of")] == [
        f"slowest units of torch211-cxx11-cu126-x86_64-linux: {units}",
        f"slowest units of torch211-cxx11-cu130-x86_64-linux: {units}"]
    hints = [line for line in lines if line.startswith("hint: ")]
    assert len(hints) == 1 and hints[0].startswith("hint: k_cuda/k.cu took 20.0 s")
    # without the project (as before), no hint
    assert not [line for line in report_lines(outcomes) if line.startswith("hint: ")]
