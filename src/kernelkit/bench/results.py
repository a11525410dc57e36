"""The values a benchmark run produces and their JSON form (schema ``kernelkit.benchmark/1``,
documented in docs/benchmark.md). Times in JSON are milliseconds; rates are per second."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelkit.bench.hardware import Roof
from kernelkit.bench.stats import Speedup, Summary
from kernelkit.bench.timing import Measurement
from kernelkit.errors import BenchmarkError

SCHEMA = "kernelkit.benchmark/1"
ROLES = ("kernel", "reference", "compiled", "compare")
RESULTS_DIR = "benchmarks/results"  # in a project and on a version branch: <dir>/<variant>/
RESULTS_FILE = "benchmark.json"


@dataclass(frozen=True)
class KernelInfo:
    """Which build was benchmarked."""

    name: str
    source: str  # "local" | "hub"
    variant: str
    version: int | None = None
    repo_id: str | None = None
    path: str | None = None  # the variant directory (local builds)
    revision: str | None = None  # what was asked for (hub) / the kernel's git commit (local)
    commit: str | None = None  # the hub commit
    dirty: bool | None = None
    metadata_sha256: str | None = None  # of the variant's metadata.json: which build exactly

    @property
    def label(self) -> str:
        if self.source == "hub":
            return f"{self.repo_id}@{self.revision}"
        return f"{self.name} (local {self.variant})"


@dataclass(frozen=True)
class Verification:
    checked: bool
    passed: bool | None
    detail: str
    max_abs_error: float | None = None
    atol: float | None = None
    rtol: float | None = None


@dataclass
class Series:
    """One thing timed in a case: the kernel, a baseline, or why it was not timed."""

    role: str  # one of ROLES
    label: str
    status: str  # "timed" | "skipped" | "wrong" | "error"
    reason: str | None = None
    measurement: Measurement | None = None
    summary: Summary | None = None


@dataclass
class CaseResult:
    label: str  # Class.case
    script: str
    status: str  # "ok" | "unverified" | "wrong" | "error"
    verification: Verification | None = None
    series: dict[str, Series] = field(default_factory=dict)
    speedups: dict[str, Speedup] = field(default_factory=dict)
    work: dict[str, float] | None = None  # {"bytes": ..., "flops": ...}
    roofline: dict[str, float | None] | None = None
    error: str | None = None

    @property
    def kernel(self) -> Series | None:
        return self.series.get("kernel")


@dataclass
class RunResult:
    created: str
    kernelkit: str
    machine: dict[str, Any]
    kernel: KernelInfo
    settings: dict[str, Any]
    scripts: list[dict[str, str]]
    cases: list[CaseResult]
    compare: KernelInfo | None = None
    hardware: list[Roof] = field(default_factory=list)
    hardware_note: str | None = None

    @property
    def failed(self) -> list[CaseResult]:
        return [c for c in self.cases if c.status in ("wrong", "error")]


# --- JSON ----------------------------------------------------------------------------------


def _ms(x: float) -> float:
    return float(f"{x * 1e3:.6g}")


def summary_json(s: Summary) -> dict[str, Any]:
    return {"n": s.n, "median_ms": _ms(s.median), "mean_ms": _ms(s.mean), "std_ms": _ms(s.std),
            "min_ms": _ms(s.min), "max_ms": _ms(s.max), "q1_ms": _ms(s.q1), "q3_ms": _ms(s.q3),
            "iqr_ms": _ms(s.iqr), "outliers_low": s.outliers_low,
            "outliers_high": s.outliers_high, "ci_low_ms": _ms(s.ci_low),
            "ci_high_ms": _ms(s.ci_high), "ci_level": round(s.ci_level, 4)}


def measurement_json(m: Measurement) -> dict[str, Any]:
    return {"method": m.method, "clock": m.clock, "calls_per_sample": m.calls_per_sample,
            "warmup": {"calls": m.warmup_calls, "seconds": round(m.warmup_s, 4),
                       "stable": m.warmup_stable,
                       "spread": None if m.warmup_spread is None else round(m.warmup_spread, 4)},
            "l2_flush": m.l2_flush, "notes": list(m.notes)}


def series_json(s: Series) -> dict[str, Any]:
    out: dict[str, Any] = {"label": s.label, "status": s.status, "reason": s.reason}
    if s.measurement is not None and s.summary is not None:
        out["timing"] = measurement_json(s.measurement)
        out["stats"] = summary_json(s.summary)
        out["samples_ms"] = [_ms(x) for x in s.measurement.samples]
    return out


def speedup_json(s: Speedup) -> dict[str, Any]:
    return {"value": round(s.value, 4), "ci_low": round(s.ci_low, 4),
            "ci_high": round(s.ci_high, 4), "level": s.level, "method": "bootstrap-percentile",
            "resamples": s.resamples, "verdict": s.verdict}


def case_json(c: CaseResult) -> dict[str, Any]:
    cls, _, case = c.label.rpartition(".")
    v = c.verification
    return {
        "name": c.label, "class": cls, "case": case, "script": c.script, "status": c.status,
        "error": c.error,
        "verification": None if v is None else {
            "checked": v.checked, "passed": v.passed, "detail": v.detail,
            "max_abs_error": v.max_abs_error, "atol": v.atol, "rtol": v.rtol},
        "series": {role: series_json(s) for role, s in c.series.items()},
        "speedups": {role: speedup_json(s) for role, s in c.speedups.items()},
        "work": c.work, "roofline": c.roofline,
    }


def roof_json(r: Roof) -> dict[str, Any]:
    return {"what": r.what, "rate": float(f"{r.rate:.6g}"), "unit": r.unit, "detail": r.detail,
            "work": r.work, "stats": summary_json(r.summary),
            "timing": measurement_json(r.measurement)}


def kernel_json(k: KernelInfo) -> dict[str, Any]:
    return {"name": k.name, "source": k.source, "variant": k.variant, "version": k.version,
            "repo_id": k.repo_id, "path": k.path, "revision": k.revision, "commit": k.commit,
            "dirty": k.dirty, "metadata_sha256": k.metadata_sha256}


def to_json(r: RunResult) -> dict[str, Any]:
    return {
        "schema": SCHEMA, "created": r.created, "kernelkit": r.kernelkit, "machine": r.machine,
        "kernel": kernel_json(r.kernel),
        "compare": None if r.compare is None else kernel_json(r.compare),
        "settings": r.settings, "scripts": r.scripts,
        "hardware": {"roofs": {x.what: roof_json(x) for x in r.hardware},
                     "note": r.hardware_note},
        "cases": [case_json(c) for c in r.cases],
        "summary": {"cases": len(r.cases),
                    **{s: sum(c.status == s for c in r.cases)
                       for s in ("ok", "unverified", "wrong", "error")}},
    }


def dumps(r: RunResult) -> str:
    return json.dumps(to_json(r), indent=2) + "\n"


def read_results(path: Path) -> dict[str, Any]:
    """A results file written by ``kernelkit benchmark`` (schema checked, nothing else)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchmarkError(f"{path}: cannot read benchmark results ({exc})") from None
    return check_schema(data, str(path))


def check_schema(data: Any, source: str) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise BenchmarkError(f"{source}: not kernelkit benchmark results (schema {found!r}, "
                             f"expected {SCHEMA!r})",
                             hint="write it with `kernelkit benchmark --save` or --output")
    return data
