"""Runs left 'running' by a process that is gone become 'interrupted', and those of a live
process stay running: on this host by the process, elsewhere by the run's last write."""

import os
import socket
import subprocess
import sys
from datetime import timedelta

from sqlalchemy import create_engine, insert, select

from pytest_gemmcheck.cli import main as gemmcheck_cli
from pytest_gemmcheck.history.dead_runs import STALE_AFTER, mark_dead_runs_interrupted
from pytest_gemmcheck.history.schema import run_table, utcnow


def _ended_process() -> tuple[int, str]:
    """The pid and start time of a process that has ended."""
    from pytest_gemmcheck.environment.stack import process_start_time

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    started = process_start_time(child.pid)
    child.kill()
    child.wait()
    return child.pid, started


def _run(engine, status: str = "running", heartbeat_at=None, **values) -> int:
    """A run row as a session writes it (written directly: beginning a run through the store
    would mark the dead ones first)."""
    now = utcnow()
    with engine.begin() as connection:
        return connection.execute(
            insert(run_table).returning(run_table.c.id),
            {"status": status, "started_at": now, "heartbeat_at": heartbeat_at or now, **values},
        ).scalar_one()


def _statuses(engine) -> dict[int, tuple[str, object]]:
    with engine.connect() as connection:
        rows = connection.execute(select(run_table.c.id, run_table.c.status, run_table.c.ended_at))
        return {run_id: (status, ended) for run_id, status, ended in rows}


def test_only_the_runs_whose_process_is_gone_become_interrupted(db_url):
    engine = create_engine(db_url)
    from pytest_gemmcheck.environment.stack import process_start_time

    here = socket.gethostname()
    pid, started = _ended_process()
    own = {"host": here, "pid": os.getpid(), "pid_start": process_start_time(os.getpid())}
    alive = _run(engine, **own)
    dead = _run(engine, host=here, pid=pid, pid_start=started)
    away = _run(engine, host="another-host", pid=1, pid_start="1")
    stale = _run(
        engine, host="another-host", pid=2, pid_start="1", heartbeat_at=utcnow() - STALE_AFTER - timedelta(minutes=1)
    )
    finished = _run(engine, status="complete", host=here, pid=pid, pid_start=started)

    assert mark_dead_runs_interrupted(engine) == 2
    statuses = _statuses(engine)
    assert {run_id: status for run_id, (status, _) in statuses.items()} == {
        alive: "running",
        dead: "interrupted",
        away: "running",
        stale: "interrupted",
        finished: "complete",
    }
    assert statuses[dead][1] is not None and statuses[stale][1] is not None  # ended at their last write
    assert mark_dead_runs_interrupted(engine) == 0  # once
    engine.dispose()


def test_a_read_command_shows_a_dead_run_as_interrupted(db_url, capsys):
    engine = create_engine(db_url)
    pid, started = _ended_process()
    run_id = _run(engine, tag="gone", host=socket.gethostname(), pid=pid, pid_start=started)
    engine.dispose()
    capsys.readouterr()
    assert gemmcheck_cli(["--db", db_url, "runs", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith(f"{run_id},"))
    assert ",interrupted," in row
