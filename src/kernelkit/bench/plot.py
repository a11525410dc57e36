"""Charts of a benchmark run (matplotlib, imported here only: ``pip install 'kernelkit[plot]'``).

- ``benchmark-bars-<theme>``: one panel per case, a bar per timed series (the kernel, the
  reference, ``torch.compile`` of it, the compared version) at its median with the median's
  95 % interval, each baseline labelled with the kernel's speedup and its interval; a wrong
  or failed case says so instead of drawing bars.
- ``benchmark-roofline-<theme>``: each case at its arithmetic intensity and FLOP/s under this
  machine's measured roofs (copy bandwidth, matmul throughput), beside each series' fraction of
  the measured copy bandwidth. Only when a case declares its work and the roofs were measured.

Each chart is written as PNG and SVG in a light and a dark theme (``<theme>`` = ``light`` /
``dark``): figures for a README's ``<picture>`` with ``prefers-color-scheme``. No pyplot: the
figures never touch a global backend or an interactive window.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernelkit.bench.results import CaseResult, RunResult
from kernelkit.errors import KernelkitError

THEMES: dict[str, dict[str, str]] = {
    "light": {"bg": "#ffffff", "fg": "#1f2328", "muted": "#59636e", "grid": "#d1d9e0"},
    "dark": {"bg": "#0d1117", "fg": "#e6edf3", "muted": "#9198a1", "grid": "#3d444d"},
}
# One hue per series, chosen to stay distinct and readable on both backgrounds.
COLORS = {"kernel": "#2f81f7", "reference": "#8c959f", "compiled": "#e3a008",
          "compare": "#a371f7"}
ROLES = ("kernel", "reference", "compiled", "compare")
FORMATS = ("png", "svg")


def available() -> bool:
    """Whether matplotlib can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise KernelkitError("writing charts needs matplotlib, which is not installed",
                             hint="pip install 'kernelkit[plot]' (or drop --plot/--save)"
                             ) from None
    return matplotlib


def write_plots(result: RunResult, folder: Path) -> list[Path]:
    """Write every chart of ``result`` into ``folder``; returns the files written."""
    _matplotlib()
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for theme in THEMES:
        written += _save(bars_figure(result, theme), folder, f"benchmark-bars-{theme}")
        fig = roofline_figure(result, theme)
        if fig is not None:
            written += _save(fig, folder, f"benchmark-roofline-{theme}")
    return written


def _save(fig: Any, folder: Path, stem: str) -> list[Path]:
    out = []
    for fmt in FORMATS:
        path = folder / f"{stem}.{fmt}"
        tmp = path.with_name(f".{path.name}.tmp")
        fig.savefig(tmp, format=fmt, dpi=150, facecolor=fig.get_facecolor())
        tmp.replace(path)
        out.append(path)
    return out


def _figure(theme: str, width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), facecolor=THEMES[theme]["bg"], layout="constrained")


def _style(ax: Any, theme: str) -> None:
    t = THEMES[theme]
    ax.set_facecolor(t["bg"])
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(t["muted"])
    ax.tick_params(colors=t["fg"], labelcolor=t["fg"], labelsize=8)
    ax.xaxis.label.set_color(t["fg"])
    ax.yaxis.label.set_color(t["fg"])
    ax.title.set_color(t["fg"])
    ax.grid(True, axis="x", color=t["grid"], linewidth=0.6)
    ax.set_axisbelow(True)


def _unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


def _title(result: RunResult) -> str:
    m = result.machine
    dev = m.get("device", {})
    where = dev.get("name") if dev.get("type") == "cuda" else f"CPU {m.get('cpu') or ''}".strip()
    return (f"{result.kernel.label} · {where} · torch {m.get('torch')}"
            + (f" · CUDA {m['cuda']}" if m.get("cuda") and dev.get("type") == "cuda" else ""))


def bars_figure(result: RunResult, theme: str) -> Any:
    t = THEMES[theme]
    cases = result.cases
    heights = [0.9 + 0.42 * max(1, sum(s.summary is not None for s in c.series.values()))
               for c in cases]
    fig = _figure(theme, 9.0, 0.7 + sum(heights))
    fig.suptitle(_title(result), color=t["fg"], fontsize=10)
    axes = fig.subplots(len(cases), 1, squeeze=False, gridspec_kw={"height_ratios": heights})
    for ax, case in zip(axes[:, 0], cases, strict=True):
        _style(ax, theme)
        _case_bars(ax, case, result, theme)
    return fig


def _case_bars(ax: Any, case: CaseResult, result: RunResult, theme: str) -> None:
    t = THEMES[theme]
    timed = [(r, case.series[r]) for r in ROLES
             if r in case.series and case.series[r].summary is not None]
    if not timed:
        ax.set_title(f"{case.label}: {case.status.upper()}", loc="left", fontsize=9,
                     color="#f85149")
        why = case.verification.detail if case.verification and case.status == "wrong" \
            else case.error or "not timed"
        ax.text(0.0, 0.5, f"not timed: {why}"[:140], transform=ax.transAxes, color=t["fg"],
                fontsize=8, va="center")
        ax.axis("off")  # the title and the reason stay
        return
    longest = max(s.summary.ci_high for _, s in timed if s.summary)
    unit, scale = _unit(longest)
    ys = list(range(len(timed)))[::-1]
    for y, (role, s) in zip(ys, timed, strict=True):
        assert s.summary is not None
        med, lo, hi = s.summary.median, s.summary.ci_low, s.summary.ci_high
        ax.barh(y, med / scale, height=0.62, color=COLORS[role], alpha=0.9)
        ax.errorbar(med / scale, y, xerr=[[(med - lo) / scale], [(hi - med) / scale]],
                    fmt="none", ecolor=t["fg"], elinewidth=1.0, capsize=3)
        ax.text(hi / scale + longest / scale * 0.02, y, _bar_label(case, role, med),
                va="center", fontsize=8, color=t["fg"])
    ax.set_yticks(ys, [_series_label(result, role, s.label) for role, s in timed])
    ax.set_xlim(0, longest / scale * 1.75)
    ax.set_xlabel(f"median time per call ({unit}), 95% interval", fontsize=8)
    state = "verified" if case.status == "ok" else "not verified (no verify_<case>)"
    ax.set_title(f"{case.label} · {state}", loc="left", fontsize=9, color=t["fg"])


def _series_label(result: RunResult, role: str, label: str) -> str:
    if role == "kernel":
        return "kernel"
    if role == "compare" and result.compare is not None:
        return f"compare: {result.compare.revision or result.compare.variant}"[:28]
    return label.replace("torch.compile(reference)", "torch.compile(ref)")


def _bar_label(case: CaseResult, role: str, median: float) -> str:
    unit, scale = _unit(median)
    text = f"{median / scale:.3g} {unit}"
    sp = case.speedups.get(role)
    if sp is not None:
        word = {"faster": "kernel faster", "slower": "kernel slower", "same": "no difference"}
        text += f"   {sp.value:.2f}x [{sp.ci_low:.2f}-{sp.ci_high:.2f}] {word[sp.verdict]}"
    return text


# --- roofline -------------------------------------------------------------------------------


def roofline_figure(result: RunResult, theme: str) -> Any | None:
    roofs = {r.what: r for r in result.hardware}
    bw = roofs.get("copy-bandwidth")
    placed = [c for c in result.cases if c.work and c.roofline]
    if bw is None or not placed:
        return None
    mm = roofs.get("matmul")
    with_flops = [c for c in placed if c.work and c.work.get("flops") and c.work.get("bytes")]
    t = THEMES[theme]
    two = mm is not None and bool(with_flops)
    fig = _figure(theme, 12.0 if two else 7.0, 4.8)
    fig.suptitle(_title(result), color=t["fg"], fontsize=10)
    axes = fig.subplots(1, 2 if two else 1, squeeze=False)[0]
    if two:
        assert mm is not None
        _roofline(axes[0], with_flops, bw.rate, mm.rate, bw.detail, mm.detail, theme)
    _bandwidth_bars(axes[-1], placed, bw.rate, theme)
    return fig


def _roofline(ax: Any, cases: list[CaseResult], bw: float, peak: float, bw_what: str,
              mm_what: str, theme: str) -> None:
    t = THEMES[theme]
    _style(ax, theme)
    ax.grid(True, which="major", axis="both", color=t["grid"], linewidth=0.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    xs = [c.work["flops"] / c.work["bytes"] for c in cases if c.work]
    lo, hi = min([*xs, peak / bw]) / 8, max([*xs, peak / bw]) * 8
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(grid, [min(peak, bw * x) for x in grid], color=t["fg"], linewidth=1.4)
    ax.text(lo * 1.3, bw * lo * 1.3 * 0.4, f"copy {bw / 1e9:.3g} GB/s", color=t["muted"],
            fontsize=8, va="top")  # under the bandwidth roof, clear of the line
    ax.text(hi / 1.3, peak * 1.15, f"matmul {peak / 1e9:.3g} GFLOP/s", color=t["muted"],
            fontsize=8, ha="right")
    ys: list[float] = []
    for c in cases:
        assert c.work is not None
        x = c.work["flops"] / c.work["bytes"]
        for role in ROLES:
            s = c.series.get(role)
            if s is None or s.summary is None:
                continue
            y = c.work["flops"] / s.summary.median
            ys.append(y)
            ax.scatter([x], [y], s=36 if role == "kernel" else 22, color=COLORS[role],
                       edgecolors=t["fg"] if role == "kernel" else "none", linewidths=0.6,
                       zorder=3)
        k = c.kernel
        if k is not None and k.summary is not None:
            y = c.work["flops"] / k.summary.median
            frac = (c.roofline or {}).get("roof_fraction")
            ax.annotate(f"{c.label.rsplit('.', 1)[-1]}"
                        + (f" {100 * frac:.0f}% of roof" if frac is not None else ""),
                        (x, y), textcoords="offset points", xytext=(6, -10), fontsize=8,
                        color=t["fg"])
    ax.set_ylim(min([*ys, peak]) / 10, peak * 4)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)", fontsize=8)
    ax.set_ylabel("FLOP/s", fontsize=8)
    ax.set_title(f"roofline (measured: {bw_what}; {mm_what})", loc="left", fontsize=8,
                 color=t["fg"])
    _legend(ax, cases, theme)


def _legend(ax: Any, cases: list[CaseResult], theme: str) -> None:
    t = THEMES[theme]
    roles = [r for r in ROLES if any(r in c.series and c.series[r].summary for c in cases)]
    handles = [ax.scatter([], [], color=COLORS[r], s=30) for r in roles]
    leg = ax.legend(handles, roles, fontsize=7, frameon=False, loc="lower right")
    for text in leg.get_texts():
        text.set_color(t["fg"])


def _bandwidth_bars(ax: Any, cases: list[CaseResult], bw: float, theme: str) -> None:
    t = THEMES[theme]
    _style(ax, theme)
    labels, values, colors = [], [], []
    for c in cases:
        assert c.work is not None
        nbytes = c.work.get("bytes")
        if not nbytes:
            continue
        for role in ROLES:
            s = c.series.get(role)
            if s is not None and s.summary is not None:
                labels.append(f"{c.label.rsplit('.', 1)[-1]} · {role}")
                values.append(100 * nbytes / s.summary.median / bw)
                colors.append(COLORS[role])
    ys = list(range(len(values)))[::-1]
    ax.barh(ys, values, color=colors, height=0.62)
    for y, v in zip(ys, values, strict=True):
        ax.text(v + max([*values, 1]) * 0.02, y, f"{v:.3g}%", va="center", fontsize=8,
                color=t["fg"])
    ax.set_yticks(ys, labels)
    ax.axvline(100, color=t["muted"], linestyle="--", linewidth=0.8)
    ax.set_xlim(0, max([*values, 100]) * 1.2 if values else 100)
    ax.set_xlabel("% of this machine's measured copy bandwidth", fontsize=8)
    ax.set_title(f"bandwidth ({bw / 1e9:.3g} GB/s copy)", loc="left", fontsize=8, color=t["fg"])
