"""Run benchmark cases: verify each against its reference, then time the kernel and the
baselines in the same run, then place the cases against this machine's measured roofs.

Per case (a fresh instance for each series, seeded the same, so every series sees the same
inputs): setup, one call of ``benchmark_<case>``, its ``self.out`` compared with
``verify_<case>()``. A wrong result is reported and nothing of the case is timed; the check
repeats after timing, so a kernel that goes wrong under repetition (a race) is reported too.
The baselines: the reference itself (eager), ``torch.compile`` of it (skipped with the
reason where it cannot compile or disagrees with eager), and the other version
(``compare``, verified the same way). The kernel and its baselines are timed interleaved
(:func:`kernelkit.bench.timing.measure_interleaved`), so a drifting machine moves them alike;
each baseline's speedup comes with an interval.
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from kernelkit.bench.contract import Case, cases_of
from kernelkit.bench.hardware import Roof, copy_bandwidth, matmul_throughput
from kernelkit.bench.results import CaseResult, KernelInfo, Series, Verification
from kernelkit.bench.scripts import Script
from kernelkit.bench.stats import speedup, summarize
from kernelkit.bench.timing import Measurement, TimingOptions, measure_interleaved
from kernelkit.bench.verify import compare_outputs, tolerances
from kernelkit.errors import BenchmarkNotFoundError


@dataclass(frozen=True)
class Target:
    """A loaded kernel and what it is."""

    module: ModuleType
    info: KernelInfo


@dataclass(frozen=True)
class RunOptions:
    device: str = "cpu"
    timing: TimingOptions = field(default_factory=TimingOptions)
    reference: bool = True
    compile: bool = True
    roofline: bool = True
    cases: tuple[str, ...] = ()  # fnmatch patterns over Class.case


@dataclass(frozen=True)
class BenchEvent:
    """Progress for the CLI: ``stage`` is ``case``, ``verify``, ``compile``, ``time``,
    ``done`` or ``hardware``."""

    stage: str
    case: str
    index: int
    total: int
    detail: str = ""


Emit = Callable[[BenchEvent], None]


def select_cases(scripts: list[Script], patterns: tuple[str, ...]) -> list[tuple[Script, Case]]:
    found = [(s, c) for s in scripts for cls in s.classes for c in cases_of(cls)]
    chosen = [(s, c) for s, c in found
              if not patterns or any(fnmatch.fnmatchcase(c.label, p) for p in patterns)]
    if not chosen:
        names = ", ".join(c.label for _, c in found) or "none"
        raise BenchmarkNotFoundError(
            "no benchmark case to run" + (f" matches {', '.join(patterns)}" if patterns else ""),
            hint=f"cases found: {names}")
    return chosen


def run_cases(chosen: list[tuple[Script, Case]], kernel: Target, compare: Target | None,
              opts: RunOptions, emit: Emit) -> list[CaseResult]:
    results = []
    for i, (script, case) in enumerate(chosen, 1):
        ctx = _Ctx(case, i, len(chosen), opts, emit)
        emit(BenchEvent("case", case.label, i, len(chosen)))
        result = run_case(ctx, script, kernel, compare)
        emit(BenchEvent("done", case.label, i, len(chosen), result.status))
        results.append(result)
        _release(opts.device)
    return results


@dataclass(frozen=True)
class _Ctx:
    case: Case
    index: int
    total: int
    opts: RunOptions
    emit: Emit

    def say(self, stage: str, detail: str) -> None:
        self.emit(BenchEvent(stage, self.case.label, self.index, self.total, detail))


def _sync(device: str) -> None:
    kind = device.split(":")[0]
    if kind == "cpu":
        return
    import torch

    sync = getattr(getattr(torch, kind, None), "synchronize", None)
    if callable(sync):
        sync()


def _release(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def instance(case: Case, module: ModuleType, device: str) -> Any:
    """A fresh, seeded, set-up instance of the case's class (upstream's order)."""
    import torch

    inst = case.cls()
    inst.kernel = module
    inst.device = device
    seed = getattr(inst, "seed", None)
    if seed is not None:
        torch.manual_seed(seed)
        random.seed(seed)
    setup = case.method(inst, "setup") or inst.setup
    setup()
    return inst


def _call(fn: Callable[[], Any], device: str) -> Any:
    value = fn()
    _sync(device)
    return value


def _error(case: Case, script: Script, what: str, exc: BaseException) -> CaseResult:
    text = f"{what} raised {type(exc).__name__}: {exc}".strip()
    return CaseResult(case.label, script.name, "error", error=text,
                      series={"kernel": Series("kernel", "kernel", "error", text)})


def run_case(ctx: _Ctx, script: Script, kernel: Target, compare: Target | None) -> CaseResult:
    case, device = ctx.case, ctx.opts.device
    try:
        inst = instance(case, kernel.module, device)
    except Exception as exc:
        return _error(case, script, f"setup of {case.label}", exc)
    bench, verify = case.method(inst, "benchmark"), case.method(inst, "verify")
    assert bench is not None
    try:
        _call(bench, device)
    except Exception as exc:
        return _error(case, script, f"benchmark_{case.name}", exc)
    check: Verification | None = None
    if verify is not None:
        ctx.say("verify", "")
        try:
            reference = _call(verify, device)
        except Exception as exc:
            return _error(case, script, f"verify_{case.name}", exc)
        atol, rtol = tolerances(inst)
        check = compare_outputs(inst.out, reference, atol=atol, rtol=rtol)
        if not check.passed:
            return CaseResult(case.label, script.name, "wrong", check,
                              {"kernel": Series("kernel", "kernel", "wrong", check.detail)})
    result = CaseResult(case.label, script.name, "ok" if check else "unverified", check)
    result.work = _work(inst, case)
    series = _baselines(ctx, inst, verify, compare) if verify is not None else {}
    fns = {"kernel": ("kernel", bench), **{r: v for r, v in series.items() if isinstance(v, tuple)}}
    ctx.say("time", ", ".join(label for label, _ in fns.values())
            + (" (interleaved)" if len(fns) > 1 else ""))
    timed = measure_interleaved({r: fn for r, (_, fn) in fns.items()}, device, ctx.opts.timing)
    for role in ("kernel", *series):
        got = series.get(role)
        result.series[role] = got if isinstance(got, Series) else _series(
            role, fns[role][0], timed[role])
    if result.series["kernel"].status == "error":
        result.status = "error"
        result.error = f"benchmark_{case.name} {result.series['kernel'].reason}"
        return result
    if verify is not None and check is not None:
        after = compare_outputs(inst.out, _call(verify, device), atol=check.atol or 0,
                                rtol=check.rtol or 0)
        if not after.passed:
            detail = f"after timing: {after.detail}"
            result.status, result.verification = "wrong", replace(after, detail=detail)
            result.series = {"kernel": Series("kernel", "kernel", "wrong", detail)}
            return result
    _speedups(result)
    return result


Timed = tuple[str, Callable[[], Any]]  # (label, what to time)


def _series(role: str, label: str, got: Measurement | Exception) -> Series:
    if isinstance(got, Exception):
        return Series(role, label, "error",
                      f"raised while timed: {type(got).__name__}: {got}")
    return Series(role, label, "timed", measurement=got, summary=summarize(got.samples))


def _work(inst: Any, case: Case) -> dict[str, float] | None:
    work = {}
    for key in ("bytes", "flops"):
        fn = case.method(inst, key)
        if fn is not None:
            work[key] = float(fn())
    return work or None


def _baselines(ctx: _Ctx, inst: Any, verify: Callable[[], Any], compare: Target | None
               ) -> dict[str, Timed | Series]:
    """The baselines to time with the kernel, or the Series saying why one is not timed."""
    opts = ctx.opts
    out: dict[str, Timed | Series] = {}
    if opts.reference:
        out["reference"] = ("reference (eager)", verify)
    if opts.reference and opts.compile:
        ctx.say("compile", "")
        out["compiled"] = _compiled(ctx, inst, verify)
    if compare is not None:
        out["compare"] = _other_version(ctx, compare)
    return out


def _compiled(ctx: _Ctx, inst: Any, verify: Callable[[], Any]) -> Timed | Series:
    import torch

    label = "torch.compile(reference)"
    try:
        compiled = torch.compile(verify)
        got = _call(compiled, ctx.opts.device)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        return Series("compiled", label, "skipped",
                      f"torch.compile failed here: {type(exc).__name__}: {first}")
    atol, rtol = tolerances(inst)
    agree = compare_outputs(got, _call(verify, ctx.opts.device), atol=atol, rtol=rtol)
    if not agree.passed:
        return Series("compiled", label, "skipped",
                      f"the compiled reference disagrees with eager: {agree.detail}")
    return label, compiled


def _other_version(ctx: _Ctx, other: Target) -> Timed | Series:
    """``benchmark_<case>`` of another version, on its own instance, verified first."""
    case, device = ctx.case, ctx.opts.device
    label = other.info.label
    try:
        inst = instance(case, other.module, device)
        bench, verify = case.method(inst, "benchmark"), case.method(inst, "verify")
        assert bench is not None and verify is not None
        _call(bench, device)
        atol, rtol = tolerances(inst)
        check = compare_outputs(inst.out, _call(verify, device), atol=atol, rtol=rtol)
    except Exception as exc:
        return Series("compare", label, "error", f"{type(exc).__name__}: {exc}")
    if not check.passed:
        return Series("compare", label, "wrong", check.detail)
    return label, bench


def _speedups(result: CaseResult) -> None:
    kernel = result.kernel
    if kernel is None or kernel.measurement is None:
        return
    for role, s in result.series.items():
        if role != "kernel" and s.measurement is not None:
            result.speedups[role] = speedup(kernel.measurement.samples, s.measurement.samples)


# --- the roofline ----------------------------------------------------------------------------


def measure_roofs(results: list[CaseResult], opts: RunOptions, emit: Emit
                  ) -> tuple[list[Roof], str | None]:
    """This machine's copy bandwidth (and matmul throughput where a case declares FLOPs),
    measured only when a timed case declares its work; then each case's roofline point."""
    declared = [r for r in results if r.work and r.kernel and r.kernel.summary]
    if not opts.roofline:
        return [], "roofline not measured (--no-roofline)"
    if not declared:
        return [], "no timed case declares bytes_<case>() or flops_<case>()"
    probe = replace(opts.timing, min_samples=10, min_time_s=0.2, iterations=None, warmup=None,
                    l2_flush=False)
    emit(BenchEvent("hardware", "", 0, 0, "copy bandwidth"))
    roofs = [copy_bandwidth(opts.device, probe)]
    if any(r.work and r.work.get("flops") for r in declared):
        emit(BenchEvent("hardware", "", 0, 0, "matmul throughput"))
        roofs.append(matmul_throughput(opts.device, probe))
    for r in declared:
        r.roofline = roofline_point(r, roofs)
    return roofs, None


def roofline_point(result: CaseResult, roofs: list[Roof]) -> dict[str, float | None]:
    assert result.work is not None and result.kernel and result.kernel.summary
    t = result.kernel.summary.median
    by = {r.what: r.rate for r in roofs}
    nbytes, flops = result.work.get("bytes"), result.work.get("flops")
    bw, peak = by.get("copy-bandwidth"), by.get("matmul")
    point: dict[str, float | None] = {
        "seconds": t, "bytes_per_s": None, "bandwidth_fraction": None, "flops_per_s": None,
        "compute_fraction": None, "intensity": None, "roof_fraction": None}
    if nbytes:
        point["bytes_per_s"] = nbytes / t
        point["bandwidth_fraction"] = nbytes / t / bw if bw else None
    if flops:
        point["flops_per_s"] = flops / t
        point["compute_fraction"] = flops / t / peak if peak else None
    if nbytes and flops and bw and peak:
        intensity = flops / nbytes
        point["intensity"] = intensity
        point["roof_fraction"] = (flops / t) / min(peak, intensity * bw)
    elif point["bandwidth_fraction"] is not None:
        point["roof_fraction"] = point["bandwidth_fraction"]
    return point
