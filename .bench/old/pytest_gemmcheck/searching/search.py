"""The search: Hypothesis draws configurations from the axes and shrinks the first failing one;
then the neighbourhood of the smallest failing configuration is probed, for a smaller one the
shrinker passed by and for the passing values around it (boundary.py walks and weighs them).

Every probe goes through ``probe(config)``, which runs a gemmcheck case and returns its judged
result, or says that make_launch skipped the configuration; this module decides only which
configurations to try. A configuration is probed once per search (more launches of it are
asked for as ``probe(config, launches=..., stop_on_bad=...)``: the smallest failing one's, and
a passing neighbour's, as evidence for its boundary), and no probe starts after the time
budget is spent. A skipped configuration is left out, as Hypothesis's ``assume`` leaves out an
example: neither failing nor passing, and no example drawn.

Hypothesis is used through ``@given``: its strategies over the axes (each of m, n and k drawn
half the time from the values meaningful to a kernel, which it shrinks toward first: see
``Space.landmarks``; drawn by index, so that an axis is never listed) and its shrinker, seeded
by ``seed``. The example database (examples.py) keeps the smallest failing configuration of
each search, and the next search tries it first, as an explicit example. Health checks are off
(a probe takes seconds: "too slow" is the point), there is no deadline, and no targeting (a
probe passes or fails: a passing probe's error says nothing about where a race hits).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..config.table import DEFAULTS
from ..records.result import CaseResult
from . import boundary as boundaries
from .examples import Examples
from .search_result import NUMERIC, Probe, SearchResult
from .space import Config, Space


class _Found(Exception):
    """A failing probe, raised to Hypothesis as the failure it shrinks."""


class _Stop(BaseException):
    """Ends the Hypothesis run at once: Hypothesis takes an Exception from the test for a failure
    to shrink, and lets a BaseException it does not know through."""


@dataclass
class Outcome:
    """What ``probe(config)`` gives back: the judged result and a note on it, or, when
    make_launch skipped the configuration, no result and why."""

    result: CaseResult | None
    note: str = ""
    skipped: str | None = None


@dataclass
class Search:
    kernel: str
    space: Space
    probe: Callable[..., Outcome]
    operand_bytes: Callable[[str], int]  # a quant mode's operand element size, for "least memory"
    examples: int
    seed: int
    budget: float | None = None  # seconds for the whole search
    database: Path | None = None  # the example database's directory; None: none
    case: dict = field(default_factory=dict)  # the probes' other case keywords, as the paste line names them
    examples_key: dict | None = None  # those keywords in the example database's key (None: ``case``)
    repeat: int = DEFAULTS.repeat  # a probe's launches, when it runs them all: what evidence is counted in
    alpha: float = DEFAULTS.alpha  # of the test that a boundary is more than luck

    def __post_init__(self):
        self.probes_of: dict[Config, list[Probe]] = {}
        self.skipped: dict[Config, str] = {}  # make_launch skipped it: why
        self.extended: set[Config] = set()  # passing neighbours given more launches
        self.confirmed: set[Config] = set()  # failing configurations given all their launches
        self.order: list[Probe] = []
        self.started = 0.0
        self.out_of_time = False
        self.error: BaseException | None = None
        self.phase = "search"
        self.replayed = 0
        self.store = Examples(self.database, self.space.digest(self.kernel, self.examples_key or self.case), self.space)

    # --- probes ---------------------------------------------------------------------------
    def state(self, config: Config) -> bool | None:
        """Whether the configuration fails (probed once), or None when make_launch skipped it;
        _Stop when the budget is spent."""
        if config not in self.probes_of and config not in self.skipped:
            self._run(config)
        return self.known(config)

    def known(self, config: Config) -> bool | None:
        """What the probes so far say, without probing: None for a configuration skipped or not
        probed."""
        probes = self.probes_of.get(config)
        return None if probes is None else any(probe.failing for probe in probes)

    def more(self, config: Config, launches: int, *, stop_on_bad: bool) -> None:
        """Another probe of a configuration already probed: ``launches`` more, as evidence."""
        self._run(config, launches=launches, stop_on_bad=stop_on_bad)

    def counts(self, config: Config) -> tuple[int, int]:
        """Bad launches and launches of every probe of the configuration."""
        probes = self.probes_of.get(config, [])
        return sum(probe.bad_launch_count for probe in probes), sum(probe.launch_count for probe in probes)

    def passing(self) -> list[Config]:
        return [config for config in self.probes_of if self.known(config) is False]

    def _run(self, config: Config, **more) -> None:
        if self.budget is not None and time.monotonic() - self.started >= self.budget:
            self.out_of_time = True
            raise _Stop
        began = time.monotonic()
        try:
            outcome = self.probe(config, **more)
        except Exception as exc:  # the search's own arguments or machinery, never the kernel (case.run records that)
            self.error = exc
            raise _Stop from None
        if outcome.skipped is not None:
            self.skipped[config] = outcome.skipped
            return
        result = outcome.result
        probe = Probe(
            config=self.space.as_dict(config),
            result=result,
            failing=bool(result.bad_launches) or result.failed,
            seconds=time.monotonic() - began,
            phase="evidence" if more else self.phase,
            note=outcome.note,
        )
        self.probes_of.setdefault(config, []).append(probe)
        self.order.append(probe)

    def _size(self, config: Config) -> tuple:
        return self.space.size_key(config, self.operand_bytes)

    def _smallest(self) -> Config | None:
        failing = [config for config in self.probes_of if self.known(config)]
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
        self.store.keep(smallest, lambda config: self.known(config) is False)
        if smallest is not None and boundary is None:  # the budget ran out before the boundary was walked
            boundary = boundaries.walk(self, smallest, probe=False)
        return SearchResult(
            kernel=self.kernel,
            space=self.space.spec(),
            case=dict(self.case),
            probes=list(self.order),
            minimal=self.space.as_dict(smallest) if smallest is not None else None,
            boundary=boundary or {},
            seconds=time.monotonic() - self.started,
            stopped=self._stopped_words(),
            seed=self.seed,
            examples=self.examples,
            replayed=self.replayed,
            skipped=[
                {"config": self.space.as_dict(config), "reason": reason} for config, reason in self.skipped.items()
            ],
            notes=list(self.store.notes),
        )

    def _stopped_words(self) -> str:
        if self.out_of_time:
            return f"stopped when the budget of {self.budget:g} s ran out"
        if len(self.probes_of) + len(self.skipped) >= self.space.size:
            return f"every one of the {self.space.size:,} configurations tried"
        first = next((index for index, probe in enumerate(self.order, 1) if probe.failing), None)
        if first is not None:  # Hypothesis draws no more once one fails: it shrinks that one
            return f"shrunk from the first failing probe, #{first}"
        return f"{self.examples:,} examples drawn, none failing"

    def _hypothesis(self) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, example, given, reject, seed, settings
        from hypothesis import strategies as st
        from hypothesis.errors import Unsatisfiable

        space = self.space

        def axis(name: str):
            values, landmarks = space.axis(name).values, space.landmarks(name)
            every = st.sampled_from(values)  # a range is drawn from by index, never listed
            if not landmarks or len(landmarks) == len(values):
                return every
            preferred = st.sampled_from(range(len(landmarks))).map(landmarks.__getitem__)
            return st.one_of(preferred, every)  # shrinks toward the first

        strategy = st.tuples(
            *(axis(name) for name in NUMERIC),
            st.sampled_from(range(len(space.quants))),
            st.tuples(*(st.sampled_from(range(len(values))) for _, values in space.params)),
        )
        # the built-in defaults as the parent, never a profile the user's suite loaded (a CI profile
        # derandomizes); no database of Hypothesis's own: a seeded run has none (see examples.py)
        chosen = settings(
            settings.get_profile("default"),
            max_examples=self.examples,
            database=None,
            deadline=None,
            verbosity=Verbosity.quiet,
            phases=(Phase.explicit, Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            print_blob=False,
        )

        def probe(drawn) -> None:
            config = Config(*drawn[:4], drawn[4])
            tried = config in self.probes_of or config in self.skipped
            state = self.state(config)
            if state:
                raise _Found  # a failure to Hypothesis: it shrinks it
            if tried or state is None:  # drawn again, or skipped: not another example (assume)
                reject()

        test = settings(chosen)(given(strategy)(probe))
        stored = sorted(self.store.stored(), key=self._size)
        self.replayed = len(stored)
        for config in reversed(stored):  # explicit examples run first, in the order written
            test = example((config.m, config.n, config.k, config.quant, config.params))(test)
        try:
            seed(self.seed)(test)()
        except (_Found, Unsatisfiable):  # Unsatisfiable: every configuration drawn was skipped
            pass

    # --- around the smallest --------------------------------------------------------------
    def _neighbourhood(self) -> dict | None:
        """Probe below the smallest failing configuration along each axis (the lowest value
        and the one a step down; each param at its first value; each quant of smaller operands),
        restarting from any smaller one found; give it all its launches; then walk its boundary,
        and give the passing neighbours that fall short of establishing it more launches, until
        the boundary holds."""
        while True:
            smallest = self._smallest()
            if smallest is None:
                return None
            for candidate in self._below(smallest):
                self.state(candidate)
            if self._smallest() != smallest:
                continue
            boundaries.confirm(self, smallest)
            boundary = boundaries.walk(self, smallest)
            if self._smallest() == smallest and not boundaries.establish(self, smallest, boundary):
                return boundary

    def _below(self, config: Config) -> list[Config]:
        space = self.space
        candidates = []
        for name in NUMERIC:
            values = space.axis(name).values
            at = values.index(getattr(config, name))
            candidates += [space.replace(config, name, values[index]) for index in (0, at - 1) if 0 <= index < at]
        for position, (name, _) in enumerate(space.params):
            if config.params[position]:
                candidates.append(space.replace(config, name, 0))
        # a quant mode of smaller operands at the same shape is smaller too
        candidates += [
            space.replace(config, "quant", index) for index in range(len(space.quants)) if index != config.quant
        ]
        return [candidate for candidate in dict.fromkeys(candidates) if self._size(candidate) < self._size(config)]
