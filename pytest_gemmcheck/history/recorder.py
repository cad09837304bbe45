"""Recording a session into the history database, from the process that owns the session
(never an xdist worker: their results arrive here on their reports).

The session opens the database when its first gemmcheck case starts (:meth:`Recorder.open`):
it is checked (SQLite's quick check, the schema, a write that is rolled back) and the run row is
written, so that a database that cannot be used is a one-line usage error before any kernel
runs, and a session killed in its first case still leaves its run. An xdist controller opens it
when a worker starts its first case. Each test's results are written when its report arrives,
a batch in one transaction, retried result by result when it fails: one result the database
refuses never takes the others with it, and after any failure the next results are tried
again. What cannot be written goes at once, with why, to the fallback file (fallback.py), which
``gemmcheck db import`` loads. The run ends ``complete``, ``interrupted``, or ``unrecorded``
(some of its results are only in the fallback file).

A SQLite file deleted or replaced while the session runs (``git clean -xfd``, a test that
removes ``.gemmcheck/``) would take every result written into it so far: SQLite goes on writing
into the unlinked file. Before each batch and after the run's end the file at the path is
checked to be the one the session opened (its device and inode); when it is not, this
session's results, those written before too (kept for that), go to the fallback file, and the
summary says why in its one line.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

from ..config.table import hide_passwords
from ..environment.git import git_state
from ..records.result import CaseResult
from . import fallback
from .location import one_line

BATCH_RESULTS = 64
BATCH_LAUNCHES = 20_000
RECORDING_FAILED = 4  # the exit status of --gemmcheck-require-record when a result was not recorded


def masked_command(args) -> str:
    """The command line with the password of any URL in it hidden."""
    return " ".join(hide_passwords(arg) for arg in args)


class Recorder:
    def __init__(
        self,
        *,
        url,
        rootdir: Path,
        tag: str | None,
        command: str,
        options: dict,
        workers: int,
        token: str | None = None,
        require: bool = False,
    ):
        self.url = url
        self.token = token or uuid.uuid4().hex  # the session's id, written into its run row
        self.rootdir = rootdir
        self.tag = tag
        self.command = command
        self.options = options
        self.workers = workers
        self.require = require  # --gemmcheck-require-record
        self.started_at = datetime.now(timezone.utc)
        self.store = None
        self.run_id: int | None = None
        self.pending: list[tuple[str, CaseResult]] = []  # (uid, result) not yet written
        self.recorded = 0
        self.unrecorded: dict[str, str] = {}  # uid -> why it is only in the fallback file
        self.end_failure: str | None = None  # why the run's end could not be written
        self._fallback: fallback.FallbackFile | None = None
        self._run_info = None
        self._file: tuple[Path, tuple[int, int]] | None = None  # a SQLite file's path and (device, inode)
        self.written: list[tuple[str, CaseResult]] = []  # what went into that file, for when it is gone
        self.lost: str | None = None  # why the database written into is no longer there

    @property
    def where(self) -> str:
        from .engine import safe_url

        return safe_url(self.url)

    @property
    def saved_to(self) -> Path | None:
        """The fallback file, once something went into it."""
        return self._fallback.path if self._fallback is not None else None

    @property
    def failed(self) -> bool:
        """Whether anything of this session is not in the database."""
        return bool(self.unrecorded) or self.end_failure is not None

    # --- the run ------------------------------------------------------------------------
    def open(self) -> None:
        """Open the database (creating and migrating the embedded SQLite default), check it can
        be written, and write the run row; a database that cannot be used raises DatabaseError."""
        if self.run_id is not None:
            return
        from .engine import DatabaseError
        from .location import open_history
        from .store import HistoryStore

        if self.store is None:
            # migrations run by themselves only on SQLite files; a shared server is upgraded on purpose
            self.store = HistoryStore(open_history(self.url, writing=True))
        try:
            self.store.probe_write()
            self.run_id = self.store.begin_run(self.run_info(), started_at=self.started_at)
        except Exception as exc:  # a driver's error, said in one line that names the database
            raise DatabaseError(f"cannot write to {self.where}: {one_line(exc)}") from None
        self._file = _file_identity(self.url)

    def _check_file(self) -> None:
        """Whether the SQLite file written into is still the one at its path; when it is gone or
        replaced, every result of this session goes to the fallback file instead."""
        if self._file is None or self.lost is not None:
            return
        path, identity = self._file
        try:
            now = os.stat(path)
        except OSError:
            self.lost = f"the database file {path} was deleted while the session ran"
        else:
            if (now.st_dev, now.st_ino) != identity:
                self.lost = f"the database file {path} was replaced while the session ran"
        if self.lost is not None:
            self.recorded -= len(self.written)
            for uid, result in self.written:
                self._keep(uid, self.lost, result)
            self.written = []

    def run_info(self):
        from .. import __version__
        from .store import RunInfo

        if self._run_info is None:
            revision, dirty = git_state(self.rootdir)
            self._run_info = RunInfo(
                tag=self.tag,
                revision=revision,
                dirty=dirty,
                command=self.command,
                rootdir=str(self.rootdir),
                options=self.options,
                workers=self.workers,
                version=__version__,
                token=self.token,
            )
        return self._run_info

    # --- results ------------------------------------------------------------------------
    def add(self, result: CaseResult) -> None:
        self.pending.append((uuid.uuid4().hex, result))
        if len(self.pending) >= BATCH_RESULTS or sum(len(r.launches) for _, r in self.pending) >= BATCH_LAUNCHES:
            self.flush()

    def flush(self) -> None:
        """Write what is pending; what the database refuses goes to the fallback file."""
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        self._check_file()
        try:
            self.open()
        except Exception as exc:  # no database this time: the batch is kept in the fallback file
            failed = {uid: one_line(exc) for uid, _ in batch}
        else:
            failed = {uid: self.lost for uid, _ in batch} if self.lost else self.store.add_each(self.run_id, batch)
        self.recorded += len(batch) - len(failed)
        for uid, result in batch:
            if uid in failed:
                self._keep(uid, failed[uid], result)
            elif self._file is not None:
                self.written.append((uid, result))

    def _keep(self, uid: str, reason: str, result: CaseResult) -> None:
        self.unrecorded[uid] = reason
        self._fallback_file().add(uid, reason, result)

    def _fallback_file(self) -> fallback.FallbackFile:
        if self._fallback is None:
            run = {**vars(self.run_info()), **fallback.this_process(), "started_at": self.started_at.isoformat()}
            self._fallback = fallback.FallbackFile(
                self.rootdir,
                fallback.file_name(self.started_at, self.token),
                fallback.header(database=self.where, run=run),
            )
        return self._fallback

    def finish(self, exit_status: int, interrupted: bool) -> int:
        """Write what is pending and the run's end; the exit status the session should end with
        (a passing one turned into 4 under --gemmcheck-require-record when recording failed)."""
        self.flush()
        ended = "interrupted" if interrupted else "complete"
        if self.require and self.unrecorded and exit_status == 0:
            exit_status = RECORDING_FAILED  # as the run's row records it
        if self.run_id is not None and self.lost is None:
            try:
                self.store.finish_run(self.run_id, "unrecorded" if self.unrecorded else ended, exit_status)
            except Exception as exc:  # the run would look interrupted: the fallback file says how it ended
                self.end_failure = one_line(exc)
            self._check_file()  # gone since the last batch: its end and results went with it
        if self.require and self.failed and exit_status == 0:  # the run's end, or the file, lost
            exit_status = RECORDING_FAILED
        if self.failed:
            self._fallback_file().end(ended, exit_status)
        if self.store is not None:
            self.store.engine.dispose()
        return exit_status

    # --- what the summary says ------------------------------------------------------------
    def summary(self) -> str:
        """One line: what was recorded where, and what was not, why, and where it is instead."""
        if not self.failed:
            if self.run_id is None:
                return ""
            return f"gemmcheck: recorded run {self.run_id} ({self.recorded} results) to {self.where}"
        total = self.recorded + len(self.unrecorded)
        text = f"gemmcheck: NOT recorded to {self.where}: "
        if self.unrecorded:
            text += f"{len(self.unrecorded)} of {total} results ({fallback.reasons_words(self.unrecorded.values())})"
        if self.end_failure is not None:
            text += ("; " if self.unrecorded else "") + f"the run's end ({self.end_failure})"
        if self.run_id is not None and self.recorded and self.lost is None:
            text += f"; run {self.run_id} has the other {self.recorded}"
        saved = self.saved_to
        if saved is not None:
            text += f"; saved to {saved} (load it with: gemmcheck db import {saved})"
        elif self._fallback is not None:
            text += f"; and they could not be saved anywhere: {self._fallback.error}"
        return text


def _file_identity(url) -> tuple[Path, tuple[int, int]] | None:
    """A SQLite database's file and its (device, inode), to tell later whether it is still there."""
    from .engine import is_sqlite
    from .location import sqlite_path

    if not is_sqlite(url):
        return None
    path = sqlite_path(url)
    try:
        found = os.stat(path)
    except OSError:
        return None
    return path, (found.st_dev, found.st_ino)
