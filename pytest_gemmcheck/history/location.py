"""Where the history database is, as far as that can be said without SQLAlchemy: the file of
a SQLite database given as a path (or the default), so that a session with no history yet
need not import SQLAlchemy to learn there is none."""

from __future__ import annotations

import os
from pathlib import Path

from ..config.options import BY_NAME

DEFAULT_PATH = Path(".gemmcheck") / "history.db"
ENV_VAR = BY_NAME["db"].env  # the database of pytest sessions and the gemmcheck command, when not given


def sqlite_file(value: str | os.PathLike | None, base_dir: Path) -> Path | None:
    """The file a --gemmcheck-db value names (relative to ``base_dir``; None: the default
    file), or None when the value is a URL."""
    if value is None or str(value) == "":
        return base_dir / DEFAULT_PATH
    text_value = str(value)
    if "://" in text_value:
        return None
    path = Path(text_value).expanduser()
    return path if path.is_absolute() else base_dir / path
