"""Rates of bad launches and what a count of them can say.

Exact (Clopper-Pearson) bounds, computed from the binomial distribution directly so that no
scipy is needed: twelve clean launches only say the rate is below about 22% (95%), 900 say
below 0.33%.
"""

from __future__ import annotations

import math


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p): the regularized incomplete beta function
    1 - I_p(k + 1, n - k), by its continued fraction, whose terms grow with sqrt(n) rather than
    n (so an interval over 100,000 launches costs no more than one over 100)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - _incomplete_beta(k + 1, n - k, p)))


_TINY = 1e-300


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), regularized (Numerical Recipes' betai: the continued fraction on the side
    where it converges fast)."""
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) by the modified Lentz method."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


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
    while hi - lo > 1e-10 * hi:  # bisection (binom_cdf falls as p grows), to ten significant digits
        mid = (lo + hi) / 2
        if binom_cdf(bad, launches, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def rate_lower_bound(bad: int, launches: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson lower bound on the bad-launch rate, by symmetry with the upper
    one: 1/1 is above 5%, 20/20 above 86%; 0 with no bad launch."""
    if launches <= 0 or bad <= 0:
        return 0.0
    return max(0.0, 1.0 - rate_upper_bound(launches - bad, launches, confidence))


def rate_interval(bad: int, launches: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval of the bad-launch rate: 12/12 is 74-100%, 0/12 is
    0-26% (each end at half the missing confidence)."""
    if launches <= 0:
        return 0.0, 1.0
    one_sided = 1.0 - (1.0 - confidence) / 2
    return rate_lower_bound(bad, launches, one_sided), rate_upper_bound(bad, launches, one_sided)


def format_interval(low: float, high: float) -> str:
    """'74–100%', '0–0.41%': as many digits as each end needs to say something."""

    def short(value: float) -> str:
        pct = 100.0 * value
        if pct == 0 or 10 <= pct < 99.5 or pct == 100:
            return f"{pct:.0f}"
        if pct >= 99.5:  # 99.8% must not read as 100%: that end is not reached
            return f"{pct:.{max(1, -math.floor(math.log10(100 - pct)))}f}"
        if pct >= 1:
            return f"{pct:.1f}"
        return f"{pct:.{1 - math.floor(math.log10(pct))}f}"  # two significant digits, never an exponent

    return f"{short(low)}–{short(high)}%"


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


# --- comparing a result with its baseline -------------------------------------------------


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_greater(bad: int, launches: int, base_bad: int, base_launches: int) -> float:
    """One-sided Fisher exact test: the p-value of seeing at least ``bad`` of the pooled bad
    launches among the current ``launches`` if the current and baseline rates were equal.
    Small when the current rate is worse than the baseline's.

    Fisher rather than a binomial test against the baseline's rate: the baseline's rate is an
    estimate too (0/12 is not "never"), and Fisher's test conditions on both samples, so a
    short history cannot make a verdict look more certain than it is.
    """
    if launches <= 0 or base_launches <= 0:
        return 1.0
    total = launches + base_launches
    total_bad = bad + base_bad
    low = max(bad, total_bad - base_launches)
    high = min(launches, total_bad)
    denominator = _log_comb(total, launches)
    p = sum(
        math.exp(_log_comb(total_bad, x) + _log_comb(total - total_bad, launches - x) - denominator)
        for x in range(low, high + 1)
    )
    return min(1.0, p)


def fisher_less(bad: int, launches: int, base_bad: int, base_launches: int) -> float:
    """The other side: small when the current rate is better than the baseline's."""
    return fisher_greater(base_bad, base_launches, bad, launches)


def design_effect(per_process: list[tuple[int, int]]) -> float:
    """How much clustering by process inflates the variance of a bad-launch rate.

    ``per_process`` holds (bad, launches) per process. A race that is decided per process
    (at load or JIT time) makes launches of one process agree with each other, so n launches
    carry less evidence than n independent ones. Estimated as the Pearson overdispersion
    phi = sum((k_i - n_i p)^2 / (n_i p (1 - p))) / (P - 1) of the per-process counts around the
    pooled rate p (the quasi-binomial dispersion; Rao and Scott's design effect), never below
    1. With one process, or a rate of 0 or 1, nothing can be estimated and 1 is returned: the
    report then says that the evidence rests on what it rests on.
    """
    processes = [(k, n) for k, n in per_process if n > 0]
    if len(processes) < 2:
        return 1.0
    launches = sum(n for _, n in processes)
    bad = sum(k for k, _ in processes)
    p = bad / launches
    if p <= 0.0 or p >= 1.0:
        return 1.0
    chi2 = sum((k - n * p) ** 2 / (n * p * (1 - p)) for k, n in processes)
    return max(1.0, chi2 / (len(processes) - 1))


def effective_counts(bad: int, launches: int, deff: float) -> tuple[int, int]:
    """(bad, launches) divided by the design effect: the independent launches they are worth.
    A bad launch never rounds away to none."""
    if deff <= 1.0:
        return bad, launches
    eff_launches = max(1, round(launches / deff))
    eff_bad = min(eff_launches, round(bad / deff))
    if bad > 0:
        eff_bad = max(1, eff_bad)
    return eff_bad, eff_launches
