"""The ``gemmcheck`` command: questions to the history database, its upkeep, bisection, the
assembly lint and the self-test. Each subcommand is a module of commands/; this module builds
the parser from them and turns their errors into one line and an exit status.

    gemmcheck [--db URL] history [FILTERS] [--case KEY] [--format table|markdown|json|csv]
    gemmcheck compare --side A --side B [--side C ...] [FILTERS] [--timing] [--alpha A]
    gemmcheck coverage [FILTERS]
    gemmcheck report --html FILE [FILTERS] [--show-run ID]
    gemmcheck runs [FILTERS]
    gemmcheck db upgrade | current | import FILE [FILE ...]
    gemmcheck goldens export [--include-bad]
    gemmcheck bisect --good REV --bad REV (--test NODEID | --case KEY) [--confidence P] [--budget N|Ns] [-- COMMAND]
    gemmcheck explain CASE [--alpha A]
    gemmcheck lint FILE.s
    gemmcheck selftest [--device DEVICE] [--record]

``--db`` goes before or after the command. The database is ``--db`` (a SQLAlchemy URL or a
SQLite path), else ``$GEMMCHECK_DB``, else the nearest ``.gemmcheck/history.db`` in the
current directory or its parents. Errors are one line on stderr with exit status 2 (usage) or
1 (the database or a file cannot be used); output cut short by a closed pipe (``| head``) ends
quietly.

Light: building the parser imports no pytest, torch or SQLAlchemy (``--version`` and ``--help``
cost an interpreter's start), and each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys

from .commands import EXIT_DATABASE, EXIT_USAGE
from .errors import CommandError, GemmcheckError


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .commands import (
        arguments,
        bisect,
        compare,
        coverage,
        db,
        explain,
        goldens_export,
        history,
        lint,
        report,
        runs,
        selftest,
    )

    parser = argparse.ArgumentParser(prog="gemmcheck", description="pytest-gemmcheck's history and tools")
    parser.add_argument("--version", action="version", version=f"gemmcheck {__version__}")
    parser.add_argument("--db", default=None, metavar="URL", help=arguments.database_help())
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (history, compare, coverage, explain, report, runs, db, goldens_export, bisect, selftest, lint):
        command.add_parser(subparsers)  # in this order in --help
    return parser


def _own_parsers(parser: argparse.ArgumentParser) -> None:
    """Each command's parser set as a default of its own arguments, so that an argument a
    command does not take is refused with that command's usage, not the top level's."""
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        for command in action.choices.values():
            command.set_defaults(command_parser=command)
            _own_parsers(command)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    _own_parsers(parser)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse hands these to the top level; the command they were given to refuses them
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:
        print(f"gemmcheck {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except GemmcheckError as exc:  # a database, or a golden file, that cannot be used as asked
        where = "gemmcheck" if type(exc).__name__ == "DatabaseError" else f"gemmcheck {args.command}"
        print(f"{where}: {exc}", file=sys.stderr)
        return EXIT_DATABASE
    except BrokenPipeError:
        # the reader went away (| head): end quietly, and keep Python from failing to flush at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # a file to write (a report page, goldens) that cannot be written
        print(f"gemmcheck {args.command}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_DATABASE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
