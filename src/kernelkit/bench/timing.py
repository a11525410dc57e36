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

import contextlib
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kernelkit.bench.stats import is_stable, relative_spread

WARMUP_BATCH = 5
INTERLEAVE_CHUNK = 8  # samples a series takes per turn


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


class Sampler:
    """One series' samples, taken a chunk at a time, until its stopping rule is met (the time
    it counts is its own, so interleaving series does not shorten any of them)."""

    def __init__(self, timer: Timer, opts: TimingOptions) -> None:
        self.timer, self.opts = timer, opts
        self.samples: list[float] = []
        self.seconds = 0.0

    @property
    def done(self) -> bool:
        o, n = self.opts, len(self.samples)
        if o.iterations is not None:
            return n >= o.iterations
        if n >= o.max_samples or self.seconds >= o.max_time_s:
            return True
        measured = math.fsum(self.samples) * self.timer.calls_per_sample
        return n >= o.min_samples and measured >= o.min_time_s

    def step(self) -> None:
        o, n = self.opts, len(self.samples)
        size = INTERLEAVE_CHUNK
        if o.iterations is not None:
            size = min(size, o.iterations - n)
        elif n + size > o.max_samples:
            size = o.max_samples - n
        t0 = time.perf_counter()
        self.samples += self.timer.batch(max(1, size))
        self.seconds += time.perf_counter() - t0


def sample(timer: Timer, opts: TimingOptions) -> list[float]:
    """Samples of one series (see :class:`Sampler`)."""
    s = Sampler(timer, opts)
    while not s.done:
        s.step()
    return s.samples


@dataclass
class Prepared:
    """A warmed-up, calibrated timer of one series and what to record about it."""

    timer: Timer
    warm: _Warmup
    notes: list[str] = field(default_factory=list)
    l2_flush: bool = False

    def finish(self, samples: list[float]) -> Measurement:
        w = self.warm
        return Measurement(samples, self.timer.method, self.timer.clock,
                           self.timer.calls_per_sample, w.calls, w.seconds, w.stable, w.spread,
                           l2_flush=self.l2_flush, notes=self.notes)


def prepare(fn: Callable[[], Any], device: str, opts: TimingOptions) -> Prepared:
    """Choose the timer for ``device``, warm ``fn`` up and calibrate (graphs are captured)."""
    kind = device.split(":")[0]
    if kind == "cuda":
        from kernelkit.bench.cuda import prepare_cuda

        return prepare_cuda(fn, device, opts)
    timer = HostTimer(fn, _synchronizer(kind))
    warm = warm_up(timer, opts)
    if warm.estimate > 0:
        timer.calls_per_sample = max(1, math.ceil(opts.cpu_sample_s / warm.estimate))
    notes = [] if not opts.l2_flush else [f"--l2-flush applies to CUDA devices only, not {kind}"]
    return Prepared(timer, warm, notes)


def _device_scope(device: str) -> contextlib.AbstractContextManager[Any]:
    if device.split(":")[0] != "cuda":
        return contextlib.nullcontext()
    import torch

    return torch.cuda.device(torch.device(device))


def measure_interleaved(fns: dict[str, Callable[[], Any]], device: str, opts: TimingOptions
                        ) -> dict[str, Measurement | Exception]:
    """Time several series of one case **interleaved**: each is warmed up, then they take
    turns, a chunk of samples each, until every one meets its stopping rule. A drift of the
    machine (clocks, other load) then falls on all of them alike instead of on whichever ran
    last, which keeps the speedup intervals honest. A series that raises gets its exception
    and drops out; the others go on."""
    out: dict[str, Measurement | Exception] = {}
    with _device_scope(device):
        prepared: dict[str, Prepared] = {}
        for role, fn in fns.items():
            try:
                prepared[role] = prepare(fn, device, opts)
            except Exception as exc:
                out[role] = exc
        samplers = {role: Sampler(p.timer, opts) for role, p in prepared.items()}
        active = [role for role, s in samplers.items() if not s.done]
        turn = 0
        while active:
            turn += 1  # ABBA order: a steady drift within a round falls on every series alike
            for role in list(active if turn % 2 else reversed(active)):
                try:
                    samplers[role].step()
                except Exception as exc:
                    out[role] = exc
                    active.remove(role)
                    continue
                if samplers[role].done:
                    active.remove(role)
        for role, p in prepared.items():
            if role not in out:
                out[role] = p.finish(samplers[role].samples)
        prepared.clear()  # release graphs and flush buffers inside the device scope
        samplers.clear()
    return {role: out[role] for role in fns}


def measure(fn: Callable[[], Any], device: str, opts: TimingOptions) -> Measurement:
    """Warm up and sample ``fn`` (which runs the case once) on ``device``."""
    result = measure_interleaved({"": fn}, device, opts)[""]
    if isinstance(result, Exception):
        raise result
    return result


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
