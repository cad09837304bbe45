"""Load on the history: does every launch row arrive exactly once, with no lock error?

    python -m benchmarks.soak [--workers 4] [--cases 200] [--launches 20] [--sessions 4]
                              [--pg URL | --no-pg]

1. One pytest-xdist session (``-n WORKERS``; default 8, or 4 on a machine of fewer than 8
   cores) over CASES cases of LAUNCHES launches each, on SQLite and on PostgreSQL (a fresh
   database of its own on the server at ``--pg``, dropped afterwards): results, launch rows,
   launch rows stored twice or missing, runs not complete, and lock errors in the output.
2. SESSIONS sessions at once on one SQLite file while ``gemmcheck history`` polls it: the same
   counts over all of them, and the polls (how many, how many failed, the slowest).

Not a test: it prints what it found, and ends with exit status 1 when anything was lost,
doubled or locked.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from pathlib import Path

from gemmcheck_dev.results import print_header

ROOT = Path(__file__).resolve().parent.parent
PG_DEFAULT = os.environ.get("GEMMCHECK_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
LOCK_WORDS = ("database is locked", "deadlock", "could not obtain lock", "lock timeout")

SUITE = """
import pytest
from kernels import bf16_matmul

@pytest.mark.parametrize("i", range({cases}))
def test_soak(gemmcheck, i):
    case = gemmcheck.case("soak", m=16 * (1 + i % 4), n=16, k=32, params={{"i": i}})
    x = case.inputs()
    case.run(lambda out: bf16_matmul(x, out))
"""


def suite_folder(cases: int) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="gemmcheck-soak-"))
    shutil.copy(ROOT / "examples" / "cpu" / "kernels.py", folder / "kernels.py")
    (folder / "test_soak.py").write_text(textwrap.dedent(SUITE.format(cases=cases)))
    return folder


def session(folder: Path, url: str, launches: int, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--gemmcheck-db={url}",
            f"--gemmcheck-repeat={launches}",
            *args,
        ],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def lock_errors(output: str) -> int:
    lowered = output.lower()
    return sum(lowered.count(words) for words in LOCK_WORDS)


def check(url: str, runs: int, cases: int, launches: int) -> dict:
    """What the database holds, against what the sessions ran."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as connection:

        def scalar(sql: str) -> int:
            return int(connection.execute(text(sql)).scalar() or 0)

        found = {
            "runs": scalar("SELECT count(*) FROM run"),
            "not complete": scalar("SELECT count(*) FROM run WHERE status <> 'complete'"),
            "results": scalar("SELECT count(*) FROM result"),
            "launch rows": scalar("SELECT count(*) FROM launch"),
            "doubled": scalar(
                "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM launch "
                "GROUP BY result_id, launch_index) AS per_launch"
            ),
            "short results": scalar(
                "SELECT count(*) FROM (SELECT r.id FROM result r LEFT JOIN launch l "
                "ON l.result_id = r.id GROUP BY r.id, r.launches "
                "HAVING count(l.id) <> r.launches) AS short"
            ),
        }
    engine.dispose()
    found["missing"] = runs * cases * launches - found["launch rows"] + found["doubled"]
    found["expected launch rows"] = runs * cases * launches
    return found


def one_session(name: str, url: str, folder: Path, workers: int, cases: int, launches: int) -> dict:
    started = time.perf_counter()
    process = session(folder, url, launches, "-n", str(workers))
    output = process.communicate()[0]
    found = check(url, 1, cases, launches)
    found.update(
        backend=name, exit=process.returncode, lock_errors=lock_errors(output), wall_s=time.perf_counter() - started
    )
    return found


def concurrent_sessions(folder: Path, sessions: int, cases: int, launches: int) -> dict:
    db = folder / "shared.db"
    url = f"sqlite:///{db}"
    subprocess.run(
        [sys.executable, "-m", "pytest_gemmcheck", "--db", str(db), "db", "upgrade"], check=True, capture_output=True
    )
    polls, failed, slowest = 0, 0, 0.0
    stop = threading.Event()

    def poll():
        nonlocal polls, failed, slowest
        while not stop.is_set():
            moment = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "pytest_gemmcheck", "--db", str(db), "history", "--json"],
                capture_output=True,
                text=True,
            )
            slowest = max(slowest, time.perf_counter() - moment)
            polls += 1
            failed += done.returncode != 0 or bool(lock_errors(done.stderr))

    started = time.perf_counter()
    poller = threading.Thread(target=poll)
    poller.start()
    processes = [session(folder, url, launches, f"--gemmcheck-tag=soak-{i}") for i in range(sessions)]
    outputs = [process.communicate()[0] for process in processes]
    stop.set()
    poller.join()
    found = check(url, sessions, cases, launches)
    found.update(
        exit=max(process.returncode for process in processes),
        lock_errors=sum(lock_errors(output) for output in outputs),
        polls=polls,
        failed_polls=failed,
        slowest_poll_s=slowest,
        wall_s=time.perf_counter() - started,
    )
    return found


def fresh_pg_database(admin_url: str):
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"gemmcheck_soak_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))

    def drop():
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return make_url(admin_url).set(database=name).render_as_string(hide_password=False), drop


def bad(found: dict) -> bool:
    return bool(
        found["exit"]
        or found["lock_errors"]
        or found["missing"]
        or found["doubled"]
        or found["short results"]
        or found["not complete"]
        or found.get("failed_polls")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8 if (os.cpu_count() or 1) >= 8 else 4)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--launches", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--pg", default=PG_DEFAULT, help=f"PostgreSQL server URL (default {PG_DEFAULT})")
    parser.add_argument("--no-pg", action="store_true", help="SQLite only")
    args = parser.parse_args()
    print_header("benchmarks.soak")

    folder = suite_folder(args.cases)
    findings = []
    try:
        findings.append(
            one_session("sqlite", f"sqlite:///{folder / 'xdist.db'}", folder, args.workers, args.cases, args.launches)
        )
        if not args.no_pg:
            url, drop = fresh_pg_database(args.pg)
            try:
                findings.append(one_session("postgresql", url, folder, args.workers, args.cases, args.launches))
            finally:
                drop()
        print(f"one session, -n {args.workers}, {args.cases} cases x {args.launches} launches:")
        for found in findings:
            print(
                f"  {found['backend']:<10} exit {found['exit']}, results {found['results']}/{args.cases}, "
                f"launch rows {found['launch rows']}/{found['expected launch rows']} "
                f"(doubled {found['doubled']}, missing {found['missing']}, short results {found['short results']}), "
                f"runs not complete {found['not complete']}, lock errors {found['lock_errors']}, "
                f"{found['wall_s']:.1f} s"
            )
        shared = concurrent_sessions(folder, args.sessions, args.cases, args.launches)
        findings.append(shared)
        print(
            f"{args.sessions} sessions at once on one SQLite file, {args.cases} cases x {args.launches} launches "
            f"each, `gemmcheck history` polling:"
        )
        print(
            f"  exit {shared['exit']}, results {shared['results']}/{args.sessions * args.cases}, launch rows "
            f"{shared['launch rows']}/{shared['expected launch rows']} (doubled {shared['doubled']}, missing "
            f"{shared['missing']}, short results {shared['short results']}), runs not complete "
            f"{shared['not complete']}, lock errors {shared['lock_errors']}; polls {shared['polls']} "
            f"({shared['failed_polls']} failed, slowest {shared['slowest_poll_s']:.2f} s), {shared['wall_s']:.1f} s"
        )
    finally:
        shutil.rmtree(folder)
    failed = [found.get("backend", "concurrent") for found in findings if bad(found)]
    print("lost, doubled or locked: " + (", ".join(failed) if failed else "nothing"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
