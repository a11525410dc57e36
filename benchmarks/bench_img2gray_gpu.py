"""img2gray bandwidth on a CUDA device, all in one process: kernelkit's kernel, torch eager,
torch.compile, and the device-to-device copy ceiling, against image size.

Bandwidth counts bytes read + written: 3 bytes in + 1 byte out per pixel. The copy ceiling
copies 2 bytes per pixel (so it also reads + writes 4 bytes per pixel). Each timing is the
median of several CUDA-event-timed batches after warm-up.

    python benchmarks/bench_img2gray_gpu.py --kernel BUILD_DIR --out benchmarks/results
    python benchmarks/bench_img2gray_gpu.py --plot benchmarks/results/img2gray_gpu.json

Writes ``img2gray_gpu.json`` and ``img2gray_gpu.png`` (the PNG needs matplotlib).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

SHAPES: list[tuple[int, ...]] = [
    (256, 256, 3), (512, 512, 3), (1024, 1024, 3), (1081, 1923, 3), (2048, 2048, 3),
    (8, 1024, 1024, 3), (4096, 4096, 3), (8192, 8192, 3),
]


def reference(image: Any) -> Any:
    import torch

    x = image.to(torch.float32)
    y = x[..., 0] * 0.299 + x[..., 1] * 0.587
    y = y + x[..., 2] * 0.114
    return (y + 0.5).clamp(0, 255).to(torch.uint8)


def time_ms(fn: Callable[[], object], *, reps: int = 20, batches: int = 7) -> float:
    import torch

    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(batches):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / reps)
    return statistics.median(samples)


def measure(kernel: Any) -> list[dict[str, Any]]:
    import torch

    compiled = torch.compile(reference, dynamic=False)
    rows = []
    for shape in SHAPES:
        gen = torch.Generator(device="cuda").manual_seed(0)
        image = torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=gen)
        pixels = image.numel() // 3
        out = torch.empty(shape[:-1], dtype=torch.uint8, device="cuda")
        src = torch.empty(2 * pixels, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        ref = reference(image)
        identical = bool(torch.equal(kernel.img2gray(image), ref))
        identical_compiled = bool(torch.equal(compiled(image), ref))
        moved = 4 * pixels
        timings = {
            "kernelkit": time_ms(lambda i=image, o=out: kernel.img2gray(i, out=o)),
            "torch_eager": time_ms(lambda i=image: reference(i)),
            "torch_compile": time_ms(lambda i=image: compiled(i)),
            "copy": time_ms(lambda d=dst, s=src: d.copy_(s)),
        }
        row = {
            "shape": list(shape), "pixels": pixels, "bytes_moved": moved,
            "bit_identical_to_reference": identical,
            "compile_identical_to_reference": identical_compiled,
            "ms": timings,
            "tb_per_s": {k: moved / (v * 1e-3) / 1e12 for k, v in timings.items()},
        }
        row["kernelkit_vs_copy"] = row["tb_per_s"]["kernelkit"] / row["tb_per_s"]["copy"]
        rows.append(row)
        print(f"{shape!s:>22} " + "  ".join(
            f"{k} {v:.3f} TB/s" for k, v in row["tb_per_s"].items())
            + f"  kernelkit/copy {row['kernelkit_vs_copy']:.3f}  identical={identical}",
            flush=True)
    return rows


def plot(results: dict[str, Any], png: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no PNG written", file=sys.stderr)
        return False
    rows = sorted(results["rows"], key=lambda r: r["pixels"])
    fig, ax = plt.subplots(figsize=(8, 5))
    labels = {"kernelkit": "kernelkit img2gray", "torch_eager": "torch eager",
              "torch_compile": "torch.compile", "copy": "device copy (ceiling)"}
    for key, label in labels.items():
        ax.plot([r["pixels"] for r in rows], [r["tb_per_s"][key] for r in rows], marker="o",
                label=label, linestyle="--" if key == "copy" else "-")
    ax.set_xscale("log")
    ax.set_xlabel("pixels per call")
    ax.set_ylabel("bandwidth, TB/s (bytes read + written)")
    ax.set_title(f"img2gray on {results['device']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--kernel", type=Path, help="a build dir / variant dir of the img2gray kernel")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    p.add_argument("--plot", type=Path, help="only re-plot an existing JSON result")
    args = p.parse_args(argv)
    if args.plot:
        results = json.loads(args.plot.read_text())
        plot(results, args.plot.with_suffix(".png"))
        return 0
    import torch

    from kernelkit import get_local_kernel

    kernel = get_local_kernel(args.kernel)
    results = {
        "benchmark": "img2gray bandwidth vs size: kernelkit, torch eager, torch.compile, copy",
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "kernel_module": kernel.__name__,
        "rows": measure(kernel),
    }
    big = max(results["rows"], key=lambda r: r["pixels"])
    results["target"] = {
        "shape": big["shape"], "kernelkit_vs_copy": big["kernelkit_vs_copy"],
        "required": 0.90, "met": big["kernelkit_vs_copy"] >= 0.90,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "img2gray_gpu.json").write_text(json.dumps(results, indent=2) + "\n")
    plot(results, args.out / "img2gray_gpu.png")
    print(json.dumps(results["target"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
