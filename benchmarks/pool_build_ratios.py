"""Pool the per-turn ratios of several ``bench_build_cache.py`` results: kernelkit's cold build
over ``torch.utils.cpp_extension``'s, each turn's two builds run back to back on one host (so a
turn's ratio is comparable across hosts and sessions while the seconds are not).

Usage: ``python benchmarks/pool_build_ratios.py LABEL=FILE [LABEL=FILE ...] [--target 0.3]
[--out FILE]``. Files with one label are pooled (``lean=a.json lean=b.json umbrella=c.json``);
for each label the result gives every turn's ratio, cold and with a known toolchain (the compiler
identification kept from an earlier build on the machine; results from before those turns have
none), their median, range, and how many turns met ``--target``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from results_io import write_results  # benchmarks/, this script's folder

HERE = Path(__file__).resolve().parent


def turn_ratios(result: dict[str, Any], kernelkit_key: str) -> list[float]:
    """Each turn's kernelkit build (``kernelkit_key`` samples) over its cpp_extension build; none
    where the result has no such samples (results from before the known-toolchain turns)."""
    kk = result["kernelkit"].get(kernelkit_key, [])
    if not kk:
        return []
    plain = result["cpp_extension"]["cold_samples_s"]
    if len(kk) != len(plain):
        raise SystemExit(f"{kernelkit_key}: {len(kk)} kernelkit turns, {len(plain)} cpp_extension")
    return [round(k / p, 3) for k, p in zip(kk, plain, strict=True)]


def summary(ratios: list[float], target: float) -> dict[str, object]:
    if not ratios:
        return {"turns": 0}
    return {"turns": len(ratios), "per_turn": ratios,
            "median": round(statistics.median(ratios), 3),
            "min": min(ratios), "max": max(ratios),
            "turns_within_target": sum(r <= target for r in ratios)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", metavar="LABEL=FILE")
    parser.add_argument("--target", type=float, default=0.3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "build_ratios_pooled.json")
    opts = parser.parse_args()
    pooled: dict[str, dict[str, list[Any]]] = {}
    for arg in opts.files:
        label, sep, name = arg.partition("=")
        if not sep or not label or not name:
            raise SystemExit(f"{arg!r}: expected LABEL=FILE, e.g. lean=results/gpu/x.json")
        path = Path(name)
        try:
            result = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise SystemExit(f"{path}: not a readable benchmark result ({exc})") from None
        if "kernelkit" not in result:
            raise SystemExit(f"{path}: no finished turns (only partial results?)")
        entry = pooled.setdefault(label, {"files": [], "cold": [], "known": []})
        entry["files"].append(path.name)
        entry["cold"] += turn_ratios(result, "cold_samples_s")
        entry["known"] += turn_ratios(result, "cold_known_toolchain_samples_s")
    results = {"target": opts.target, "ratio": "kernelkit cold / cpp_extension cold, per turn"}
    for label, entry in pooled.items():
        results[label] = {"files": entry["files"],
                          "cold": summary(entry["cold"], opts.target),
                          "known_toolchain": summary(entry["known"], opts.target)}
    return write_results(results, opts.out)


if __name__ == "__main__":
    sys.exit(main())
