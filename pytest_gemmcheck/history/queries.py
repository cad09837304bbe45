"""Read-only questions asked of the history: what the dashboard shows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Integer as Integer_
from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.engine import Engine

from .models import Case, Result, Run, Stack


@dataclass
class CaseSummary:
    key: str
    kernel: str
    quant: str
    shape: str
    tile: str | None
    params: dict
    runs: int
    launches: int
    bad_launches: int
    worst_wrong: int
    last_verdict: str
    last_recorded: datetime | None
    arches: list[str]


@dataclass
class RunLine:
    run_id: int
    started_at: datetime
    status: str
    tag: str | None
    revision: str | None
    gpu_arch: str | None
    launches: int
    bad_launches: int
    worst_wrong: int
    verdict: str
    kinds: str


def _filtered(query: Select, *, kernel: str | None, quant: str | None, tag: str | None, key: str | None) -> Select:
    if kernel:
        query = query.where(Case.kernel.like(kernel.replace("*", "%")))
    if quant:
        query = query.where(Case.quant == quant)
    if tag:
        query = query.where(Run.tag == tag)
    if key:
        query = query.where(Case.key.like(f"{key}%"))
    return query


def case_summaries(engine: Engine, *, kernel=None, quant=None, tag=None, key=None, limit: int = 200) -> list[CaseSummary]:
    """One line per case: its history summed over every recorded run."""
    totals = _filtered(
        select(
            Case.id, Case.key, Case.kernel, Case.quant, Case.m, Case.n, Case.k, Case.tile, Case.params,
            func.count(func.distinct(Result.run_id)), func.sum(Result.launches), func.sum(Result.bad_launches),
            func.max(Result.worst_wrong), func.max(Result.id),
        ).join(Result, Result.case_id == Case.id).join(Run, Run.id == Result.run_id)
        .group_by(Case.id).order_by(Case.kernel, Case.quant, Case.m, Case.n, Case.k).limit(limit),
        kernel=kernel, quant=quant, tag=tag, key=key)
    summaries = []
    with engine.connect() as connection:
        rows = connection.execute(totals).all()
        last_ids = [row[13] for row in rows]
        last = {rid: (verdict, when) for rid, verdict, when in connection.execute(
            select(Result.id, Result.verdict, Result.recorded_at).where(Result.id.in_(last_ids)))} if last_ids else {}
        arches: dict[int, set] = {}
        if rows:
            for case_id, arch in connection.execute(
                    select(Result.case_id, Stack.gpu_arch).join(Stack, Stack.id == Result.stack_id)
                    .where(Result.case_id.in_([row[0] for row in rows])).distinct()):
                arches.setdefault(case_id, set()).add(arch or "cpu")
        for row in rows:
            verdict, when = last.get(row[13], ("", None))
            summaries.append(CaseSummary(
                key=row[1], kernel=row[2], quant=row[3], shape=f"{row[4]}x{row[5]}x{row[6]}", tile=row[7],
                params=row[8] or {}, runs=row[9], launches=int(row[10] or 0), bad_launches=int(row[11] or 0),
                worst_wrong=int(row[12] or 0), last_verdict=verdict, last_recorded=when,
                arches=sorted(arches.get(row[0], set()))))
    return summaries


def case_runs(engine: Engine, key: str, *, limit: int = 50) -> list[RunLine]:
    """The runs of one case (key or key prefix), newest first: the table of the bug report."""
    query = (
        select(Run.id, Run.started_at, Run.status, Run.tag, Run.revision, Stack.gpu_arch, Result.launches,
               Result.bad_launches, Result.worst_wrong, Result.verdict, Result.kinds)
        .join(Result, Result.run_id == Run.id).join(Case, Case.id == Result.case_id)
        .outerjoin(Stack, Stack.id == Result.stack_id)
        .where(Case.key.like(f"{key}%")).order_by(Run.started_at.desc(), Result.id.desc()).limit(limit)
    )
    with engine.connect() as connection:
        return [RunLine(*row) for row in connection.execute(query).all()]


def runs(engine: Engine, *, limit: int = 20) -> list[tuple]:
    query = (select(Run.id, Run.started_at, Run.ended_at, Run.status, Run.tag, Run.revision, Run.dirty,
                    func.count(Result.id), func.coalesce(func.sum(Result.launches), 0),
                    func.coalesce(func.sum(Result.bad_launches), 0))
             .outerjoin(Result, Result.run_id == Run.id).group_by(Run.id).order_by(Run.id.desc()).limit(limit))
    with engine.connect() as connection:
        return connection.execute(query).all()


@dataclass
class ProcessHistory:
    """One process's launches of a case in one run."""

    run_id: int
    host: str | None
    pid: int | None
    launches: int
    bad_launches: int
    worst_wrong: int
    worst_tiles: int


@dataclass
class CaseHistory:
    """A case's stored launches on a compatible stack, as rows: judging/baseline.py builds a
    baseline from them."""

    processes: list[ProcessHistory]
    runs: int
    gpus: int  # distinct physical GPUs
    kinds: set[str]  # failure kinds seen
    stacks: list[tuple[str | None, str | None, str | None]]  # (gpu name, gpu arch, torch), distinct


def _not_this_run(token: str | None):
    """Results of other runs than the one whose token is ``token`` (all when None)."""
    if token is None:
        return None
    return or_(Run.token.is_(None), Run.token != token)


def case_history(engine: Engine, key: str, *, scope: str, gpu_arch: str | None, fingerprint: str | None,
                 exclude_token: str | None = None) -> CaseHistory:
    """A case's history on a compatible stack (``scope``: arch, stack or any), leaving out the
    run whose token is ``exclude_token`` and results that were themselves regressions."""
    from .models import Launch

    conditions = [Case.key == key, Result.verdict != "regression"]
    if exclude_token is not None:
        conditions.append(_not_this_run(exclude_token))
    if scope == "arch":
        conditions.append(Stack.gpu_arch == gpu_arch if gpu_arch else Stack.gpu_arch.is_(None))
    elif scope == "stack":
        conditions.append(Stack.fingerprint == fingerprint)

    def of_results(query):
        return (query.join(Case, Case.id == Result.case_id).join(Run, Run.id == Result.run_id)
                .outerjoin(Stack, Stack.id == Result.stack_id).where(and_(*conditions)))

    bad_flag = func.sum(func.cast(Launch.kinds != "", Integer_()))
    per_process = of_results(
        select(Result.run_id, Launch.host, Launch.pid, func.count(Launch.id), bad_flag,
               func.max(Launch.wrong), func.max(func.coalesce(Launch.wrong_tiles, 0)))
        .select_from(Launch).join(Result, Result.id == Launch.result_id)
    ).group_by(Result.run_id, Launch.host, Launch.pid)
    facts = of_results(
        select(func.count(func.distinct(Result.run_id)), func.count(func.distinct(Launch.device_uuid)))
        .select_from(Launch).join(Result, Result.id == Launch.result_id))
    kinds_query = of_results(select(Result.kinds).select_from(Result)).distinct()
    stacks_query = (select(Stack.gpu_name, Stack.gpu_arch, Stack.torch).join(Result, Result.stack_id == Stack.id)
                    .join(Case, Case.id == Result.case_id).join(Run, Run.id == Result.run_id)
                    .where(and_(*conditions)).distinct())
    with engine.connect() as connection:
        processes = [ProcessHistory(run_id, host, pid, int(launches), int(bad or 0), int(worst or 0), int(tiles or 0))
                     for run_id, host, pid, launches, bad, worst, tiles in connection.execute(per_process)]
        runs, gpus = connection.execute(facts).one()
        kinds = {kind for (text_,) in connection.execute(kinds_query) for kind in (text_ or "").split(",") if kind}
        stacks = [tuple(row) for row in connection.execute(stacks_query)]
    return CaseHistory(processes=processes, runs=int(runs or 0), gpus=int(gpus or 0), kinds=kinds, stacks=stacks)


def latest_static(engine: Engine, key: str, source: str, *, exclude_token: str | None = None,
                  look_back: int = 50) -> dict | None:
    """The case's most recent static record (metrics, lint) from the same source, leaving out
    the run whose token is ``exclude_token``."""
    query = (select(Result.static).join(Case, Case.id == Result.case_id).join(Run, Run.id == Result.run_id)
             .where(Case.key == key, Result.static.is_not(None)).order_by(Result.id.desc()).limit(look_back))
    if exclude_token is not None:
        query = query.where(_not_this_run(exclude_token))
    with engine.connect() as connection:
        for (static,) in connection.execute(query):
            if static and static.get("source") == source:
                return static
    return None
