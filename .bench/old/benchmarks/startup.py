"""What the installed plugin adds to a suite that runs no gemmcheck case.

Times ``pytest --collect-only`` (or a plain run, ``--mode run``) of a folder of plain tests
with the plugin on and off (``-p no:gemmcheck``), in fresh processes, the arms interleaved
round by round so that a noisy machine slows both alike; once in a folder without a history
database and once in one where ``.gemmcheck/history.db`` exists (made by a real session that
ran one case). Prints min and median per arm, the time added (min on - min off) and the ratio.
The target: no more than 50 ms added.

    python -m benchmarks.startup [--rounds 9] [--tests 200] [--mode collect|run]

To measure another revision, put its checkout first on PYTHONPATH: the child processes import
the plugin from there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from gemmcheck_dev.results import print_header

TARGET_MS = 50.0

PROBE = textwrap.dedent("""
    def test_once(gemmcheck):
        case = gemmcheck.case("startup_probe", m=16, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: out.copy_((x.a.float() @ x.b.float().t()).to(out.dtype)))
""")


def plain_tests(folder: Path, count: int) -> None:
    """``count`` plain test functions over ten files, as a small real suite has them."""
    files = 10
    for index in range(files):
        body = "\n\n".join(f"def test_{index}_{n}():\n    assert {n} + 1 > {n}" for n in range(index, count, files))
        (folder / f"test_plain_{index}.py").write_text(body + "\n")


def make_folders(root: Path, count: int) -> dict[str, Path]:
    without = root / "no-history"
    with_history = root / "with-history"
    for folder in (without, with_history):
        folder.mkdir()
        (folder / "pytest.ini").write_text("[pytest]\n")  # its own rootdir, wherever this runs
        plain_tests(folder, count)
    probe = with_history / "test_probe.py"
    probe.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(probe), "--gemmcheck-repeat=1"],
        cwd=with_history,
        capture_output=True,
        text=True,
    )
    probe.unlink()
    history = with_history / ".gemmcheck" / "history.db"
    if done.returncode != 0 or not history.exists():
        sys.exit(f"startup.py: the session meant to write {history} failed:\n{done.stdout}{done.stderr}")
    return {"no history file": without, "history file present": with_history}


def time_once(folder: Path, mode: str, plugin: bool) -> float:
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if mode == "collect":
        args.append("--collect-only")
    if not plugin:
        args += ["-p", "no:gemmcheck"]
    started = time.perf_counter()
    done = subprocess.run(args, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"startup.py: {' '.join(args)} in {folder} failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds per arm (default 9)")
    parser.add_argument("--tests", type=int, default=200, help="plain tests in the suite (default 200)")
    parser.add_argument(
        "--mode",
        choices=("collect", "run"),
        default="collect",
        help="pytest --collect-only (default), or run the plain tests",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    print_header("benchmarks.startup", argv)

    with tempfile.TemporaryDirectory(prefix="gemmcheck-startup-") as root:
        folders = make_folders(Path(root), args.tests)
        arms = [(name, plugin) for name in folders for plugin in (False, True)]
        times: dict[tuple[str, bool], list[float]] = {arm: [] for arm in arms}
        for name in folders:  # one untimed pass of each: the page cache and .pyc files, warm
            time_once(folders[name], args.mode, True)
            time_once(folders[name], args.mode, False)
        for round_index in range(args.rounds):
            order = arms if round_index % 2 == 0 else arms[::-1]
            for name, plugin in order:
                times[(name, plugin)].append(time_once(folders[name], args.mode, plugin))

    what = "pytest --collect-only" if args.mode == "collect" else "pytest"
    print(
        f"{what} of {args.tests} plain tests, plugin off (-p no:gemmcheck) and on, {args.rounds} interleaved "
        f"rounds; ms, min / median"
    )
    print(f"{'':24}{'plugin off':>16}{'plugin on':>16}{'added (min)':>14}{'on/off':>9}")
    report = {
        "mode": args.mode,
        "tests": args.tests,
        "rounds": args.rounds,
        "target_ms": TARGET_MS,
        "python": sys.version.split()[0],
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "arms": {},
    }
    worst_added = 0.0
    for name in folders:
        off, on = times[(name, False)], times[(name, True)]
        added = 1000 * (min(on) - min(off))
        worst_added = max(worst_added, added)
        print(
            f"{name:24}{1000 * min(off):8.0f} /{1000 * statistics.median(off):5.0f}"
            f"{1000 * min(on):9.0f} /{1000 * statistics.median(on):5.0f}{added:+11.0f} ms{min(on) / min(off):8.2f}x"
        )
        report["arms"][name] = {"off_s": off, "on_s": on, "added_ms": added}
    verdict = "met" if worst_added <= TARGET_MS else "NOT met"
    print(f"target: <= {TARGET_MS:.0f} ms added: {verdict} (worst {worst_added:+.0f} ms)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
