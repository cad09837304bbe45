"""Read-only questions the verdicts ask of the history: a case's stored launches for its
baseline, and its last static record. (The dashboard's are in dashboard.py.)"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sqlalchemy import Integer as Integer_
from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.engine import Engine

from .engine import on_fresh_connection
from .schema import case_table, launch_table, result_table, results_joined, run_table, stack_table


@dataclass
class ProcessHistory:
    """One process's launches of a case in one run (in a collective case, one rank's)."""

    run_id: int
    host: str | None
    pid: int | None
    launches: int
    bad_launches: int
    worst_wrong: int
    worst_tiles: int
    rank: int | None = None


@dataclass
class CaseHistory:
    """A case's stored launches on a compatible stack, as rows: judging/baseline.py builds a
    baseline from them."""

    processes: list[ProcessHistory]
    runs: int
    gpus: int  # distinct physical GPUs
    kinds: set[str]  # failure kinds seen
    stacks: list[tuple[str | None, str | None, str | None]]  # (gpu name, gpu arch, torch), distinct
    ranks: int = 0  # distinct ranks of a collective case's launches; 0 outside one


def _not_this_run(token):
    """Results of other runs than the one whose token is ``token`` (a value or a bound
    parameter; all when None)."""
    if token is None:
        return None
    return or_(run_table.c.token.is_(None), run_table.c.token != token)


@functools.lru_cache(maxsize=64)
def _history_statements(scope: str, regressions: bool, runs: bool, token: bool, gpu_arch: bool):
    """case_history's two statements for one kind of question, its values bound by name (key,
    runs, token, gpu_arch, fingerprint)."""
    conditions = [case_table.c.key == bindparam("key")]
    if not regressions:
        conditions.append(result_table.c.verdict != "regression")
    if runs:
        conditions.append(result_table.c.run_id.in_(bindparam("runs", expanding=True)))
    if token:
        conditions.append(_not_this_run(bindparam("token")))
    if scope == "arch":
        conditions.append(
            stack_table.c.gpu_arch == bindparam("gpu_arch") if gpu_arch else stack_table.c.gpu_arch.is_(None)
        )
    elif scope == "stack":
        conditions.append(stack_table.c.fingerprint == bindparam("fingerprint"))

    def of_results(query, *, launches: bool = True):
        return query.select_from(results_joined(case_table, run_table, stack_table, launches=launches)).where(
            *conditions
        )

    bad_flag = func.sum(func.cast(launch_table.c.kinds != "", Integer_()))
    # per process and GPU: the processes, and the distinct runs, GPUs and ranks, from one query
    per_device = of_results(
        select(
            result_table.c.run_id,
            launch_table.c.host,
            launch_table.c.pid,
            launch_table.c.rank,
            launch_table.c.device_uuid,
            func.count(launch_table.c.id),
            bad_flag,
            func.max(launch_table.c.wrong),
            func.max(func.coalesce(launch_table.c.wrong_tiles, 0)),
        )
    ).group_by(
        result_table.c.run_id, launch_table.c.host, launch_table.c.pid, launch_table.c.rank, launch_table.c.device_uuid
    )
    # the failure kinds of its results, and their stacks (the kinds of results without launches too)
    kinds_and_stacks = of_results(
        select(
            result_table.c.kinds, result_table.c.stack_id.is_not(None), *stack_table.c["gpu_name", "gpu_arch", "torch"]
        ),
        launches=False,
    ).distinct()
    return per_device, kinds_and_stacks


@on_fresh_connection
def case_history(
    engine: Engine,
    key: str,
    *,
    scope: str,
    gpu_arch: str | None,
    fingerprint: str | None,
    exclude_token: str | None = None,
    runs: list[int] | None = None,
    regressions: bool = False,
) -> CaseHistory:
    """A case's history on a compatible stack (``scope``: arch, stack or any), leaving out the
    run whose token is ``exclude_token`` and, unless ``regressions``, results that were
    themselves regressions; only the runs ``runs`` when given. Two queries, one when it has no
    launch, each built once per kind of question (a suite of new shapes asks this of every
    case: built anew each time, the statements alone took 0.55 ms of a case on one core here)."""
    per_device, kinds_and_stacks = _history_statements(
        scope, regressions, runs is not None, exclude_token is not None, bool(gpu_arch)
    )
    values = {"key": key, "runs": runs, "token": exclude_token, "gpu_arch": gpu_arch, "fingerprint": fingerprint}
    with engine.connect() as connection:
        rows = connection.execute(per_device, values).all()
        found = connection.execute(kinds_and_stacks, values).all() if rows else []
    processes: dict[tuple, ProcessHistory] = {}
    for run_id, host, pid, rank, _, launches, bad, worst, tiles in rows:
        process = processes.get((run_id, host, pid, rank))
        if process is None:
            processes[run_id, host, pid, rank] = ProcessHistory(
                run_id, host, pid, int(launches), int(bad or 0), int(worst or 0), int(tiles or 0), rank
            )
        else:  # the same process on another GPU
            process.launches += int(launches)
            process.bad_launches += int(bad or 0)
            process.worst_wrong = max(process.worst_wrong, int(worst or 0))
            process.worst_tiles = max(process.worst_tiles, int(tiles or 0))
    return CaseHistory(
        processes=list(processes.values()),
        runs=len({row[0] for row in rows}),
        gpus=len({row[4] for row in rows if row[4] is not None}),
        kinds={kind for row in found for kind in (row[0] or "").split(",") if kind},
        stacks=sorted({tuple(row[2:]) for row in found if row[1]}, key=repr),
        ranks=len({row[3] for row in rows if row[3] is not None}),
    )


@on_fresh_connection
def latest_static(
    engine: Engine, key: str, source: str, *, exclude_token: str | None = None, look_back: int = 50
) -> dict | None:
    """The case's most recent static record (metrics, lint) from the same source, leaving out
    the run whose token is ``exclude_token``."""
    query = (
        select(result_table.c.static)
        .select_from(results_joined(case_table, run_table))
        .where(case_table.c.key == key, result_table.c.static.is_not(None))
        .order_by(result_table.c.id.desc())
        .limit(look_back)
    )
    if exclude_token is not None:
        query = query.where(_not_this_run(exclude_token))
    with engine.connect() as connection:
        for (static,) in connection.execute(query):
            if static and static.get("source") == source:
                return static
    return None


@dataclass
class KernelLaunches:
    """A kernel's recorded launches for ``gemmcheck explain``: per result, process, physical GPU
    and rank, the counts; and the results, stacks and cases they refer to."""

    # result, host, pid, uuid, rank (None outside a collective case), launches, bad
    groups: list[tuple[int, str | None, int | None, str | None, int | None, int, int]]
    results: dict[int, dict]  # id -> run_id, case_id, stack_id, stress, launches, bad_launches
    stacks: dict[int, dict]  # id -> the stack's columns and extra
    cases: dict[int, dict]  # id -> key, quant, tile, m, n, k, params


@on_fresh_connection
def kernel_launches(engine: Engine, kernel: str) -> KernelLaunches:
    """Every recorded launch of ``kernel``'s cases, grouped by result, host, pid, GPU UUID and rank."""
    bad_flag = func.sum(func.cast(launch_table.c.kinds != "", Integer_()))
    with engine.connect() as connection:
        cases = {
            row.id: {
                "key": row.key,
                "quant": row.quant,
                "tile": row.tile,
                "m": row.m,
                "n": row.n,
                "k": row.k,
                "params": row.params or {},
            }
            for row in connection.execute(
                select(case_table.c["id", "key", "quant", "tile", "m", "n", "k", "params"]).where(
                    case_table.c.kernel == kernel
                )
            )
        }
        if not cases:
            return KernelLaunches([], {}, {}, {})
        ids = sorted(cases)
        results: dict[int, dict] = {}
        groups = []
        for start in range(0, len(ids), 500):  # bounded IN lists
            chunk = ids[start : start + 500]
            columns = result_table.c["id", "run_id", "case_id", "stack_id", "stress", "launches", "bad_launches"]
            for row in connection.execute(select(columns).where(result_table.c.case_id.in_(chunk))):
                results[row.id] = {
                    "run_id": row.run_id,
                    "case_id": row.case_id,
                    "stack_id": row.stack_id,
                    "stress": row.stress,
                    "launches": int(row.launches or 0),
                    "bad_launches": int(row.bad_launches or 0),
                }
            group = launch_table.c["result_id", "host", "pid", "device_uuid", "rank"]
            query = (
                select(*group, func.count(launch_table.c.id), bad_flag)
                .select_from(results_joined(launches=True))
                .where(result_table.c.case_id.in_(chunk))
                .group_by(*group)
            )
            groups += [
                (result_id, host, pid, uuid, rank, int(count), int(bad or 0))
                for result_id, host, pid, uuid, rank, count, bad in connection.execute(query)
            ]
        stack_ids = sorted({r["stack_id"] for r in results.values() if r["stack_id"] is not None})
        columns = list(
            stack_table.c[
                "host", "os", "python", "torch", "cuda", "hip", "gpu_name", "gpu_arch", "driver", "triton", "flydsl"
            ]
        )
        stacks = {}
        for start in range(0, len(stack_ids), 500):
            for row in connection.execute(
                select(stack_table.c.id, stack_table.c.extra, *columns).where(
                    stack_table.c.id.in_(stack_ids[start : start + 500])
                )
            ):
                stacks[row.id] = {
                    **{column.key: getattr(row, column.key) for column in columns},
                    "extra": row.extra or {},
                }
    return KernelLaunches(groups=groups, results=results, stacks=stacks, cases=cases)
