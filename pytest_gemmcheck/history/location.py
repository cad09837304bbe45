"""Where the history database is, as far as that can be said without SQLAlchemy: the file of
a SQLite database given as a path (or the default), so that a session with no history yet
need not import SQLAlchemy to learn there is none; and its errors, said in one line."""

from __future__ import annotations

import os
from pathlib import Path

from ..config.options import BY_NAME
from ..errors import GemmcheckError

DEFAULT_PATH = Path(".gemmcheck") / "history.db"
ENV_VAR = BY_NAME["db"].env  # the database of pytest sessions and the gemmcheck command, when not given


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
