"""What a fresh CMake configure of a C++/CUDA project costs, and what kernelkit takes off it.

Each sample configures a minimal ``project(x LANGUAGES C CXX CUDA)`` (CUDA archs given, as
kernelkit's generated projects do) into a new build directory with kernelkit's cmake and
ninja, one process, taking turns:

* ``fresh``: CMake identifies the compilers (nvcc builds CMake's identification source and its
  ABI probe, then runs that probe, which opens the GPU to list its architectures),
* ``fresh_gpu_hidden``: the same with ``CUDA_VISIBLE_DEVICES=`` (the probe finds no device),
* ``seeded``: the compiler identification kept by
  ``kernelkit.builder.caches.compiler_id_cache`` from an earlier configure is put in first, as
  ``kernelkit build`` does for a new build directory.

Usage: ``python benchmarks/bench_configure.py [--repeat N] [--out FILE]``; without nvcc the
project is C/C++ only. Ratios are of medians, against ``fresh``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_io import write_results

HERE = Path(__file__).resolve().parent


def main() -> int:
    import cmake
    import ninja

    from kernelkit.builder.caches import compiler_id_cache
    from kernelkit.builder.toolchain.toolkit import find_cuda_toolkit

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "configure.json")
    opts = parser.parse_args()
    toolkit = find_cuda_toolkit(os.environ)
    langs = "C CXX CUDA" if toolkit is not None else "C CXX"
    with tempfile.TemporaryDirectory(prefix="kk-bench-configure-") as tmp:
        work = Path(tmp)
        (work / "src").mkdir()
        (work / "src" / "CMakeLists.txt").write_text(
            f"cmake_minimum_required(VERSION 3.26)\nproject(x LANGUAGES {langs})\n")
        base = [str(Path(cmake.CMAKE_BIN_DIR) / "cmake"), "-S", str(work / "src"), "-G", "Ninja",
                f"-DCMAKE_MAKE_PROGRAM={Path(ninja.BIN_DIR) / 'ninja'}"]
        if toolkit is not None:
            base += [f"-DCMAKE_CUDA_COMPILER={toolkit.nvcc}", "-DCMAKE_CUDA_ARCHITECTURES=OFF"]
        env = dict(os.environ)
        hidden = {**env, "CUDA_VISIBLE_DEVICES": ""}
        cache = work / "cache"

        def configure(name: str, environ: dict[str, str], seed: bool) -> float:
            build = work / name
            shutil.rmtree(build, ignore_errors=True)
            cmd = [*base, "-B", str(build)]
            if seed:
                assert compiler_id_cache.seed(cache, "k", build), "nothing kept to seed with"
                cmd.append(compiler_id_cache.SEED_DEFINE)
            started = time.monotonic()
            subprocess.run(cmd, check=True, capture_output=True, env=environ)
            elapsed = round(time.monotonic() - started, 3)
            if not seed:
                compiler_id_cache.keep(cache, "k", build)
            return elapsed

        configure("warmup", env, seed=False)  # first reads from disk, and the kept files
        samples: dict[str, list[float]] = {"fresh": [], "fresh_gpu_hidden": [], "seeded": []}
        for i in range(max(1, opts.repeat)):
            samples["fresh"].append(configure(f"fresh{i}", env, seed=False))
            samples["fresh_gpu_hidden"].append(configure(f"hidden{i}", hidden, seed=False))
            samples["seeded"].append(configure(f"seeded{i}", env, seed=True))
    medians = {k: round(statistics.median(v), 3) for k, v in samples.items()}
    results = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "languages": langs, "nvcc": str(toolkit.nvcc) if toolkit else None,
        "samples_s": samples, "median_s": medians,
        "ratios": {f"{k}_over_fresh": round(v / medians["fresh"], 3)
                   for k, v in medians.items() if k != "fresh"},
    }
    return write_results(results, opts.out)


if __name__ == "__main__":
    sys.exit(main())
