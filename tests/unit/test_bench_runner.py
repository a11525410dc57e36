"""The case runner (kernelkit.bench.runner) with kernels written in Python (modules made
here; the loader's part is covered by the integration tests): wrong results are not timed,
results that go wrong under repetition are caught, a kernel that raises while timed is an
error of its case only, and the roofline point's arithmetic."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
import torch

from kernelkit.bench import Benchmark
from kernelkit.bench.hardware import Roof
from kernelkit.bench.results import CaseResult, KernelInfo, Series
from kernelkit.bench.runner import (
    RunOptions,
    Target,
    roofline_point,
    run_cases,
    select_cases,
)
from kernelkit.bench.scripts import Script
from kernelkit.bench.stats import summarize
from kernelkit.bench.timing import Measurement, TimingOptions
from kernelkit.errors import BenchmarkNotFoundError

FAST = RunOptions(timing=TimingOptions(min_time_s=0.0, min_samples=5, max_samples=20),
                  compile=False, roofline=False)


def kernel(**functions: object) -> Target:
    module = types.ModuleType("python_kernel")
    module.__dict__.update(functions)
    return Target(module, KernelInfo(name="python_kernel", source="local", variant="torch-cpu"))


class Doubling(Benchmark):
    seed = 0

    def setup(self) -> None:
        self.x = torch.randn(16)

    def benchmark_double(self) -> None:
        self.out = self.kernel.double(self.x)

    def verify_double(self) -> torch.Tensor:
        return self.x * 2


SCRIPT = Script(Path("benchmarks/benchmark_doubling.py"), "benchmarks/benchmark_doubling.py",
                "0" * 64, (Doubling,))


def run(target: Target) -> CaseResult:
    [result] = run_cases(select_cases([SCRIPT], ()), target, None, FAST, lambda e: None)
    return result


def test_a_correct_kernel_is_verified_and_timed_with_its_reference() -> None:
    result = run(kernel(double=lambda x: x * 2))
    assert result.status == "ok" and result.verification and result.verification.passed
    assert {r: s.status for r, s in result.series.items()} == {"kernel": "timed",
                                                               "reference": "timed"}
    assert "reference" in result.speedups


def test_a_wrong_kernel_runs_once_and_is_never_timed() -> None:
    calls = []
    result = run(kernel(double=lambda x: calls.append(1) or x * 3))
    assert result.status == "wrong" and len(calls) == 1
    assert result.series["kernel"].summary is None and "reference" not in result.series


def test_a_kernel_that_goes_wrong_under_repetition_is_reported_and_its_times_dropped() -> None:
    calls = []

    def racy(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return x * 2 if len(calls) == 1 else x * 2 + 1

    result = run(kernel(double=racy))
    assert result.status == "wrong" and len(calls) > 5
    assert result.verification and result.verification.detail.startswith("after timing:")
    assert result.series["kernel"].status == "wrong" and result.series["kernel"].summary is None


def test_a_kernel_that_raises_while_timed_fails_its_case_only() -> None:
    calls = []

    def flaky(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("device lost")
        return x * 2

    result = run(kernel(double=flaky))
    assert result.status == "error" and "RuntimeError: device lost" in (result.error or "")


def test_case_patterns_select_and_refuse() -> None:
    assert len(select_cases([SCRIPT], ("Doubling.*",))) == 1
    with pytest.raises(BenchmarkNotFoundError, match="matches Nope") as e:
        select_cases([SCRIPT], ("Nope",))
    assert e.value.hint == "cases found: Doubling.double"


def _series(seconds: float) -> Series:
    m = Measurement([seconds] * 5, "perf-counter", "clock", 1, 1, 0.0, True, 0.0, False)
    return Series("kernel", "kernel", "timed", measurement=m, summary=summarize(m.samples))


def _roof(what: str, rate: float) -> Roof:
    m = Measurement([1.0], "perf-counter", "clock", 1, 1, 0.0, True, 0.0, False)
    return Roof(what, rate, "B/s", "", 1.0, summarize([1.0]), m)


def test_roofline_point() -> None:
    case = CaseResult("A.b", "s", "ok", series={"kernel": _series(1e-3)},
                      work={"bytes": 1e6, "flops": 4e6})
    point = roofline_point(case, [_roof("copy-bandwidth", 2e9), _roof("matmul", 1e12)])
    assert point["bytes_per_s"] == pytest.approx(1e9)
    assert point["bandwidth_fraction"] == pytest.approx(0.5)
    assert point["flops_per_s"] == pytest.approx(4e9)
    assert point["compute_fraction"] == pytest.approx(0.004)
    assert point["intensity"] == 4.0
    # at intensity 4 the roof is min(1e12, 4 * 2e9) = 8e9 FLOP/s: half of it achieved
    assert point["roof_fraction"] == pytest.approx(0.5)
    bytes_only = CaseResult("A.c", "s", "ok", series={"kernel": _series(1e-3)},
                            work={"bytes": 1e6})
    point = roofline_point(bytes_only, [_roof("copy-bandwidth", 2e9)])
    assert point["roof_fraction"] == pytest.approx(0.5) and point["intensity"] is None
