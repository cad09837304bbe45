"""Recording a session into the history database, from the process that owns the session
(never an xdist worker: their results arrive here on their reports).

The database is opened when the first result arrives, so a test suite without gemmcheck
cases never creates one -- except that a database named explicitly, or one that already
exists, is checked at start-up: a corrupt or newer-schema database is a one-line usage error
before any kernel runs. Results are written in batches (by count, launches and time); if the
database fails mid-session, pending results go to a JSON file beside it and nothing is lost.
Nothing is left pending while a test runs (pending results are written before the next test
starts), so a session killed during a long test loses at most that test's results.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from ..case.result import CaseResult

BATCH_RESULTS = 64
BATCH_LAUNCHES = 20_000


def git_state(path: Path) -> tuple[str | None, bool | None]:
    """(HEAD revision, dirty) of the repository holding ``path``; (None, None) outside one."""
    try:
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=30)
        return head.stdout.strip(), bool(status.stdout.strip()) if status.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None, None


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
    def __init__(self, *, url, explicit: bool, rootdir: Path, tag: str | None, command: str, options: dict,
                 workers: int):
        self.url = url
        self.explicit = explicit
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

    def check_early(self) -> None:
        """Open now when the database was named or already exists; raises DatabaseError."""
        from .engine import is_sqlite

        exists = not is_sqlite(self.url) or (self.url.database and Path(self.url.database).exists())
        if self.explicit or exists:
            self._open()

    def _open(self) -> None:
        if self.store is not None:
            return
        from .engine import is_sqlite, open_database
        from .store import HistoryStore

        # migrations run by themselves only on SQLite files; a shared server is upgraded on purpose
        self.store = HistoryStore(open_database(self.url, auto_upgrade=is_sqlite(self.url)))

    def _begin(self, first: CaseResult) -> None:
        from .. import __version__
        from .store import RunInfo

        self._open()
        revision, dirty = git_state(self.rootdir)
        info = RunInfo(tag=self.tag, revision=revision, dirty=dirty, command=self.command, rootdir=str(self.rootdir),
                       options=self.options, workers=self.workers, version=__version__)
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
