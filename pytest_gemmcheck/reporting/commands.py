"""The ``gemmcheck`` command's questions to the history database, and its upkeep: a function per
command (``cmd_NAME(args)``, exit status returned) and :func:`add_commands`, which adds them to
the command's parser (pytest_gemmcheck/cli.py). The database is found and opened as every other
caller finds and opens it (history/location.py)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from ..config.table import command_argument
from ..errors import CommandError
from ..history.location import DEFAULT_PATH, ENV_VAR, database_url, nearest_default, open_history, sqlite_path
from .tables import Table, emit

COVERAGE_TABLES = ("matrix", "gaps")  # the names of coverage's tables, in JSON and for --table

EXIT_DATABASE = 1  # the database or a file cannot be used (a usage error is 2: cli.py)
MAX_LIMIT = 10 ** 9  # rows: more than any database here holds, and within every backend's LIMIT


def command_database_url(args):
    """The database a command reads: --db, else $GEMMCHECK_DB, else the nearest default file."""
    return database_url(args.db or os.environ.get(ENV_VAR), Path.cwd(), nearest=True)


def _open_for_reading(args):
    """The history, opened to be read: never created or migrated, and a file that is no gemmcheck
    history at the current schema refused in one line and left as it was. The one write, marking
    runs whose process died as interrupted, is made only on a history at the current schema."""
    from ..history.dead_runs import mark_dead_runs_interrupted

    engine = open_history(command_database_url(args), read_only=True)
    try:  # show runs whose process died as interrupted, not as still running
        mark_dead_runs_interrupted(engine)
    except Exception:  # a read-only database is still worth reading
        pass
    return engine


def _selection(args):
    from ..history.selection import Selection, SelectionError, parse_field, parse_param, parse_shape, parse_since

    for option in ("kernel", "quant", "shape", "tile", "param", "arch", "stack", "tag", "revision", "case"):
        if any(not str(value).strip() for value in getattr(args, option, None) or ()):
            raise SelectionError(f"--{option}: an empty value; leave the option out to match everything")
    if getattr(args, "since", None) is not None and not args.since.strip():
        raise SelectionError("--since: an empty value; leave the option out to match everything")
    return Selection(
        kernels=tuple(args.kernel or ()), quants=tuple(args.quant or ()),
        shapes=tuple(parse_shape(shape) for shape in args.shape or ()), tiles=tuple(args.tile or ()),
        params=tuple(parse_param(text) for text in args.param or ()), arches=tuple(args.arch or ()),
        stack=tuple(parse_field(text, "--stack") for text in args.stack or ()), tags=tuple(args.tag or ()),
        revisions=tuple(args.revision or ()), runs=tuple(args.run or ()),
        since=parse_since(args.since) if args.since else None, keys=tuple(getattr(args, "case", None) or ()),
    )


def _checked_selection(args, engine):
    """The filters, and a usage error for what they name that the history does not have."""
    from ..history.dashboard import check_selection

    selection = _selection(args)
    check_selection(engine, selection)
    return selection


def _form(args) -> str:
    return "json" if getattr(args, "json", False) else args.format


def _print(args, *tables: Table) -> int:
    """The tables in --format: text forms one after the other; JSON one document of the tables'
    records (an object under their fixed names when there are several); CSV one table only."""
    from .tables import json_document

    form = _form(args)
    if form == "json" and len(tables) > 1:
        print(json_document(list(tables)))
    elif form == "csv" and len(tables) > 1:  # the command chose one with --table; this is a slip
        raise CommandError("--format csv writes one table")
    else:
        emit("\n\n".join(table.render(form) for table in tables), form)
    return 0


def _with_engine(command):
    """Run ``command(args, engine)`` on the opened database, closing it afterwards."""
    def run(args) -> int:
        engine = _open_for_reading(args)
        try:
            return command(args, engine)
        finally:
            engine.dispose()

    return run


@_with_engine
def cmd_history(args, engine) -> int:
    from .history_table import case_runs_table, history_table

    selection = _checked_selection(args, engine)
    if args.case:
        return _print(args, case_runs_table(engine, selection, limit=args.limit))
    return _print(args, history_table(engine, selection, limit=args.limit))


@_with_engine
def cmd_runs(args, engine) -> int:
    from ..history.dashboard import runs
    from .history_table import when

    found = runs(engine, _checked_selection(args, engine), limit=args.limit)
    rows = [[str(r.id), when(r.started_at), when(r.ended_at), r.status, r.tag or "",
             (r.revision or "")[:10] + ("+" if r.dirty else ""), str(r.results), f"{r.bad_launches}/{r.launches}"]
            for r in found]
    records = [{"id": r.id, "started_at": r.started_at, "ended_at": r.ended_at, "status": r.status, "tag": r.tag,
                "revision": r.revision, "dirty": r.dirty, "results": r.results, "launches": r.launches,
                "bad_launches": r.bad_launches} for r in found]
    return _print(args, Table(["run", "started", "ended", "status", "tag", "revision", "results", "bad launches"],
                              rows, records=records, empty="no recorded runs match"))


@_with_engine
def cmd_compare(args, engine) -> int:
    from .compare import compare_table, parse_side

    sides = [parse_side(text, engine) for text in args.side]
    return _print(args, compare_table(engine, sides, _checked_selection(args, engine), alpha=args.alpha,
                                      timing=args.timing))


@_with_engine
def cmd_coverage(args, engine) -> int:
    from .coverage import coverage_tables

    tables = coverage_tables(engine, _checked_selection(args, engine))
    if args.table:
        tables = [table for table in tables if table.name == args.table]
    elif _form(args) == "csv":
        raise CommandError("--format csv writes one table to a file: choose it with --table matrix or --table gaps")
    return _print(args, *tables)


@_with_engine
def cmd_explain(args, engine) -> int:
    from ..jsontext import dumps
    from .explain import document, explain_case, tables

    if not args.case.strip():
        raise CommandError("CASE: an empty key; gemmcheck history lists the cases")
    case, attribution, counts = explain_case(engine, args.case.strip(), alpha=args.alpha)
    if getattr(args, "json", False) or args.format == "json":
        print(dumps(document(case, attribution, counts), indent=1, default=str))
        return 0
    verdict, factors = tables(case, attribution, counts)
    if args.format == "csv":  # one table: the value tests
        emit(factors.render("csv"), "csv")
    else:
        print(f"{verdict.render(args.format)}\n\n{factors.render(args.format)}")
    return 0


@_with_engine
def cmd_report(args, engine) -> int:
    from ..history.dashboard import check_runs
    from ..history.engine import safe_url
    from .report_page import write_report

    selection = _checked_selection(args, engine)
    if args.show_run is not None:
        check_runs(engine, [args.show_run], "--show-run")
    path = write_report(engine, selection, Path(args.html), database=safe_url(engine.url), run=args.show_run)
    print(f"wrote {path}")
    return 0


def cmd_db(args) -> int:
    from ..history.engine import DatabaseError, check_integrity, create, is_sqlite, safe_url, upgrade

    if args.action == "import":
        return _import(args)
    if args.files:
        raise CommandError(f"db {args.action} takes no files (db import FILE [FILE ...] does)")
    url = command_database_url(args) if (args.db or os.environ.get(ENV_VAR)) else database_url(None, Path.cwd())
    if args.action == "current" and is_sqlite(url) and not sqlite_path(url).exists():
        # a question about a file must not create it
        raise DatabaseError(f"no history database at {sqlite_path(url)}")
    engine = create(url, read_only=args.action == "current")  # a question about a file must not change it
    try:
        if args.action == "current":
            print(_current_words(engine, url))
            return 0
        check_integrity(engine, url)  # a damaged file is not migrated further
        before, after = upgrade(engine, url)
        print(f"{safe_url(url)}: " + ("already at " + after if before == after else f"upgraded {before or 'empty'} -> {after}"))
        return 0
    finally:
        engine.dispose()


def _current_words(engine, url) -> str:
    """``db current``'s line: the schema revision and what to do about it. Another application's
    database (tables, no revision) is a DatabaseError: not ours to upgrade."""
    from ..history.engine import (DatabaseError, check_tables, current_revision, head_revision, is_empty, is_newer,
                                  newer_schema_words, no_history_words, safe_url)

    current, head = current_revision(engine), head_revision()
    if is_newer(current):
        return f"{safe_url(url)}: {newer_schema_words(current)}"
    if current is None and not is_empty(engine):
        raise DatabaseError(f"{safe_url(url)} {no_history_words(engine)}")
    if current == head:
        check_tables(engine, url)
    state = "no gemmcheck schema" if current is None else f"revision {current}"
    note = "up to date" if current == head else f"head is {head}: run gemmcheck db upgrade"
    return f"{safe_url(url)}: {state} ({note})"


def _import(args) -> int:
    """``db import FILE ...``: the fallback files' results into the database, a line per file;
    a file that is no fallback file is one line on stderr (exit status 1), the others still load."""
    from ..history import fallback
    from ..history.engine import DatabaseError, safe_url
    from ..history.store import HistoryStore

    if not args.files:
        raise CommandError("db import needs the fallback files to load (.gemmcheck/unrecorded-*.jsonl)")
    if args.db or os.environ.get(ENV_VAR) or nearest_default(Path.cwd()):
        url = command_database_url(args)
    else:  # no history here (deleted while a session ran, as the file may say): the default one, made here
        url = database_url(None, Path.cwd())
    store = HistoryStore(open_history(url, writing=True))
    status = 0
    try:
        for path in args.files:
            try:
                loaded = fallback.load(store, fallback.read(Path(path)))
            except DatabaseError as exc:
                print(f"gemmcheck db import: {exc}", file=sys.stderr)
                status = EXIT_DATABASE
                continue
            print(f"{path} into {safe_url(url)}, {loaded.words()}")
            if loaded.failed:
                status = EXIT_DATABASE
    finally:
        store.engine.dispose()
    return status


def cmd_goldens_export(args) -> int:
    from .goldens_export import GoldensFolderError, check_folder

    try:  # before the database is opened: a folder that cannot take the files is a usage error
        check_folder(Path(args.dir))
    except GoldensFolderError as exc:
        raise CommandError(str(exc)) from None
    return _export_goldens(args)


@_with_engine
def _export_goldens(args, engine) -> int:
    from .goldens_export import export_goldens

    for line in export_goldens(engine, _checked_selection(args, engine), Path(args.dir), scope=args.scope,
                               include_bad=args.include_bad):
        print(line)
    return 0


def _run_id(text: str) -> int:
    """--run, --show-run: a run's id, a whole number from 1 to 2**63 - 1 (ASCII digits, as every
    number here: int() would take '٣' and '1_0')."""
    value = int(text) if re.fullmatch(r"\s*[0-9]{1,19}\s*", text) else 0
    if not 1 <= value < 2 ** 63:
        raise argparse.ArgumentTypeError(f"expected a run id, a whole number >= 1 (gemmcheck runs lists them), "
                                         f"got {text!r}")
    return value


def _limit(text: str) -> int:
    """--limit: a whole number of rows, bounded so that every backend takes it."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"expected a whole number of rows from 1 to {MAX_LIMIT:,}, got {text!r}")
    return value


def _filters() -> argparse.ArgumentParser:
    """The filters every query command takes; repeated options are alternatives."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("filters (globs with * and ?; a repeated option matches any of its values)")
    group.add_argument("--kernel", action="append", metavar="GLOB", help="kernel name")
    group.add_argument("--quant", action="append", metavar="MODE", help="quant mode")
    group.add_argument("--shape", action="append", metavar="MxNxK", help="e.g. 4096x7168x256 or *x7168x*")
    group.add_argument("--tile", action="append", metavar="TILE", help="e.g. 256x128 ('none': no tile)")
    group.add_argument("--param", action="append", metavar="KEY=VALUE", help="a kernel param, e.g. fuse=True")
    group.add_argument("--arch", action="append", metavar="ARCH", help="GPU arch, e.g. sm_90 or gfx9* ('cpu')")
    group.add_argument("--stack", action="append", metavar="FIELD=GLOB", help="a stack field, e.g. torch=2.12*")
    group.add_argument("--tag", action="append", metavar="GLOB", help="the run's --gemmcheck-tag")
    group.add_argument("--revision", action="append", metavar="PREFIX", help="the run's git revision")
    group.add_argument("--run", action="append", type=_run_id, metavar="ID", help="a run id")
    group.add_argument("--since", metavar="WHEN", help="runs started since: 7d, 12h, 30m, or 2026-11-01")
    return parent


def output_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    flag, keywords = command_argument("format")
    parent.add_argument(flag, **keywords)
    parent.add_argument("--json", action="store_true", help="the same as --format json")
    return parent


def database_option() -> argparse.ArgumentParser:
    # after the command as well as before it; SUPPRESS keeps a value given before
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--db", default=argparse.SUPPRESS, metavar="URL",
                        help=f"database URL or SQLite path (default: ${ENV_VAR}, else the nearest {DEFAULT_PATH})")
    return parent


def _add_table_option(parser: argparse.ArgumentParser, name: str, help: str) -> None:
    flag, keywords = command_argument(name, help)
    parser.add_argument(flag, **keywords)


def add_commands(commands) -> None:
    """The history's commands, onto the gemmcheck command's subparsers."""
    query = [database_option(), _filters(), output_options()]

    history = commands.add_parser("history", parents=query, help="per case: runs, bad launches, rate, trend, verdict")
    history.add_argument("--case", action="append", metavar="KEY", help="one case (key or prefix): its runs, newest first")
    history.add_argument("--limit", type=_limit, default=500, help="rows at most (default 500)")
    history.set_defaults(func=cmd_history)

    compare = commands.add_parser("compare", parents=query, help="A/B (or more) between sides, a row per case")
    compare.add_argument("--side", action="append", required=True, metavar="SIDE",
                         help="tag:NAME, rev:PREFIX, run:ID, stack:FIELD=GLOB, or a run id, tag or revision "
                              "(repeat: two or more)")
    compare.add_argument("--timing", action="store_true", help="launch-time columns, from uncontended results only")
    _add_table_option(compare, "alpha", "significance of a change between sides")
    compare.set_defaults(func=cmd_compare)

    coverage = commands.add_parser("coverage", parents=query, help="which configurations ran on which stacks, and gaps")
    coverage.add_argument("--table", choices=COVERAGE_TABLES,
                          help="only this table: matrix (launches per configuration and stack) or gaps; --format csv "
                               "needs one, a file holding one table")
    coverage.set_defaults(func=cmd_coverage)

    explain = commands.add_parser("explain", parents=[database_option(), output_options()],
                                  help="which recorded fact (stack, GPU, stress, process, params) explains a case's "
                                       "bad launches")
    explain.add_argument("case", metavar="CASE", help="a case key or a unique prefix of one")
    _add_table_option(explain, "alpha", "family-wise significance, Holm-corrected over all value tests")
    explain.set_defaults(func=cmd_explain)

    report = commands.add_parser("report", parents=[database_option(), _filters()], help="one self-contained HTML page")
    report.add_argument("--html", required=True, metavar="FILE", help="where to write the page")
    report.add_argument("--show-run", type=_run_id, metavar="ID",
                        help="the run whose launches it shows (default: each case's latest run with a bad launch)")
    report.set_defaults(func=cmd_report)

    runs = commands.add_parser("runs", parents=query, help="recent runs")
    runs.add_argument("--limit", type=_limit, default=20, help="runs at most (default 20)")
    runs.set_defaults(func=cmd_runs)

    db = commands.add_parser("db", parents=[database_option()], help="the database's schema; fallback files into it")
    db.add_argument("action", choices=["upgrade", "current", "import"],
                    help="upgrade: apply migrations; current: the schema revision; import FILE...: load the "
                         "results a session could not record (.gemmcheck/unrecorded-*.jsonl), each once")
    db.add_argument("files", nargs="*", metavar="FILE", help="with import: the fallback files")
    db.set_defaults(func=cmd_db)

    goldens = commands.add_parser("goldens", help="accepted baselines under goldens/")
    golden_commands = goldens.add_subparsers(dest="goldens_command", required=True, metavar="ACTION")
    export = golden_commands.add_parser("export", parents=[database_option(), _filters()],
                                        help="write goldens from the recorded history")
    export.add_argument("--dir", default="goldens", help="the goldens directory (default: goldens)")
    _add_table_option(export, "scope", "one entry per GPU arch, per stack, or one for all")
    export.add_argument("--include-bad", action="store_true",
                        help="also cases whose every recorded result was a regression: accepted as known-bad")
    export.set_defaults(func=cmd_goldens_export)
