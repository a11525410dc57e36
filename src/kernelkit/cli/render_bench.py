"""How ``kernelkit benchmark`` talks: one progress line per step on stderr, and the results
table (a list of rows, then aligned text)."""

from __future__ import annotations

import sys
from typing import TextIO

from kernelkit.bench.results import CaseResult, RunResult
from kernelkit.bench.runner import BenchEvent


def fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds * 1e9:.4g} ns"


def fmt_rate(rate: float, unit: str) -> str:
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if rate >= scale:
            return f"{rate / scale:.3g} {prefix}{unit}"
    return f"{rate:.3g} {unit}"


class Progress:
    """One line per step: which case, verified or not, what is being timed."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream

    def __call__(self, e: BenchEvent) -> None:
        head = f"[{e.index}/{e.total}] {e.case}"
        if e.stage == "case":
            text = f"{head} ..."
        elif e.stage == "verify":
            text = f"{head}: checking the result against the reference"
        elif e.stage == "compile":
            text = f"{head}: compiling the reference with torch.compile"
        elif e.stage == "time":
            text = f"{head}: timing {e.detail}"
        elif e.stage == "done":
            text = f"{head}: {e.detail}"
        elif e.stage == "hardware":
            text = f"measuring this machine's {e.detail}"
        else:  # pragma: no cover - every stage is listed above
            text = f"{head}: {e.stage} {e.detail}"
        print(text, file=self.stream, flush=True)


ROLE_HEADERS = {"reference": "vs reference", "compiled": "vs compiled", "compare": "vs compare"}


def _kernel_cell(c: CaseResult) -> str:
    k = c.kernel
    if k is None or k.summary is None:
        return "not timed"
    s = k.summary
    return f"{fmt_time(s.median)} [{fmt_time(s.ci_low)}, {fmt_time(s.ci_high)}]"


def _speedup_cell(c: CaseResult, role: str) -> str:
    sp = c.speedups.get(role)
    if sp is not None:
        mark = {"faster": "+", "slower": "-", "same": "="}[sp.verdict]
        return f"{sp.value:.2f}x [{sp.ci_low:.2f}, {sp.ci_high:.2f}] {mark}"
    s = c.series.get(role)
    return "-" if s is None else s.status


def _roof_cell(c: CaseResult) -> str:
    r = c.roofline
    if not r:
        return "-"
    parts = []
    if r.get("bandwidth_fraction") is not None:
        parts.append(f"{100 * float(r['bandwidth_fraction'] or 0):.0f}% BW")
    if r.get("compute_fraction") is not None:
        parts.append(f"{100 * float(r['compute_fraction'] or 0):.2g}% MM")
    return ", ".join(parts) or "-"


def table_rows(result: RunResult) -> list[list[str]]:
    roles = [r for r in ROLE_HEADERS if any(r in c.series for c in result.cases)]
    head = ["case", "result", "kernel median [95% CI]", "IQR", "outliers", "n", "method",
            *(ROLE_HEADERS[r] if r != "compare" or result.compare is None
              else f"vs {_short(result.compare.revision or result.compare.variant)}"
              for r in roles), "roofline"]
    rows = [head]
    for c in result.cases:
        k = c.kernel
        m, s = (k.measurement, k.summary) if k else (None, None)
        iqr = f"{100 * s.iqr / s.median:.1f}%" if s and s.median > 0 else "-"
        method = "-" if m is None else m.method + (
            f" x{m.calls_per_sample}" if m.calls_per_sample > 1 else "")
        outliers = f"{s.outliers}" if s else "-"
        rows.append([c.label, _status(c), _kernel_cell(c), iqr, outliers, str(s.n) if s else "-",
                     method,
                     *(_speedup_cell(c, r) for r in roles), _roof_cell(c)])
    return rows


def _short(text: str) -> str:
    return text if len(text) <= 14 else text[:12] + ".."


def _status(c: CaseResult) -> str:
    return {"ok": "verified", "unverified": "no check", "wrong": "WRONG",
            "error": "ERROR"}.get(c.status, c.status)


def format_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def notes(result: RunResult) -> list[str]:
    """What the table cannot hold: wrong results, errors, skipped baselines, roofs."""
    out = []
    info = result.kernel
    out.append(f"kernel: {info.label}" + (f", revision {info.revision}" if info.revision else "")
               + (f" ({info.commit[:12]})" if info.commit else "") + f", variant {info.variant}")
    if result.compare is not None:
        out.append(f"compare: {result.compare.label}, variant {result.compare.variant}")
    for c in result.cases:
        if c.status == "wrong" and c.verification is not None:
            out.append(f"{c.label}: WRONG RESULT, not timed: {c.verification.detail}")
        elif c.status == "error":
            out.append(f"{c.label}: {c.error}")
        for s in c.series.values():
            if s.role != "kernel" and s.status != "timed":
                out.append(f"{c.label}: {s.label} {s.status}: {s.reason}")
            if s.measurement is not None:
                out.extend(f"{c.label}: {s.label}: {n}" for n in s.measurement.notes)
                if s.measurement.warmup_stable is False:
                    out.append(f"{c.label}: {s.label}: warmup did not settle within the time "
                               f"limit (last batches {100 * (s.measurement.warmup_spread or 0):.0f}"
                               "% apart): treat its numbers with care")
    out.extend(f"this machine: {roof.what} {fmt_rate(roof.rate, roof.unit)} ({roof.detail}, "
               f"{roof.measurement.method})" for roof in result.hardware)
    if result.hardware_note:
        out.append(f"roofline: {result.hardware_note}")
    out.append("speedup = baseline median / kernel median, 95% bootstrap interval; "
               "+ faster, - slower, = not distinguishable")
    return out
