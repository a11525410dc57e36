"""Timing statistics on synthetic samples (kernelkit.bench.stats): quantiles, the median's
order-statistic interval and its coverage, Tukey outliers, bootstrap speedups, warmup."""

from __future__ import annotations

import math
import random

import pytest

from kernelkit.bench.stats import (
    is_stable,
    median_ci_ranks,
    quantile,
    relative_spread,
    speedup,
    summarize,
)


def test_quantile_interpolates_between_order_statistics() -> None:
    xs = [1.0, 2.0, 3.0, 4.0]
    assert quantile(xs, 0.0) == 1.0 and quantile(xs, 1.0) == 4.0
    assert quantile(xs, 0.5) == 2.5
    assert quantile(xs, 0.25) == pytest.approx(1.75)  # numpy's default (linear)
    with pytest.raises(ValueError, match="no values"):
        quantile([], 0.5)


@pytest.mark.parametrize(("n", "ranks"), [(10, (2, 9)), (20, (6, 15)), (50, (18, 33)),
                                           (100, (40, 61))])
def test_median_interval_ranks_match_the_binomial_tables(n: int, ranks: tuple[int, int]) -> None:
    lo, hi, coverage = median_ci_ranks(n)
    assert (lo, hi) == ranks
    assert 0.95 <= coverage < 0.99


def test_median_interval_of_tiny_samples_is_the_range_with_its_true_coverage() -> None:
    assert median_ci_ranks(1) == (1, 1, 0.0)
    lo, hi, coverage = median_ci_ranks(5)
    assert (lo, hi) == (1, 5) and coverage == pytest.approx(1 - 2 / 32)
    for n in range(6, 200):
        lo, hi, coverage = median_ci_ranks(n)
        assert coverage >= 0.95 and lo + hi == n + 1
        if lo + 1 <= (n + 1) // 2:  # one rank narrower would fall below 95 %
            tail = sum(math.comb(n, k) for k in range(lo + 1)) / 2 ** n
            assert 1 - 2 * tail < 0.95


def test_median_interval_covers_the_true_median_about_95_percent_of_the_time() -> None:
    rng = random.Random(7)
    true_median = math.exp(0.0)  # lognormal(0, 0.4): a skewed, timing-like distribution
    trials, hits = 600, 0
    for _ in range(trials):
        s = summarize([rng.lognormvariate(0.0, 0.4) for _ in range(40)])
        hits += s.ci_low <= true_median <= s.ci_high
    assert 0.93 <= hits / trials <= 0.99


def test_summary_of_constant_samples() -> None:
    s = summarize([2.0] * 30)
    assert (s.median, s.mean, s.std, s.iqr, s.outliers) == (2.0, 2.0, 0.0, 0.0, 0)
    assert s.ci_low == s.ci_high == 2.0 and s.n == 30


def test_summary_counts_tukey_outliers_but_keeps_them() -> None:
    xs = [1.0 + 0.01 * i for i in range(20)] + [5.0, 0.1]
    s = summarize(xs)
    assert (s.outliers_low, s.outliers_high) == (1, 1)
    assert s.max == 5.0 and s.min == 0.1 and s.n == 22  # kept
    assert s.median == pytest.approx(1.095)
    assert s.q1 < s.median < s.q3 and s.iqr == pytest.approx(s.q3 - s.q1)
    assert s.ci_low <= s.median <= s.ci_high


def test_summary_is_robust_where_the_mean_is_not() -> None:
    rng = random.Random(3)
    xs = [rng.gauss(10.0, 0.1) for _ in range(200)] + [1000.0] * 5  # preempted samples
    s = summarize(xs)
    assert s.median == pytest.approx(10.0, abs=0.05)
    assert s.mean > 30 and s.outliers_high == 5


def test_speedup_of_a_series_twice_as_fast() -> None:
    rng = random.Random(1)
    kernel = [rng.lognormvariate(0, 0.05) for _ in range(100)]
    baseline = [2 * x for x in kernel]
    sp = speedup(kernel, baseline)
    assert sp.value == pytest.approx(2.0)
    assert sp.ci_low <= 2.0 <= sp.ci_high and sp.ci_high - sp.ci_low < 0.2
    assert sp.verdict == "faster"
    assert speedup(baseline, kernel).verdict == "slower"


def test_speedup_of_one_distribution_against_itself_is_not_significant() -> None:
    rng = random.Random(2)
    a = [rng.lognormvariate(0, 0.3) for _ in range(60)]
    b = [rng.lognormvariate(0, 0.3) for _ in range(60)]
    sp = speedup(a, b)
    assert sp.ci_low < 1.0 < sp.ci_high and sp.verdict == "same"


def test_speedup_is_reproducible_and_seeded() -> None:
    rng = random.Random(4)
    a = [rng.random() + 1 for _ in range(50)]
    b = [rng.random() + 1.5 for _ in range(50)]
    assert speedup(a, b) == speedup(a, b)
    assert speedup(a, b, seed=1) != speedup(a, b, seed=2)
    with pytest.raises(ValueError, match="samples of both"):
        speedup([], b)


def test_warmup_is_stable_once_the_last_batches_agree() -> None:
    jit = [50.0, 9.0, 5.2, 5.0, 5.1, 5.05]
    assert [is_stable(jit[:i]) for i in range(1, 7)] == [False, False, False, False, True, True]
    assert not is_stable([1.0, 1.2, 1.0])  # 20 % apart
    assert is_stable([1.0, 1.2, 1.0], tolerance=0.25)
    assert relative_spread([2.0, 2.0]) == 0.0 and relative_spread([1.0, 1.5]) == 0.5
