"""The example database: the smallest failing configuration of each search, kept for the next
search of the same space, which tries it first.

A folder under the rootdir's ``.gemmcheck/search/`` per space (named by a digest of it), a file
per configuration (JSON, named by a digest of its text): the layout of Hypothesis's
``DirectoryBasedExampleDatabase``, kept here rather than used through Hypothesis, whose database
swallows every error of the file system and finds a file only by the digest of what it should
hold. Not the choices Hypothesis would store itself: a seeded Hypothesis run uses no database
(``@seed`` sets ``database=None``), so stored configurations replay as explicit examples.

What is stored is checked as any argument is: a file that does not hold a configuration of the
space (another grid under the same key, ``"k": 128.0``, ``"m": true``, not JSON at all) is
removed, and said; a database that cannot be written is said too, with the file system's
reason. Each in one line naming the folder, in the search's notes and as a
:class:`SearchWarning`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Callable

from .space import Config, Space


class SearchWarning(UserWarning):
    """Something a search could not do with its example database, in one line naming it."""


def _digest(data: bytes) -> str:
    return hashlib.sha384(data).hexdigest()[:16]  # as Hypothesis's DirectoryBasedExampleDatabase names them


class Examples:
    def __init__(self, path: Path | None, key: bytes, space: Space):
        self.path, self.space = path, space
        self.folder = path / _digest(key) if path is not None else None
        self.notes: list[str] = []

    def _files(self) -> list[Path]:
        try:
            return sorted(self.folder.iterdir()) if self.folder is not None and self.folder.is_dir() else []
        except OSError:
            return []

    def _read(self) -> list[tuple[Path, Config | Exception]]:
        """Each stored file, with its configuration or why it holds none."""
        read = []
        for file in self._files():
            try:
                read.append((file, self.space.from_dict(json.loads(file.read_bytes()))))
            except (ValueError, TypeError) as exc:  # CaseError, JSONDecodeError and UnicodeDecodeError among them
                read.append((file, exc))
            except OSError:
                continue  # not a file to read (a folder in the way): nothing stored there
        return read

    def stored(self) -> list[Config]:
        """The configurations earlier searches of this space stored; a file that holds none is
        removed, and said."""
        stored = []
        for file, config in self._read():
            if isinstance(config, Config):
                stored.append(config)
            else:
                self._note(f"gemmcheck.search: dropped a stored example from {self.path}: {_one_line(config)}")
                self._remove(file)
        return stored

    def keep(self, smallest: Config | None, passed: Callable[[Config], bool]) -> None:
        """The smallest failing configuration kept for the next search; stored ones that
        ``passed`` this time removed."""
        if self.folder is None:
            return
        for file, config in self._read():
            if isinstance(config, Config) and passed(config):
                self._remove(file)
        if smallest is not None:
            self._save(json.dumps(self.space.as_dict(smallest), sort_keys=True).encode())

    def _save(self, value: bytes) -> None:
        from ..history.location import make_folder

        try:
            make_folder(self.path.parent)  # the history's folder, with its .gitignore
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder)
            with os.fdopen(handle, "wb") as out:
                out.write(value)
            os.replace(temporary, self.folder / _digest(value))
        except OSError as exc:
            self._unwritable(exc, "the smallest failing configuration is not kept for the next search")

    def _remove(self, file: Path) -> None:
        try:
            file.unlink()
        except OSError as exc:
            self._unwritable(exc, "what no longer belongs there stays, and is dropped again by the next search")

    def _unwritable(self, exc: OSError, consequence: str) -> None:
        self._note(
            f"gemmcheck.search: the example database {self.path} cannot be written "
            f"({exc.strerror or exc}): {consequence}"
        )

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            warnings.warn(SearchWarning(text), stacklevel=2)


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 240 else text[:237] + "..."
