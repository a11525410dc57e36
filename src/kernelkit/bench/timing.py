"""Time one callable on one device: warm it up until stable, then sample it.

Methods (recorded with every series, with the clock):

- ``perf-counter`` (CPU): ``time.perf_counter_ns`` around ``k`` back-to-back calls, ``k``
  chosen after warmup so that one sample lasts at least ``cpu_sample_s`` (the clock's own
  cost stays below a percent); other non-CUDA devices add their ``synchronize()``.
- ``cuda-events`` (GPU): a CUDA event pair around every call. The stream is first held by a
  short spin kernel (``torch.cuda._sleep``) while a batch of calls is enqueued, so the GPU
  runs them back to back and the events measure device time, not Python launch gaps. With
  ``l2_flush`` a buffer twice the L2 size is zeroed before each call (outside the events).
- ``cuda-graph`` (GPU, microsecond-scale calls): ``k`` calls captured into one CUDA graph,
  each sample one replay between events divided by ``k``; used when a call takes less than
  ``graph_threshold_s`` (``cuda_graphs="auto"``) or always (``"on"``), never with
  ``l2_flush``. A call that cannot be captured is timed with events, and the note says why.

Warmup: one call, then batches of calls (single calls where a call is slow) until the
medians of the last three batches agree within ``stable_tolerance``
(:func:`kernelkit.bench.stats.is_stable`), or ``warmup_max_s`` passed after at least three
batches (then ``warmup_stable`` is false), or exactly ``warmup`` calls when that is given.
Sampling: until ``min_samples`` samples and ``min_time_s`` of measured time, at most
``max_samples`` samples or ``max_time_s``; exactly ``iterations`` samples when given.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kernelkit.bench.stats import is_stable, relative_spread

WARMUP_BATCH = 5
EVENT_BATCH = 64  # calls enqueued behind one spin kernel


@dataclass(frozen=True)
class TimingOptions:
    min_time_s: float = 0.3
    max_time_s: float = 5.0
    min_samples: int = 25
    max_samples: int = 400
    iterations: int | None = None
    warmup: int | None = None
    warmup_max_s: float = 2.0
    stable_tolerance: float = 0.05
    l2_flush: bool = False
    cuda_graphs: str = "auto"  # auto | on | off
    graph_threshold_s: float = 100e-6
    graph_target_s: float = 1e-3  # one replay lasts about this long
    cpu_sample_s: float = 20e-6


@dataclass
class Measurement:
    """Per-call seconds of one series and how they were taken."""

    samples: list[float]
    method: str
    clock: str
    calls_per_sample: int
    warmup_calls: int
    warmup_s: float
    warmup_stable: bool | None  # None: a fixed warmup count was asked for
    warmup_spread: float | None
    l2_flush: bool
    notes: list[str] = field(default_factory=list)


class Timer(Protocol):
    method: str
    clock: str
    calls_per_sample: int

    def batch(self, n: int) -> list[float]:
        """``n`` samples, each the per-call seconds of ``calls_per_sample`` calls."""
        ...


# --- the device-independent loop ----------------------------------------------------------


@dataclass
class _Warmup:
    calls: int = 0
    seconds: float = 0.0
    stable: bool | None = None
    spread: float | None = None
    medians: list[float] = field(default_factory=list)

    @property
    def estimate(self) -> float:
        return self.medians[-1] if self.medians else math.nan


def warm_up(timer: Timer, opts: TimingOptions) -> _Warmup:
    w = _Warmup()
    start = time.perf_counter()
    if opts.warmup is not None:
        xs = timer.batch(max(1, opts.warmup))
        w.calls, w.medians = len(xs) * timer.calls_per_sample, [statistics.median(xs)]
    else:
        size = 1  # the first call alone: it may compile, allocate or fill caches
        while True:
            xs = timer.batch(size)
            w.calls += len(xs) * timer.calls_per_sample
            w.medians.append(statistics.median(xs))
            if is_stable(w.medians, tolerance=opts.stable_tolerance):
                w.stable = True
                break
            if time.perf_counter() - start > opts.warmup_max_s and len(w.medians) >= 3:
                w.stable = False
                break
            slow = w.estimate * WARMUP_BATCH > opts.warmup_max_s / 4
            size = 1 if slow else WARMUP_BATCH
        w.spread = relative_spread(w.medians[-3:])
    w.seconds = time.perf_counter() - start
    return w


def sample(timer: Timer, opts: TimingOptions) -> list[float]:
    samples: list[float] = []
    start = time.perf_counter()
    if opts.iterations is not None:
        while len(samples) < opts.iterations:
            samples += timer.batch(min(EVENT_BATCH, opts.iterations - len(samples)))
        return samples
    chunk = 5
    while True:
        samples += timer.batch(chunk)
        measured = math.fsum(samples) * timer.calls_per_sample
        elapsed = time.perf_counter() - start
        if len(samples) >= opts.max_samples or elapsed >= opts.max_time_s:
            return samples[: opts.max_samples]
        if len(samples) >= opts.min_samples and measured >= opts.min_time_s:
            return samples
        chunk = min(EVENT_BATCH, max(5, len(samples)))


def measure(fn: Callable[[], Any], device: str, opts: TimingOptions) -> Measurement:
    """Warm up and sample ``fn`` (which runs the case once) on ``device``."""
    kind = device.split(":")[0]
    if kind == "cuda":
        from kernelkit.bench.cuda import measure_cuda

        return measure_cuda(fn, device, opts)
    timer = HostTimer(fn, _synchronizer(kind))
    warm = warm_up(timer, opts)
    if warm.estimate > 0:
        timer.calls_per_sample = max(1, math.ceil(opts.cpu_sample_s / warm.estimate))
    samples = sample(timer, opts)
    notes = [] if not opts.l2_flush else [f"--l2-flush applies to CUDA devices only, not {kind}"]
    return Measurement(samples, timer.method, timer.clock, timer.calls_per_sample, warm.calls,
                       warm.seconds, warm.stable, warm.spread, l2_flush=False, notes=notes)


# --- host clock (CPU and devices without CUDA events) ----------------------------------------


def _synchronizer(kind: str) -> Callable[[], None] | None:
    if kind == "cpu":
        return None
    import torch

    backend = getattr(torch, kind, None)
    sync = getattr(backend, "synchronize", None)
    return sync if callable(sync) else None


class HostTimer:
    clock = "time.perf_counter_ns"

    def __init__(self, fn: Callable[[], Any], sync: Callable[[], None] | None) -> None:
        self.fn, self.sync = fn, sync
        self.calls_per_sample = 1
        self.method = "perf-counter" if sync is None else "perf-counter+synchronize"

    def batch(self, n: int) -> list[float]:
        fn, sync, k = self.fn, self.sync, self.calls_per_sample
        out = []
        clock = time.perf_counter_ns
        for _ in range(n):
            t0 = clock()
            for _ in range(k):
                fn()
            if sync is not None:
                sync()
            out.append((clock() - t0) * 1e-9 / k)
        return out
