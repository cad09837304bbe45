"""``gemmcheck bisect``: which commit made a case fail intermittently.

    gemmcheck bisect --good REV --bad REV (--case KEY | --test NODEID) [--confidence 0.95]
                     [--budget LAUNCHES | --budget SECONDSs] [--unit launch|process]
                     [--format table|markdown|json] [-- COMMAND ...]

Each probed revision is checked out in a detached git worktree under a temporary folder (the
user's tree is never touched; the worktrees are removed afterwards) and the probe command run
there with the user's history database: by default ``pytest NODEID --gemmcheck-repeat=N
--gemmcheck-db=DB --gemmcheck-tag=bisect:REV``. The case's bad and total launches are read back
from the history; what the history already holds at a revision counts without rerunning. The
search is bisect/'s, its report reporting/bisect_table.py's. See docs/bisect.md.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CommandError
from . import arguments

if TYPE_CHECKING:  # the model loads when a bisection runs, not when the parser is built
    from ..bisect.model import Budget

UNITS = ("launch", "process")
EXIT_NOT_CONFIDENT = 3  # the search stopped short of the asked confidence


def parse_budget(text: str) -> Budget:
    """'2000' (launches), '2000 launches', '600s', '10m', '1h' (seconds)."""
    from ..bisect.model import Budget

    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(launches|launch|s|m|h)?\s*", text or "")
    if not found:
        raise argparse.ArgumentTypeError(f"expected launches (e.g. 2000) or seconds (e.g. 600s, 10m, 1h), got {text!r}")
    value, suffix = float(found[1]), found[2]
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a budget > 0, got {text!r}")
    if suffix in (None, "launches", "launch"):
        if value != int(value):
            raise argparse.ArgumentTypeError(f"expected a whole number of launches, got {text!r}")
        return Budget(launches=int(value))
    return Budget(seconds=value * {"s": 1, "m": 60, "h": 3600}[suffix])


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.5 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability from 0.5 to below 1, got {text!r}")
    return value


def _whole(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "bisect",
        parents=[arguments.database_option(), arguments.output_options()],
        help="the first bad revision of an intermittent failure (noisy binary search)",
    )
    parser.add_argument("--good", required=True, metavar="REV", help="a revision known good")
    parser.add_argument("--bad", required=True, metavar="REV", help="a later revision known bad")
    parser.add_argument("--case", metavar="KEY", help="the case (key or prefix); its test from the history")
    parser.add_argument("--test", metavar="NODEID", help="the test to run (all its cases count)")
    parser.add_argument(
        "--confidence",
        type=_confidence,
        default=0.95,
        help="stop when one revision holds this much of the posterior (default 0.95)",
    )
    parser.add_argument(
        "--budget",
        type=parse_budget,
        default=None,
        metavar="LAUNCHES|SECONDSs",
        help="stop after this many launches (e.g. 2000) or seconds (600s, 10m)",
    )
    parser.add_argument(
        "--unit",
        choices=UNITS,
        default="launch",
        help="count launches (default), or processes with a bad launch, for a race decided "
        "per process (each probe then runs its units as fresh processes)",
    )
    parser.add_argument(
        "--launches-per-process",
        type=_whole,
        default=12,
        help="with --unit process: launches in each process (default 12)",
    )
    parser.add_argument("--repo", default=".", help="the git repository (default: the current directory's)")
    parser.add_argument(
        "probe_command",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="the probe command, run in each revision's worktree; {rev} {launches} {units} {db} "
        "{tag} {nodeid} {python} are filled in, and GEMMCHECK_DB is set",
    )
    parser.set_defaults(func=run)


def _database(args, repo: Path) -> tuple[str, object]:
    """(the URL as the probes are given it, the sqlalchemy URL): --db, $GEMMCHECK_DB, the nearest
    .gemmcheck/history.db, else one at the repository's top level (the probes create it)."""
    import os

    from ..history.location import DEFAULT_PATH, ENV_VAR, DatabaseError, database_url

    try:
        url = database_url(args.db or os.environ.get(ENV_VAR), Path.cwd(), nearest=True)
    except DatabaseError:  # none yet: the probes create the repository's own
        url = database_url(str(repo / DEFAULT_PATH), Path.cwd())
    if url.get_backend_name() == "sqlite" and url.database:
        return str(Path(url.database).resolve()), url
    return url.render_as_string(hide_password=False), url


def run(args) -> int:
    from ..bisect import probe as probes
    from ..bisect.bisection import Bisection
    from ..reporting.bisect_table import render
    from ..reporting.tables import emit

    command = list(args.probe_command or [])
    if command and command[0] == "--":
        command = command[1:]
    if not (args.case or args.test or command):
        raise CommandError("name the case: --case KEY or --test NODEID (or give the probe command after --)")
    try:
        repo = probes.toplevel(Path(args.repo).resolve())
        good, bad = probes.resolve(repo, args.good, "--good"), probes.resolve(repo, args.bad, "--bad")
        shas = probes.commits_between(repo, good, bad)
    except probes.GitError as exc:
        raise CommandError(str(exc)) from None
    db_text, url = _database(args, repo)
    try:
        inside = Path.cwd().resolve().relative_to(repo)
    except ValueError:
        inside = Path(".")
    bisection = Bisection(
        repo,
        good,
        shas,
        url,
        db_text,
        key=args.case,
        nodeid=args.test,
        command=command,
        unit=args.unit,
        launches_per_process=args.launches_per_process,
        inside=inside,
    )
    try:
        if not bisection.nodeid and args.case and not command:
            bisection.nodeid = bisection.case_nodeid()
            if not bisection.nodeid:
                raise CommandError(f"--case {args.case}: no recorded test runs it; name it with --test NODEID")
        outcome = bisection.run(confidence=args.confidence, budget=args.budget)
    finally:
        bisection.close()
    report = bisection.report(outcome, confidence=args.confidence, budget=args.budget)
    form = arguments.output_form(args)
    emit(render(report, form), form)
    return 0 if outcome.stopped == "confident" else EXIT_NOT_CONFIDENT
