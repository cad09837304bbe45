"""Simulated histories for the bisect model's tests and benchmarks/bisect_accuracy.py: commits 0..N-1,
commit 0 good, commit N-1 bad, the culprit's commits and later ones bad at a rate, probes
sampled from a seeded RNG (no git, no database, no processes). A probe stops at its first bad
unit, as ``gemmcheck bisect``'s do (``--gemmcheck-stop-on-bad``)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from pytest_gemmcheck.bisect.model import GOOD, Budget, Observation, Outcome, search


@dataclass(frozen=True)
class Scenario:
    """``commits`` commits, the first bad one ``culprit`` (commit 0 is --good, the last --bad).

    per_launch: each launch of a bad commit is bad with probability ``rate``, independently.
    per_process: each process of a bad commit races with probability ``racing`` (then each of
    its launches is bad with probability ``rate``) or is clean throughout."""

    commits: int = 64
    culprit: int = 37
    rate: float = 0.10
    mode: str = "per_launch"  # per_launch | per_process
    racing: float = 0.5
    launches_per_process: int = 12

    def is_bad(self, commit: int) -> bool:
        return commit >= self.culprit

    def process(self, rng: random.Random, commit: int, launches: int) -> int:
        """Launches one process at ``commit`` runs, up to ``launches`` and stopping at its first
        bad one: negative (minus the launches run) when one was bad."""
        if not self.is_bad(commit) or (self.mode == "per_process" and rng.random() >= self.racing):
            return launches
        for index in range(1, launches + 1):
            if rng.random() < self.rate:
                return -index
        return launches


def commit_of(position: int) -> int:
    """Position -1 is commit 0 (the good one); position p is commit p + 1."""
    return 0 if position == GOOD else position + 1


def bayes(
    scenario: Scenario,
    seed: int,
    *,
    unit: str = "launch",
    confidence: float = 0.95,
    budget: Budget | None = None,
    **options,
) -> Outcome:
    """The Bayesian search on ``scenario``. unit='launch' counts launches (each probe one
    process); unit='process' counts processes with a bad launch, of ``launches_per_process``
    launches each."""
    rng = random.Random(seed)
    per = scenario.launches_per_process

    def probe(position: int, units: int) -> Observation:
        commit = commit_of(position)
        if unit == "process":  # processes in turn until one has a bad launch
            launches = 0
            for ran in range(1, units + 1):
                seen = scenario.process(rng, commit, per)
                launches += abs(seen)
                if seen < 0:
                    return Observation(position, 1, ran, launches=launches)
            return Observation(position, 0, units, launches=launches)
        seen = scenario.process(rng, commit, units)
        return Observation(position, int(seen < 0), abs(seen), launches=abs(seen))

    if unit == "process":
        options.setdefault("first", 2)
        options.setdefault("least", 1)
    return search(scenario.commits - 1, probe, confidence=confidence, budget=budget, **options)


def plain(scenario: Scenario, seed: int, *, clean: int = 12) -> tuple[int, int]:
    """Plain bisection (the seed's protocol): each probe launches until a bad launch or
    ``clean`` clean launches, in one process; (the commit it names, launches spent)."""
    rng = random.Random(seed)
    good, bad, launches = 0, scenario.commits - 1, 0
    while bad - good > 1:
        mid = (good + bad) // 2
        racing = scenario.is_bad(mid) and (scenario.mode != "per_process" or rng.random() < scenario.racing)
        seen = False
        for _ in range(clean):
            launches += 1
            if racing and rng.random() < scenario.rate:
                seen = True
                break
        if seen:
            bad = mid
        else:
            good = mid
    return bad, launches
