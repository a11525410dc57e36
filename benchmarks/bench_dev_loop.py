"""The author's loop, timed (issue 23): a ``kernelkit init --template blank`` project, built with
private, empty caches (cold), then rebuilt the ways an author rebuilds:

* unchanged, without git: ``kernelkit build`` again, and after ``rm -rf build``;
* unchanged, in git: after ``git init`` + commit, and after a second commit (a README edit);
* one kernel file edited (a line appended): the rebuild, against that unit's own compile time
  in the same rebuild (ninja's log, ``unit-seconds`` of ``build --json``);
* edit -> build -> tests: the same edit, then ``kernelkit build`` and ``kernelkit test``.

Targets: unchanged rebuilds <= 0.1x cold; the edited-file rebuild <= the unit's compile time
+ 1.5 s. Every run is a fresh ``python -m kernelkit`` process (what an author runs), all with
the same private compiler, configure and probe caches (empty before the cold build).

Usage: ``python benchmarks/bench_dev_loop.py [--cuda] [--cuda-python PY] [--repeat N]
[--out FILE]``. ``--cuda`` also times the CUDA variant (``--backend cuda``) when nvcc and a
CUDA torch are present: ``--cuda-python``, else ``$KERNELKIT_TEST_CUDA_PYTHON``, else this
interpreter if its torch has CUDA; capabilities from ``$KERNELKIT_CUDA_CAPABILITIES`` (default:
the toolkit's list). Results: ``benchmarks/results/dev_loop_<backend>.json`` (medians of
``--repeat`` turns, every sample kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from results_io import write_results  # benchmarks/, this script's folder

HERE = Path(__file__).resolve().parent


def kernel_file(backend: str) -> str:
    """The blank template's kernel file of ``backend``."""
    return "scale_add_cpu/scale_add_cpu.cpp" if backend == "cpu" else "scale_add_cuda/scale_add.cu"


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = round(time.monotonic() - started, 3)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return elapsed, proc.stdout


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid", *args],
                   cwd=cwd, check=True, capture_output=True)


class Loop:
    """One project and its private caches; each method one timed step."""

    def __init__(self, root: Path, backend: str, python: Path) -> None:
        self.root, self.backend, self.python = root, backend, python
        self.project = root / "scale-add"
        caches = root / "caches"
        self.env = {**os.environ, "KERNELKIT_CCACHE_DIR": str(caches / "ccache"),
                    "KERNELKIT_CONFIGURE_CACHE": str(caches / "configure"),
                    "KERNELKIT_PROBE_CACHE": str(caches / "probe"),
                    "KERNELKIT_ENVS": str(caches / "envs")}
        self.env.pop("KERNELKIT_CCACHE", None)
        self.env.pop("KERNELKIT_CCACHE_REMOTE", None)

    def kk(self, *args: str) -> tuple[float, str]:
        return run([sys.executable, "-m", "kernelkit", *args], self.env, self.root)

    def init(self) -> None:
        self.kk("init", "bench/scale-add", "--template", "blank", "--no-git", "--backends",
                "cpu,cuda")

    def build(self) -> dict[str, Any]:
        seconds, out = self.kk("build", str(self.project), "--python", str(self.python),
                               "--backend", self.backend, "--json")
        [outcome] = json.loads(out)
        return {"seconds": seconds, "units": outcome.get("unit-seconds", {}),
                "compiler-cache": outcome.get("compiler-cache")}

    def test(self) -> float:
        seconds, _ = run([sys.executable, "-m", "kernelkit", "test", str(self.project)],
                         self.env, self.root)
        return seconds

    def edit(self, n: int) -> str:
        rel = kernel_file(self.backend)
        path = self.project / rel
        path.write_text(path.read_text() + f"\n// edit {n}\n")
        return rel


def one_turn(backend: str, python: Path, turn: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kk-dev-loop-") as tmp:
        loop = Loop(Path(tmp), backend, python)
        loop.init()
        cold = loop.build()
        out: dict[str, Any] = {"cold": cold}
        out["unchanged-no-git"] = loop.build()
        shutil.rmtree(loop.project / "build")
        out["unchanged-after-rm-build"] = loop.build()
        git(loop.project, "init", "-q")
        git(loop.project, "add", "-A")
        git(loop.project, "commit", "-qm", "init")
        out["unchanged-git-first-build-after-commit"] = loop.build()
        readme = loop.project / "README.md"
        readme.write_text(readme.read_text() + "\nanother line\n")
        git(loop.project, "commit", "-qam", "docs")
        out["unchanged-git-after-second-commit"] = loop.build()
        rel = loop.edit(2 * turn)
        edited = loop.build()
        edited["edited-file"] = rel
        edited["edited-unit-seconds"] = edited["units"].get(rel)
        out["one-kernel-file-edited"] = edited
        loop.edit(2 * turn + 1)
        build = loop.build()
        out["round-trip"] = {"build": build["seconds"], "tests": loop.test()}
        out["round-trip"]["seconds"] = round(out["round-trip"]["build"]
                                             + out["round-trip"]["tests"], 3)
        return out


UNCHANGED = ("unchanged-no-git", "unchanged-after-rm-build",
             "unchanged-git-first-build-after-commit", "unchanged-git-after-second-commit")


def summarize(turns: list[dict[str, Any]]) -> dict[str, Any]:
    def med(values: list[float]) -> float:
        return round(statistics.median(values), 3)

    cold = med([t["cold"]["seconds"] for t in turns])
    out: dict[str, Any] = {"cold-seconds": cold}
    for key in UNCHANGED:
        secs = med([t[key]["seconds"] for t in turns])
        compiled = sorted({u for t in turns for u in t[key]["units"]})
        out[key] = {"seconds": secs, "ratio-to-cold": round(secs / cold, 3),
                    "target": "<= 0.1x cold", "met": secs <= 0.1 * cold,
                    "units-compiled": compiled}
    edits = [t["one-kernel-file-edited"] for t in turns]
    unit = med([e["edited-unit-seconds"] or 0.0 for e in edits])
    secs = med([e["seconds"] for e in edits])
    out["one-kernel-file-edited"] = {
        "seconds": secs, "edited-unit-compile-seconds": unit,
        "overhead-seconds": round(secs - unit, 3), "target": "<= unit compile + 1.5 s",
        "met": secs <= unit + 1.5,
        "units-compiled": sorted({u for e in edits for u in e["units"]})}
    trips = [t["round-trip"] for t in turns]
    out["edit-build-tests-round-trip"] = {
        "seconds": med([r["seconds"] for r in trips]), "build": med([r["build"] for r in trips]),
        "tests": med([r["tests"] for r in trips])}
    return out


def cuda_python(given: Path | None) -> Path | None:
    """A CUDA torch interpreter, or None (then --cuda is skipped, saying why)."""
    candidates = [given] if given else []
    if os.environ.get("KERNELKIT_TEST_CUDA_PYTHON"):
        candidates.append(Path(os.environ["KERNELKIT_TEST_CUDA_PYTHON"]))
    candidates.append(Path(sys.executable))
    for py in candidates:
        proc = subprocess.run([str(py), "-c", "import torch; print(torch.version.cuda or '')"],
                              capture_output=True, text=True)
        if proc.returncode == 0 and proc.stdout.strip():
            return py
    return None


def bench(backend: str, python: Path, repeat: int) -> dict[str, Any]:
    turns = [one_turn(backend, python, i) for i in range(repeat)]
    return {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                        "load-average": os.getloadavg()},
            "backend": backend, "python": str(python), "repeat": repeat,
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "summary": summarize(turns), "turns": turns}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda", action="store_true", help="also the CUDA variant")
    parser.add_argument("--cuda-python", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None,
                        help="default: benchmarks/results/dev_loop_<backend>.json")
    args = parser.parse_args()
    status = write_results(bench("cpu", Path(sys.executable), args.repeat),
                           args.out or HERE / "results" / "dev_loop_cpu.json")
    if args.cuda:
        py = cuda_python(args.cuda_python)
        if py is None:
            print("--cuda: no CUDA torch interpreter here (--cuda-python, "
                  "KERNELKIT_TEST_CUDA_PYTHON); skipped", file=sys.stderr)
            return status
        out = args.out.with_name(args.out.stem + "_cuda.json") if args.out else \
            HERE / "results" / "dev_loop_cuda.json"
        status = write_results(bench("cuda", py, args.repeat), out)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
