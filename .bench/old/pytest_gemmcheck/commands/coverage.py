"""``gemmcheck coverage``: which configurations ran on which stacks, and the gaps next to them
(reporting/coverage_tables.py)."""

from __future__ import annotations

from ..errors import CommandError
from . import arguments, reading

COVERAGE_TABLES = ("matrix", "gaps")  # the names of coverage's tables, in JSON and for --table


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "coverage", parents=arguments.query_options(), help="which configurations ran on which stacks, and gaps"
    )
    parser.add_argument(
        "--table",
        choices=COVERAGE_TABLES,
        help="only this table: matrix (launches per configuration and stack) or gaps; --format csv "
        "needs one, a file holding one table",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..reporting.coverage_tables import coverage_tables

    with reading.history(args) as engine:
        tables = coverage_tables(engine, reading.checked_selection(args, engine))
    if args.table:
        tables = [table for table in tables if table.name == args.table]
    elif arguments.output_form(args) == "csv":
        raise CommandError("--format csv writes one table to a file: choose it with --table matrix or --table gaps")
    return reading.print_tables(args, *tables)
