"""Recording a session into the history database, from the process that owns the session
(never an xdist worker: their results arrive here on their reports).

The session opens the database when its first gemmcheck case starts (:meth:`Recorder.open`:
a corrupt or newer-schema database is then a one-line usage error before any kernel runs), or,
on an xdist controller, when the first result arrives; a test suite without gemmcheck cases
never touches one. Results are written in batches (by count, launches and time); if the
database fails mid-session, pending results go to a JSON file beside it and nothing is lost.
Nothing is left pending while a test runs (pending results are written before the next test
starts), so a session killed during a long test loses at most that test's results.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from ..case.result import CaseResult
from ..environment.git import git_state

BATCH_RESULTS = 64
BATCH_LAUNCHES = 20_000


def masked_command(args) -> str:
    """The command line with passwords in any URL hidden."""
    masked = []
    for arg in args:
        arg = str(arg)
        if "://" in arg:
            from .engine import safe_url

            prefix, _, url = arg.rpartition("=") if arg.startswith("--") else ("", "", arg)
            arg = f"{prefix}={safe_url(url)}" if prefix else safe_url(url)
        masked.append(arg)
    return " ".join(masked)


class Recorder:
    def __init__(self, *, url, rootdir: Path, tag: str | None, command: str, options: dict, workers: int,
                 token: str | None = None):
        self.url = url
        self.token = token  # the session's id, written into its run row
        self.rootdir = rootdir
        self.tag = tag
        self.command = command
        self.options = options
        self.workers = workers
        self.started_at = datetime.now(timezone.utc)
        self.store = None
        self.run_id: int | None = None
        self.pending: list[CaseResult] = []
        self.recorded = 0
        self.failure: str | None = None  # why recording stopped, one line
        self.fallback: Path | None = None
        self._unrecorded: list[CaseResult] = []

    @property
    def where(self) -> str:
        from .engine import safe_url

        return safe_url(self.url)

    def open(self) -> None:
        """Open the database now (creating and migrating the embedded SQLite default): a database
        that cannot be used raises DatabaseError before anything is recorded. Otherwise the
        first write opens it."""
        if self.store is not None:
            return
        from .engine import is_sqlite, open_database
        from .store import HistoryStore

        # migrations run by themselves only on SQLite files; a shared server is upgraded on purpose
        self.store = HistoryStore(open_database(self.url, auto_upgrade=is_sqlite(self.url)))

    def _begin(self, first: CaseResult) -> None:
        from .. import __version__
        from .store import RunInfo

        self.open()
        revision, dirty = git_state(self.rootdir)
        info = RunInfo(tag=self.tag, revision=revision, dirty=dirty, command=self.command, rootdir=str(self.rootdir),
                       options=self.options, workers=self.workers, version=__version__, token=self.token)
        self.run_id = self.store.begin_run(info, first.stack or None, started_at=self.started_at)

    def add(self, result: CaseResult) -> None:
        if self.failure is not None:
            self._unrecorded.append(result)
            return
        self.pending.append(result)
        if len(self.pending) >= BATCH_RESULTS or sum(len(r.launches) for r in self.pending) >= BATCH_LAUNCHES:
            self.flush()

    def flush(self) -> None:
        if not self.pending or self.failure is not None:
            return
        try:
            if self.run_id is None:
                self._begin(self.pending[0])
            self.store.add_results(self.run_id, self.pending)
            self.recorded += len(self.pending)
            self.pending = []
        except Exception as exc:  # a broken store must not take the results with it
            self.failure = _one_line(exc)
            self._unrecorded.extend(self.pending)
            self.pending = []

    def finish(self, exit_status: int, interrupted: bool) -> None:
        self.flush()
        if self.failure is None and self.run_id is not None:
            try:
                self.store.finish_run(self.run_id, "interrupted" if interrupted else "complete", exit_status)
            except Exception as exc:
                self.failure = _one_line(exc)
        if self._unrecorded:
            self.fallback = self._save_fallback()
        if self.store is not None:
            self.store.engine.dispose()

    def _save_fallback(self) -> Path:
        folder = self.rootdir / ".gemmcheck"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"unrecorded-{self.started_at:%Y%m%dT%H%M%S}-{os.getpid()}.json"
        payload = {"database": self.where, "reason": self.failure, "tag": self.tag, "command": self.command,
                   "started_at": self.started_at.isoformat(), "results": [r.to_dict() for r in self._unrecorded]}
        path.write_text(json.dumps(payload, indent=1, default=str))
        return path

    def summary(self) -> str:
        if self.failure is not None:
            text = f"gemmcheck: NOT recorded to {self.where}: {self.failure}"
            if self.fallback is not None:
                text += f"; {len(self._unrecorded)} results saved to {self.fallback}"
            return text
        if self.run_id is None:
            return ""
        return f"gemmcheck: recorded run {self.run_id} ({self.recorded} results) to {self.where}"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
