"""The one way to find the history database and the one way to open it, for every caller (a
pytest session, a script, the gemmcheck command, bisect's probes); and its errors, said in one
line. Nothing here imports SQLAlchemy until a database is opened: the file of a SQLite database
given as a path (or the default) is known without it, so that a session with no history yet
need not import it to learn there is none."""

from __future__ import annotations

import os
from pathlib import Path

from ..config.table import DB_ENV
from ..errors import GemmcheckError

DEFAULT_PATH = Path(".gemmcheck") / "history.db"
ENV_VAR = DB_ENV  # the database of pytest sessions and the gemmcheck command, when not given


class DatabaseError(GemmcheckError):
    """The database cannot be used as asked; the message is one line and names it safely."""


def one_line(exc: BaseException) -> str:
    """An exception in one line: a driver's own error, without SQLAlchemy's statement and parameters."""
    reason = getattr(exc, "orig", None) or exc
    text = str(reason).strip().splitlines()
    return text[0] if text else type(reason).__name__


def sqlite_file(value: str | os.PathLike | None, base_dir: Path) -> Path | None:
    """The file a --gemmcheck-db value names (relative to ``base_dir``; None: the default
    file), or None when the value is a URL. A ``~name`` of no user raises DatabaseError."""
    if value is None or str(value) == "":
        return base_dir / DEFAULT_PATH
    text_value = str(value)
    if "://" in text_value:
        return None
    try:
        path = Path(text_value).expanduser()
    except RuntimeError:  # ~name of no user: never a folder named "~name" by mistake
        raise DatabaseError(f"cannot expand {text_value.split('/')[0]} in {text_value}: no such user") from None
    return path if path.is_absolute() else base_dir / path


def make_folder(folder: Path) -> None:
    """``folder`` and its parents; a ``.gemmcheck`` folder made here gets a ``.gitignore`` of
    everything in it, as pytest's cache folder does, so that a history never lands in a commit."""
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    if created and folder.name == DEFAULT_PATH.parent.name:
        try:
            (folder / ".gitignore").write_text("# created by pytest-gemmcheck automatically\n*\n")
        except OSError:  # a folder others may write but not this process: the history matters, not this file
            pass


def nearest_default(start: Path) -> Path | None:
    """The nearest ``.gemmcheck/history.db`` in ``start`` or its parents, or None."""
    for folder in (start, *start.parents):
        candidate = folder / DEFAULT_PATH
        if candidate.exists():
            return candidate
    return None


def database_url(value: str | os.PathLike | None, base_dir: Path, *, nearest: bool = False):
    """The SQLAlchemy URL of the history database: ``value`` (a URL, or a SQLite path relative to
    ``base_dir``); without one, with ``nearest`` the closest default file in ``base_dir`` or its
    parents (DatabaseError when there is none: what a command that reads the history needs),
    else the default file under ``base_dir``."""
    from .engine import resolve_url

    if (value is None or str(value) == "") and nearest:
        found = nearest_default(base_dir)
        if found is None:
            raise DatabaseError(
                f"no history database here: no {DEFAULT_PATH} in {base_dir} or its parents "
                f"(run pytest with gemmcheck cases first, or pass --db / set {ENV_VAR})"
            )
        value = str(found)
    return resolve_url(value, base_dir)


def sqlite_path(url) -> Path:
    """The file of a SQLite URL: its database, or the path of a ``file:`` URI (``?uri=true``,
    as a read-only ``sqlite:///file:/path/history.db?mode=ro&uri=true`` is written)."""
    from urllib.parse import unquote, urlsplit

    database = url.database or ""
    if url.query.get("uri") in ("true", "1") and database.startswith("file:"):
        return Path(unquote(urlsplit(database).path))
    return Path(database)


def open_history(url, *, writing: bool = False, read_only: bool = False, existing: bool = False):
    """An engine on the history database at ``url``, at the current schema. The upgrade rule:
    the embedded SQLite database is migrated here, a server database's older schema is refused
    with the command that upgrades it, and an empty one gets the schema (engine.open_database).
    ``writing``: a SQLite file passes its quick check first; ``read_only``: nothing is created,
    migrated or written but for marking dead runs (a database that is no gemmcheck history at the
    current schema is refused and left byte for byte as it was), and a SQLite file must exist;
    ``existing``: a SQLite file that is not there is a DatabaseError, never created."""
    from .engine import is_sqlite, open_database

    if (existing or read_only) and is_sqlite(url) and not sqlite_path(url).exists():
        raise DatabaseError(f"no history database at {sqlite_path(url)}")
    return open_database(url, auto_upgrade=is_sqlite(url) and not read_only, for_writing=writing, read_only=read_only)
