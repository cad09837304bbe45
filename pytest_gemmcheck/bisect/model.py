"""The Bayesian noisy binary search over "the first bad revision".

Revisions are positions: -1 is the ``--good`` revision, 0..N-1 the commits after it up to and
including ``--bad`` (``git rev-list --ancestry-path --reverse good..bad``). The unknown is the
culprit c in 0..N-1, the first bad commit; a uniform prior. A probe at position r counted k bad
units in n (launches, or processes: see docs/bisect.md). Given c, every probe at r < c (and the
good revision) saw one unknown rate p_good and every probe at r >= c one unknown rate p_bad,
each with a Jeffreys Beta(1/2, 1/2) prior; both rates are integrated out exactly, so that

    P(c | probes) ~ B(Kg + 1/2, Ng - Kg + 1/2) * B(Kb + 1/2, Nb - Kb + 1/2)

with (Kg, Ng) the bad and total units pooled over the probes on c's good side and (Kb, Nb) over
those on its bad side (the binomial coefficients are the same under every c and cancel). The
rates' uncertainty is in the posterior by construction: a short good-side history, or a bad
side seen bad once in 12, move it only as far as they can.

The next probe is the revision at the posterior's median (the one whose P(c <= r) is nearest
1/2); its size n is the number of units at which a clean result is at most ``miss`` times as
likely at the bad rate as at the good one, (1 - p_bad)^n <= miss (1 - p_good)^n, so that a clean
probe can move the posterior as well as a bad one.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

PRIOR_A = PRIOR_B = 0.5  # Jeffreys
GOOD = -1  # the position of the --good revision


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _side(bad: int, units: int) -> float:
    """log of the marginal likelihood of ``bad`` in ``units`` at one unknown rate (Beta prior)."""
    return _lbeta(bad + PRIOR_A, units - bad + PRIOR_B) - _lbeta(PRIOR_A, PRIOR_B)


@dataclass
class Observation:
    """What one probe saw: ``bad`` of ``units``; ``launches`` is what it cost."""

    position: int
    bad: int
    units: int
    launches: int = 0
    seconds: float = 0.0
    source: str = "ran"  # ran, history, skip
    mass_after: float = 0.0  # the posterior's largest mass after it
    top_after: int = 0  # the position holding it
    note: str = ""


class Posterior:
    """The posterior over the culprit's position among ``size`` commits after the good one."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError("nothing to bisect: no commit between the good and the bad revision")
        self.size = size
        self.bad = [0] * (size + 1)  # index position + 1 (0 is the good revision)
        self.units = [0] * (size + 1)
        self._cache: list[float] | None = None

    def add(self, position: int, bad: int, units: int) -> None:
        if not GOOD <= position < self.size:
            raise ValueError(f"position {position} outside -1..{self.size - 1}")
        if units < 0 or not 0 <= bad <= units:
            raise ValueError(f"{bad}/{units} is no count of bad units")
        self.bad[position + 1] += bad
        self.units[position + 1] += units
        self._cache = None

    @property
    def good_counts(self) -> tuple[int, int]:
        return self.bad[0], self.units[0]

    @property
    def bad_counts(self) -> tuple[int, int]:
        return self.bad[self.size], self.units[self.size]

    def probabilities(self) -> list[float]:
        """P(culprit = c) for c in 0..size-1: every probe before c (and the good revision's)
        at one unknown rate, every probe from c on at another, both integrated out."""
        if self._cache is not None:
            return self._cache
        total_bad, total_units = sum(self.bad), sum(self.units)
        logs, good_bad, good_units = [], 0, 0
        for c in range(self.size):
            good_bad += self.bad[c]  # positions < c: index c holds position c - 1
            good_units += self.units[c]
            logs.append(_side(good_bad, good_units) + _side(total_bad - good_bad, total_units - good_units))
        top = max(logs)
        weights = [math.exp(value - top) for value in logs]
        norm = sum(weights)
        self._cache = [w / norm for w in weights]
        return self._cache

    def cdf(self) -> list[float]:
        out, running = [], 0.0
        for p in self.probabilities():
            running += p
            out.append(running)
        return out

    def top(self) -> tuple[int, float]:
        probs = self.probabilities()
        best = max(range(self.size), key=lambda c: probs[c])
        return best, probs[best]

    def rates(self) -> tuple[float, float]:
        """(p_good, p_bad): the posterior means of the good and the bad revision's rates."""
        (gb, gn), (bb, bn) = self.good_counts, self.bad_counts
        return (gb + PRIOR_A) / (gn + PRIOR_A + PRIOR_B), (bb + PRIOR_A) / (bn + PRIOR_A + PRIOR_B)

    def cautious_bad_rate(self) -> float:
        """The bad rate to size a probe by: from every probe, weighted by the posterior
        probability that its revision is bad (the bad revision's: 1), one standard deviation
        below its mean and no lower than a third of it (a lucky 5/12 at the --bad revision must
        not make every probe too short to see a 10% rate)."""
        cdf = self.cdf()
        bb = sum(self.bad[r + 1] * cdf[r] for r in range(self.size)) + PRIOR_A
        bn = sum(self.units[r + 1] * cdf[r] for r in range(self.size)) + PRIOR_A + PRIOR_B
        mean = bb / bn
        sd = math.sqrt(mean * (1 - mean) / (bn + 1))
        return max(mean / 3, mean - sd)

    def next_position(self, exclude: set[int] = frozenset()) -> int | None:
        """The revision at the posterior's median: P(culprit <= r) nearest 1/2 (the last commit,
        which every hypothesis calls bad, tells nothing); ties to the one probed least. None when
        no revision left to probe is in doubt."""
        cdf = self.cdf()
        # a revision already known good or bad (to 1e-4) cannot move it: with the culprit
        # between two known ones and only skipped revisions there, the search is done
        choices = [r for r in range(self.size - 1) if r not in exclude and 1e-4 < cdf[r] < 1 - 1e-4]
        if not choices:
            return None
        return min(choices, key=lambda r: (abs(cdf[r] - 0.5), self.units[r + 1], r))


def units_for(p_good: float, p_bad: float, *, miss: float = 0.05, least: int = 1, most: int = 10_000) -> int:
    """Units for a probe that a clean result can move: (1 - p_bad)^n <= miss (1 - p_good)^n,
    i.e. n >= log(miss) / log((1 - p_bad) / (1 - p_good)). With p_good = 0 this is the
    log(0.05) / log(1 - p_bad) of "a clean result at the bad rate has probability <= 5%"."""
    if p_bad <= p_good:
        return most
    ratio = math.log((1 - min(p_bad, 1 - 1e-12)) / (1 - p_good))
    return max(least, min(most, math.ceil(math.log(miss) / ratio)))


# --- the search, over any probe -----------------------------------------------------------

@dataclass
class Budget:
    launches: int | None = None
    seconds: float | None = None

    def words(self) -> str:
        if self.launches is not None:
            return f"{self.launches} launches"
        if self.seconds is not None:
            return f"{self.seconds:g} s"
        return "none"


@dataclass
class Outcome:
    size: int
    position: int | None  # the first bad commit's position; None when the search ended without one
    mass: float
    stopped: str  # confident, budget, probes, exhausted, no-failure, bad-skipped
    observations: list[Observation] = field(default_factory=list)
    launches: int = 0
    seconds: float = 0.0
    p_good: float = 0.0
    p_bad: float = 0.0
    probabilities: list[float] = field(default_factory=list)

    def words(self) -> str:
        return {"confident": "one revision holds the asked confidence",
                "budget": "the budget was spent before one revision held the asked confidence",
                "probes": "the search made its most probes before one revision held the asked confidence",
                "exhausted": "no revision left to probe could move the posterior (skipped revisions)",
                "no-failure": "the --bad revision showed no bad launch",
                "bad-skipped": "the --bad revision could not be probed (a skip)"}[self.stopped]


# probe(position, units) -> Observation without mass_after (source 'skip' for a skip)
ProbeFn = Callable[[int, int], Observation]


def search(size: int, probe: ProbeFn, *, confidence: float = 0.95, budget: Budget | None = None,
           miss: float = 0.1, anchor: float = 3.0, first: int = 12, least: int = 4, most: int = 5000,
           least_bad: int = 2, max_probes: int = 200,
           seen: dict[int, tuple[int, int]] | None = None, clock=time.monotonic) -> Outcome:
    """Find the first bad of ``size`` commits after the good revision. ``seen``: counts already
    known per position (from the history), counted before anything runs. The --bad revision
    (position size - 1) is probed with ``first`` units, doubled until it shows a bad unit; the
    --good revision then with as many as a probe needs; then the median revision each time."""
    budget = budget or Budget()
    posterior = Posterior(size)
    outcome = Outcome(size=size, position=None, mass=0.0, stopped="budget")
    started = clock()
    skipped: set[int] = set()
    per_unit = [1.0]  # launches per unit, as seen

    def spent() -> int:
        return sum(o.launches for o in outcome.observations)

    def room(units: int) -> int | None:
        """The units the budget leaves for a probe of ``units`` (None: none left)."""
        if budget.seconds is not None and clock() - started >= budget.seconds:
            return None
        if budget.launches is not None:
            left = int((budget.launches - spent()) / per_unit[0])
            if left < min(units, least):
                return None
            units = min(units, left)
        return units

    def record(observation: Observation) -> None:
        if observation.source != "skip":
            posterior.add(observation.position, observation.bad, observation.units)
            if observation.units and observation.launches:
                per_unit[0] = observation.launches / observation.units
        observation.top_after, observation.mass_after = posterior.top()
        outcome.observations.append(observation)

    for position, (bad, units) in sorted((seen or {}).items()):
        if units > 0:
            record(Observation(position, bad, units, source="history"))

    def run(position: int, units: int) -> Observation | None:
        units = room(units)
        if units is None:
            return None
        observation = probe(position, units)
        record(observation)
        if observation.source == "skip":
            skipped.add(position)
        return observation

    # the bad revision must show itself bad; the good one is probed once
    units = first
    while posterior.bad[size] < least_bad:
        if size - 1 in skipped:
            outcome.stopped = "bad-skipped"
            return _finish(outcome, posterior, started, clock)
        if not run(size - 1, units):
            if posterior.bad[size] == 0:
                outcome.stopped = "no-failure" if posterior.units[size] else "budget"
                return _finish(outcome, posterior, started, clock)
            break
        units = min(most, units * 2)
    for _ in range(max_probes):
        _, mass = posterior.top()
        if mass >= confidence:
            outcome.stopped = "confident"
            break
        p_good, p_bad = posterior.rates()[0], posterior.cautious_bad_rate()
        # the good revision holds ``anchor`` probes' worth at the bad rate as now known: the
        # good side's rate must be known low for a clean probe elsewhere to tell anything (both
        # rates free, "no change at all" fits a weakly known good side)
        anchor_units = units_for(0.0, p_bad, miss=miss ** anchor, least=least, most=most)
        if posterior.units[0] < 0.75 * anchor_units and GOOD not in skipped:  # topped up past it: no
            position, units = GOOD, max(least, round(1.25 * anchor_units) - posterior.units[0])  # 1-launch probes
        else:
            position = posterior.next_position(skipped)
            if position is None:
                outcome.stopped = "exhausted"
                break
            units = units_for(p_good, p_bad, miss=miss, least=least, most=most)
        if not run(position, units):
            outcome.stopped = "budget"
            break
    else:
        outcome.stopped = "probes"
    return _finish(outcome, posterior, started, clock)


def _finish(outcome: Outcome, posterior: Posterior, started: float, clock) -> Outcome:
    position, mass = posterior.top()
    outcome.position = position if outcome.stopped not in ("no-failure", "bad-skipped") else None
    outcome.mass = mass
    outcome.launches = sum(o.launches for o in outcome.observations)
    outcome.seconds = clock() - started
    outcome.p_good, outcome.p_bad = posterior.rates()
    outcome.probabilities = list(posterior.probabilities())
    return outcome
