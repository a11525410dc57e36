"""CUDA timers (see :mod:`kernelkit.bench.timing` for the methods): events, graphs, the spin
kernel that hides launch gaps, and the L2 flush. Imported only when the device is CUDA."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from typing import Any

import torch

from kernelkit.bench.timing import Prepared, TimingOptions, warm_up

CLOCK = "cudaEventElapsedTime"
_MAX_SLEEP_S = 0.05
_GUESS_ENQUEUE_S = 50e-6  # per call, before the first batch measured it
_cycles_per_s: dict[int, float] = {}  # device index -> spin-kernel cycles per second


def _event() -> Any:
    return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]


def _spin(cycles: int) -> None:
    torch.cuda._sleep(cycles)  # type: ignore[no-untyped-call]


def _device_index(device: str) -> int:
    dev = torch.device(device)
    return dev.index if dev.index is not None else torch.cuda.current_device()


def spin_rate(index: int) -> float | None:
    """Cycles per second of ``torch.cuda._sleep`` on this device (measured once), or None
    where torch has no spin kernel."""
    if getattr(torch.cuda, "_sleep", None) is None:
        return None
    if index not in _cycles_per_s:
        with torch.cuda.device(index):
            start, end = _event(), _event()
            _spin(1000)  # load the kernel
            cycles = 20_000_000
            start.record()
            _spin(cycles)
            end.record()
            end.synchronize()
            _cycles_per_s[index] = cycles / (start.elapsed_time(end) * 1e-3)
    return _cycles_per_s[index]


class L2Flush:
    """Zero a buffer twice the size of the L2 cache: the next call starts with a cold cache."""

    def __init__(self, index: int) -> None:
        l2 = int(getattr(torch.cuda.get_device_properties(index), "L2_cache_size", 0) or 0)
        self.bytes = max(2 * l2, 64 << 20)
        self.buffer = torch.empty(self.bytes // 4, dtype=torch.int32, device=f"cuda:{index}")

    def __call__(self) -> None:
        self.buffer.zero_()


class EventTimer:
    """A CUDA event pair around every call, the calls enqueued behind a spin kernel."""

    method = "cuda-events"
    clock = CLOCK
    calls_per_sample = 1

    def __init__(self, fn: Callable[[], Any], index: int, flush: L2Flush | None) -> None:
        self.fn, self.index, self.flush = fn, index, flush
        self.rate = spin_rate(index)
        self.enqueue_s = _GUESS_ENQUEUE_S

    def batch(self, n: int) -> list[float]:
        fn, flush = self.fn, self.flush
        starts = [_event() for _ in range(n)]
        ends = [_event() for _ in range(n)]
        if self.rate is not None:
            hold = min(_MAX_SLEEP_S, self.enqueue_s * n * 1.5 + 20e-6)
            _spin(int(hold * self.rate))
        t0 = time.perf_counter()
        for i in range(n):
            if flush is not None:
                flush()
            starts[i].record()
            fn()
            ends[i].record()
        self.enqueue_s = (time.perf_counter() - t0) / n
        torch.cuda.synchronize(self.index)
        return [s.elapsed_time(e) * 1e-3 for s, e in zip(starts, ends, strict=True)]


class GraphTimer:
    """``calls_per_sample`` calls captured in one CUDA graph; one replay per sample."""

    method = "cuda-graph"
    clock = CLOCK

    def __init__(self, fn: Callable[[], Any], index: int, calls: int) -> None:
        self.index, self.calls_per_sample = index, calls
        stream = torch.cuda.Stream(index)  # type: ignore[no-untyped-call]
        stream.wait_stream(torch.cuda.current_stream(index))
        with torch.cuda.stream(stream):  # warm up on a side stream, as capture wants
            for _ in range(3):
                fn()
        torch.cuda.current_stream(index).wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            for _ in range(calls):
                fn()
        torch.cuda.synchronize(index)

    def batch(self, n: int) -> list[float]:
        starts = [_event() for _ in range(n)]
        ends = [_event() for _ in range(n)]
        for i in range(n):
            starts[i].record()
            self.graph.replay()
            ends[i].record()
        torch.cuda.synchronize(self.index)
        k = self.calls_per_sample
        return [s.elapsed_time(e) * 1e-3 / k for s, e in zip(starts, ends, strict=True)]


def prepare_cuda(fn: Callable[[], Any], device: str, opts: TimingOptions) -> Prepared:
    """Warm ``fn`` up with events; then a CUDA graph where the call is short (falling back to
    events, with the reason, when it cannot be captured). Call inside ``torch.cuda.device``."""
    index = _device_index(device)
    flush = L2Flush(index) if opts.l2_flush else None
    events = EventTimer(fn, index, flush)
    notes = [] if events.rate is not None else [
        ("torch.cuda._sleep is missing: calls were not queued behind a spin kernel, so "
         "launch gaps may be included")]
    if flush is not None:
        notes.append(f"L2 flushed before each call ({flush.bytes >> 20} MiB zeroed)")
    warm = warm_up(events, opts)
    graph, why = _want_graph(opts, warm.estimate)
    if why:
        notes.append(why)
    if not graph:
        return Prepared(events, warm, notes, l2_flush=opts.l2_flush)
    calls = max(1, min(1000, math.ceil(opts.graph_target_s / max(warm.estimate, 1e-7))))
    try:
        timer = GraphTimer(fn, index, calls)
        timer.batch(3)
    except Exception as exc:  # capture refused: syncs, host reads, unsupported ops
        with contextlib.suppress(Exception):
            torch.cuda.synchronize(index)
        first = str(exc).splitlines()[0] if str(exc) else ""
        notes.append(f"CUDA graph capture failed ({type(exc).__name__}: {first}); timed with "
                     "CUDA events")
        return Prepared(events, warm, notes, l2_flush=opts.l2_flush)
    return Prepared(timer, warm, notes, l2_flush=False)


def _want_graph(opts: TimingOptions, per_call_s: float) -> tuple[bool, str | None]:
    """Whether to time with a CUDA graph, and why not where that is worth saying."""
    if opts.cuda_graphs == "off":
        return False, None
    if opts.l2_flush:
        return False, "no CUDA graph: --l2-flush flushes between single calls"
    if opts.cuda_graphs == "on" or per_call_s < opts.graph_threshold_s:
        return True, None
    return False, None
