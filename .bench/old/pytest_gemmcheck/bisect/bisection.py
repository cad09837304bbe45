"""A bisection run: the revisions between --good and --bad probed in git worktrees
(probe.py), their bad and total units read back from the history, and the noisy binary search
(model.py) deciding which revision to probe next and for how long; then the outcome as a
report, plain data that reporting/bisect_table.py renders."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..config.table import DB_ENV
from . import probe as probes
from .model import GOOD, Budget, Observation, Outcome, search


@dataclass
class Bisection:
    """What a bisection probes and where: ``shas`` are the commits after ``good`` up to the bad
    one; ``url`` is the history (a SQLAlchemy URL), ``db_text`` the same as the probes are given
    it; ``command`` the probe command (empty: pytest on ``nodeid``); ``inside`` the folder, within
    the repository, that each worktree's probe runs in."""

    repo: Path
    good: str
    shas: list[str]
    url: object
    db_text: str
    key: str | None = None
    nodeid: str | None = None
    command: list[str] = field(default_factory=list)
    unit: str = "launch"
    launches_per_process: int = 12
    inside: Path = Path(".")
    _engine: object = field(default=None, init=False, repr=False)

    def engine(self):
        """The history, opened once it exists (None before: a SQLite file the probes create)."""
        from ..history.engine import is_sqlite
        from ..history.location import open_history

        if self._engine is None:
            if is_sqlite(self.url) and not Path(self.url.database).exists():
                return None
            self._engine = open_history(self.url)
        return self._engine

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()

    def case_nodeid(self) -> str | None:
        """The test that runs the case ``key``, from the history."""
        engine = self.engine()
        return probes.nodeid_of(engine, self.key) if engine is not None else None

    def sha_of(self, position: int) -> str:
        return self.good if position == GOOD else self.shas[position]

    def counts(self, sha: str, after: int | None = None) -> probes.Counts:
        engine = self.engine()
        if engine is None:
            return probes.Counts()
        return probes.count(engine, sha, key=self.key, nodeid=self.nodeid, unit=self.unit, after=after)

    def seen(self) -> dict[int, tuple[int, int]]:
        """What the history already holds at each revision: (bad, units) by position."""
        found = {}
        for position in [GOOD, *range(len(self.shas))]:
            counted = self.counts(self.sha_of(position))
            if counted.units:
                found[position] = (counted.bad, counted.units)
        return found

    def run(self, *, confidence: float, budget: Budget | None) -> Outcome:
        seen = self.seen()
        started = time.monotonic()
        with probes.Worktrees(self.repo) as trees:

            def probe(position: int, units: int) -> Observation:
                left = None
                if budget and budget.seconds is not None:
                    left = max(1.0, budget.seconds - (time.monotonic() - started))
                return self._probe(trees, position, units, left)

            options = {"first": 2, "least": 1} if self.unit == "process" else {}
            return search(len(self.shas), probe, confidence=confidence, budget=budget, seen=seen, **options)

    def _probe(self, trees: probes.Worktrees, position: int, units: int, seconds_left: float | None) -> Observation:
        sha = self.sha_of(position)
        launches = units * self.launches_per_process if self.unit == "process" else units
        processes = units if self.unit == "process" else 1
        tag = f"bisect:{sha}"
        engine = self.engine()
        before = probes.last_run_id(engine) if engine is not None else 0
        try:
            where = trees.get(sha) / self.inside
        except probes.GitError as exc:
            return Observation(position, 0, 0, source="skip", note=f"no worktree: {exc}")
        if self.command:
            argv = probes.fill(
                self.command,
                {
                    "rev": sha,
                    "launches": str(launches),
                    "units": str(units),
                    "db": self.db_text,
                    "tag": tag,
                    "nodeid": self.nodeid or "",
                    "python": sys.executable,
                },
            )
        else:
            argv = probes.default_command(self.nodeid, launches=launches, processes=processes, db=self.db_text, tag=tag)
        ran = probes.run_command(
            argv,
            where,
            {DB_ENV: self.db_text, "GEMMCHECK_BISECT_REVISION": sha, "GEMMCHECK_BISECT_LAUNCHES": str(launches)},
            seconds_left,
        )
        found = self.counts(sha, after=before)
        if ran.returncode is None or ran.returncode == 125 or (not self.command and ran.returncode not in (0, 1)):
            return Observation(
                position,
                0,
                0,
                launches=found.launches,
                seconds=ran.seconds,
                source="skip",
                note=f"exit status {ran.returncode}: {ran.tail}" if ran.returncode is not None else ran.tail,
            )
        if not found.units:
            return Observation(
                position,
                0,
                0,
                seconds=ran.seconds,
                source="skip",
                note=f"nothing recorded (exit status {ran.returncode}): {ran.tail}",
            )
        return Observation(position, found.bad, found.units, launches=found.launches, seconds=ran.seconds)

    def report(self, outcome: Outcome, *, confidence: float, budget: Budget | None) -> dict:
        """The outcome as plain data: the first bad revision, why the search stopped, the rates
        either side of it, and every probe."""
        counted = sum(o.units for o in outcome.observations if o.source != "skip")
        first = None
        if outcome.position is not None:
            sha = self.shas[outcome.position]
            first = {
                "revision": sha,
                "subject": probes.subject(self.repo, sha),
                "posterior": outcome.mass,
                "commits_after_good": outcome.position + 1,
            }
        return {
            "first_bad": first,
            "stopped": outcome.stopped,
            "stopped_words": outcome.words(),
            "confidence": confidence,
            "budget": budget.words() if budget else "none",
            "commits": len(self.shas),
            "unit": self.unit,
            # the rates are estimates from what was counted: with nothing counted they would be the
            # prior's means, no measurement at all
            "units_counted": counted,
            # with --good failing too there is no change point to give rates either side of
            "rate_good": outcome.p_good if counted and outcome.stopped != "good-fails" else None,
            "rate_bad": outcome.p_bad if counted and outcome.stopped != "good-fails" else None,
            "launches": outcome.launches,
            "seconds": round(outcome.seconds, 3),
            "probes": [
                {
                    "revision": self.sha_of(o.position),
                    "position": o.position + 1,
                    "bad": o.bad,
                    "units": o.units,
                    "launches": o.launches,
                    "seconds": round(o.seconds, 3),
                    "source": o.source,
                    "top_after": self.sha_of(o.top_after),
                    "mass_after": o.mass_after,
                    "note": o.note,
                }
                for o in outcome.observations
            ],
        }
