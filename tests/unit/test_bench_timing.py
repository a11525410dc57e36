"""The device-independent timing loop (kernelkit.bench.timing) on synthetic timers: a timer
whose samples follow a script, so warmup, stopping rules and calibration are checked exactly;
and the CPU timer on a real function."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from kernelkit.bench.stats import speedup
from kernelkit.bench.timing import (
    HostTimer,
    Measurement,
    TimingOptions,
    measure,
    measure_interleaved,
    sample,
    warm_up,
)


class ScriptedTimer:
    """Samples from a sequence (seconds per call), as a real timer would return them."""

    method = "scripted"
    clock = "none"
    calls_per_sample = 1

    def __init__(self, values: Iterator[float]) -> None:
        self.values = values
        self.batches: list[int] = []

    def batch(self, n: int) -> list[float]:
        self.batches.append(n)
        return [next(self.values) for _ in range(n)]


def _jit_then_steady() -> Iterator[float]:
    yield 1e-3  # a slow first call (compilation, cold caches)
    yield from [2e-4] * 5
    while True:
        yield 1e-4


def test_warmup_runs_until_three_batch_medians_agree() -> None:
    timer = ScriptedTimer(_jit_then_steady())
    w = warm_up(timer, TimingOptions())
    assert w.stable is True and w.calls == 21  # 1 call, a settling batch, 3 that agree
    assert timer.batches == [1, 5, 5, 5, 5]
    assert w.medians == [1e-3, 2e-4, 1e-4, 1e-4, 1e-4] and w.estimate == 1e-4


def test_warmup_gives_up_after_its_time_limit_and_says_so() -> None:
    def drifting() -> Iterator[float]:
        x = 1e-4
        while True:
            x *= 1.2  # never settles
            yield x

    w = warm_up(ScriptedTimer(drifting()), TimingOptions(warmup_max_s=0.0))
    assert w.stable is False and len(w.medians) == 3
    assert w.spread is not None and w.spread > 0.05


def test_slow_calls_warm_up_one_at_a_time() -> None:
    timer = ScriptedTimer(iter(lambda: 0.5, None))
    w = warm_up(timer, TimingOptions(warmup_max_s=2.0))
    assert timer.batches == [1, 1, 1] and w.stable is True


def test_fixed_warmup_count_is_honoured() -> None:
    timer = ScriptedTimer(_jit_then_steady())
    w = warm_up(timer, TimingOptions(warmup=7))
    assert timer.batches == [7] and w.calls == 7 and w.stable is None


def test_sampling_stops_at_min_samples_and_min_time() -> None:
    steady = iter(lambda: 1e-3, None)  # 1 ms per call
    xs = sample(ScriptedTimer(steady), TimingOptions(min_samples=25, min_time_s=0.1))
    assert 100 <= len(xs) <= 108  # 0.1 s of 1 ms samples, in chunks of 8
    xs = sample(ScriptedTimer(steady), TimingOptions(min_samples=25, min_time_s=0.0))
    assert 25 <= len(xs) <= 32


def test_sampling_caps_and_exact_iterations() -> None:
    steady = iter(lambda: 1e-3, None)
    assert len(sample(ScriptedTimer(steady), TimingOptions(min_time_s=10.0,
                                                           max_samples=50))) == 50
    assert len(sample(ScriptedTimer(steady), TimingOptions(iterations=77))) == 77


def test_cpu_timer_batches_short_calls_and_measures_real_time() -> None:
    m = measure(lambda: None, "cpu", TimingOptions(min_time_s=0.01, cpu_sample_s=20e-6))
    assert m.method == "perf-counter" and m.clock == "time.perf_counter_ns"
    assert m.calls_per_sample > 10  # a no-op is far below 20 us
    assert all(0 < x < 1e-4 for x in m.samples)
    slow = measure(lambda: time.sleep(0.002), "cpu", TimingOptions(min_samples=5,
                                                                   min_time_s=0.0))
    assert slow.calls_per_sample == 1 and min(slow.samples) >= 0.002


def test_host_timer_divides_by_calls_per_sample() -> None:
    calls = []
    timer = HostTimer(lambda: calls.append(1), None)
    timer.calls_per_sample = 4
    assert len(timer.batch(3)) == 3 and len(calls) == 12


def _drifting_pair() -> tuple[Callable[[], None], Callable[[], None]]:
    """Two identical 'kernels' on a machine that slows down steadily (each call takes longer
    than the one before, whichever series makes it): 50 us, doubling over 400 calls."""
    calls = [0]

    def call() -> None:
        calls[0] += 1
        end = time.perf_counter() + 50e-6 * (1 + calls[0] / 400)
        while time.perf_counter() < end:
            pass

    def a() -> None:
        call()

    def b() -> None:
        call()

    return a, b


def test_interleaved_series_share_the_drift_of_the_machine() -> None:
    opts = TimingOptions(iterations=160, warmup=4, cpu_sample_s=1e-6)
    a, b = _drifting_pair()
    sequential = speedup(measure(a, "cpu", opts).samples, measure(b, "cpu", opts).samples)
    assert sequential.value > 1.2 and sequential.verdict == "faster"  # b looks slower: wrong
    a, b = _drifting_pair()
    both = measure_interleaved({"a": a, "b": b}, "cpu", opts)
    ma, mb = both["a"], both["b"]
    assert isinstance(ma, Measurement) and isinstance(mb, Measurement)
    assert len(ma.samples) == len(mb.samples) == 160
    assert abs(speedup(ma.samples, mb.samples).value - 1.0) < 0.08


def test_a_series_that_raises_drops_out_and_the_others_finish() -> None:
    calls = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) > 10:
            raise RuntimeError("device lost")

    got = measure_interleaved({"ok": lambda: None, "flaky": flaky}, "cpu",
                              TimingOptions(iterations=50, warmup=2))
    assert isinstance(got["flaky"], RuntimeError)
    assert isinstance(got["ok"], Measurement) and len(got["ok"].samples) == 50
