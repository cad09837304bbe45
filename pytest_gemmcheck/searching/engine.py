"""The search: Hypothesis draws configurations from the axes and shrinks the first failing one;
then the neighbourhood of the smallest failing configuration is probed, for a smaller one the
shrinker passed by and for the passing values around it.

Every probe goes through ``probe(config)``, which runs a gemmcheck case and returns its judged
result; this module decides only which configurations to try. A configuration is probed once
per search, and no probe starts after the time budget is spent.

Hypothesis is used through ``@given``: its strategies over the axes (each of m, n and k drawn
half the time from the values meaningful to a kernel, which it shrinks toward first: see
``Space.landmarks``) and its shrinker, seeded by ``seed``. Its example database (a
``DirectoryBasedExampleDatabase`` under the rootdir's ``.gemmcheck/``) keeps the smallest
failing configuration of each search, keyed by the search's space, and the next search tries it
first, as an explicit example. Health checks are off (a probe takes seconds: "too slow" is the
point), there is no deadline, and no targeting (a probe passes or fails: a passing probe's
error says nothing about where a race hits).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..records.result import CaseResult
from ..errors import CaseError
from .result import NUMERIC, Probe, SearchResult
from .space import Config, Space


class _Found(Exception):
    """A failing probe, raised to Hypothesis as the failure it shrinks."""


class _Stop(BaseException):
    """Ends the Hypothesis run at once: Hypothesis takes an Exception from the test for a failure
    to shrink, and lets a BaseException it does not know through."""


@dataclass
class Outcome:
    """What ``probe(config)`` gives back: the judged result, and a note on it."""

    result: CaseResult
    note: str = ""


@dataclass
class Search:
    kernel: str
    space: Space
    probe: Callable[[Config], Outcome]
    operand_bytes: Callable[[str], int]  # a quant mode's operand element size, for "least memory"
    examples: int
    seed: int
    budget: float | None = None  # seconds for the whole search
    database: Path | None = None  # the example database's directory; None: none
    case: dict = field(default_factory=dict)  # the probes' other case keywords (part of the database key)

    def __post_init__(self):
        self.seen: dict[Config, Probe] = {}
        self.order: list[Probe] = []
        self.started = 0.0
        self.out_of_time = False
        self.error: BaseException | None = None
        self.phase = "search"
        self.replayed = 0

    # --- probes ---------------------------------------------------------------------------
    def failing(self, config: Config) -> bool:
        """The configuration's verdict, probed once; _Stop when the budget is spent."""
        seen = self.seen.get(config)
        if seen is not None:
            return seen.failing
        if self.budget is not None and time.monotonic() - self.started >= self.budget:
            self.out_of_time = True
            raise _Stop
        began = time.monotonic()
        try:
            outcome = self.probe(config)
        except Exception as exc:  # the search's own arguments or machinery, never the kernel (case.run records that)
            self.error = exc
            raise _Stop from None
        result = outcome.result
        probe = Probe(config=self.space.as_dict(config), result=result,
                      failing=bool(result.bad_launches) or result.failed, seconds=time.monotonic() - began,
                      phase=self.phase, note=outcome.note)
        self.seen[config] = probe
        self.order.append(probe)
        return probe.failing

    def _size(self, config: Config) -> tuple:
        return self.space.size_key(config, self.operand_bytes)

    def _smallest(self) -> Config | None:
        failing = [config for config, probe in self.seen.items() if probe.failing]
        return min(failing, key=self._size) if failing else None

    # --- the search -----------------------------------------------------------------------
    def run(self) -> SearchResult:
        self.started = time.monotonic()
        try:
            self._hypothesis()
            self.phase = "neighbours"
            boundary = self._neighbourhood()
        except _Stop:
            boundary = None
        if self.error is not None:
            raise self.error
        smallest = self._smallest()
        self._store(smallest)
        if smallest is not None and boundary is None:  # the budget ran out before the boundary was walked
            boundary = self._boundary(smallest, probe=False)
        return SearchResult(
            kernel=self.kernel, space=self.space.spec(), case=dict(self.case), probes=list(self.order),
            minimal=self.space.as_dict(smallest) if smallest is not None else None, boundary=boundary or {},
            seconds=time.monotonic() - self.started, stopped=self._stopped_words(), seed=self.seed,
            examples=self.examples, replayed=self.replayed)

    def _stopped_words(self) -> str:
        if self.out_of_time:
            return f"stopped when the budget of {self.budget:g} s ran out"
        if len(self.seen) >= self.space.size:
            return f"every one of the {self.space.size:,} configurations tried"
        first = next((index for index, probe in enumerate(self.order, 1) if probe.failing), None)
        if first is not None:  # Hypothesis draws no more once one fails: it shrinks that one
            return f"shrunk from the first failing probe, #{first}"
        return f"{self.examples:,} examples drawn, none failing"

    def _hypothesis(self) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, example, given, reject, seed, settings, strategies as st

        space = self.space

        def axis(name: str):
            values, landmarks = tuple(space.axis(name).values), space.landmarks(name)
            if not landmarks or len(landmarks) == len(values):
                return st.sampled_from(values)
            return st.one_of(st.sampled_from(landmarks), st.sampled_from(values))  # shrinks toward the first

        strategy = st.tuples(
            *(axis(name) for name in NUMERIC),
            st.sampled_from(range(len(space.quants))),
            st.tuples(*(st.sampled_from(range(len(values))) for _, values in space.params)))
        # the built-in defaults as the parent, never a profile the user's suite loaded (a CI profile
        # derandomizes); no database of Hypothesis's own: a seeded run has none (see _stored)
        chosen = settings(settings.get_profile("default"), max_examples=self.examples, database=None,
                          deadline=None, verbosity=Verbosity.quiet,
                          phases=(Phase.explicit, Phase.generate, Phase.shrink),
                          suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False)

        def probe(drawn) -> None:
            config = Config(*drawn[:4], drawn[4])
            probed = config in self.seen
            if self.failing(config):
                raise _Found  # a failure to Hypothesis: it shrinks it
            if probed:  # drawn again (a landmark is drawn from both of its axis's lists): not another example
                reject()

        test = settings(chosen)(given(strategy)(probe))
        for config in reversed(self._stored()):  # explicit examples run first, in the order written
            test = example((config.m, config.n, config.k, config.quant, config.params))(test)
        try:
            seed(self.seed)(test)()
        except _Found:
            pass

    # --- the example database -------------------------------------------------------------
    def _database(self):
        """Hypothesis's DirectoryBasedExampleDatabase, as a store of the smallest failing
        configuration each search found (JSON), keyed by the search's space. Not the choices
        Hypothesis would store itself: a seeded Hypothesis run uses no database (``@seed`` sets
        ``database=None``), so stored configurations replay as explicit examples instead."""
        from hypothesis.database import DirectoryBasedExampleDatabase

        return DirectoryBasedExampleDatabase(str(self.database)) if self.database is not None else None

    def _key(self) -> bytes:
        return self.space.digest(self.kernel, self.case)

    def _stored(self) -> list[Config]:
        """The configurations earlier searches of this space stored, smallest first; those no
        longer in it (unreadable, or another space under the same key) are dropped."""
        database = self._database()
        if database is None:
            return []
        stored = []
        for value in database.fetch(self._key()):
            try:
                stored.append(self.space.from_dict(json.loads(value)))
            except (ValueError, TypeError, CaseError):
                database.delete(self._key(), value)
        self.replayed = len(stored)
        return sorted(stored, key=self._size)

    def _store(self, smallest: Config | None) -> None:
        """The smallest failing configuration kept for the next search; stored ones that passed
        this time dropped."""
        database = self._database()
        if database is None:
            return
        key = self._key()
        for value in database.fetch(key):
            try:
                config = self.space.from_dict(json.loads(value))
            except (ValueError, TypeError, CaseError):
                continue
            probe = self.seen.get(config)
            if probe is not None and not probe.failing:
                database.delete(key, value)
        if smallest is not None:
            database.save(key, json.dumps(self.space.as_dict(smallest), sort_keys=True).encode())

    # --- around the smallest --------------------------------------------------------------
    def _neighbourhood(self) -> dict | None:
        """Probe below the smallest failing configuration along each axis (the lowest value
        and the one a step down; each param at its first value; each quant of smaller operands),
        restarting from any smaller one found, then walk its boundary."""
        while True:
            smallest = self._smallest()
            if smallest is None:
                return None
            for candidate in self._below(smallest):
                self.failing(candidate)
            if self._smallest() != smallest:
                continue
            boundary = self._boundary(smallest)
            if self._smallest() == smallest:
                return boundary

    def _below(self, config: Config) -> list[Config]:
        space = self.space
        candidates = []
        for name in NUMERIC:
            axis, value = space.axis(name), getattr(config, name)
            for lower in (axis.lo, value - axis.step):
                if axis.lo <= lower < value:
                    candidates.append(space.replace(config, name, lower))
        for position, (name, _) in enumerate(space.params):
            if config.params[position]:
                candidates.append(space.replace(config, name, 0))
        # a quant mode of smaller operands at the same shape is smaller too
        candidates += [space.replace(config, "quant", index) for index in range(len(space.quants))
                       if index != config.quant]
        return [candidate for candidate in dict.fromkeys(candidates) if self._size(candidate) < self._size(config)]

    def _boundary(self, config: Config, *, probe: bool = True) -> dict:
        """Per axis, the passing values nearest to ``config`` with the others as they are: along m,
        n and k one step down, and up by doubling strides, then bisecting, to the first passing
        value past the run of failing ones; for quant and each param, each other value. Without
        ``probe``, only from the configurations already seen (the budget ran out first)."""
        boundary: dict = {}
        for name in NUMERIC:
            if not self.space.axis(name).fixed:
                boundary[name] = self._walk(config, name) if probe else self._seen_edge(config, name)
        boundary.update(self._choice_boundaries(config, probe=probe))
        return boundary

    def _walk(self, config: Config, name: str) -> dict:
        space = self.space
        axis, value = space.axis(name), getattr(config, name)
        below = value - axis.step
        below_passes = below >= axis.lo and not self.failing(space.replace(config, name, below))
        last_failing, above, stride = value, None, 1
        while value + stride * axis.step <= axis.hi:  # doubling: a long failing run costs a logarithm
            candidate = value + stride * axis.step
            if not self.failing(space.replace(config, name, candidate)):
                above = candidate
                break
            last_failing, stride = candidate, stride * 2
        if above is None and last_failing < axis.hi:  # the top of the axis, past the last stride
            if self.failing(space.replace(config, name, axis.hi)):
                last_failing = axis.hi
            else:
                above = axis.hi
        if above is not None:
            while above - last_failing > axis.step:  # bisect to a failing value right beside a passing one
                middle = last_failing + (above - last_failing) // (2 * axis.step) * axis.step
                if self.failing(space.replace(config, name, middle)):
                    last_failing = middle
                else:
                    above = middle
        return _edge(value, below if below_passes else None, above, last_failing)

    def _seen_edge(self, config: Config, name: str) -> dict:
        value = getattr(config, name)
        passing = [getattr(other, name) for other, probe in self.seen.items()
                   if not probe.failing and self.space.replace(config, name, getattr(other, name)) == other]
        below = max((v for v in passing if v < value), default=None)
        above = min((v for v in passing if v > value), default=None)
        return _edge(value, below, above, None)

    def _choice_boundaries(self, config: Config, *, probe: bool) -> dict:
        """quant and params: the first other value (in the order given) that passes, probed when
        ``probe``, else only among the configurations already seen."""
        space = self.space
        found: dict = {}
        axes = [("quant", config.quant, len(space.quants), space.quants)]
        axes += [(name, config.params[position], len(values), values)
                 for position, (name, values) in enumerate(space.params)]
        params: dict = {}
        for name, current, count, values in axes:
            if count < 2:
                continue
            passes = None
            for index in range(count):
                if index == current:
                    continue
                candidate = space.replace(config, name, index)
                seen = self.seen.get(candidate)
                failing = self.failing(candidate) if probe else (seen.failing if seen else True)
                if not failing:
                    passes = values[index]
                    break
            edge = {"fails": values[current], "passes": passes}
            if name == "quant":
                found["quant"] = edge
            else:
                params[name] = edge
        if params:
            found["params"] = params
        return found


def _edge(fails: int, below: int | None, above: int | None, fails_up_to: int | None) -> dict:
    """One axis's boundary: the failing value, the nearest passing one either side, the nearest of
    them (above on a tie), and the last failing value of the run up to ``above``."""
    sides = [side for side in (below, above) if side is not None]
    nearest = min(sides, key=lambda side: (abs(side - fails), -side)) if sides else None
    return {"fails": fails, "passes": nearest, "below": below, "above": above, "fails_up_to": fails_up_to}
