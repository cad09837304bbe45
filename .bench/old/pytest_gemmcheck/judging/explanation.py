"""What explains a case's bad launches, across stacks, GPUs and params: ``gemmcheck explain``'s
statistics.

Pure Python over rows (no database here). The input is a list of :class:`Group`: launches that
share every recorded fact (one result's launches of one process on one physical GPU), with
their bad and total counts and, per factor, the value they had. The model:

- A factor is a partition of the launches (``torch``: by torch version; ``gpu_uuid``: by
  physical GPU; ``rank``: by a collective case's rank; ``process``: by run, host and pid;
  ``tile``: by the tile of the kernel's cases...). A factor with one value in the history says
  nothing and is left out.
- Two factors that partition the launches the same way (every value of one always goes with one
  value of the other) cannot be told apart by this history: they are merged into one factor,
  named together ("torch=2.12 and triton=3.4 (always together)").
- Each value of each factor is tested against the rest of its population: a one-sided Fisher
  exact test that its bad-launch rate is higher (judging/stats.py). Each side's launches are
  first divided by the design effect of its results (launches of one process are not
  independent: a failure decided at load time makes 12 launches worth about one), as
  ``compare`` and the verdicts do.
- All value tests of all factors form one family, corrected by Holm's step-down method, which
  holds the chance of naming any factor when none is involved at ``alpha`` (strong family-wise
  error control, with no assumption about how the tests depend on each other).
- The explanation is the significant test with the smallest corrected p-value (ties: the factor
  with fewer values, the process last): a coarser fact that explains as much is the better
  name for it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..config.table import DEFAULTS
from .stats import effective_counts, fisher_greater

PROCESS = "process"
GPU_UUID = "gpu_uuid"
RANK = "rank"  # a collective case's: the rank whose launches they are
STRESS = "stress"
CASE_FACTORS = ("tile", "quant", "shape")  # and param:<name>: compared across the kernel's cases
# how a merged (confounded) factor is named: the first of these leads
FACTOR_ORDER = (
    "torch",
    "cuda",
    "hip",
    "rocm",
    "driver",
    "triton",
    "flydsl",
    "gpu",
    "gpu_arch",
    RANK,
    GPU_UUID,
    "host",
    STRESS,
    *CASE_FACTORS,
    "python",
    "os",
)


@dataclass
class Group:
    """Launches that share every fact."""

    bad: int
    launches: int
    facts: dict[str, str]  # factor -> value
    cluster: Any = None  # the result they belong to (the unit of the design effect)
    host: str | None = None
    stack: Any = None  # the stack they ran on (for "bad on every stack seen")
    case: str | None = None  # the case's key (across sibling cases)
    origin: Any = None  # the launches it counts (result, process, GPU): the same in both populations


@dataclass
class ValueTest:
    factor: str  # "torch", or "torch and triton" when confounded
    names: tuple[str, ...]  # the factors it stands for
    value: str  # "2.12", or "2.12 and 3.4"
    label: str  # "torch=2.12 and triton=3.4"
    population: str  # "case" (the case's own launches) or "kernel" (its sibling cases too)
    bad: int
    launches: int
    rest_bad: int
    rest_launches: int
    hosts: int
    cases: int
    rest_cases: int
    design_effect: float
    p: float = 1.0
    p_adjusted: float = 1.0
    significant: bool = False
    values_in_factor: int = 2
    members: frozenset = frozenset()  # the indices of its groups in its population
    values: tuple[str, ...] = ()  # the value of each of its factors, in the order of ``names``

    def record(self) -> dict[str, Any]:
        return {
            "factor": self.factor,
            "factors": list(self.names),
            "value": self.value,
            "population": self.population,
            "bad_launches": self.bad,
            "launches": self.launches,
            "rest_bad_launches": self.rest_bad,
            "rest_launches": self.rest_launches,
            "hosts": self.hosts,
            "design_effect": round(self.design_effect, 3),
            "p": self.p,
            "p_adjusted": self.p_adjusted,
            "significant": self.significant,
            "confounded": len(self.names) > 1,
        }


@dataclass
class Explanation:
    tests: list[ValueTest]
    verdict: list[str]  # sentences, the explanation first
    explained_by: ValueTest | None
    per_process: bool  # bad launches concentrate in a few processes
    constant: dict[str, str] = field(default_factory=dict)  # factors with one value: no evidence either way
    alpha: float = DEFAULTS.alpha
    also: list[ValueTest] = field(default_factory=list)  # further explanations, each among the launches left
    bad: int = 0
    launches: int = 0

    @property
    def names(self) -> tuple[str, ...]:
        """The factors of the explanation (empty: nothing explains it)."""
        return self.explained_by.names if self.explained_by is not None else ()


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running, m = 0.0, len(p_values)
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


class _Clusters:
    """Per-cluster (bad, launches) sums and the sufficient statistics of their dispersion
    (sum of k^2/n, bad, launches, clusters), so that "the rest" of a value is the whole minus
    the value, in time linear in the value's size: judging/stats.py's design effect without
    rebuilding the rest for each of thousands of processes."""

    def __init__(self, groups: list[Group], indices=None):
        self.sums: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
        for index in range(len(groups)) if indices is None else indices:
            group = groups[index]
            entry = self.sums[_cluster(group, index)]
            entry[0] += group.bad
            entry[1] += group.launches
        self.square = sum(k * k / n for k, n in self.sums.values() if n)
        self.bad = sum(k for k, _ in self.sums.values())
        self.launches = sum(n for _, n in self.sums.values())
        self.count = sum(1 for _, n in self.sums.values() if n)

    def without(self, part: "_Clusters") -> tuple[float, int, int, int]:
        square, count = self.square, self.count
        for cluster, (k, n) in part.sums.items():
            if not n:
                continue
            whole_k, whole_n = self.sums[cluster]
            square -= whole_k * whole_k / whole_n
            count -= 1
            if whole_n > n:
                square += (whole_k - k) ** 2 / (whole_n - n)
                count += 1
        return square, self.bad - part.bad, self.launches - part.launches, count


def _cluster(group: Group, index: int):
    return group.cluster if group.cluster is not None else ("group", index)


def _deff(square: float, bad: int, launches: int, count: int) -> float:
    """Pearson's dispersion of the clusters around their pooled rate, never below 1
    (stats.design_effect from its sums: sum((k - n p)^2 / (n p (1 - p))) / (clusters - 1))."""
    if count < 2 or launches <= 0:
        return 1.0
    p = bad / launches
    if p <= 0.0 or p >= 1.0:
        return 1.0
    chi2 = max(0.0, square - 2 * p * bad + p * p * launches) / (p * (1 - p))
    return max(1.0, chi2 / (count - 1))


def _factors(groups: list[Group]) -> list[tuple[tuple[str, ...], list[tuple[str, ...]]]]:
    """(factor names, each group's value tuple), confounded factors merged; constant ones left out."""
    names = sorted({name for group in groups for name in group.facts})
    by_partition: dict[tuple, list[str]] = {}
    for name in names:
        numbering: dict[str, int] = {}
        signature = tuple(numbering.setdefault(group.facts.get(name, "(none)"), len(numbering)) for group in groups)
        if len(numbering) < 2:
            continue
        by_partition.setdefault(signature, []).append(name)
    merged = []
    for members in by_partition.values():
        # a known field leads a merged name, the process never does
        members.sort(key=lambda n: (n == PROCESS, FACTOR_ORDER.index(n) if n in FACTOR_ORDER else len(FACTOR_ORDER), n))
        merged.append((tuple(members), [tuple(g.facts.get(n, "(none)") for n in members) for g in groups]))
    return merged


def constant_factors(groups: list[Group]) -> dict[str, str]:
    """The factors with one value throughout, and that value."""
    names = sorted({name for group in groups for name in group.facts})
    values = {n: {g.facts.get(n, "(none)") for g in groups} for n in names}
    return {n: next(iter(v)) for n, v in values.items() if len(v) == 1}


def _tests(groups: list[Group], population: str) -> list[ValueTest]:
    tests = []
    whole = _Clusters(groups)
    for names, values in _factors(groups):
        by_value: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for index, value in enumerate(values):
            by_value[value].append(index)
        for value, indices in by_value.items():
            inside = _Clusters(groups, indices)
            deff = _deff(inside.square, inside.bad, inside.launches, inside.count)
            rest = whole.without(inside)
            bad, launches = effective_counts(inside.bad, inside.launches, deff)
            rest_bad, rest_launches = effective_counts(rest[1], rest[2], _deff(*rest))
            chosen = set(indices)
            hosts = {groups[i].host for i in indices if groups[i].host}
            cases = {groups[i].case for i in indices if groups[i].case}
            rest_cases = (
                {g.case for i, g in enumerate(groups) if g.case and i not in chosen}
                if population == "kernel"
                else set()
            )
            tests.append(
                ValueTest(
                    factor=" and ".join(names),
                    names=names,
                    value=" and ".join(value),
                    label=" and ".join(f"{n}={v}" for n, v in zip(names, value)),
                    population=population,
                    bad=inside.bad,
                    launches=inside.launches,
                    rest_bad=rest[1],
                    rest_launches=rest[2],
                    hosts=len(hosts),
                    cases=len(cases),
                    rest_cases=len(rest_cases),
                    design_effect=deff,
                    p=fisher_greater(bad, launches, rest_bad, rest_launches),
                    values_in_factor=len(by_value),
                    members=frozenset(indices),
                    values=value,
                )
            )
    return tests


MAX_ROUNDS = 3  # explanations at most: the first, and two more among the launches it leaves


def _round(groups: list[Group], kernel_groups: list[Group], alpha: float) -> list[ValueTest]:
    """One family of value tests over both populations, Holm-corrected, best first."""
    tests = _tests(groups, "case") + _tests(kernel_groups, "kernel")
    for test, adjusted in zip(tests, holm([t.p for t in tests])):
        test.p_adjusted = adjusted
        test.significant = adjusted < alpha
    tests.sort(key=lambda t: (t.p_adjusted, t.p, PROCESS in t.names, t.values_in_factor, t.factor, t.value))
    return tests


def explain(
    groups: list[Group], kernel_groups: list[Group] | None = None, *, alpha: float = DEFAULTS.alpha
) -> Explanation:
    """Which factor explains the bad launches of ``groups`` (a case's own launches, with stack,
    GPU, stress and process factors); ``kernel_groups``, the launches of the case and its sibling
    cases (same kernel) with their case factors (tile, quant, shape, param:NAME).

    After an explanation is found, the launches it covers are set aside and the rest is asked
    again (a new family at the same ``alpha``), up to MAX_ROUNDS explanations: a second cause
    that the first hides in the marginal counts ("also one physical GPU ..., among the launches
    without torch=2.12") is named without splitting the first."""
    kernel_groups = kernel_groups or []
    bad = sum(g.bad for g in groups)
    launches = sum(g.launches for g in groups)
    tests = _round(groups, kernel_groups, alpha)
    constant = {**constant_factors(kernel_groups), **constant_factors(groups)}
    explanation = Explanation(
        tests=tests,
        verdict=[],
        explained_by=None,
        per_process=False,
        constant=constant,
        alpha=alpha,
        bad=bad,
        launches=launches,
    )
    significant = [t for t in tests if t.significant]
    if not bad and not any(t.bad for t in tests):
        explanation.verdict = [f"no bad launches recorded ({launches} launches)"]
        return explanation
    if not significant:
        explanation.verdict = [_nothing(groups, alpha)]
        return explanation
    top = significant[0]
    explanation.explained_by = top
    if PROCESS in top.names and len(top.names) == 1:
        explanation.per_process = True
        explanation.verdict = [_per_process([t for t in significant if t.names == top.names], top)]
        return explanation  # what is left is the processes that did not stand out
    explanation.verdict = [_sentence(top)]
    if top.design_effect >= 2.0:
        explanation.per_process = True
        explanation.verdict.append(
            f"within {top.label}, decided per process: its launches cluster by process "
            f"(design effect {top.design_effect:.1f})"
        )
    covered, found, set_aside = set(top.names), top, [top.label]
    for _ in range(MAX_ROUNDS - 1):
        # the explained launches leave both populations: the case's own launches are among its kernel's
        explained = groups if found.population == "case" else kernel_groups
        gone = {id(g) for i, g in enumerate(explained) if i in found.members}
        origins = {g.origin for g in explained if id(g) in gone and g.origin is not None}
        groups = [g for g in groups if id(g) not in gone and (g.origin is None or g.origin not in origins)]
        kernel_groups = [
            g for g in kernel_groups if id(g) not in gone and (g.origin is None or g.origin not in origins)
        ]
        if not any(g.bad for g in groups) and not any(g.bad for g in kernel_groups):
            break
        found = next(
            (
                t
                for t in _round(groups, kernel_groups, alpha)
                if t.significant and not covered & set(t.names) and PROCESS not in t.names
            ),
            None,
        )
        if found is None:
            break
        explanation.also.append(found)
        explanation.verdict.append(f"also {_sentence(found)}, among the launches without {' or '.join(set_aside)}")
        covered |= set(found.names)
        set_aside.append(found.label)
    return explanation


def p_text(p: float) -> str:
    return f"p = {p:.2g}" if p >= 1e-300 else "p < 1e-300"


def _short_uuid(uuid: str) -> str:
    return uuid if len(uuid) <= 12 else uuid[:12] + "…"


def _sentence(test: ValueTest) -> str:
    confounded = " (always together)" if len(test.names) > 1 else ""
    p = p_text(test.p_adjusted)
    if test.names == (GPU_UUID,):
        others = "all other GPUs" if test.rest_bad == 0 else "other GPUs"
        return (
            f"one physical GPU: {_short_uuid(test.value)} {test.bad}/{test.launches}, {others} "
            f"{test.rest_bad}/{test.rest_launches} (suspect hardware; {p})"
        )
    if RANK in test.names and test.population == "case":
        return _rank_sentence(test, p)
    only = "fails only" if test.rest_bad == 0 else "fails more often"
    if test.population == "kernel":
        where = f"over {test.cases} case{'s' if test.cases != 1 else ''}"
        rest = f"in {test.rest_cases} sibling case{'s' if test.rest_cases != 1 else ''}"
    else:
        where = f"on {test.hosts} host{'s' if test.hosts != 1 else ''}" if test.hosts else ""
        rest = "elsewhere"
    under = "under" if test.names == (STRESS,) else "with"
    where = f" {where}" if where else ""
    return (
        f"{only} {under} {test.label}{confounded}: {test.bad}/{test.launches} launches{where} "
        f"vs {test.rest_bad}/{test.rest_launches} {rest} ({p})"
    )


def _rank_sentence(test: ValueTest, p: str) -> str:
    """'one rank: rank 3 on GPU-3f2a9c0b… 9/40, all other ranks 0/120 (its GPU always with it,
    so either may be the cause; p = ...)'. A rank is a process: where the history holds one run
    the two are the same partition, and the process is not named again."""
    values = dict(zip(test.names, test.values))
    gpu = values.get(GPU_UUID)
    where = f"rank {values[RANK]}" + (f" on {_short_uuid(gpu)}" if gpu else "")
    others = "all other ranks" if test.rest_bad == 0 else "other ranks"
    notes = ["its GPU always with it, so either may be the cause"] if gpu else []
    with_it = [f"{name}={values[name]}" for name in test.names if name not in (RANK, GPU_UUID, PROCESS)]
    if with_it:
        notes.append(f"always with {' and '.join(with_it)}")
    return (
        f"one rank: {where} {test.bad}/{test.launches}, {others} {test.rest_bad}/{test.rest_launches} "
        f"({'; '.join(notes + [p])})"
    )


def _per_process(tests: list[ValueTest], top: ValueTest) -> str:
    bad_in = sum(t.bad for t in tests)
    launches_in = sum(t.launches for t in tests)
    total_bad = top.bad + top.rest_bad
    processes = top.values_in_factor
    return (
        f"decided per process: {bad_in} of the {total_bad} bad launches in {len(tests)} of {processes} processes "
        f"({bad_in}/{launches_in} there vs {total_bad - bad_in}/{top.launches + top.rest_launches - launches_in} "
        f"in the others; {p_text(top.p_adjusted)} for the worst)"
    )


def _nothing(groups: list[Group], alpha: float) -> str:
    stacks: dict[Any, int] = defaultdict(int)
    for group in groups:
        stacks[group.stack] += group.bad
    bad_stacks = sum(1 for count in stacks.values() if count)
    where = (
        "bad on every stack seen"
        if bad_stacks == len(stacks)
        else f"bad on {bad_stacks} of {len(stacks)} stacks seen, no more than chance allows"
    )
    return f"no factor explains it ({where}; no value stands out at {alpha:g} after Holm's correction)"
