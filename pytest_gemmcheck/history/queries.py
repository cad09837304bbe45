"""Read-only questions the verdicts ask of the history: a case's stored launches for its
baseline, and its last static record. (The dashboard's are in dashboard.py.)"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Integer as Integer_
from sqlalchemy import and_, func, or_, select
from sqlalchemy.engine import Engine

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
