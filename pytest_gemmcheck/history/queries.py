"""Read-only questions the verdicts ask of the history: a case's stored launches for its
baseline, and its last static record. (The dashboard's are in dashboard.py.)"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Integer as Integer_
from sqlalchemy import and_, func, or_, select
from sqlalchemy.engine import Engine

from .engine import on_fresh_connection
from .models import Case, Result, Run, Stack


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


@on_fresh_connection
def case_history(engine: Engine, key: str, *, scope: str, gpu_arch: str | None, fingerprint: str | None,
                 exclude_token: str | None = None, runs: list[int] | None = None,
                 regressions: bool = False) -> CaseHistory:
    """A case's history on a compatible stack (``scope``: arch, stack or any), leaving out the
    run whose token is ``exclude_token`` and, unless ``regressions``, results that were
    themselves regressions; only the runs ``runs`` when given."""
    from .models import Launch

    conditions = [Case.key == key]
    if not regressions:
        conditions.append(Result.verdict != "regression")
    if runs is not None:
        conditions.append(Result.run_id.in_(runs))
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


@on_fresh_connection
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


@dataclass
class KernelLaunches:
    """A kernel's recorded launches for ``gemmcheck explain``: per result, process and physical
    GPU, the counts; and the results, stacks and cases they refer to."""

    groups: list[tuple[int, str | None, int | None, str | None, int, int]]  # result, host, pid, uuid, launches, bad
    results: dict[int, dict]  # id -> run_id, case_id, stack_id, stress, launches, bad_launches
    stacks: dict[int, dict]  # id -> the stack's columns and extra
    cases: dict[int, dict]  # id -> key, quant, tile, m, n, k, params


@on_fresh_connection
def kernel_launches(engine: Engine, kernel: str) -> KernelLaunches:
    """Every recorded launch of ``kernel``'s cases, grouped by result, host, pid and GPU UUID."""
    from .models import Launch

    bad_flag = func.sum(func.cast(Launch.kinds != "", Integer_()))
    with engine.connect() as connection:
        cases = {row.id: {"key": row.key, "quant": row.quant, "tile": row.tile, "m": row.m, "n": row.n, "k": row.k,
                          "params": row.params or {}}
                 for row in connection.execute(select(Case.id, Case.key, Case.quant, Case.tile, Case.m, Case.n, Case.k,
                                                      Case.params).where(Case.kernel == kernel))}
        if not cases:
            return KernelLaunches([], {}, {}, {})
        ids = sorted(cases)
        results: dict[int, dict] = {}
        groups = []
        for start in range(0, len(ids), 500):  # bounded IN lists
            chunk = ids[start:start + 500]
            for row in connection.execute(select(Result.id, Result.run_id, Result.case_id, Result.stack_id,
                                                 Result.stress, Result.launches, Result.bad_launches)
                                          .where(Result.case_id.in_(chunk))):
                results[row.id] = {"run_id": row.run_id, "case_id": row.case_id, "stack_id": row.stack_id,
                                   "stress": row.stress, "launches": int(row.launches or 0),
                                   "bad_launches": int(row.bad_launches or 0)}
            query = (select(Launch.result_id, Launch.host, Launch.pid, Launch.device_uuid, func.count(Launch.id),
                            bad_flag)
                     .join(Result, Result.id == Launch.result_id).where(Result.case_id.in_(chunk))
                     .group_by(Launch.result_id, Launch.host, Launch.pid, Launch.device_uuid))
            groups += [(result_id, host, pid, uuid, int(count), int(bad or 0))
                       for result_id, host, pid, uuid, count, bad in connection.execute(query)]
        stack_ids = sorted({r["stack_id"] for r in results.values() if r["stack_id"] is not None})
        columns = [Stack.host, Stack.os, Stack.python, Stack.torch, Stack.cuda, Stack.hip, Stack.gpu_name,
                   Stack.gpu_arch, Stack.driver, Stack.triton, Stack.flydsl]
        stacks = {}
        for start in range(0, len(stack_ids), 500):
            for row in connection.execute(select(Stack.id, Stack.extra, *columns)
                                          .where(Stack.id.in_(stack_ids[start:start + 500]))):
                stacks[row.id] = {**{column.key: getattr(row, column.key) for column in columns},
                                  "extra": row.extra or {}}
    return KernelLaunches(groups=groups, results=results, stacks=stacks, cases=cases)
