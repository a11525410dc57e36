"""This machine: what it is (for the results) and what it can do (for the roofline).

The roofline's roofs are measured in the same run, with the same timer as the cases, rather
than taken from a datasheet: the **copy bandwidth** (``dst.copy_(src)`` of a buffer far larger
than the last-level cache; bytes read plus bytes written per second) and the **matmul
throughput** (a square matrix product, ``2 n^3`` floating-point operations; bfloat16 on a GPU,
float32 on a CPU). A case's fraction of them is what it achieves against this machine, not
against a peak no program reaches.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from typing import Any

from kernelkit.bench.stats import Summary, summarize
from kernelkit.bench.timing import Measurement, TimingOptions, measure


@dataclass(frozen=True)
class Roof:
    """One measured ceiling: ``rate`` per second (bytes or FLOPs) at the median time."""

    what: str  # "copy-bandwidth" | "matmul"
    rate: float
    unit: str  # "B/s" | "FLOP/s"
    detail: str  # buffer size or matrix shape and dtype
    work: float  # bytes or FLOPs of one call
    summary: Summary
    measurement: Measurement


def machine_info(device: str) -> dict[str, Any]:
    """The machine, for the results: OS, CPU, Python, torch and, on a GPU, the device."""
    import torch

    info: dict[str, Any] = {
        "os": f"{platform.system()} {platform.release()}",
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),
        "device": {"type": device.split(":")[0], "name": platform.machine()},
    }
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.device(device))
        info["device"] = {
            "type": "cuda", "name": props.name,
            "capability": f"{props.major}.{props.minor}",
            "memory_bytes": int(props.total_memory),
            "multiprocessors": int(props.multi_processor_count),
            "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0) or None,
        }
        info["driver"] = _driver_version()
    return info


def _driver_version() -> str | None:
    """The CUDA driver's version (``12040`` = 12.4), where torch exposes it."""
    import torch

    get = getattr(torch._C, "_cuda_getDriverVersion", None)
    try:
        return str(get()) if callable(get) else None
    except Exception:
        return None


def copy_bandwidth(device: str, opts: TimingOptions) -> Roof:
    import torch

    nbytes = (1 << 30) if device.startswith("cuda") else (128 << 20)
    src = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    m = measure(lambda: dst.copy_(src), device, opts)
    s = summarize(m.samples)
    moved = 2.0 * nbytes
    return Roof("copy-bandwidth", moved / s.median, "B/s",
                f"copy of {nbytes >> 20} MiB (float32)", moved, s, m)


def matmul_throughput(device: str, opts: TimingOptions) -> Roof:
    import torch

    gpu = device.startswith("cuda")
    n, dtype = (8192, torch.bfloat16) if gpu else (1024, torch.float32)
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    c = torch.empty(n, n, device=device, dtype=dtype)
    m = measure(lambda: torch.mm(a, b, out=c), device, opts)
    s = summarize(m.samples)
    flops = 2.0 * n ** 3
    return Roof("matmul", flops / s.median, "FLOP/s",
                f"{n}x{n} @ {n}x{n} {str(dtype).removeprefix('torch.')}", flops, s, m)
