"""``gemmcheck goldens export``: goldens written from the recorded history
(reporting/goldens_from_history.py), a line per entry and per case left out."""

from __future__ import annotations

from pathlib import Path

from ..errors import CommandError
from . import arguments, reading


def add_parser(subparsers) -> None:
    goldens = subparsers.add_parser("goldens", help="accepted baselines under goldens/")
    actions = goldens.add_subparsers(dest="goldens_command", required=True, metavar="ACTION")
    export = actions.add_parser(
        "export",
        parents=[arguments.database_option(), arguments.filters()],
        help="write goldens from the recorded history",
    )
    export.add_argument("--dir", default="goldens", help="the goldens directory (default: goldens)")
    arguments.add_table_option(export, "scope", "one entry per GPU arch, per stack, or one for all")
    export.add_argument(
        "--include-bad",
        action="store_true",
        help="also cases whose every recorded result was a regression: accepted as known-bad",
    )
    export.set_defaults(func=run)


def run(args) -> int:
    from ..reporting.goldens_from_history import GoldensFolderError, check_folder, export_goldens

    try:  # before the database is opened: a folder that cannot take the files is a usage error
        check_folder(Path(args.dir))
    except GoldensFolderError as exc:
        raise CommandError(str(exc)) from None
    with reading.history(args) as engine:
        for line in export_goldens(
            engine,
            reading.checked_selection(args, engine),
            Path(args.dir),
            scope=args.scope,
            include_bad=args.include_bad,
        ):
            print(line)
    return 0
