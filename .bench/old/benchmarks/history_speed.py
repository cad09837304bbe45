"""How fast the history is: recording, querying, and what recording costs a session.

    python -m benchmarks.history_speed [--pg URL] [--launches 100000] [--query-launches 1000000]

Prints, measured in this one run:
  1. launches recorded per second, through the recorder's own write path (batches of 64
     results, one transaction each), into SQLite and into PostgreSQL (when reachable);
  2. the time of a per-case history query (the baseline lookup of a verdict, and the
     dashboard's history of one kernel, `gemmcheck history --kernel`) over a table of 1M launch rows;
  3. the record overhead: a pytest session's wall time with recording against the same session
     with --gemmcheck-no-record, alternating, min of 3 each, as a ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from gemmcheck_dev.results import print_header
from pytest_gemmcheck.history.engine import create, upgrade
from pytest_gemmcheck.history.queries import case_history
from pytest_gemmcheck.history.recorder import BATCH_RESULTS
from pytest_gemmcheck.history.selection import Selection
from pytest_gemmcheck.history.store import HistoryStore, RunInfo
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.reporting.history_table import history_table

ROOT = Path(__file__).resolve().parent.parent

STACK = {"fingerprint": "bench0000", "host": "bench", "gpu_arch": "sm_90", "gpu_name": "bench GPU", "torch": "2.x"}


def make_results(count: int, launches_each: int, cases: int, bad_every: int = 50) -> list[CaseResult]:
    results = []
    for i in range(count):
        launches = []
        for j in range(launches_each):
            record = LaunchRecord(
                index=j + 1,
                pid=1000 + i % 7,
                host="bench",
                device="cuda:0",
                device_uuid="GPU-0",
                elapsed_s=0.001,
                max_rel_err=0.001,
                rel_l2=0.0016,
            )
            if (i * launches_each + j) % bad_every == 0:
                record.add_kind("wrong")
                record.wrong, record.wrong_rows = 512, 16
            launches.append(record)
        results.append(
            CaseResult(
                key=f"case{i % cases:06d}",
                kernel=f"kernel{i % 10}",
                m=4096,
                n=7168,
                k=256 * (1 + i % cases),
                quant="ptpc",
                tile="256x256",
                out_dtype="bfloat16",
                params={"fuse": False},
                fp8="e4m3fn",
                seed=0,
                device="cuda:0",
                deterministic=True,
                rtol=0.05,
                floor=1.0,
                launches=launches,
                verdict="pass",
                stack=STACK,
            )
        )
    return results


def record(engine, results: list[CaseResult]) -> float:
    """Seconds to record ``results`` the way a session does; launches per second returned."""
    store = HistoryStore(engine)
    run_id = store.begin_run(RunInfo(tag="bench"), STACK)
    start = time.perf_counter()
    for first in range(0, len(results), BATCH_RESULTS):
        store.add_results(run_id, results[first : first + BATCH_RESULTS])
    seconds = time.perf_counter() - start
    store.finish_run(run_id, "complete", 0)
    return sum(len(r.launches) for r in results) / seconds


def fresh_postgres(admin_url: str):
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = f"gemmcheck_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(admin_url).set(database=name)

    def drop():
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url, drop


def backends(pg_url: str | None, folder: Path):
    sqlite_url = make_url(f"sqlite+pysqlite:///{folder / 'bench.db'}")
    yield "sqlite", sqlite_url, lambda: None
    if pg_url:
        try:
            url, drop = fresh_postgres(pg_url)
        except Exception as exc:  # noqa: BLE001 - reported: the SQLite numbers still stand
            print(f"postgresql: not measured ({str(exc).splitlines()[0]})")
            return
        yield "postgresql", url, drop


def session_seconds(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        check=False,
        capture_output=True,
    )
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--pg", default=os.environ.get("GEMMCHECK_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument("--launches", type=int, default=100_000)
    parser.add_argument("--query-launches", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    print_header("benchmarks.history_speed", argv)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"1. recording {args.launches:,} launches (results of 100 launches, batches of {BATCH_RESULTS} results)")
        rates = {}
        query_times = {}
        for name, url, drop in backends(args.pg, folder):
            try:
                engine = create(url)
                upgrade(engine, url)
                rates[name] = record(engine, make_results(args.launches // 100, 100, cases=200))
                print(f"   {name:<11} {rates[name]:>10,.0f} launches/s")
                # 2. fill to 1M launch rows, then ask per-case questions
                filled = args.launches
                batch = make_results(2000, 100, cases=200)
                while filled < args.query_launches:
                    record(engine, batch)
                    filled += 200_000
                key = "case000042"
                timings = []
                for _ in range(5):
                    start = time.perf_counter()
                    history = case_history(engine, key, scope="arch", gpu_arch="sm_90", fingerprint=None)
                    timings.append(time.perf_counter() - start)
                summary_timings = []
                for _ in range(3):
                    start = time.perf_counter()
                    history_table(engine, Selection(kernels=("kernel2",)))  # gemmcheck history --kernel kernel2
                    summary_timings.append(time.perf_counter() - start)
                with engine.connect() as connection:
                    rows = connection.execute(text("SELECT count(*) FROM launch")).scalar()
                query_times[name] = (statistics.median(timings), statistics.median(summary_timings), rows, history)
                engine.dispose()
            finally:
                drop()
        if "sqlite" in rates and "postgresql" in rates:
            print(f"   postgresql/sqlite: {rates['postgresql'] / rates['sqlite']:.2f}x")
        print("2. per-case history queries over the launch table")
        for name, (evidence_s, summary_s, rows, history) in query_times.items():
            launches = sum(process.launches for process in history.processes)
            print(
                f"   {name:<11} {rows:>9,} launch rows: baseline of one case ({launches:,} launches, "
                f"{len(history.processes)} processes) {evidence_s * 1000:.1f} ms; dashboard summary of one kernel "
                f"{summary_s * 1000:.1f} ms"
            )

        print("3. record overhead of a session (examples/cpu/test_cpu_kernels.py, --gemmcheck-repeat=12)")
        suite = folder / "suite"
        suite.mkdir()
        for name in ("kernels.py", "test_cpu_kernels.py"):
            (suite / name).write_text((ROOT / "examples" / "cpu" / name).read_text())
        common = ["--gemmcheck-repeat=12", f"--gemmcheck-db={folder / 'session.db'}"]
        session_seconds(common, suite)  # warm: imports, the database's creation
        with_record, without = [], []
        for _ in range(3):
            with_record.append(session_seconds(common, suite))
            without.append(session_seconds([*common, "--gemmcheck-no-record"], suite))
        print(
            f"   with recording {min(with_record):.2f} s, without {min(without):.2f} s: "
            f"ratio {min(with_record) / min(without):.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
