"""Read-only questions the dashboard asks (``gemmcheck history``, ``compare``, ``coverage``,
``report``), answered as rows; reporting/ turns them into tables and pages.

Everything is aggregated per result (a case within a run), whose totals the recorder stored,
or per case and run in SQL; launch rows are read only for the one run a report shows. Filters
come as a :class:`~.selection.Selection` and reach SQL as bound ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, case, func, select
from sqlalchemy.engine import Engine

from .schema import case_table, launch_table, result_table, results_joined, run_table, stack_table
from .selection import Selection, SelectionError, check_stack_fields, match

# Verdicts from the worst: a case's latest verdict is the worst of the latest run's results
VERDICT_ORDER = ("regression", "improved", "known-bad", "pass", "")


@dataclass
class CaseInfo:
    id: int
    key: str
    kernel: str
    quant: str
    m: int
    n: int
    k: int
    tile: str | None
    out_dtype: str
    fp8: str | None
    params: dict
    collective: str | None = None  # all_reduce / reduce_scatter / all_gather; None outside a collective case
    world_size: int | None = None  # its ranks

    @property
    def shape(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"


@dataclass
class ResultRow:
    """One result: a case within a run."""

    id: int
    case_id: int
    run_id: int
    stack_id: int | None
    started_at: datetime | None
    status: str
    tag: str | None
    revision: str | None
    launches: int
    bad_launches: int
    worst_wrong: int
    kinds: str
    verdict: str
    deterministic: bool
    elapsed_min_s: float | None
    elapsed_median_s: float | None
    contended: bool | None
    recorded_at: datetime | None
    worst_differing: int | None  # None: recorded before the column existed
    hazards: int | None  # error-severity sanitizer reports; None: no sanitizer run recorded
    per_rank: list[dict] | None  # a collective case's ranks (store._per_rank); None outside one


@dataclass
class CaseTotals:
    case_id: int
    runs: int
    launches: int
    bad_launches: int
    worst_wrong: int
    last_bad_at: datetime | None
    worst_differing: int | None  # None: no result recorded the figure
    hazards: int | None  # the most error-severity sanitizer reports of one result; None: never sanitized


@dataclass
class StackInfo:
    id: int
    gpu_arch: str | None
    gpu_name: str | None
    torch: str | None
    cuda: str | None
    hip: str | None

    @property
    def runtime(self) -> str:
        return f"hip {self.hip}" if self.hip else (f"cuda {self.cuda}" if self.cuda else "cpu")


@dataclass
class CellTotals:
    """A case on a stack."""

    case_id: int
    stack_id: int | None
    results: int
    launches: int
    bad_launches: int
    worst_rate: float  # the worst result's bad/launches


_RESULT_COLUMNS = (
    *result_table.c["id", "case_id", "run_id", "stack_id"],
    *run_table.c["started_at", "status", "tag", "revision"],
    *result_table.c[
        "launches",
        "bad_launches",
        "worst_wrong",
        "kinds",
        "verdict",
        "deterministic",
        "elapsed_min_s",
        "elapsed_median_s",
        "contended",
        "recorded_at",
        "worst_differing",
        "hazards",
        "per_rank",
    ],
)


def cases(connection, ids) -> dict[int, CaseInfo]:
    """The cases of these ids."""
    found: dict[int, CaseInfo] = {}
    ids = sorted(set(ids))
    for start in range(0, len(ids), 500):  # bounded IN lists
        columns = case_table.c[
            "id",
            "key",
            "kernel",
            "quant",
            "m",
            "n",
            "k",
            "tile",
            "out_dtype",
            "fp8",
            "params",
            "collective",
            "world_size",
        ]
        query = select(columns).where(case_table.c.id.in_(ids[start : start + 500]))
        for row in connection.execute(query):
            found[row.id] = CaseInfo(
                *row[:10],
                params=row.params or {},
                collective=row.collective,
                world_size=None if row.world_size is None else int(row.world_size),
            )
    return found


def stacks(connection) -> dict[int, StackInfo]:
    query = select(stack_table.c["id", "gpu_arch", "gpu_name", "torch", "cuda", "hip"])
    return {row.id: StackInfo(*row) for row in connection.execute(query)}


def _where(connection, *selections: Selection):
    """The WHERE clause over the result table for all ``selections`` at once; None when they match nothing."""
    clauses = []
    for selection in selections:
        matched = match(connection, selection)
        if matched.empty:
            return None
        clauses.append(matched.condition())
    return and_(*clauses)


def case_totals(
    engine: Engine, selection: Selection, *, limit: int = 500
) -> tuple[list[CaseTotals], dict[int, CaseInfo]]:
    """One row per case over the selected results, the cases in kernel, quant, shape order."""
    with engine.connect() as connection:
        where = _where(connection, selection)
        if where is None:
            return [], {}
        result = result_table.c
        last_bad = func.max(case((result.bad_launches > 0, result.recorded_at), else_=None))
        query = (
            select(
                result.case_id,
                func.count(func.distinct(result.run_id)),
                func.sum(result.launches),
                func.sum(result.bad_launches),
                func.max(result.worst_wrong),
                last_bad,
                func.max(result.worst_differing),
                func.max(result.hazards),
            )
            .select_from(results_joined(case_table))
            .where(where)
            .group_by(result.case_id)
            .order_by(*(func.min(column) for column in case_table.c["kernel", "quant", "m", "n", "k"]), result.case_id)
            .limit(limit)
        )
        totals = [
            CaseTotals(
                case_id,
                int(runs),
                int(launches or 0),
                int(bad or 0),
                int(worst or 0),
                when,
                None if differing is None else int(differing),
                None if hazards is None else int(hazards),
            )
            for case_id, runs, launches, bad, worst, when, differing, hazards in connection.execute(query)
        ]
        return totals, cases(connection, [t.case_id for t in totals])


def rank_totals(engine: Engine, selection: Selection, case_ids) -> dict[int, dict[int, list[int]]]:
    """Per collective case among ``case_ids``: each rank's [bad launches, launches] over the
    selected results (their ``per_rank``, which only a collective case's results have)."""
    totals: dict[int, dict[int, list[int]]] = {}
    ids = sorted(set(case_ids))
    with engine.connect() as connection:
        where = _where(connection, selection)
        if where is None or not ids:
            return totals
        for start in range(0, len(ids), 500):  # bounded IN lists
            query = select(result_table.c.case_id, result_table.c.per_rank).where(
                where, result_table.c.case_id.in_(ids[start : start + 500]), result_table.c.per_rank.is_not(None)
            )
            for case_id, ranks in connection.execute(query):
                add_ranks(totals.setdefault(case_id, {}), ranks)
    return totals


def add_ranks(totals: dict[int, list[int]], ranks: list[dict] | None) -> None:
    """A result's ``per_rank`` added into ``totals`` (rank -> [bad launches, launches])."""
    for entry in ranks or ():
        counts = totals.setdefault(int(entry["rank"]), [0, 0])
        counts[0] += int(entry.get("bad_launches") or 0)
        counts[1] += int(entry.get("launches") or 0)


def recent_results(engine: Engine, selection: Selection, case_ids: list[int], *, runs: int = 12) -> list[ResultRow]:
    """The results of each case's last ``runs`` runs (newest run first, per case)."""
    if not case_ids:
        return []
    with engine.connect() as connection:
        where = _where(connection, selection)
        if where is None:
            return []
        rank = (
            func.dense_rank()
            .over(partition_by=result_table.c.case_id, order_by=result_table.c.run_id.desc())
            .label("rank")
        )
        inner = (
            select(*_RESULT_COLUMNS, rank)
            .select_from(results_joined(run_table))
            .where(where, result_table.c.case_id.in_(case_ids))
            .subquery()
        )
        query = (
            select(*[inner.c[column.key] for column in _RESULT_COLUMNS])
            .where(inner.c.rank <= runs)
            .order_by(inner.c.case_id, inner.c.run_id.desc(), inner.c.id)
        )
        return [ResultRow(*row) for row in connection.execute(query)]


def results(engine: Engine, *selections: Selection) -> list[ResultRow]:
    """Every result all ``selections`` keep, oldest first (what compare and the report add up)."""
    with engine.connect() as connection:
        where = _where(connection, *selections)
        if where is None:
            return []
        query = select(*_RESULT_COLUMNS).select_from(results_joined(run_table)).where(where).order_by(result_table.c.id)
        return [ResultRow(*row) for row in connection.execute(query)]


def case_runs(engine: Engine, selection: Selection, *, limit: int = 50) -> list[tuple[ResultRow, str | None, str]]:
    """The results of the selected cases, newest first, with their stack's arch and their case's
    key: the table of a bug report."""
    with engine.connect() as connection:
        where = _where(connection, selection)
        if where is None:
            return []
        query = (
            select(*_RESULT_COLUMNS, stack_table.c.gpu_arch, case_table.c.key)
            .select_from(results_joined(run_table, case_table, stack_table))
            .where(where)
            .order_by(run_table.c.started_at.desc(), result_table.c.id.desc())
            .limit(limit)
        )
        return [(ResultRow(*row[:-2]), row[-2], row[-1]) for row in connection.execute(query)]


@dataclass
class RunRow:
    """A run, and what it holds of the selection."""

    id: int
    started_at: datetime | None
    ended_at: datetime | None
    status: str
    tag: str | None
    revision: str | None
    dirty: bool | None
    results: int
    launches: int
    bad_launches: int


def runs(engine: Engine, selection: Selection, *, limit: int = 20) -> list[RunRow]:
    """Recent runs, newest first. Case and stack filters keep the runs that hold a result they
    match, and the counts are of those results; without them a run with no result is listed too."""
    with engine.connect() as connection:
        matched = match(connection, selection)
        if matched.empty:
            return []
        on_results = []  # conditions on the results a run's counts are of
        if matched.cases is not None:
            on_results.append(result_table.c.case_id.in_(matched.cases))
        if matched.stacks is not None:
            on_results.append(result_table.c.stack_id.in_(matched.stacks))
        joined = and_(result_table.c.run_id == run_table.c.id, *on_results)
        query = (
            select(
                *run_table.c["id", "started_at", "ended_at", "status", "tag", "revision", "dirty"],
                func.count(result_table.c.id),
                func.coalesce(func.sum(result_table.c.launches), 0),
                func.coalesce(func.sum(result_table.c.bad_launches), 0),
            )
            .outerjoin(result_table, joined)
            .group_by(run_table.c.id)
            .order_by(run_table.c.id.desc())
            .limit(limit)
        )
        if matched.runs is not None:
            query = query.where(run_table.c.id.in_(matched.runs))
        if on_results:
            query = query.having(func.count(result_table.c.id) > 0)
        return [RunRow(*row[:7], int(row[7]), int(row[8]), int(row[9])) for row in connection.execute(query)]


def any_result(engine: Engine, selection: Selection) -> bool:
    """Whether the history holds a result ``selection`` keeps."""
    with engine.connect() as connection:
        where = _where(connection, selection)
        if where is None:
            return False
        return connection.execute(select(result_table.c.id).where(where).limit(1)).first() is not None


def unknown_case_prefixes(engine: Engine, prefixes) -> list[str]:
    """The case key prefixes no recorded case's key starts with."""
    with engine.connect() as connection:
        keys = [key for (key,) in connection.execute(select(case_table.c.key))]
    return [prefix for prefix in prefixes if not any(key.startswith(prefix) for key in keys)]


def check_runs(engine: Engine, ids, option: str = "--run") -> None:
    """A SelectionError naming ``option`` for a run id the history does not hold."""
    wanted = sorted(set(ids))
    if not wanted:
        return
    with engine.connect() as connection:
        found = set(connection.scalars(select(run_table.c.id).where(run_table.c.id.in_(wanted))))
    missing = [run_id for run_id in wanted if run_id not in found]
    if missing:
        raise SelectionError(f"{option} {missing[0]}: no recorded run has that id (gemmcheck runs lists them)")


def check_selection(engine: Engine, selection: Selection, option: str = "--stack") -> None:
    """A SelectionError for what a selection names that the history does not have: a stack
    field (a misspelt one would match nothing, silently), a run id (``--run``), a case key
    prefix (``--case``)."""
    check_runs(engine, selection.runs)
    with engine.connect() as connection:
        if selection.stack:
            check_stack_fields(connection, selection.stack, option)
    unknown = unknown_case_prefixes(engine, selection.keys) if selection.keys else []
    if unknown:
        raise SelectionError(
            f"--case {unknown[0]!r}: no recorded case has a key starting with it (gemmcheck history lists them)"
        )


def cell_totals(
    engine: Engine, selection: Selection
) -> tuple[list[CellTotals], dict[int, CaseInfo], dict[int, StackInfo]]:
    """Per case and stack: results, launches, bad launches and the worst result's rate."""
    with engine.connect() as connection:
        where = _where(connection, selection)
        if where is None:
            return [], {}, {}
        result = result_table.c
        worst = func.max(case((result.launches > 0, result.bad_launches * 1.0 / result.launches), else_=0.0))
        query = (
            select(
                result.case_id,
                result.stack_id,
                func.count(result.id),
                func.sum(result.launches),
                func.sum(result.bad_launches),
                worst,
            )
            .where(where, result.launches > 0)
            .group_by(result.case_id, result.stack_id)
        )
        cells = [
            CellTotals(case_id, stack_id, int(count), int(launches or 0), int(bad or 0), float(rate or 0))
            for case_id, stack_id, count, launches, bad, rate in connection.execute(query)
        ]
        return cells, cases(connection, {cell.case_id for cell in cells}), stacks(connection)


@dataclass
class LaunchRow:
    index: int
    kinds: str
    wrong: int
    nonfinite: int
    differing: int | None
    elapsed_s: float
    rank: int | None = None  # in a collective case; None outside one


def launches_of(engine: Engine, result_id: int) -> list[LaunchRow]:
    """One result's launches, in order (in a collective case, each launch's ranks in order)."""
    query = (
        select(launch_table.c["launch_index", "kinds", "wrong", "nonfinite", "differing", "elapsed_s", "rank"])
        .where(launch_table.c.result_id == result_id)
        .order_by(launch_table.c.launch_index, launch_table.c.rank, launch_table.c.id)
    )
    with engine.connect() as connection:
        return [LaunchRow(*row) for row in connection.execute(query)]


def worst_tiles_of(engine: Engine, result_id: int) -> dict | None:
    with engine.connect() as connection:
        return connection.execute(select(result_table.c.worst_tiles).where(result_table.c.id == result_id)).scalar()


def sanitize_of(engine: Engine, result_ids: list[int]) -> dict[int, list[dict]]:
    """The recorded compute-sanitizer runs of these results (``SanitizedLaunch.to_dict()`` each),
    for the results that have any."""
    found: dict[int, list[dict]] = {}
    ids = sorted(set(result_ids))
    with engine.connect() as connection:
        for start in range(0, len(ids), 500):  # bounded IN lists
            query = select(result_table.c["id", "sanitize"]).where(
                result_table.c.id.in_(ids[start : start + 500]), result_table.c.sanitize.is_not(None)
            )
            found.update({result_id: runs for result_id, runs in connection.execute(query) if runs})
    return found


def known_runs(engine: Engine) -> list[tuple[int, str | None, str | None]]:
    """(id, tag, revision) of every run: what a bare ``--side`` word may name."""
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(select(run_table.c.id, run_table.c.tag, run_table.c.revision))]
