"""Benchmark results kept with a kernel: ``benchmarks/results/<variant>/benchmark.json`` in a
project (``kernelkit benchmark --save``) and on a hub version branch (``kernelkit upload``
carries them). :func:`brief` is what ``kernelkit info`` shows of one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kernelkit.bench.results import RESULTS_DIR, RESULTS_FILE, check_schema
from kernelkit.bench.source import project_root
from kernelkit.errors import KernelkitError
from kernelkit.hub.port import Hub


def brief(data: dict[str, Any], variant: str) -> dict[str, Any]:
    """The headline of one results file: where it ran and, per case, the kernel's median and
    its speedups."""
    machine = data.get("machine", {})
    device = machine.get("device", {})
    cases = []
    for c in data.get("cases", []):
        kernel = c.get("series", {}).get("kernel", {})
        cases.append({
            "name": c.get("name"), "status": c.get("status"),
            "median_ms": kernel.get("stats", {}).get("median_ms"),
            "speedups": {role: {"value": s.get("value"), "ci_low": s.get("ci_low"),
                                "ci_high": s.get("ci_high")}
                         for role, s in c.get("speedups", {}).items()},
        })
    return {"variant": variant, "created": data.get("created"),
            "device": device.get("name") or device.get("type"), "torch": machine.get("torch"),
            "cases": cases}


def _parse(raw: bytes, source: str, variant: str) -> dict[str, Any]:
    try:
        return brief(check_schema(json.loads(raw), source), variant)
    except (ValueError, KernelkitError) as exc:
        return {"variant": variant, "error": str(exc).splitlines()[0]}


def local_results(path: Path) -> list[dict[str, Any]]:
    """Results saved in the project holding ``path`` (none: an empty list)."""
    project = project_root(path)
    folder = project / RESULTS_DIR if project else None
    if folder is None or not folder.is_dir():
        return []
    return [_parse(f.read_bytes(), str(f), f.parent.name)
            for f in sorted(folder.glob(f"*/{RESULTS_FILE}"))]


def hub_results(hub: Hub, repo_id: str, commit: str) -> list[dict[str, Any]]:
    """Results on the hub at ``commit`` (none: an empty list)."""
    out = []
    for variant in hub.list_dirs(repo_id, commit, RESULTS_DIR):
        path = f"{RESULTS_DIR}/{variant}/{RESULTS_FILE}"
        raw = hub.read_file(repo_id, commit, path)
        if raw is not None:
            out.append(_parse(raw, f"{repo_id}@{commit[:12]}:{path}", variant))
    return out


def format_brief(entry: dict[str, Any]) -> list[str]:
    """Lines for a person: one per results file, one per case."""
    if "error" in entry:
        return [f"{entry['variant']}: unreadable ({entry['error']})"]
    lines = [(f"{entry['variant']} on {entry.get('device')} (torch {entry.get('torch')}, "
             f"{entry.get('created')})")]
    for c in entry["cases"]:
        if c["median_ms"] is None:
            lines.append(f"  {c['name']}: {c['status']}")
            continue
        speed = ", ".join(f"{s['value']:.2f}x vs {role} [{s['ci_low']:.2f}, {s['ci_high']:.2f}]"
                          for role, s in c["speedups"].items() if s.get("value") is not None)
        lines.append(f"  {c['name']}: {c['median_ms']:.4g} ms" + (f"; {speed}" if speed else ""))
    return lines
