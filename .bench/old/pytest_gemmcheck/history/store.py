"""Reads and writes of the history: runs, results and their launches, and the queries the
dashboard and the verdicts need.

Writes go in batches, each in one transaction: a result is stored with all its launches or
not at all, so a session killed at any moment leaves a consistent database. A batch that fails
is written again result by result (:meth:`HistoryStore.add_each`), so that one result the
database refuses never takes the others with it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import socket
import statistics
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.engine import Engine

from ..environment.stack import process_start_time, split
from ..records.result import CaseResult, CompiledResult
from .dead_runs import mark_dead_runs_interrupted
from .engine import on_fresh_connection, write_transaction
from .location import DatabaseError, one_line
from .schema import case_table, launch_table, result_table, run_table, stack_table, utcnow

BIGINT = range(-(2**63), 2**63)  # what a 64-bit column holds


class RowError(ValueError):
    """A value of one result that no column can hold; the message names it."""


def database_wide(exc: BaseException) -> bool:
    """Whether a failed write says that the database takes no write now (gone, locked, full,
    read-only, its schema changed), rather than that one result is wrong."""
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, (OperationalError, InterfaceError, DatabaseError))


def _fits(row: dict, table: str) -> dict:
    """The row as the database takes it: a NaN is stored as NULL (SQLite stores one as NULL
    anyway, and a column that refuses NULL would refuse the row), a count past 64 bits refused."""
    for column, value in row.items():
        if isinstance(value, int) and not isinstance(value, bool) and value not in BIGINT:
            raise RowError(f"{table}.{column} {value} does not fit a 64-bit column")
        if isinstance(value, float) and math.isnan(value):
            row[column] = None
    return row


def _ids_adding_missing(connection, table, rows: list[dict], unique: str) -> dict[str, int]:
    """The ids of ``rows`` by their ``unique`` value, the missing ones inserted: looked up first
    (a suite run again finds its cases stored: one statement a flush), then the rest inserted
    with ON CONFLICT DO NOTHING on the backends that have it (two sessions may add the same case
    at once; one row's id comes back from the insert itself), a plain insert elsewhere; the ids
    the insert did not give, looked up."""
    if not rows:
        return {}
    wanted = {row[unique] for row in rows}
    ids = _ids_by(connection, table, unique, wanted)
    missing = list({row[unique]: row for row in rows if row[unique] not in ids}.values())
    if not missing:
        return ids
    dialect = connection.dialect.name
    if dialect not in ("postgresql", "sqlite"):
        connection.execute(insert(table), missing)
    elif len(missing) > 1:  # RETURNING with many rows is an executemany SQLite answers row by row
        connection.execute(_ignoring_duplicates(dialect, table, unique, returning=False), missing)
    else:
        ids.update(connection.execute(_ignoring_duplicates(dialect, table, unique, returning=True), missing).all())
    if len(ids) < len(wanted):
        ids.update(_ids_by(connection, table, unique, wanted - ids.keys()))
    return ids


@functools.lru_cache(maxsize=16)
def _ignoring_duplicates(dialect: str, table, unique: str, returning: bool):
    """The dialect's INSERT ... ON CONFLICT DO NOTHING of ``table``, built once (a statement
    built for every flush cost more than it took to run)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as dialect_insert
    else:
        from sqlalchemy.dialects.sqlite import insert as dialect_insert
    statement = dialect_insert(table).on_conflict_do_nothing(index_elements=[unique])
    return statement.returning(table.c[unique], table.c.id) if returning else statement


@functools.lru_cache(maxsize=1)
def _result_statements():
    """What a flush runs every time, built once: the result's insert returning its id, the
    launches' insert, and the run's update (its heartbeat; its stack too the first time)."""
    run = run_table.c
    heartbeat = update(run_table).where(run.id == bindparam("run")).values(heartbeat_at=bindparam("beat"))
    return (
        insert(result_table).returning(result_table.c.id, sort_by_parameter_order=True),
        insert(launch_table),
        heartbeat,
        heartbeat.values(stack_id=func.coalesce(run.stack_id, bindparam("stack"))),
    )


def _ids_by(connection, table, unique: str, values: Iterable[str]) -> dict[str, int]:
    values = list(set(values))
    found: dict[str, int] = {}
    for start in range(0, len(values), 500):  # bounded IN lists
        found.update(connection.execute(_lookup(table, unique), {"values": values[start : start + 500]}).all())
    return found


@functools.lru_cache(maxsize=16)
def _lookup(table, unique: str):
    """SELECT unique, id WHERE unique IN (:values), built once: a case already stored (every
    flush of a suite run again) is looked up at each flush, and building the statement each
    time took longer than running it."""
    column = table.c[unique]
    return select(column, table.c.id).where(column.in_(bindparam("values", expanding=True)))


@dataclass
class RunInfo:
    tag: str | None = None
    revision: str | None = None
    dirty: bool | None = None
    command: str | None = None
    rootdir: str | None = None
    options: dict | None = None
    workers: int = 0
    version: str | None = None
    token: str | None = None
    # the recording process; None: this one (`gemmcheck db import` gives the session's own)
    host: str | None = None
    pid: int | None = None
    pid_start: str | None = None


class HistoryStore:
    def __init__(self, engine: Engine):
        self.engine = engine
        # stack rows by fingerprint, as written or read by this store: a session writes one
        # stack again and again (two statements a flush saved); forgotten when a write fails
        self._stack_id: dict[str, int] = {}
        self._run_stack: set[int] = set()  # runs whose stack this store set

    @contextlib.contextmanager
    def _writing(self):
        """write_transaction, forgetting what this store knows of the rows when it fails: a
        stack written in it was rolled back, a run's stack was not set."""
        try:
            with write_transaction(self.engine) as connection:
                yield connection
        except BaseException:
            self._stack_id.clear()
            self._run_stack.clear()
            raise

    # --- runs -------------------------------------------------------------------------
    @on_fresh_connection
    def begin_run(
        self, info: RunInfo, stack: dict | None = None, started_at: datetime | None = None, status: str = "running"
    ) -> int:
        mark_dead_runs_interrupted(self.engine)
        pid = os.getpid() if info.pid is None else info.pid
        with self._writing() as connection:
            stack_id = self._stack_ids(connection, [stack])[stack["fingerprint"]] if stack else None
            now = utcnow()
            return connection.execute(
                insert(run_table).returning(run_table.c.id),
                {
                    "stack_id": stack_id,
                    "status": status,
                    "started_at": started_at or now,
                    "heartbeat_at": now,
                    "tag": info.tag,
                    "revision": info.revision,
                    "dirty": info.dirty,
                    "command": info.command,
                    "rootdir": info.rootdir,
                    "options": info.options or {},
                    "host": info.host or socket.gethostname(),
                    "pid": pid,
                    "pid_start": info.pid_start if info.pid is not None else process_start_time(pid),
                    "workers": info.workers,
                    "version": info.version,
                    "token": info.token,
                },
            ).scalar_one()

    @on_fresh_connection
    def finish_run(self, run_id: int, status: str, exit_status: int | None, ended_at: datetime | None = None) -> None:
        with write_transaction(self.engine) as connection:
            connection.execute(
                update(run_table)
                .where(run_table.c.id == run_id)
                .values(status=status, exit_status=exit_status, ended_at=ended_at or utcnow(), heartbeat_at=utcnow())
            )

    @on_fresh_connection
    def run_of_token(self, token: str) -> tuple[int, str] | None:
        """(id, status) of the run whose token is ``token``, if it was written."""
        with self.engine.connect() as connection:
            row = connection.execute(
                select(run_table.c["id", "status"]).where(run_table.c.token == token).order_by(run_table.c.id)
            ).first()
        return tuple(row) if row else None

    def probe_write(self) -> None:
        """A row in every table, in a transaction that is rolled back: a database this session
        cannot write (a read-only file or folder, a read-only server or role, a full disk) fails
        here, before any launch, rather than at the first result. The rows take id -1, which no
        row has, so that no id sequence moves."""
        probe, now = -1, utcnow()
        with self.engine.connect() as connection:
            connection = connection.execution_options(gemmcheck_write=True)
            transaction = connection.begin()
            try:
                connection.execute(
                    insert(stack_table), {"id": probe, "fingerprint": "0" * 32, "extra": {}, "created_at": now}
                )
                connection.execute(
                    insert(run_table),
                    {"id": probe, "status": "running", "started_at": now, "options": {}, "workers": 0},
                )
                connection.execute(
                    insert(case_table),
                    {
                        "id": probe,
                        "key": "0" * 32,
                        "kernel": "",
                        "m": 1,
                        "n": 1,
                        "k": 1,
                        "quant": "",
                        "out_dtype": "",
                        "params": {},
                    },
                )
                connection.execute(
                    insert(result_table),
                    {
                        "id": probe,
                        "run_id": probe,
                        "case_id": probe,
                        "stack_id": probe,
                        "seed": 0,
                        "deterministic": True,
                        "rtol": 0.0,
                        "floor": 0.0,
                        "launches": 0,
                        "bad_launches": 0,
                        "worst_wrong": 0,
                        "total_wrong": 0,
                        "verdict": "",
                        "recorded_at": now,
                    },
                )
                connection.execute(insert(launch_table), {"id": probe, "result_id": probe, "launch_index": 1})
            finally:
                transaction.rollback()

    # --- results ------------------------------------------------------------------------
    @on_fresh_connection
    def add_results(self, run_id: int, results: list[CaseResult], uids: list[str] | None = None) -> None:
        """Store results with their launches (and each its uid), all in one transaction."""
        if not results:
            return
        uids = uids or [None] * len(results)
        with self._writing() as connection:
            self._add_results(connection, run_id, results, uids)

    def _add_results(self, connection, run_id: int, results: list[CaseResult], uids: list) -> None:
        stacks = self._stack_ids(connection, [r.stack for r in results if r.stack])
        case_ids = _ids_adding_missing(connection, case_table, [_case_row(r) for r in results], "key")
        result_rows = [
            _result_row(run_id, case_ids[r.key], stacks.get((r.stack or {}).get("fingerprint")), r, uid)
            for r, uid in zip(results, uids)
        ]
        insert_results, insert_launches, heartbeat, heartbeat_and_stack = _result_statements()
        result_ids = connection.scalars(insert_results, result_rows).all()
        launch_rows = [
            _launch_row(result_id, launch)
            for result_id, result in zip(result_ids, results)
            for launch in result.launches
        ]
        for start in range(0, len(launch_rows), 5000):
            connection.execute(insert_launches, launch_rows[start : start + 5000])
        values = {"run": run_id, "beat": utcnow()}
        first_stack = next((stacks[r.stack["fingerprint"]] for r in results if r.stack), None)
        if first_stack is not None and run_id not in self._run_stack:
            # an xdist controller has no GPU: the workers' stack is the run's, set by the first
            connection.execute(heartbeat_and_stack, {**values, "stack": first_stack})
            self._run_stack.add(run_id)
        else:
            connection.execute(heartbeat, values)

    def add_each(self, run_id: int, results: list[tuple[str, CaseResult]]) -> dict[str, str]:
        """Store (uid, result) pairs: in one transaction, else (that failing) one result per
        transaction, until the database refuses writes altogether; the uids not stored, each
        with why in one line."""
        if not results:
            return {}
        try:
            self.add_results(run_id, [result for _, result in results], [uid for uid, _ in results])
            return {}
        except Exception as exc:  # which result (or the database as a whole) it was is found below
            if database_wide(exc) or len(results) == 1:
                return {uid: one_line(exc) for uid, _ in results}
        failed = {}
        for position, (uid, result) in enumerate(results):
            try:
                self.add_results(run_id, [result], [uid])
            except Exception as exc:  # this result is refused: it goes to the fallback file with why
                failed[uid] = one_line(exc)
                if database_wide(exc):
                    failed.update({later: failed[uid] for later, _ in results[position + 1 :]})
                    break
        return failed

    @on_fresh_connection
    def stored_uids(self, uids: list[str]) -> set[str]:
        """Those of ``uids`` whose result is in the database."""
        with self.engine.connect() as connection:
            return set(_ids_by(connection, result_table, "uid", uids))

    def _stack_ids(self, connection, stacks: list[dict]) -> dict[str, int]:
        unique = {s["fingerprint"]: s for s in stacks if s}
        rows = []
        for fingerprint, info in unique.items():
            if fingerprint not in self._stack_id:
                columns, extra = split(info)
                rows.append({"fingerprint": fingerprint, **columns, "extra": extra, "created_at": utcnow()})
        self._stack_id.update(_ids_adding_missing(connection, stack_table, rows, "fingerprint"))
        return {fingerprint: self._stack_id[fingerprint] for fingerprint in unique}

    # --- reads --------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        with self.engine.connect() as connection:
            return {
                table.name: connection.scalar(select(func.count()).select_from(table))
                for table in (stack_table, run_table, case_table, result_table, launch_table)
            }


def _case_row(result: CaseResult) -> dict:
    return _fits(
        {
            "key": result.key,
            "kernel": result.kernel,
            "m": result.m,
            "n": result.n,
            "k": result.k,
            "quant": result.quant,
            "tile": result.tile,
            "out_dtype": result.out_dtype,
            "fp8": result.fp8,
            "params": result.params,
            "collective": result.collective or None,
            "world_size": result.world_size if result.collective else None,
        },
        "case",
    )


def _per_rank(result: CaseResult) -> list[dict] | None:
    """A collective result's ranks, in rank order: each one's launches, bad launches and GPU
    (``device``, ``device_uuid``: its first launch that names one); None outside a collective case."""
    if not result.collective:
        return None
    ranks: dict[int, dict] = {}
    for launch in result.launches:
        if launch.rank is None:
            continue
        entry = ranks.setdefault(
            launch.rank, {"rank": launch.rank, "launches": 0, "bad_launches": 0, "device": None, "device_uuid": None}
        )
        entry["launches"] += 1
        entry["bad_launches"] += int(launch.bad)
        if entry["device"] is None and launch.device:
            entry["device"], entry["device_uuid"] = launch.device, launch.device_uuid or None
    return [ranks[rank] for rank in sorted(ranks)]


def _result_row(run_id: int, case_id: int, stack_id: int | None, result: CaseResult, uid: str | None) -> dict:
    elapsed = result.elapsed
    return _fits(
        {
            "run_id": run_id,
            "case_id": case_id,
            "stack_id": stack_id,
            "nodeid": result.nodeid,
            "seed": result.seed,
            "device": result.device,
            "deterministic": result.deterministic,
            "rtol": result.rtol,
            "floor": result.floor,
            "launches": len(result.launches),
            "bad_launches": len(result.bad_launches),
            "worst_wrong": result.worst_wrong,
            "total_wrong": result.total_wrong,
            "kinds": ",".join(result.kinds),
            "consensus_size": result.consensus_size,
            "verdict": result.verdict,
            "baseline_source": (result.baseline or {}).get("source"),
            "message": result.message or None,
            "stress": result.stress or None,
            "check_backend": result.check_backend or None,
            "static": (result.static or None) if isinstance(result, CompiledResult) else None,
            "elapsed_min_s": min(elapsed) if elapsed else None,
            "elapsed_median_s": statistics.median(elapsed) if elapsed else None,
            "contended": result.contended,
            "contention": result.contention or None,
            "worst_tiles": result.worst_tiles or None,
            "sanitize": [run.to_dict() for run in result.sanitize] or None,
            "hazards": sum(run.errors + run.unshown_errors for run in result.hazards) if result.sanitize else None,
            "worst_differing": result.worst_differing,
            "per_rank": _per_rank(result),
            "recorded_at": utcnow(),
            "uid": uid,
        },
        "result",
    )


def _launch_row(result_id: int, launch) -> dict:
    return _fits(
        {
            "result_id": result_id,
            "launch_index": launch.index,
            "kinds": ",".join(launch.kinds),
            "wrong": launch.wrong,
            "nonfinite": launch.nonfinite,
            "differing": launch.differing,
            "max_abs_err": launch.max_abs_err,
            "max_rel_err": launch.max_rel_err,
            "rel_l2": launch.rel_l2,
            "wrong_rows": launch.wrong_rows,
            "wrong_tiles": launch.wrong_tiles,
            "differing_rows": launch.differing_rows,
            "differing_tiles": launch.differing_tiles,
            "max_diff_rel": launch.max_diff_rel,
            "elapsed_s": launch.elapsed_s,
            "poisoned": launch.poisoned,
            "error": launch.error,
            "pid": launch.pid,
            "device": launch.device,
            "host": launch.host or None,
            "device_uuid": launch.device_uuid or None,
            "rank": launch.rank,
        },
        "launch",
    )
