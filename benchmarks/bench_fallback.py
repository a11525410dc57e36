"""Time to first call of a kernel no published variant fits: built from its published sources
(``build_missing``), against a plain download of a fitting variant, in the same run (issue 29).

The publisher side runs once, untimed: ``kernelkit init`` (img2gray), ``kernelkit build`` for
``--python``'s torch, then ``kernelkit upload`` twice to a local hub: ``fits/img2gray`` with the
variant under its own name (what a download loads) and ``missing/img2gray`` with the same variant
renamed to another torch's (``torch<other>-...``: nothing fits, so ``build_missing`` builds),
both with their sources. Then, per turn, each in a fresh ``--python`` process with an empty
kernel cache, from process start to the first call's result (``process_s``) and from just
before ``get_kernel`` (``first_call_s``):

* ``download``: ``get_kernel("fits/img2gray")`` + the first call;
* ``fallback_warm_compiler_cache``: ``get_kernel("missing/img2gray", build_missing=True)``, the
  compiler, configure and probe caches as the publisher's build left them (a machine that
  built this kernel before, or shares a ``KERNELKIT_CCACHE_REMOTE``);
* ``fallback_cold``: the same with empty private compiler, configure and probe caches (the
  first build of anything on a fresh machine);
* ``fallback_built``: a second process after a fallback build (the built variant is cached).

Ratios are against ``download``'s median in the same run. ``--cuda``: the CUDA variant, the
first call on the GPU (``--python`` must have a CUDA torch, nvcc must be installed; with a GPU
visible the fallback builds for its capability only, else set ``KERNELKIT_CUDA_CAPABILITIES``).
``--python``'s environment needs ``kernelkit[build]``'s tools (cmake, ninja, pyelftools);
kernelkit itself is taken from this checkout's ``src/``.

Usage: ``python benchmarks/bench_fallback.py [--cuda] [--python PY] [--repeat N] [--out FILE]``;
results in ``benchmarks/results/fallback_<backend>.json`` (medians, every sample kept).
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
SRC = HERE.parent / "src"

FIRST_CALL = """
import json, sys, time
t0 = time.monotonic()
import torch, kernelkit
kwargs = json.loads(sys.argv[2])
k = kernelkit.get_kernel(sys.argv[1], version=1, trust_remote_code=True, **kwargs)
device = "cuda" if kwargs.get("backend") == "cuda" else "cpu"
img = torch.randint(0, 256, (64, 64, 3), dtype=torch.uint8, device=device)
out = k.img2gray(img)
if device == "cuda":
    torch.cuda.synchronize()
print(json.dumps({"first_call_s": time.monotonic() - t0, "file": k.__file__,
                  "shape": list(out.shape)}))
"""


def run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def base_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("KERNELKIT_OFFLINE", "HF_HUB_OFFLINE", "LOCAL_KERNELS",
                        "KERNELKIT_BUILD_MISSING")}
    env.update({"PYTHONPATH": os.pathsep.join(filter(None, [str(SRC),
                                                            env.get("PYTHONPATH")])),
                "KERNELKIT_HUB_DIR": str(root / "hub"), "KERNELKIT_HUB": str(root / "hub"),
                "KERNELKIT_ENVS": str(root / "envs")})
    return env


def publish(root: Path, python: str, backend: str) -> dict[str, str]:
    """Build img2gray for ``python``'s torch and upload it as fits/ and missing/img2gray."""
    env = base_env(root)
    kk = [python, "-m", "kernelkit"]
    project = root / "img2gray"
    run([*kk, "init", str(project), "--name", "fits/img2gray", "--backends", "cpu,cuda"], env)
    run([*kk, "build", str(project), "--backend", backend], env)
    [variant] = [p for p in (project / "build").iterdir() if p.is_dir()]
    run([*kk, "upload", str(project), "--repo-id", "fits/img2gray"], env)
    torch_tag = variant.name.split("-", 1)[0]  # torch213
    other = f"torch{int(torch_tag[5:]) - 1}-" + variant.name.split("-", 1)[1]
    variant.rename(variant.with_name(other))
    run([*kk, "upload", str(project), "--repo-id", "missing/img2gray"], env)
    return {"variant": variant.name, "published_as": other}


def first_call(python: str, repo: str, kwargs: dict[str, Any], env: dict[str, str]
               ) -> dict[str, Any]:
    started = time.monotonic()
    out = run([python, "-c", FIRST_CALL, repo, json.dumps(kwargs)], env)
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["process_s"] = time.monotonic() - started
    return result


def turn(root: Path, python: str, backend: str, i: int) -> dict[str, dict[str, Any]]:
    env = base_env(root)
    kwargs: dict[str, Any] = {"backend": backend}
    fallback = {**kwargs, "build_missing": True}
    cold = {"KERNELKIT_CCACHE_DIR": str(root / f"ccache-{i}"),
            "KERNELKIT_CONFIGURE_CACHE": str(root / f"configure-{i}"),
            "KERNELKIT_PROBE_CACHE": str(root / f"probe-{i}")}
    out = {"download": first_call(python, "fits/img2gray", kwargs,
                                  {**env, "KERNELKIT_CACHE": str(root / f"cache-d{i}")}),
           "fallback_warm_compiler_cache": first_call(
               python, "missing/img2gray", fallback,
               {**env, "KERNELKIT_CACHE": str(root / f"cache-w{i}")}),
           "fallback_cold": first_call(python, "missing/img2gray", fallback,
                                       {**env, **cold,
                                        "KERNELKIT_CACHE": str(root / f"cache-c{i}")}),
           "fallback_built": first_call(python, "missing/img2gray", fallback,
                                        {**env, "KERNELKIT_CACHE": str(root / f"cache-w{i}")})}
    assert "/local/" in out["fallback_cold"]["file"] and "/build/" in out["download"]["file"]
    return out


def summarize(samples: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    cases = list(samples[0])
    medians = {c: {k: round(statistics.median(s[c][k] for s in samples), 3)
                   for k in ("process_s", "first_call_s")} for c in cases}
    base = medians["download"]
    return {"median": medians,
            "ratio_to_download": {c: {k: round(m[k] / base[k], 2) for k in m}
                                  for c, m in medians.items()},
            "samples": [{c: {k: round(v, 3) for k, v in s[c].items() if k.endswith("_s")}
                         for c in cases} for s in samples]}


def bench(python: str, backend: str, repeat: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="kk-bench-fallback-"))
    try:
        published = publish(root, python, backend)
        samples = [turn(root, python, backend, i) for i in range(repeat)]
        torch = run([python, "-c", "import torch; print(torch.__version__)"],
                    base_env(root)).strip()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"benchmark": "fallback", "backend": backend, "kernel": "img2gray (kernelkit init)",
            "python": python, "torch": torch, "machine": platform.machine(),
            "cores": os.cpu_count(), "repeat": repeat, **published, **summarize(samples)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda", action="store_true", help="the CUDA variant (a GPU run)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter (its torch) to publish for and load with")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None,
                        help="default: benchmarks/results/fallback_<backend>.json")
    args = parser.parse_args()
    backend = "cuda" if args.cuda else "cpu"
    out = args.out or HERE / "results" / f"fallback_{backend}.json"
    return write_results(bench(args.python, backend, args.repeat), out)


if __name__ == "__main__":
    raise SystemExit(main())
