"""The Bayesian noisy binary search over "the first bad revision".

Revisions are positions: -1 is the ``--good`` revision, 0..N-1 the commits after it up to and
including ``--bad`` (``git rev-list --ancestry-path --reverse good..bad``). The unknown is the
culprit c in 0..N-1, the first bad commit; a uniform prior. A probe at position r counted k bad
units in n (launches, or processes: see docs/bisect.md). Given c, every probe at r < c (and the
good revision) saw the good side's rate p_good and every probe at r >= c one unknown rate p_bad
with a Jeffreys Beta(1/2, 1/2) prior, integrated out exactly. The good side is a mixture: with
prior probability ``GOOD_NEVER_FAILS`` it never fails (a correct kernel), else its rate is
unknown (Jeffreys) and integrated out as well, so that

    P(c | probes) ~ G(Kg, Ng) * B(Kb + 1/2, Nb - Kb + 1/2) / B(1/2, 1/2)
    G(K, N) = w [K = 0] + (1 - w) B(K + 1/2, N - K + 1/2) / B(1/2, 1/2)

with (Kg, Ng) the bad and total units pooled over the probes on c's good side and (Kb, Nb) over
those on its bad side (the binomial coefficients are the same under every c and cancel).

Probes stop at their first bad unit (the stopping rule depends only on what was seen, so the
likelihood of "k bad in the n units run" is unchanged). The next probe is the revision and the
size that buy the most expected information about c per expected launch: for each candidate,
the posterior's entropy after a clean probe and after one that stops bad, weighted by their
predictive probabilities, against the launches it is expected to run plus a fixed cost per probe.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

PRIOR_A = PRIOR_B = 0.5  # Jeffreys
GOOD = -1  # the position of the --good revision
GOOD_NEVER_FAILS = 0.5  # prior probability that the good side's rate is exactly 0
PROBE_COST = 4.0  # a probe's own cost (a process, a worktree) in launches, in choosing its size
SIZES = (4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _side(bad: int, units: int) -> float:
    """log of the marginal likelihood of ``bad`` in ``units`` at one unknown rate (Beta prior)."""
    return _lbeta(bad + PRIOR_A, units - bad + PRIOR_B) - _lbeta(PRIOR_A, PRIOR_B)


LEAST_RATE = 1e-6  # the log-uniform prior's lower end


def _bad_side(bad: int, units: int) -> float:
    """log of the marginal likelihood of ``bad`` in ``units`` at the bad side's unknown rate,
    whose order of magnitude is unknown: a log-uniform prior, density 1/p on [LEAST_RATE, 1]
    (its normaliser is the same under every c and dropped). With a bad unit seen this is
    B(k, n - k + 1), the lower end's effect below 1e-5 (k LEAST_RATE^k); with none,
    ln(1 / LEAST_RATE) - H_n."""
    if bad:
        return _lbeta(bad, units - bad + 1)
    harmonic = (
        sum(1 / i for i in range(1, units + 1)) if units < 100 else math.log(units) + 0.5772156649 + 1 / (2 * units)
    )
    return math.log(max(1e-9, -math.log(LEAST_RATE) - harmonic))


def _good_side(bad: int, units: int, never_fails: float) -> float:
    """log of the good side's marginal likelihood: rate 0 with probability ``never_fails``,
    else an unknown rate."""
    free = math.log1p(-never_fails) + _side(bad, units) if never_fails < 1 else -math.inf
    if bad or never_fails <= 0:
        return free
    zero = math.log(never_fails)
    top = max(zero, free)
    return top + math.log(math.exp(zero - top) + math.exp(free - top))


def _entropy(probs: list[float]) -> float:
    return -sum(p * math.log(p) for p in probs if p > 0)


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

    def __init__(self, size: int, *, never_fails: float = GOOD_NEVER_FAILS):
        if size < 1:
            raise ValueError("nothing to bisect: no commit between the good and the bad revision")
        self.size = size
        self.never_fails = never_fails
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

    def _logs(self, extra: tuple[int, int, int] | None = None, alive: list[int] | None = None) -> list[float]:
        """log P(probes | c) for each c (of ``alive``, default all), with the probe ``extra`` =
        (position, bad, units) added when given."""
        total_bad, total_units = sum(self.bad), sum(self.units)
        at, extra_bad, extra_units = extra if extra else (GOOD - 1, 0, 0)
        total_bad, total_units = total_bad + extra_bad, total_units + extra_units
        prefix_bad, prefix_units = self._prefix()
        logs = []
        for c in range(self.size) if alive is None else alive:
            good_bad, good_units = prefix_bad[c], prefix_units[c]  # positions < c
            if at < c:
                good_bad, good_units = good_bad + extra_bad, good_units + extra_units
            logs.append(
                _good_side(good_bad, good_units, self.never_fails)
                + _bad_side(total_bad - good_bad, total_units - good_units)
            )
        return logs

    def _prefix(self) -> tuple[list[int], list[int]]:
        """Bad and total units over positions < c, for each c (index c holds position c - 1)."""
        prefix_bad, prefix_units, bad, units = [], [], 0, 0
        for c in range(self.size):
            bad, units = bad + self.bad[c], units + self.units[c]
            prefix_bad.append(bad)
            prefix_units.append(units)
        return prefix_bad, prefix_units

    def probabilities(self) -> list[float]:
        """P(culprit = c) for c in 0..size-1: every probe before c (and the good revision's)
        on the good side, every probe from c on at the bad side's unknown rate."""
        if self._cache is None:
            self._cache = _normalised(self._logs())[1]
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
        """(p_good, p_bad): the posterior means of the rates before and from the most likely
        culprit, from the units pooled on either side of it (the good side's, the mixture's)."""
        culprit = self.top()[0]
        good_bad, good_units = sum(self.bad[: culprit + 1]), sum(self.units[: culprit + 1])
        bad, units = sum(self.bad) - good_bad, sum(self.units) - good_units
        free_mean = (good_bad + PRIOR_A) / (good_units + PRIOR_A + PRIOR_B)
        zero_weight = 0.0
        if not good_bad and self.never_fails:
            zero_weight = math.exp(math.log(self.never_fails) - _good_side(0, good_units, self.never_fails))
        return (1 - zero_weight) * free_mean, bad / (units + 1)  # the log-uniform prior's posterior mean

    def in_doubt(self, exclude: set[int] = frozenset()) -> list[int]:
        """Revisions whose probe can move the posterior: not skipped, not already known good or
        bad to 1e-4 (the last commit, which every hypothesis calls bad, tells nothing)."""
        cdf = self.cdf()
        return [r for r in range(self.size - 1) if r not in exclude and 1e-4 < cdf[r] < 1 - 1e-4]

    def plan(
        self, exclude: set[int] = frozenset(), *, least: int = 4, most: int = 4096, probe_cost: float = PROBE_COST
    ) -> tuple[int, int] | None:
        """The next probe, (position, units): of the revisions in doubt at the posterior's
        quantiles (and --good and --bad, which tell the rates) and the sizes in SIZES, the one
        with the most expected information about the culprit per expected unit run, a probe
        stopping at its first bad unit. Predictions are the model's own: the chance that a probe
        at r is clean for n units is P(probes + that | model) / P(probes | model). None when no
        revision is in doubt."""
        choices = self.in_doubt(exclude)
        if not choices:
            return None
        probs, cdf = self.probabilities(), self.cdf()
        alive = [c for c in range(self.size) if probs[c] > 1e-9]  # the rest cannot matter to the entropy
        wanted = {min(choices, key=lambda r: (abs(cdf[r] - q), r)) for q in (0.1, 0.25, 0.5, 0.75, 0.9)}
        top = self.top()[0]
        wanted |= {r for r in (top - 1, top) if r in choices}  # where the last step is decided
        wanted |= {r for r in (GOOD, self.size - 1) if r not in exclude}
        now_log, now = _normalised(self._logs(alive=alive))
        now_entropy = _entropy(now)
        sizes = sorted({max(least, min(most, s)) for s in SIZES} | {least, most})
        best, best_score = None, -math.inf
        for r in sorted(wanted):
            survival = [1.0]  # P(the first n units clean), n over sizes
            entropies = []
            for units in sizes:
                clean_log, clean = _normalised(self._logs((r, 0, units), alive))
                survival.append(min(1.0, math.exp(clean_log - now_log)))
                entropies.append(_entropy(clean))
            ran, last = 0.0, 0
            for i, units in enumerate(sizes):
                ran += (units - last) * (survival[i] + survival[i + 1]) / 2  # E[units run] up to n
                last = units
                stopped = 1 - survival[i + 1]
                after = survival[i + 1] * entropies[i]
                if stopped > 1e-12:
                    # stopped bad: at about the size by which half of those that stop by n
                    # have stopped; the posterior after depends little on exactly where
                    half = 1 - stopped / 2
                    at = (
                        next(s for s, alive_then in zip([0, *sizes], survival) if alive_then <= half)
                        if survival[i + 1] <= half
                        else units
                    )
                    _, failed = _normalised(self._logs((r, 1, max(1, min(units, at))), alive))
                    after += stopped * _entropy(failed)
                score = (now_entropy - after) / (ran + probe_cost)
                if score > best_score:
                    best, best_score = (r, units), score
        return best


def _normalised(logs: list[float]) -> tuple[float, list[float]]:
    """(log of the sum, the normalised probabilities) of log weights."""
    top = max(logs)
    weights = [math.exp(value - top) for value in logs]
    norm = sum(weights)
    return top + math.log(norm), [w / norm for w in weights]


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
    stopped: str  # confident, budget, probes, exhausted, no-failure, bad-skipped, good-fails
    observations: list[Observation] = field(default_factory=list)
    launches: int = 0
    seconds: float = 0.0
    p_good: float = 0.0
    p_bad: float = 0.0
    probabilities: list[float] = field(default_factory=list)

    def words(self) -> str:
        return {
            "confident": "one revision holds the asked confidence",
            "budget": "the budget was spent before one revision held the asked confidence",
            "probes": "the search made its most probes before one revision held the asked confidence",
            "exhausted": "no revision left to probe could move the posterior (skipped revisions)",
            "no-failure": "the --bad revision showed no bad launch",
            "bad-skipped": "the --bad revision could not be probed (a skip)",
            "good-fails": "the --good revision fails too: the failure is older than the range, so no commit "
            "in it made it start; give an earlier --good",
        }[self.stopped]


# probe(position, units) -> Observation without mass_after (source 'skip' for a skip); it may
# stop at its first bad unit and report the units it ran
ProbeFn = Callable[[int, int], Observation]


def search(
    size: int,
    probe: ProbeFn,
    *,
    confidence: float = 0.95,
    budget: Budget | None = None,
    first: int = 12,
    least: int = 4,
    most: int = 4096,
    max_probes: int = 200,
    never_fails: float = GOOD_NEVER_FAILS,
    probe_cost: float = PROBE_COST,
    seen: dict[int, tuple[int, int]] | None = None,
    clock=time.monotonic,
) -> Outcome:
    """Find the first bad of ``size`` commits after the good revision. ``seen``: counts already
    known per position (from the history), counted before anything runs. The --bad revision
    (position size - 1) is probed with ``first`` units, doubled until it shows a bad unit; then
    the --good revision, long enough to show --bad's rate (:func:`good_check_units`); then each
    time the probe :meth:`Posterior.plan` chooses. A bad unit at --good, in the history, at that
    check or later, ends the search (``good-fails``): the range holds no change to find."""
    budget = budget or Budget()
    posterior = Posterior(size, never_fails=never_fails)
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
            if left < 1:
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

    def ends() -> str | None:
        """--bad shown bad (``first`` units, doubled up to ``most``), then --good checked: why
        the search ends here, or None to go on."""
        if posterior.bad[0]:  # the history saw --good fail: nothing to search
            return "good-fails"
        units = first
        while posterior.bad[size] == 0:
            if size - 1 in skipped:
                return "bad-skipped"
            if units > most or not run(size - 1, units):
                return "no-failure" if posterior.units[size] else "budget"
            units = most if units < most <= 2 * units else 2 * units  # a last probe of ``most``, then no more
        # --good must not fail as well, else the probes would go to a range with no change in it;
        # checked where the search goes on (the history may settle it), and a skip is the prior's
        wanted = good_check_units(posterior.bad[size], posterior.units[size], least=least, most=most)
        if posterior.top()[1] < confidence and posterior.units[0] < wanted:
            if not run(GOOD, wanted - posterior.units[0]):
                return "budget"
        return "good-fails" if posterior.bad[0] else None

    def middle() -> str:
        """The probes the plan chooses, until one of the ends of a search."""
        for _ in range(max_probes):
            if posterior.top()[1] >= confidence:
                return "confident"
            planned = posterior.plan(skipped, least=least, most=most, probe_cost=probe_cost)
            if planned is None:
                return "exhausted"
            if not run(*planned):
                return "budget"
            if posterior.bad[0]:  # a later probe of --good failed: as at its check, nothing to search
                return "good-fails"
        return "probes"

    outcome.stopped = ends() or middle()
    return _finish(outcome, posterior, started, clock)


def good_check_units(bad: int, units: int, *, least: int = 4, most: int = 4096) -> int:
    """Units of the --good revision's check, from --bad's ``bad`` of ``units``: the units --bad
    took per bad unit it showed (a --good failing at that rate shows one with probability about
    1 - 1/e = 63%, and any later probe of --good is a second chance), within least..most. Three
    times as many (95%) cost 10% more launches in the simulations of docs/bisect.md and found the
    culprit no more often; this many cost 2-4% more."""
    return max(least, min(most, math.ceil(units / max(bad, 1))))


def _finish(outcome: Outcome, posterior: Posterior, started: float, clock) -> Outcome:
    position, mass = posterior.top()
    outcome.position = position if outcome.stopped not in ("no-failure", "bad-skipped", "good-fails") else None
    outcome.mass = mass
    outcome.launches = sum(o.launches for o in outcome.observations)
    outcome.seconds = clock() - started
    outcome.p_good, outcome.p_bad = posterior.rates()
    outcome.probabilities = list(posterior.probabilities())
    return outcome
