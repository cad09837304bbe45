"""Runs left 'running' by a process that is gone (killed, crashed, power lost) become
'interrupted': on this host by checking the process, elsewhere when they have not written for
:data:`STALE_AFTER`. Every session does this as it begins a run, and every ``gemmcheck``
command before it reads, so that no dead run shows as still running. It needs no more than
SQLAlchemy Core: a command reading the history pays for nothing else."""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta, timezone

from sqlalchemy import select, update
from sqlalchemy.engine import Engine

from ..environment.stack import process_alive, process_start_time
from .engine import on_fresh_connection, write_transaction
from .schema import run_table, utcnow

STALE_AFTER = timedelta(hours=6)


@on_fresh_connection
def mark_dead_runs_interrupted(engine: Engine) -> int:
    """The number of runs found dead and marked interrupted (their end: their last write)."""
    host = socket.gethostname()
    now = utcnow()
    runs = run_table.c
    with engine.connect() as connection:
        running = connection.execute(
            select(runs.id, runs.host, runs.pid, runs.pid_start, runs.heartbeat_at).where(runs.status == "running")
        ).all()
    dead = []
    for run_id, run_host, pid, pid_start, heartbeat in running:
        if run_host == host and pid is not None:
            if pid == os.getpid() and pid_start == process_start_time(pid):
                continue
            if not process_alive(pid, pid_start):
                dead.append(run_id)
        elif heartbeat is not None and now - _aware(heartbeat) > STALE_AFTER:
            dead.append(run_id)
    if dead:
        with write_transaction(engine) as connection:
            connection.execute(
                update(run_table)
                .where(runs.id.in_(dead), runs.status == "running")
                .values(status="interrupted", ended_at=runs.heartbeat_at)
            )
    return len(dead)


def _aware(moment: datetime) -> datetime:
    # SQLite hands datetimes back naive; they were written in UTC
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
