"""Small-call overhead of the ``kernelkit init`` templates' ops, in one process.

For a 64x64 ``img2gray`` and a small ``silu_and_mul`` (8 x 2*256 float32) it times, back to
back (best of ``--repeats`` batches of ``--calls`` calls; on CUDA one synchronize per batch):

* ``wrapper``: the generated Python function (``kernel.img2gray(x)``, ``kernel.silu_and_mul(x)``);
* ``raw_op``: the ``torch.ops`` call it wraps (``torch.ops.<ns>.img2gray(x)``);
* ``raw_overload``: the resolved overload (``torch.ops.<ns>.img2gray.default(x)``);
* ``eager``: the same maths in eager torch;
* ``python_checks`` (img2gray only): the former wrapper's shape: argument checks and the
  output allocation in Python, then the ``out`` op.

Ratios are against ``raw_op`` in the same process. The kernels come from ``--img2gray`` and
``--activation`` (a project directory, its ``build/`` or one ``build/<variant>/``), loaded with
``kernelkit.get_local_kernel``; without them both templates are scaffolded and built for the
device (``kernelkit build --backend cpu|cuda``, with ``--python`` as the torch environment).

Writes ``benchmarks/results/small_call_<device>.json``. Run:
``.venv/bin/python benchmarks/bench_small_call.py [--device cuda] [--img2gray DIR ...]``.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
import torch.nn.functional as F
from results_io import write_results

ROOT = Path(__file__).resolve().parents[1]


def time_cases(cases: dict[str, Callable[[], object]], device: str, calls: int,
               repeats: int) -> dict[str, float]:
    """Best per-call time (microseconds) of each case over ``repeats`` batches of ``calls``
    calls. The cases take turns batch by batch, so a busy machine slows them alike."""
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for fn in cases.values():  # warm-up
        for _ in range(max(calls // 10, 10)):
            fn()
    sync()
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(repeats):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            sync()
            best[name] = min(best[name], (time.perf_counter() - t0) / calls)
    return {name: t * 1e6 for name, t in best.items()}


def build_template(template: str, backend: str, python: Path, workdir: Path) -> Path:
    project = workdir / template
    kk = [sys.executable, "-m", "kernelkit"]
    subprocess.run([*kk, "init", str(project), "--template", template, "--backends", backend],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*kk, "build", str(project), "--python", str(python), "--backend", backend],
                   check=True, stdout=subprocess.DEVNULL)
    return project / "build"


def load(build: Path) -> ModuleType:
    from kernelkit import get_local_kernel

    return get_local_kernel(build)


def img2gray_eager(image: torch.Tensor) -> torch.Tensor:
    x = image.to(torch.float32)
    y = x[..., 0] * 0.299 + x[..., 1] * 0.587
    y = y + x[..., 2] * 0.114
    return (y + 0.5).clamp(0, 255).to(torch.uint8)


def img2gray_python_checks(kernel: ModuleType) -> Callable[[torch.Tensor], torch.Tensor]:
    """The wrapper as it was before the checks moved into C++ (for comparison)."""
    out_op = kernel.ops.img2gray.out

    def call(image: torch.Tensor) -> torch.Tensor:
        if not isinstance(image, torch.Tensor):
            raise TypeError("image must be a torch.Tensor")
        if image.dtype != torch.uint8:
            raise TypeError("image must have dtype torch.uint8")
        if image.dim() not in (3, 4) or image.shape[-1] != 3:
            raise ValueError("image must have shape (H, W, 3) or (N, H, W, 3)")
        if not image.is_contiguous():
            raise ValueError("image must be contiguous")
        out = torch.empty(image.shape[:-1], dtype=torch.uint8, device=image.device)
        out_op(image, out)
        return out

    return call


def silu_and_mul_eager(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


def bench_img2gray(kernel: ModuleType, device: str, calls: int, repeats: int) -> dict[str, Any]:
    image = torch.randint(0, 256, (64, 64, 3), dtype=torch.uint8, device=device)
    assert torch.equal(kernel.img2gray(image), img2gray_eager(image))
    checks = img2gray_python_checks(kernel)
    cases: dict[str, Callable[[], object]] = {
        "wrapper": lambda: kernel.img2gray(image),
        "raw_op": lambda: kernel.ops.img2gray(image),
        "raw_overload": lambda: kernel.ops.img2gray.default(image),
        "eager": lambda: img2gray_eager(image),
        "python_checks": lambda: checks(image),
    }
    return summarize("img2gray", "uint8 (64, 64, 3)", cases, device, calls, repeats)


def bench_silu_and_mul(kernel: ModuleType, device: str, calls: int,
                       repeats: int) -> dict[str, Any]:
    x = torch.randn(8, 512, device=device)
    torch.testing.assert_close(kernel.silu_and_mul(x), silu_and_mul_eager(x))
    cases: dict[str, Callable[[], object]] = {
        "wrapper": lambda: kernel.silu_and_mul(x),
        "raw_op": lambda: kernel.ops.silu_and_mul_fn(x),
        "raw_overload": lambda: kernel.ops.silu_and_mul_fn.default(x),
        "eager": lambda: silu_and_mul_eager(x),
    }
    return summarize("silu_and_mul", "float32 (8, 512)", cases, device, calls, repeats)


def summarize(op: str, shape: str, cases: dict[str, Callable[[], object]], device: str,
              calls: int, repeats: int) -> dict[str, Any]:
    us = time_cases(cases, device, calls, repeats)
    return {"op": op, "input": shape, "us_per_call": {k: round(v, 3) for k, v in us.items()},
            "ratio_vs_raw_op": {k: round(v / us["raw_op"], 3) for k, v in us.items()}}


def cpu_name() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor()
    return next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")),
                platform.processor())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--img2gray", type=Path, help="img2gray build (project, build/ or variant)")
    ap.add_argument("--activation", type=Path, help="activation build (project, build/ or variant)")
    ap.add_argument("--python", type=Path, default=Path(sys.executable),
                    help="torch environment to build the templates with (when not given)")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=150)
    ap.add_argument("--out", type=Path, help="default: benchmarks/results/small_call_<device>.json")
    args = ap.parse_args()
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        torch.set_num_threads(1)  # small inputs: measure the call, not thread start-up
    with tempfile.TemporaryDirectory(prefix="kk-small-call-") as tmp:
        builds = {name: getattr(args, name) or build_template(name, device, args.python, Path(tmp))
                  for name in ("img2gray", "activation")}
        results = [bench_img2gray(load(builds["img2gray"]), device, args.calls, args.repeats),
                   bench_silu_and_mul(load(builds["activation"]), device, args.calls,
                                      args.repeats)]
    report = {
        "benchmark": "small_call", "device": device,
        "device_name": torch.cuda.get_device_name() if device == "cuda" else cpu_name(),
        "torch": torch.__version__, "python": platform.python_version(),
        "cpu_threads": torch.get_num_threads(), "calls_per_batch": args.calls,
        "repeats": args.repeats, "results": results,
    }
    out = args.out or ROOT / "benchmarks" / "results" / f"small_call_{device}.json"
    return write_results(report, out)


if __name__ == "__main__":
    sys.exit(main())
