"""Connections: URL resolution, engines tuned per backend, and the schema's migrations.

SQLite (the embedded default) runs in WAL mode with a busy timeout, so a dashboard reads while
a run writes and two sessions can write one file; write transactions start with BEGIN
IMMEDIATE so that two writers queue instead of failing on a lock upgrade. A SQLite file about to
be written into passes SQLite's quick check first. JSON columns hold standard JSON on every
backend (a non-finite number becomes null). Every problem opening a database becomes a one-line
:class:`DatabaseError`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from pathlib import Path

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.engine.url import URL
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from .. import jsontext
from ..config.table import hide_passwords
from .location import DatabaseError, make_folder, one_line, sqlite_file  # DatabaseError's module needs no SQLAlchemy

BUSY_TIMEOUT_MS = 60_000
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_MIGRATION_LOCK = 0x67656D6D  # pg_advisory_xact_lock key: one migrating session at a time


def resolve_url(value: str | os.PathLike | None, base_dir: Path) -> URL:
    """A SQLAlchemy URL from an option value: a URL as is, anything else a SQLite file path
    (relative to ``base_dir``); None means the default file under ``base_dir``. An in-memory
    SQLite database, gone with its connection, is refused."""
    path = sqlite_file(value, base_dir)
    if path is not None:
        return URL.create("sqlite+pysqlite", database=str(path))
    try:
        url = make_url(str(value))
        url.port  # a port that is no number fails only here
    except (ArgumentError, ValueError) as exc:
        raise DatabaseError(f"{hide_passwords(value)!r} is not a database URL ({exc})") from None
    if is_sqlite(url) and (url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"):
        raise DatabaseError(
            f"{hide_passwords(value)} is an in-memory database, gone when the session ends: "
            "give a file (a path, or sqlite:///path/to/history.db)"
        )
    return url


def on_fresh_connection(work):
    """``work`` (a read, or a write in one transaction) done again, once, on a fresh connection
    when the database dropped the one it ran on mid-way (a server restarted, a backend
    terminated): ``pool_pre_ping`` tests a connection only when it is taken from the pool, and a
    dropped connection's transaction was rolled back, so doing it again does it once."""
    import functools

    from sqlalchemy.exc import DBAPIError

    @functools.wraps(work)
    def again(*args, **kwargs):
        try:
            return work(*args, **kwargs)
        except DBAPIError as exc:
            if not exc.connection_invalidated:
                raise
        return work(*args, **kwargs)

    return again


def safe_url(url: URL | str) -> str:
    """The URL with any password hidden: what may be printed or stored. A SQLite URL is shown
    as it was written: SQLAlchemy's rendering percent-encodes the ':' of a 'file:' URI path."""
    if isinstance(url, str):
        return hide_passwords(url)
    if is_sqlite(url) and url.database:
        query = "&".join(
            f"{key}={value}"
            for key, values in url.query.items()
            for value in ((values,) if isinstance(values, str) else values)
        )
        return f"{url.drivername}:///{url.database}" + (f"?{query}" if query else "")
    return url.render_as_string(hide_password=True)


def is_sqlite(url: URL) -> bool:
    return url.get_backend_name() == "sqlite"


def create(url: URL, *, read_only: bool = False) -> Engine:
    """An engine for ``url``; SQLite files get their directory, WAL and busy timeout.
    ``read_only``: nothing on the way changes the file (no folder made, the journal mode left
    as it is: switching a database to WAL writes into its header)."""
    try:
        if is_sqlite(url):
            if url.database and url.database != ":memory:" and not read_only:
                _make_folder(Path(url.database))
            engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000}, json_serializer=_json_text)
            _tune_sqlite(engine, wal=not read_only)
        else:
            engine = create_engine(url, pool_pre_ping=True, json_serializer=_json_text)
    except (NoSuchModuleError, ImportError) as exc:
        raise DatabaseError(f"cannot open {safe_url(url)}: no driver for it is installed ({exc})") from None
    return engine


def _make_folder(database: Path) -> None:
    try:
        make_folder(database.parent)
    except FileExistsError as exc:  # a file where a folder of the path should be
        raise DatabaseError(f"cannot create the folder of {database}: {exc.filename} is a file") from None
    except OSError as exc:
        raise DatabaseError(f"cannot create the folder of {database}: {exc.strerror} ({exc.filename})") from None


def _json_text(value) -> str:
    # params never hold a non-finite number (a case refuses one); measurements may
    return jsontext.dumps(value)


def _tune_sqlite(engine: Engine, *, wal: bool = True) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection, _record):
        # let SQLAlchemy's BEGIN (below) decide transactions, not the sqlite3 module
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if wal:  # a history is made in WAL mode and stays in it; a reader leaves a file's mode alone
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection):
        writing = connection.get_execution_options().get("gemmcheck_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writing else "BEGIN")


@contextlib.contextmanager
def write_transaction(engine: Engine):
    """A connection in a write transaction (on SQLite: holding the write lock from the start)."""
    with engine.connect() as connection:
        connection = connection.execution_options(gemmcheck_write=True)
        with connection.begin():
            yield connection


# --- migrations ------------------------------------------------------------------------


def _alembic_config(connection=None):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


_VERSIONS = Path(__file__).resolve().parent / "migrations" / "versions"
_REVISION_LINE = re.compile(r"^(down_revision|revision) = (?:'([^']*)'|\"([^\"]*)\"|None)$", re.M)


@functools.lru_cache(maxsize=1)
def _revisions() -> tuple[frozenset[str], str]:
    """(every revision this package knows, the head), read from the migration files' own
    ``revision = '...'`` lines rather than through Alembic: opening a database at the head
    (every read) then imports no Alembic, half of a command's start. The migrations are one
    chain; tests/history/test_history_engine.py checks them against Alembic's own reading."""
    revisions, parents = set(), set()
    for path in _VERSIONS.glob("*.py"):
        fields = {match[1]: match[2] or match[3] or None for match in _REVISION_LINE.finditer(path.read_text())}
        revisions.add(fields["revision"])
        if fields.get("down_revision"):
            parents.add(fields["down_revision"])
    (head,) = revisions - parents
    return frozenset(revisions), head


def head_revision() -> str:
    return _revisions()[1]


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at; None for a database without the schema."""
    with _friendly(engine):
        with engine.connect() as connection:
            if not inspect(connection).has_table("alembic_version"):
                return None
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def is_newer(revision: str | None) -> bool:
    """Whether a database at ``revision`` has a schema this pytest-gemmcheck does not know."""
    return revision is not None and revision not in _revisions()[0]


def newer_schema_words(revision: str) -> str:
    from .. import __version__

    return (
        f"has schema revision {revision}, newer than this pytest-gemmcheck {__version__} knows "
        f"(head {head_revision()}); upgrade pytest-gemmcheck to use it"
    )


def check_not_newer(engine: Engine, url: URL) -> str | None:
    current = current_revision(engine)
    if is_newer(current):
        raise DatabaseError(f"{safe_url(url)} {newer_schema_words(current)}")
    return current


def check_integrity(engine: Engine, url: URL) -> None:
    """SQLite's quick check of a file about to be written into (about 0.2 s per million launch
    rows): a damaged one is refused, not written into further."""
    if not is_sqlite(url):
        return
    with _friendly(engine):
        with engine.connect() as connection:
            problems = connection.exec_driver_sql("PRAGMA quick_check").scalars().all()
    if problems != ["ok"]:
        raise DatabaseError(
            f"{safe_url(url)} fails its integrity check (PRAGMA quick_check: {problems[0]}); "
            "restore it from a copy, or move it aside to start a new history"
        )


def upgrade(engine: Engine, url: URL, *, only_if_empty: bool = False) -> tuple[str | None, str]:
    """Apply every pending migration, under the migration lock; returns (revision before,
    revision after). ``only_if_empty``: only give a database without any of the schema's
    tables its schema, deciding under the lock (another session may have just made it), and
    leave an older schema as it is."""
    from alembic import command

    before = check_not_newer(engine, url)
    with _friendly(engine):
        with write_transaction(engine) as connection:  # on SQLite BEGIN IMMEDIATE: one writer at a time
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
            if only_if_empty:
                existing = set(inspect(connection).get_table_names())
                if "alembic_version" in existing:
                    now = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
                    return before, now
                from .schema import metadata

                if existing & set(metadata.tables):
                    return before, None  # tables without a revision: not ours to touch
            command.upgrade(_alembic_config(connection), "head")
    return before, head_revision()


def open_database(url: URL, *, auto_upgrade: bool, for_writing: bool = False, read_only: bool = False) -> Engine:
    """An engine on a database at the current schema. A database without any of the schema's
    tables (a new server database, say) gets it here, under the migration lock so that a fleet
    of sessions starting at once do not race (as MLflow does); an older schema is upgraded
    here when ``auto_upgrade`` (the embedded SQLite default), else refused with the command
    that upgrades it. ``for_writing``: a SQLite file must pass its quick check first;
    ``read_only``: nothing is created, migrated or otherwise written (a database that is no
    gemmcheck history at the head is refused, and left as it was). A history at the head that
    lacks one of its tables is refused in one line, as a corrupt one is."""
    engine = create(url, read_only=read_only)
    try:
        if for_writing:
            check_integrity(engine, url)
        current = check_not_newer(engine, url)
        head = head_revision()
        if current is None and read_only:
            raise DatabaseError(f"{safe_url(url)} {no_history_words(engine)}")
        if current is None and not auto_upgrade:
            _, current = upgrade(engine, url, only_if_empty=True)
        if current != head:
            if read_only or not auto_upgrade:
                state = "has no gemmcheck schema revision" if current is None else f"is at schema revision {current}"
                raise DatabaseError(
                    f"{safe_url(url)} {state} (head {head}); run: gemmcheck db upgrade --db '{safe_url(url)}'"
                )
            upgrade(engine, url)
        check_tables(engine, url)
    except BaseException:
        engine.dispose()
        raise
    return engine


def _tables(engine: Engine) -> list[str]:
    with _friendly(engine):
        with engine.connect() as connection:
            return sorted(inspect(connection).get_table_names())


def is_empty(engine: Engine) -> bool:
    """Whether the database holds no table at all (a new server database, a 0-byte file)."""
    return not _tables(engine)


def no_history_words(engine: Engine) -> str:
    """Why a database without a schema revision is no history to read, in a few words."""
    tables = _tables(engine)
    if not tables:
        return "is empty: no gemmcheck history (a pytest session with gemmcheck cases records one)"
    shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
    return f"is not a gemmcheck history (no schema revision; its tables: {shown}); it was left as it is"


def check_tables(engine: Engine, url: URL) -> None:
    """A DatabaseError, in one line, for a database at the head revision that lacks a table of
    the schema (dropped by hand, or a copy of part of one): every question to it would fail."""
    from .schema import metadata

    missing = sorted(set(metadata.tables) - set(_tables(engine)))
    if missing:
        raise DatabaseError(
            f"{safe_url(url)} is a gemmcheck history without its {', '.join(missing)} "
            f"table{'s' if len(missing) > 1 else ''}; restore it from a copy, or move it aside to "
            "start a new history"
        )


@contextlib.contextmanager
def _friendly(engine: Engine):
    """Turn driver errors into one line that names the database (password hidden)."""
    try:
        yield
    except DatabaseError:
        raise
    except SQLAlchemyError as exc:
        raise DatabaseError(f"cannot use {safe_url(engine.url)}: {one_line(exc)}") from None
