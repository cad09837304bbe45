"""``gemmcheck report --html FILE``: the history as one self-contained page
(reporting/report_page.py reads it, reporting/html.py draws it)."""

from __future__ import annotations

from pathlib import Path

from . import arguments, reading


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", parents=[arguments.database_option(), arguments.filters()], help="one self-contained HTML page"
    )
    parser.add_argument("--html", required=True, metavar="FILE", help="where to write the page")
    parser.add_argument(
        "--show-run",
        type=arguments.run_id,
        metavar="ID",
        help="the run whose launches it shows (default: each case's latest run with a bad launch)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..history.dashboard import check_runs
    from ..history.engine import safe_url
    from ..reporting.report_page import write_report

    with reading.history(args) as engine:
        selection = reading.checked_selection(args, engine)
        if args.show_run is not None:
            check_runs(engine, [args.show_run], "--show-run")
        path = write_report(engine, selection, Path(args.html), database=safe_url(engine.url), run=args.show_run)
    print(f"wrote {path}")
    return 0
