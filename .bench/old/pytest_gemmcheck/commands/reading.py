"""How a command reads the history: the database it names, opened as every other caller opens
it (history/location.py) but only to be read, the filters as a Selection, and the tables
printed in ``--format``."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..errors import CommandError
from ..history.location import ENV_VAR, database_url, open_history
from .arguments import output_form

FILTERS = ("kernel", "quant", "shape", "tile", "param", "arch", "stack", "tag", "revision", "case")


def command_database_url(args):
    """The database a command reads: --db, else $GEMMCHECK_DB, else the nearest default file."""
    return database_url(args.db or os.environ.get(ENV_VAR), Path.cwd(), nearest=True)


def open_for_reading(args):
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


@contextlib.contextmanager
def history(args):
    """The opened history (open_for_reading), closed afterwards."""
    engine = open_for_reading(args)
    try:
        yield engine
    finally:
        engine.dispose()


def selection(args):
    from ..history.selection import Selection, SelectionError, parse_field, parse_param, parse_shape, parse_since

    for option in FILTERS:
        if any(not str(value).strip() for value in getattr(args, option, None) or ()):
            raise SelectionError(f"--{option}: an empty value; leave the option out to match everything")
    if getattr(args, "since", None) is not None and not args.since.strip():
        raise SelectionError("--since: an empty value; leave the option out to match everything")
    return Selection(
        kernels=tuple(args.kernel or ()),
        quants=tuple(args.quant or ()),
        shapes=tuple(parse_shape(shape) for shape in args.shape or ()),
        tiles=tuple(args.tile or ()),
        params=tuple(parse_param(text) for text in args.param or ()),
        arches=tuple(args.arch or ()),
        stack=tuple(parse_field(text, "--stack") for text in args.stack or ()),
        tags=tuple(args.tag or ()),
        revisions=tuple(args.revision or ()),
        runs=tuple(args.run or ()),
        since=parse_since(args.since) if args.since else None,
        keys=tuple(getattr(args, "case", None) or ()),
    )


def checked_selection(args, engine):
    """The filters, and a usage error for what they name that the history does not have."""
    from ..history.dashboard import check_selection

    chosen = selection(args)
    check_selection(engine, chosen)
    return chosen


def print_tables(args, *tables) -> int:
    """The tables in --format: text forms one after the other; JSON one document of the tables'
    records (an object under their fixed names when there are several); CSV one table only."""
    from ..reporting.tables import emit, json_document

    form = output_form(args)
    if form == "json" and len(tables) > 1:
        print(json_document(list(tables)))
    elif form == "csv" and len(tables) > 1:  # the command chose one with --table; this is a slip
        raise CommandError("--format csv writes one table")
    else:
        emit("\n\n".join(table.render(form) for table in tables), form)
    return 0
