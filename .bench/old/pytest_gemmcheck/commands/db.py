"""``gemmcheck db upgrade | current | import FILE ...``: the database's schema, and the results a
session could not record loaded into it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import CommandError
from ..history.location import ENV_VAR, database_url, nearest_default, open_history, sqlite_path
from . import EXIT_DATABASE, arguments
from .reading import command_database_url


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "db", parents=[arguments.database_option()], help="the database's schema; fallback files into it"
    )
    parser.add_argument(
        "action",
        choices=["upgrade", "current", "import"],
        help="upgrade: apply migrations; current: the schema revision; import FILE...: load the "
        "results a session could not record (.gemmcheck/unrecorded-*.jsonl), each once",
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="with import: the fallback files")
    parser.set_defaults(func=run)


def run(args) -> int:
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
        change = "already at " + after if before == after else f"upgraded {before or 'empty'} -> {after}"
        print(f"{safe_url(url)}: {change}")
        return 0
    finally:
        engine.dispose()


def _current_words(engine, url) -> str:
    """``db current``'s line: the schema revision and what to do about it. Another application's
    database (tables, no revision) is a DatabaseError: not ours to upgrade."""
    from ..history.engine import (
        DatabaseError,
        check_tables,
        current_revision,
        head_revision,
        is_empty,
        is_newer,
        newer_schema_words,
        no_history_words,
        safe_url,
    )

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
