"""Rates of bad launches and what a count of them can say.

Exact (Clopper-Pearson) bounds, computed from the binomial distribution directly so that no
scipy is needed: twelve clean launches only say the rate is below about 22% (95%), 900 say
below 0.33%.
"""

from __future__ import annotations

import math


def _log_binom_pmf(k: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if k == n else -math.inf
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return min(1.0, sum(math.exp(_log_binom_pmf(i, n, p)) for i in range(0, k + 1)))


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return min(1.0, sum(math.exp(_log_binom_pmf(i, n, p)) for i in range(k, n + 1)))


def rate_upper_bound(bad: int, launches: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound on the bad-launch rate."""
    if launches <= 0:
        return 1.0
    if bad >= launches:
        return 1.0
    alpha = 1.0 - confidence
    if bad == 0:
        return 1.0 - alpha ** (1.0 / launches)
    lo, hi = bad / launches, 1.0
    for _ in range(100):  # bisection: binom_cdf falls as p grows
        mid = (lo + hi) / 2
        if binom_cdf(bad, launches, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def format_rate(bad: int, launches: int, confidence: float = 0.95) -> str:
    """'3/12 (rate < 55.2%)' -- the count and what it can claim."""
    bound = rate_upper_bound(bad, launches, confidence)
    return f"{bad}/{launches} (rate < {format_percent(bound)})"


def format_percent(value: float) -> str:
    pct = 100.0 * value
    if pct >= 10:
        return f"{pct:.1f}%"
    if pct >= 0.1:
        return f"{pct:.2f}%"
    return f"{pct:.2g}%"
