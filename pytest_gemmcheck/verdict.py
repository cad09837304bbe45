"""Judging a case's result against its baseline.

The baseline is what a result is expected to look like: a golden, the stored history of
the case, or -- when there is neither -- "clean": no bad launch expected, so any bad launch is
a regression.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .result import CaseResult

PASS = "pass"
REGRESSION = "regression"
IMPROVED = "improved"
KNOWN_BAD = "known-bad"


@dataclass
class Baseline:
    source: str = "clean"
    description: str = "a clean baseline (no bad launch expected)"
    launches: int = 0
    bad: int = 0
    worst_wrong: int = 0
    kinds: list[str] = field(default_factory=list)


CLEAN = Baseline()


@dataclass
class Verdict:
    kind: str
    reasons: list[str] = field(default_factory=list)
    p_value: float | None = None

    @property
    def failed(self) -> bool:
        return self.kind == REGRESSION


def judge(result: CaseResult, baseline: Baseline = CLEAN) -> Verdict:
    bad = result.bad_launches
    if baseline.source == "clean":
        if not bad:
            return Verdict(PASS)
        return Verdict(REGRESSION, [f"{len(bad)} bad launch{'es' if len(bad) != 1 else ''} against {baseline.description}"])
    raise NotImplementedError(f"baseline source {baseline.source!r}")
