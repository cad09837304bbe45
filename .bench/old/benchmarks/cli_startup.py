"""What a ``gemmcheck`` command costs above the interpreter's own start.

Times, in fresh processes and interleaved round by round (so that a noisy machine slows every
arm alike), ``python -c pass`` beside ``gemmcheck --version``, ``--help``, ``history --help``,
``lint --help``, and ``gemmcheck history`` (and ``runs``) on a SQLite database of about 10,000
launches made through the real store. Prints min and median per arm and the min above ``python
-c pass``. Targets: ``--version`` no more than 0.15 s above it, ``history`` no more than 0.5 s.

    python -m benchmarks.cli_startup [--rounds 9] [--launches 10000]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gemmcheck_dev.results import print_header

TARGETS_S = {"--version": 0.15, "history": 0.5}


def make_history(path: Path, launches: int) -> None:
    """A database of ``launches`` launches: 100 cases x (launches / 100 / 12) runs of 12."""
    from pytest_gemmcheck.history.engine import open_database, resolve_url
    from pytest_gemmcheck.history.store import HistoryStore, RunInfo
    from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

    url = resolve_url(str(path), path.parent)
    store = HistoryStore(open_database(url, auto_upgrade=True))
    runs = max(1, launches // (100 * 12))
    stack = {"host": "bench", "gpu_arch": "sm_90", "gpu_name": "H200", "fingerprint": "b" * 16}
    for run in range(runs):
        run_id = store.begin_run(RunInfo(tag=f"run{run}", command="bench", options={}, token=f"t{run}"), stack=stack)
        results = []
        for case in range(100):
            records = [
                LaunchRecord(
                    index=i + 1,
                    pid=1,
                    host="bench",
                    device="cuda:0",
                    kinds=["wrong"] if (case + i + run) % 97 == 0 else [],
                    wrong=3 if (case + i + run) % 97 == 0 else 0,
                )
                for i in range(12)
            ]
            results.append(
                CaseResult(
                    key=f"{case:032x}",
                    kernel=f"gemm{case % 7}",
                    m=64 * (case + 1),
                    n=7168,
                    k=256,
                    quant="ptpc",
                    tile="128x128",
                    out_dtype="bfloat16",
                    params={},
                    fp8="e4m3fn",
                    seed=0,
                    device="cuda:0",
                    deterministic=True,
                    rtol=0.05,
                    floor=1.0,
                    launches=records,
                    verdict="pass",
                    stack=stack,
                )
            )
        store.add_results(run_id, results)
        store.finish_run(run_id, "complete", 0)
    store.engine.dispose()


def timed(command: list[str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--launches", type=int, default=10_000)
    args = parser.parse_args()
    print_header("benchmarks.cli_startup")
    gemmcheck = [sys.executable, "-m", "pytest_gemmcheck"]
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "history.db"
        make_history(database, args.launches)
        arms = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "--version": [*gemmcheck, "--version"],
            "--help": [*gemmcheck, "--help"],
            "history --help": [*gemmcheck, "history", "--help"],
            "lint --help": [*gemmcheck, "lint", "--help"],
            "history": [*gemmcheck, "--db", str(database), "history"],
            "runs": [*gemmcheck, "--db", str(database), "runs"],
        }
        times: dict[str, list[float]] = {name: [] for name in arms}
        for _ in range(args.rounds):
            for name, command in arms.items():
                times[name].append(timed(command))
    base = min(times["python -c pass"])
    print(
        f"gemmcheck commands in fresh processes, {args.rounds} interleaved rounds, a database of "
        f"{args.launches:,} launches; seconds"
    )
    print(f"{'command':<18} {'min':>7} {'median':>7} {'above python -c pass':>22}")
    for name, values in times.items():
        above = "" if name == "python -c pass" else f"{min(values) - base:+.3f}"
        print(f"{name:<18} {min(values):7.3f} {statistics.median(values):7.3f} {above:>22}")
    for name, target in TARGETS_S.items():
        above = min(times[name]) - base
        print(
            f"target: {name} <= {target:.2f} s above python -c pass: {'met' if above <= target else 'NOT met'} "
            f"({above:+.3f} s)"
        )


if __name__ == "__main__":
    main()
