"""``gemmcheck bisect``: which commit made a case fail intermittently.

    gemmcheck bisect --good REV --bad REV (--case KEY | --test NODEID) [--confidence 0.95]
                     [--budget LAUNCHES | --budget SECONDSs] [--unit launch|process]
                     [--format table|markdown|json] [-- COMMAND ...]

Each probed revision is checked out in a detached git worktree under a temporary folder (the
user's tree is never touched; the worktrees are removed afterwards) and the probe command run
there with the user's history database: by default ``pytest NODEID --gemmcheck-repeat=N
--gemmcheck-db=DB --gemmcheck-tag=bisect:REV``. The case's bad and total launches are read back
from the history; what the history already holds at a revision counts without rerunning. See
docs/bisect.md.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

from typing import TYPE_CHECKING

from ..config.table import DB_ENV
from ..errors import CommandError

if TYPE_CHECKING:  # the model loads when a bisection runs, not when the parser is built
    from .model import Budget, Outcome

UNITS = ("launch", "process")


def parse_budget(text: str) -> Budget:
    """'2000' (launches), '2000 launches', '600s', '10m', '1h' (seconds)."""
    from .model import Budget

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


def add_bisect_parser(commands) -> None:
    """``gemmcheck bisect``, onto the gemmcheck command's subparsers."""
    from ..reporting.commands import database_option, output_options

    bisect = commands.add_parser("bisect", parents=[database_option(), output_options()],
                                 help="the first bad revision of an intermittent failure (noisy binary search)")
    add_bisect_arguments(bisect)
    bisect.set_defaults(func=cmd_bisect)


def add_bisect_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--good", required=True, metavar="REV", help="a revision known good")
    parser.add_argument("--bad", required=True, metavar="REV", help="a later revision known bad")
    parser.add_argument("--case", metavar="KEY", help="the case (key or prefix); its test from the history")
    parser.add_argument("--test", metavar="NODEID", help="the test to run (all its cases count)")
    parser.add_argument("--confidence", type=_confidence, default=0.95,
                        help="stop when one revision holds this much of the posterior (default 0.95)")
    parser.add_argument("--budget", type=parse_budget, default=None, metavar="LAUNCHES|SECONDSs",
                        help="stop after this many launches (e.g. 2000) or seconds (600s, 10m)")
    parser.add_argument("--unit", choices=UNITS, default="launch",
                        help="count launches (default), or processes with a bad launch, for a race decided "
                             "per process (each probe then runs its units as fresh processes)")
    parser.add_argument("--launches-per-process", type=_whole, default=12,
                        help="with --unit process: launches in each process (default 12)")
    parser.add_argument("--repo", default=".", help="the git repository (default: the current directory's)")
    parser.add_argument("probe_command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                        help="the probe command, run in each revision's worktree; {rev} {launches} {units} {db} "
                             "{tag} {nodeid} {python} are filled in, and GEMMCHECK_DB is set")


def _database(args) -> tuple[str, object]:
    """(the URL as the probes are given it, the sqlalchemy URL): --db, $GEMMCHECK_DB, the nearest
    .gemmcheck/history.db, else one at the repository's top level (the probes create it)."""
    import os

    from ..history.location import DEFAULT_PATH, ENV_VAR, DatabaseError, database_url

    try:
        url = database_url(args.db or os.environ.get(ENV_VAR), Path.cwd(), nearest=True)
    except DatabaseError:  # none yet: the probes create the repository's own
        url = database_url(str(args.repo_top / DEFAULT_PATH), Path.cwd())
    if url.get_backend_name() == "sqlite" and url.database:
        return str(Path(url.database).resolve()), url
    return url.render_as_string(hide_password=False), url


def cmd_bisect(args) -> int:
    from ..history.engine import is_sqlite
    from ..history.location import open_history
    from ..reporting.tables import emit
    from . import probe as probes
    from .model import GOOD, Observation, search

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
    args.repo_top = repo
    db_text, url = _database(args)
    try:
        inside = Path.cwd().resolve().relative_to(repo)
    except ValueError:
        inside = Path(".")

    engines: dict[str, object] = {}

    def engine():
        if "engine" not in engines:
            if is_sqlite(url) and not Path(url.database).exists():
                return None
            engines["engine"] = open_history(url)
        return engines["engine"]

    def sha_of(position: int) -> str:
        return good if position == GOOD else shas[position]

    nodeid = args.test
    if not nodeid and args.case and not command:
        nodeid = probes.nodeid_of(engine(), args.case) if engine() is not None else None
        if not nodeid:
            raise CommandError(f"--case {args.case}: no recorded test runs it; name it with --test NODEID")
    key = args.case

    def counts(sha: str, after: int | None = None):
        current = engine()
        if current is None:
            return probes.Counts()
        return probes.count(current, sha, key=key, nodeid=nodeid, unit=args.unit, after=after)

    seen = {}
    for position in [GOOD, *range(len(shas))]:
        found = counts(sha_of(position))
        if found.units:
            seen[position] = (found.bad, found.units)
    started = time.monotonic()
    per_process = args.launches_per_process

    with probes.Worktrees(repo) as trees:
        def probe(position: int, units: int) -> Observation:
            sha = sha_of(position)
            launches = units * per_process if args.unit == "process" else units
            processes = units if args.unit == "process" else 1
            tag = f"bisect:{sha}"
            current = engine()
            before = probes.last_run_id(current) if current is not None else 0
            try:
                where = trees.get(sha) / inside
            except probes.GitError as exc:
                return Observation(position, 0, 0, source="skip", note=f"no worktree: {exc}")
            if command:
                argv = probes.fill(command, {"rev": sha, "launches": str(launches), "units": str(units),
                                             "db": db_text, "tag": tag, "nodeid": nodeid or "",
                                             "python": sys.executable})
            else:
                argv = probes.default_command(nodeid, launches=launches, processes=processes, db=db_text, tag=tag)
            left = None
            if args.budget and args.budget.seconds is not None:
                left = max(1.0, args.budget.seconds - (time.monotonic() - started))
            ran = probes.run_command(argv, where, {DB_ENV: db_text, "GEMMCHECK_BISECT_REVISION": sha,
                                                   "GEMMCHECK_BISECT_LAUNCHES": str(launches)}, left)
            found = counts(sha, after=before)
            if ran.returncode is None or ran.returncode == 125 or (not command and ran.returncode not in (0, 1)):
                return Observation(position, 0, 0, launches=found.launches, seconds=ran.seconds, source="skip",
                                   note=f"exit status {ran.returncode}: {ran.tail}" if ran.returncode is not None
                                   else ran.tail)
            if not found.units:
                return Observation(position, 0, 0, seconds=ran.seconds, source="skip",
                                   note=f"nothing recorded (exit status {ran.returncode}): {ran.tail}")
            return Observation(position, found.bad, found.units, launches=found.launches, seconds=ran.seconds)

        options = {"first": 2, "least": 1} if args.unit == "process" else {}
        outcome = search(len(shas), probe, confidence=args.confidence, budget=args.budget, seen=seen, **options)
    for current in engines.values():
        current.dispose()
    report = build_report(outcome, repo, good, shas, unit=args.unit, confidence=args.confidence, budget=args.budget)
    form = "json" if getattr(args, "json", False) else args.format
    emit(render(report, form), form)
    return 0 if outcome.stopped == "confident" else 3


def build_report(outcome: Outcome, repo: Path, good: str, shas: list[str], *, unit: str, confidence: float,
                 budget: Budget | None) -> dict:
    from .model import GOOD
    from .probe import subject

    def sha_of(position: int) -> str:
        return good if position == GOOD else shas[position]

    counted = sum(o.units for o in outcome.observations if o.source != "skip")
    first = None
    if outcome.position is not None:
        sha = shas[outcome.position]
        first = {"revision": sha, "subject": subject(repo, sha), "posterior": outcome.mass,
                 "commits_after_good": outcome.position + 1}
    return {
        "first_bad": first,
        "stopped": outcome.stopped,
        "stopped_words": outcome.words(),
        "confidence": confidence,
        "budget": budget.words() if budget else "none",
        "commits": len(shas),
        "unit": unit,
        # the rates are estimates from what was counted: with nothing counted they would be the
        # prior's means, no measurement at all
        "units_counted": counted,
        # with --good failing too there is no change point to give rates either side of
        "rate_good": outcome.p_good if counted and outcome.stopped != "good-fails" else None,
        "rate_bad": outcome.p_bad if counted and outcome.stopped != "good-fails" else None,
        "launches": outcome.launches,
        "seconds": round(outcome.seconds, 3),
        "probes": [{"revision": sha_of(o.position), "position": o.position + 1, "bad": o.bad, "units": o.units,
                    "launches": o.launches, "seconds": round(o.seconds, 3), "source": o.source,
                    "top_after": sha_of(o.top_after), "mass_after": o.mass_after, "note": o.note}
                   for o in outcome.observations],
    }


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%" if value < 0.999 else f"{100 * value:.2f}%"


def render(report: dict, form: str) -> str:
    from ..reporting.tables import Table

    if form == "json":
        return json.dumps(report, indent=1)
    first = report["first_bad"]
    unit = "launches" if report["unit"] == "launch" else "processes"
    if first:
        title = (f"first bad revision: {first['revision'][:12]} ({_pct(first['posterior'])} of the posterior; "
                 f"commit {first['commits_after_good']} of {report['commits']} after --good) {first['subject']}")
        if report["stopped"] != "confident":
            title = "most likely " + title + f" -- below the asked {report['confidence']:g}"
    else:
        title = "no first bad revision: " + report["stopped_words"]
    rows = []
    for i, p in enumerate(report["probes"], 1):
        label = "good" if p["position"] == 0 else ("bad" if p["position"] == report["commits"] else str(p["position"]))
        counted = "skip" if p["source"] == "skip" else f"{p['bad']}/{p['units']}"
        rows.append([str(i), p["revision"][:12], label, counted, p["source"], p["top_after"][:12], _pct(p["mass_after"])])
    if report["stopped"] == "good-fails":
        def counted_at(position: int) -> str:
            probes = [p for p in report["probes"] if p["source"] != "skip" and p["position"] == position]
            return f"{sum(p['bad'] for p in probes)}/{sum(p['units'] for p in probes)} bad"

        rates = f"counted in {unit}: --good {counted_at(0)}, --bad {counted_at(report['commits'])}"
    elif report["units_counted"]:
        rates = (f"counted in {unit}; rate before {_pct(report['rate_good'])}, from it on {_pct(report['rate_bad'])} "
                 f"(posterior means on either side of the most likely first bad revision)")
    else:
        rates = f"counted in {unit}: none was counted (every probe was skipped), so there is no rate to tell"
    notes = [f"stopped: {report['stopped_words']} (confidence {report['confidence']:g}, budget {report['budget']})",
             rates, f"{report['launches']} launches run, {report['seconds']:.1f} s"]
    skipped = [p for p in report["probes"] if p["source"] == "skip" and p["note"]]
    notes += [f"skipped {p['revision'][:12]}: {p['note']}" for p in skipped]
    table = Table(["#", "revision", "commit", f"bad/{unit}", "source", "top after", "its mass"], rows, title=title,
                  notes=[""] + notes if form == "table" else notes, empty="no probes", records=report["probes"])
    return table.render(form)
