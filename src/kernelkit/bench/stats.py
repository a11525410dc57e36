"""Statistics of timing samples (pure Python: no torch, no numpy; unit-tested on synthetic data).

Timings are skewed (a floor set by the hardware, a tail of interruptions), so the centre is the
**median**, the spread the **interquartile range**, and outliers are counted (Tukey's fences,
1.5 IQR beyond the quartiles) but kept. The median's confidence interval is distribution-free:
two order statistics whose ranks come from the Binomial(n, 1/2) law (exact for the sample
size), so it holds whatever the shape of the timing distribution. A **speedup** (baseline median
/ kernel median) gets a percentile-bootstrap interval from independent resamples of both series,
with a fixed seed so a result file can be recomputed bit for bit.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20260826
TUKEY_K = 1.5


@dataclass(frozen=True)
class Summary:
    """Statistics of one series of per-call times (seconds)."""

    n: int
    median: float
    mean: float
    std: float
    min: float
    max: float
    q1: float
    q3: float
    iqr: float
    outliers_low: int
    outliers_high: int
    ci_low: float  # confidence interval of the median
    ci_high: float
    ci_level: float  # the interval's exact coverage (>= the requested level when n allows)

    @property
    def outliers(self) -> int:
        return self.outliers_low + self.outliers_high


@dataclass(frozen=True)
class Speedup:
    """``baseline median / kernel median``: above 1 the kernel is faster."""

    value: float
    ci_low: float
    ci_high: float
    level: float
    resamples: int

    @property
    def verdict(self) -> str:
        """``faster`` / ``slower`` when the interval excludes 1, else ``same``."""
        if self.ci_low > 1.0:
            return "faster"
        if self.ci_high < 1.0:
            return "slower"
        return "same"


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-quantile of sorted data, linear between order statistics (numpy's default)."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("quantile of no values")
    pos = (n - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def median_ci_ranks(n: int, level: float = CONFIDENCE) -> tuple[int, int, float]:
    """1-based ranks ``(l, u)`` with ``P(x_(l) <= median <= x_(u)) >= level`` for any continuous
    distribution, symmetric (``u = n + 1 - l``), as narrow as the sample size allows; and the
    exact coverage ``1 - 2 P(B <= l - 1)``, ``B ~ Binomial(n, 1/2)``. Below ~6 samples no
    interval reaches 95 %: then ``(1, n)`` and its (lower) coverage."""
    if n < 1:
        raise ValueError("no samples")
    total = 2 ** n
    cdf = 0  # 2**n * P(B <= l - 1), exact integers
    best, best_cdf = 1, 1
    for lo in range(1, (n + 1) // 2 + 1):
        cdf += math.comb(n, lo - 1)
        if lo > 1 and 1.0 - 2.0 * cdf / total < level:
            break
        best, best_cdf = lo, cdf
    return best, n + 1 - best, 1.0 - 2.0 * best_cdf / total


def summarize(samples: Sequence[float], level: float = CONFIDENCE) -> Summary:
    """Median, quartiles, IQR, Tukey outliers and the median's order-statistic interval."""
    if not samples:
        raise ValueError("no samples to summarize")
    xs = sorted(float(x) for x in samples)
    n = len(xs)
    q1, med, q3 = quantile(xs, 0.25), quantile(xs, 0.5), quantile(xs, 0.75)
    iqr = q3 - q1
    lo_fence, hi_fence = q1 - TUKEY_K * iqr, q3 + TUKEY_K * iqr
    mean = math.fsum(xs) / n
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
    lo_rank, hi_rank, coverage = median_ci_ranks(n, level)
    return Summary(
        n=n, median=med, mean=mean, std=math.sqrt(var), min=xs[0], max=xs[-1], q1=q1, q3=q3,
        iqr=iqr, outliers_low=sum(x < lo_fence for x in xs),
        outliers_high=sum(x > hi_fence for x in xs),
        ci_low=xs[lo_rank - 1], ci_high=xs[hi_rank - 1], ci_level=coverage,
    )


def _median_sorted(xs: list[float]) -> float:
    xs.sort()
    n = len(xs)
    mid = n // 2
    return xs[mid] if n % 2 else (xs[mid - 1] + xs[mid]) / 2


def speedup(kernel: Sequence[float], baseline: Sequence[float], *,
            level: float = CONFIDENCE, resamples: int = BOOTSTRAP_RESAMPLES,
            seed: int = BOOTSTRAP_SEED) -> Speedup:
    """``median(baseline) / median(kernel)`` with a percentile-bootstrap interval: both series
    resampled independently (they were measured independently), ``resamples`` times."""
    if not kernel or not baseline:
        raise ValueError("speedup needs samples of both series")
    k, b = [float(x) for x in kernel], [float(x) for x in baseline]
    point = _median_sorted(list(b)) / _median_sorted(list(k))
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        km = _median_sorted(rng.choices(k, k=len(k)))
        bm = _median_sorted(rng.choices(b, k=len(b)))
        ratios.append(bm / km if km > 0 else math.inf)
    ratios.sort()
    alpha = 1.0 - level
    return Speedup(point, quantile(ratios, alpha / 2), quantile(ratios, 1 - alpha / 2), level,
                   resamples)


def relative_spread(values: Sequence[float]) -> float:
    """``max / min - 1`` of positive values (0 for identical values); ``inf`` if min <= 0."""
    lo, hi = min(values), max(values)
    if lo <= 0:
        return 0.0 if hi == lo else math.inf
    return hi / lo - 1.0


def is_stable(batch_medians: Sequence[float], *, window: int = 3, tolerance: float = 0.05
              ) -> bool:
    """Warmup is over when the medians of the last ``window`` warmup batches agree within
    ``tolerance`` (relative spread): caches, clocks, allocators and JITs have settled."""
    if len(batch_medians) < window:
        return False
    return relative_spread(batch_medians[-window:]) <= tolerance
