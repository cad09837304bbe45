"""How fast the dashboard answers over a large history: ``gemmcheck history``, ``compare`` and
``coverage`` (and the report page's data) over 1M launch rows, on SQLite and on PostgreSQL.

    python -m benchmarks.dashboard_speed [--pg URL] [--cases 100] [--runs 100] [--launches 100]

Fills a fresh database per backend through the recorder's own write path (cases x runs
results of ``--launches`` launches each: 1M launch rows by default, half the runs tagged main
and half pr, over two stacks, with some bad launches), then times each question three times
and prints the median and the slowest, against the target of 0.5 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from gemmcheck_dev.results import print_header
from pytest_gemmcheck.history.engine import create, upgrade
from pytest_gemmcheck.history.selection import Selection
from pytest_gemmcheck.history.store import HistoryStore, RunInfo
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.reporting.compare_table import Side, compare_table
from pytest_gemmcheck.reporting.coverage_tables import coverage_tables
from pytest_gemmcheck.reporting.history_table import history_table
from pytest_gemmcheck.reporting.report_page import build_report

TARGET_S = 0.5
STACKS = [
    {"fingerprint": f"bench{i}", "host": "bench", "gpu_arch": arch, "gpu_name": "bench GPU", "torch": "2.11"}
    for i, arch in enumerate(("sm_90", "gfx942"))
]
QUANTS = ("bf16", "fp8", "ptpc", "blockscale", "mxfp8")
TILES = ("256x256", "256x128")


def fill(engine, cases: int, runs: int, launches: int) -> int:
    store = HistoryStore(engine)
    for run in range(runs):
        tag = "main" if run < runs // 2 else "pr"
        run_id = store.begin_run(RunInfo(tag=tag, revision=f"{run:040x}"), STACKS[run % 2])
        results = []
        for case in range(cases):
            records = []
            for index in range(launches):
                record = LaunchRecord(
                    index=index + 1,
                    pid=1000 + run,
                    host="bench",
                    device="cuda:0",
                    device_uuid=f"GPU-{run % 2}",
                    elapsed_s=0.001 + 1e-6 * (index % 7),
                )
                if tag == "main" and case % 10 == 0 and index % 9 == 0:
                    record.add_kind("wrong")
                    record.wrong, record.wrong_rows = 512, 16
                records.append(record)
            results.append(
                CaseResult(
                    key=f"case{case:06d}",
                    kernel=f"kernel{case % 4}",
                    m=4096,
                    n=7168,
                    k=256 * (1 + case // 20),
                    quant=QUANTS[case % len(QUANTS)],
                    tile=TILES[case % 2],
                    out_dtype="bfloat16",
                    params={"fuse": bool(case % 3)},
                    fp8="e4m3fn",
                    seed=0,
                    device="cuda:0",
                    deterministic=True,
                    rtol=0.05,
                    floor=1.0,
                    launches=records,
                    verdict="pass",
                    stack=STACKS[run % 2],
                    contention={"contended": run % 5 == 0},
                )
            )
            if len(results) == 64:  # the recorder's batch
                store.add_results(run_id, results)
                results = []
        store.add_results(run_id, results)
        store.finish_run(run_id, "complete", 0)
    with engine.connect() as connection:
        return connection.execute(text("SELECT count(*) FROM launch")).scalar()


def timed(question, rounds: int = 3) -> list[float]:
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        question()
        seconds.append(time.perf_counter() - start)
    return seconds


def backends(pg_url: str | None, folder: Path):
    yield "sqlite", make_url(f"sqlite+pysqlite:///{folder / 'dashboard.db'}"), lambda: None
    if pg_url:
        admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
        name = f"gemmcheck_bench_{uuid.uuid4().hex[:8]}"
        try:
            with admin.connect() as connection:
                connection.execute(text(f'CREATE DATABASE "{name}"'))
        except Exception as exc:
            print(f"   postgresql: not reachable ({str(exc).splitlines()[0]}); skipped")
            admin.dispose()
            return

        def drop():
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()

        yield "postgresql", make_url(pg_url).set(database=name), drop


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pg",
        default="postgresql+psycopg://postgres@127.0.0.1:5432/test",
        help="a PostgreSQL server to create a scratch database on ('' to skip)",
    )
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--launches", type=int, default=100, help="launches per result")
    args = parser.parse_args(argv)
    print_header("benchmarks.dashboard_speed", argv)
    questions = {
        "history": lambda engine: history_table(engine, Selection()),
        "history --kernel kernel1 --quant ptpc": lambda engine: history_table(
            engine, Selection(kernels=("kernel1",), quants=("ptpc",))
        ),
        "compare --side main --side pr": lambda engine: compare_table(
            engine, [Side("main", Selection(tags=("main",))), Side("pr", Selection(tags=("pr",)))], Selection()
        ),
        "compare ... --timing": lambda engine: compare_table(
            engine,
            [Side("main", Selection(tags=("main",))), Side("pr", Selection(tags=("pr",)))],
            Selection(),
            timing=True,
        ),
        "coverage": lambda engine: coverage_tables(engine, Selection()),
        "report (its data)": lambda engine: build_report(engine, Selection(), database="bench"),
    }
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="gemmcheck-dashboard-") as folder:
        for name, url, drop in backends(args.pg or None, Path(folder)):
            try:
                engine = create(url)
                upgrade(engine, url)
                started = time.perf_counter()
                rows = fill(engine, args.cases, args.runs, args.launches)
                print(
                    f"{name}: {rows:,} launch rows, {args.cases * args.runs:,} results "
                    f"(filled in {time.perf_counter() - started:.0f} s); seconds, median / slowest of 3"
                )
                for question, ask in questions.items():
                    seconds = timed(lambda: ask(engine))
                    counted = question != "report (its data)"  # the page is not among the targets
                    if counted:
                        worst = max(worst, statistics.median(seconds))
                    print(
                        f"   {question:<40} {statistics.median(seconds):7.3f} / {max(seconds):7.3f}"
                        + ("" if counted else "   (not a target)")
                    )
                engine.dispose()
            finally:
                drop()
    print(
        f"target: history, compare and coverage under {TARGET_S} s: {'met' if worst < TARGET_S else 'NOT met'} "
        f"(slowest median {worst:.3f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
