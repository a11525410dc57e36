"""First-build and no-op times of ``kernelkit build --all`` vs a plain
``torch.utils.cpp_extension.load`` build of the same CPU sources.

Usage: ``python benchmarks/bench_build.py [--project DIR] [--skip-all]``. Writes
``benchmarks/results/build.json``. Build environments come from ``KERNELKIT_ENVS`` (kept warm:
creating the torch 2.14.1 CUDA environment takes minutes and is a one-off per machine; the
time of the first run including environment creation is recorded when it happens).
``KERNELKIT_CUDA_CAPABILITIES`` defaults to ``9.0`` to keep the CUDA compile short.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_io import write_results  # benchmarks/, this script's folder

HERE = Path(__file__).resolve().parent
ADDONE = HERE.parent / "tests" / "data" / "projects" / "addone"
CPU = "torch213-cxx11-cpu-x86_64-linux"

CPP_EXTENSION = r"""
import sys, time
from pathlib import Path
import torch
from torch.utils.cpp_extension import load
project, build_dir = Path(sys.argv[1]), Path(sys.argv[2])
t = time.monotonic()
mod = load(name="addone_plain", build_directory=str(build_dir), is_python_module=False,
           sources=[str(project / "torch-ext/torch_binding.cpp"),
                    str(project / "addone_cpu/addone_cpu.cpp")],
           extra_include_paths=[str(project / "torch-ext"), str(build_dir / "gen")],
           extra_cflags=["-O3", "-DCPU_KERNEL", "-DTORCH_EXTENSION_NAME=addone_plain"])
x = torch.arange(4, dtype=torch.float32); out = torch.empty_like(x)
torch.ops.addone_plain.add_one(out, x)
assert torch.equal(out, x + 1)
print(time.monotonic() - t)
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return time.monotonic() - started, proc


def bench_kernelkit(project: Path, args: list[str], env: dict[str, str]) -> dict[str, object]:
    cmd = [sys.executable, "-m", "kernelkit", "build", str(project), *args, "--json"]
    first, proc = timed(cmd, env)
    outcomes = json.loads(proc.stdout)
    noop, proc2 = timed(cmd, env)
    return {"first_s": round(first, 2), "noop_s": round(noop, 2),
            "built": [o["variant"] for o in outcomes if o["status"] == "built"],
            "noop_cached": [o["variant"] for o in json.loads(proc2.stdout)
                            if o["status"] == "cached"]}


def bench_cpp_extension(project: Path, work: Path, env: dict[str, str]) -> dict[str, object]:
    """torch.utils.cpp_extension.load of the same sources, with the generated registration.h
    (the plain route has no generator), in kernelkit's own torch 2.13 CPU interpreter."""
    from kernelkit.generate import build_files
    from kernelkit.manifest import load_manifest

    gen = work / "plain" / "gen"
    gen.mkdir(parents=True)
    files = build_files(load_manifest(project), "bench00")
    (gen / "registration.h").write_text(files["torch-ext/registration.h"])
    script = work / "plain.py"
    script.write_text(CPP_EXTENSION)
    cmd = [sys.executable, str(script), str(project), str(work / "plain")]
    first, _ = timed(cmd, env)
    noop, _ = timed(cmd, env)
    return {"first_s": round(first, 2), "noop_s": round(noop, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=ADDONE)
    parser.add_argument("--skip-all", action="store_true", help="only the CPU comparison")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "build.json")
    opts = parser.parse_args()
    env = {**os.environ}
    env.setdefault("KERNELKIT_CUDA_CAPABILITIES", "9.0")
    results: dict[str, object] = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "project": opts.project.name, "cuda_capabilities": env["KERNELKIT_CUDA_CAPABILITIES"],
    }
    with tempfile.TemporaryDirectory(prefix="kk-bench-build-") as tmp:
        work = Path(tmp)
        for key, args in (("kernelkit_cpu_variant", ["--variant", CPU]),
                          ("kernelkit_all", ["--all"])):
            if key == "kernelkit_all" and opts.skip_all:
                continue
            project = work / key / opts.project.name
            shutil.copytree(opts.project, project)
            results[key] = bench_kernelkit(project, args, env)
        results["cpp_extension_load_cpu"] = bench_cpp_extension(opts.project, work, env)
    return write_results(results, opts.out)


if __name__ == "__main__":
    sys.exit(main())
