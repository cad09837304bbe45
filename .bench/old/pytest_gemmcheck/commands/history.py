"""``gemmcheck history``: a line per case (reporting/history_table.py), or with ``--case`` that
case's runs, newest first."""

from __future__ import annotations

from . import arguments, reading


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "history", parents=arguments.query_options(), help="per case: runs, bad launches, rate, trend, verdict"
    )
    parser.add_argument(
        "--case", action="append", metavar="KEY", help="one case (key or prefix): its runs, newest first"
    )
    parser.add_argument("--limit", type=arguments.limit, default=500, help="rows at most (default 500)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..reporting.history_table import case_runs_table, history_table

    with reading.history(args) as engine:
        selection = reading.checked_selection(args, engine)
        if args.case:
            return reading.print_tables(args, case_runs_table(engine, selection, limit=args.limit))
        return reading.print_tables(args, history_table(engine, selection, limit=args.limit))
