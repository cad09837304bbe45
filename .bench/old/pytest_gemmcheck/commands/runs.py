"""``gemmcheck runs``: the recent runs, a line each."""

from __future__ import annotations

from . import arguments, reading


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("runs", parents=arguments.query_options(), help="recent runs")
    parser.add_argument("--limit", type=arguments.limit, default=20, help="runs at most (default 20)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..reporting.history_table import runs_table

    with reading.history(args) as engine:
        return reading.print_tables(args, runs_table(engine, reading.checked_selection(args, engine), limit=args.limit))
