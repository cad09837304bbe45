"""``gemmcheck compare``: the A/B table of a PR, a row per case and a column per side
(reporting/compare_table.py)."""

from __future__ import annotations

from . import arguments, reading


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", parents=arguments.query_options(), help="A/B (or more) between sides, a row per case"
    )
    parser.add_argument(
        "--side",
        action="append",
        required=True,
        metavar="SIDE",
        help="tag:NAME, rev:PREFIX, run:ID, stack:FIELD=GLOB, or a run id, tag or revision (repeat: two or more)",
    )
    parser.add_argument("--timing", action="store_true", help="launch-time columns, from uncontended results only")
    arguments.add_table_option(parser, "alpha", "significance of a change between sides")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..reporting.compare_table import compare_table, parse_side

    with reading.history(args) as engine:
        sides = [parse_side(text, engine) for text in args.side]
        return reading.print_tables(
            args,
            compare_table(engine, sides, reading.checked_selection(args, engine), alpha=args.alpha, timing=args.timing),
        )
