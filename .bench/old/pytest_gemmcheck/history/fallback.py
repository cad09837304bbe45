"""The fallback file: the results a session could not write to its database, kept where it can
write them, for ``gemmcheck db import`` to load later.

It is JSON Lines, appended to as results fail (so that a session killed later keeps them):

    {"gemmcheck_unrecorded": 1, "database": ..., "run": {"token": ..., "tag": ..., ...}}
    {"uid": "<32 hex>", "reason": "<why, one line>", "result": {<CaseResult.to_dict()>}}
    ...
    {"end": {"status": "complete" | "interrupted", "exit_status": 0, "ended_at": "<ISO time>"}}

The run is found again by its token and each result by its uid, so importing a file twice, or
one whose results were written after all, stores nothing twice. A last line cut short by a kill
is left out. Files of the earlier single-document form (``unrecorded-*.json``: database, reason,
tag, command, started_at, results) import too, with a token and uids derived from their content.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..records.result import CaseResult
from .location import DatabaseError, make_folder

FORMAT_KEY = "gemmcheck_unrecorded"
FORMAT_VERSION = 1


def reasons_words(reasons) -> str:
    """Why results could not be stored, in a few words: the first reason, and how many more."""
    distinct = sorted(set(reasons))
    more = len(distinct) - 1
    return distinct[0] + (f"; and {more} more reason{'s' if more != 1 else ''}" if more else "")


def _line(record: dict) -> str:
    return json.dumps(record, default=str) + "\n"


class FallbackFile:
    """The session's fallback file, made at its first entry: under the rootdir's .gemmcheck/, else
    (a folder the session cannot write) in the temp dir. Every entry is kept in memory as well, so
    that a file that can no longer be written is made again whole in the next place, and one
    deleted or replaced since it was last written (``.gemmcheck/`` removed mid-session) is made
    again whole in its place."""

    def __init__(self, rootdir: Path, name: str, header: dict):
        self.places = [rootdir / ".gemmcheck", Path(tempfile.gettempdir())]
        self.name = name
        self.lines = [_line(header)]
        self.written = 0  # lines of self.lines in the file
        self.path: Path | None = None
        self.identity: tuple[int, int] | None = None  # the file's (device, inode) when last written
        self.error: str | None = None  # why no place could hold it

    def add(self, uid: str, reason: str, result: CaseResult) -> None:
        self.lines.append(_line({"uid": uid, "reason": reason, "result": result.to_dict()}))
        self._save()

    def end(self, status: str, exit_status: int) -> None:
        ended_at = datetime.now(timezone.utc).isoformat()
        self.lines.append(_line({"end": {"status": status, "exit_status": exit_status, "ended_at": ended_at}}))
        self._save()

    def _save(self) -> None:
        while True:
            try:
                if self.path is None:
                    if not self.places:
                        return
                    folder = self.places.pop(0)
                    make_folder(folder)
                    self.path, self.written = folder / self.name, 0
                elif self._identity() != self.identity:  # gone or replaced since: written again whole
                    make_folder(self.path.parent)
                    self.written = 0
                with open(self.path, "a" if self.written else "w") as file:
                    file.writelines(self.lines[self.written :])
                self.written = len(self.lines)
                self.identity = self._identity()
                self.error = None
                return
            except OSError as exc:  # this place cannot hold it: the next one gets everything
                self.error = f"{exc.strerror or exc} ({exc.filename or self.path})"
                if self.path is not None:
                    _remove(self.path)
                self.path = None

    def _identity(self) -> tuple[int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # a folder that refused the file may refuse its removal too


def file_name(started_at: datetime, token: str) -> str:
    return f"unrecorded-{started_at:%Y%m%dT%H%M%S}-{os.getpid()}-{token[:8]}.jsonl"


def header(*, database: str, run: dict) -> dict:
    return {FORMAT_KEY: FORMAT_VERSION, "database": database, "run": run}


# --- reading -------------------------------------------------------------------------------


@dataclass
class Fallback:
    """A fallback file read back."""

    path: Path
    run: dict  # token, tag, revision, dirty, command, rootdir, options, workers, version, host, pid, started_at
    results: list[tuple[str, CaseResult]] = field(default_factory=list)  # (uid, result)
    end: dict | None = None  # status, exit_status, ended_at; None: the session did not end
    cut: int = 0  # lines left out: cut short by a kill


def read(path: Path) -> Fallback:
    """The file's run, results and end; DatabaseError (one line) for a file that is none."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatabaseError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict) and "results" in document and FORMAT_KEY not in document:
        return _read_earlier_form(Path(path), document)
    lines = text.splitlines()
    records, cut = [], 0
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            cut += 1
    if not records or not isinstance(records[0], dict) or records[0].get(FORMAT_KEY) != FORMAT_VERSION:
        raise DatabaseError(f"{path}: not a gemmcheck fallback file (unrecorded-*.jsonl)")
    fallback = Fallback(Path(path), run=records[0].get("run") or {}, cut=cut)
    for record in records[1:]:
        if "result" in record:
            fallback.results.append((record["uid"], CaseResult.from_dict(record["result"])))
        elif "end" in record:
            fallback.end = record["end"]
    return fallback


def _read_earlier_form(path: Path, document: dict) -> Fallback:
    # written at the session's end, so it ended; the token and uids come from what it holds
    identity = json.dumps([document.get("started_at"), document.get("command"), document.get("tag")])
    token = hashlib.sha256(identity.encode()).hexdigest()[:32]
    results = [
        (hashlib.sha256(f"{token}:{index}".encode()).hexdigest()[:32], CaseResult.from_dict(data))
        for index, data in enumerate(document["results"])
    ]
    run = {
        "token": token,
        "tag": document.get("tag"),
        "command": document.get("command"),
        "started_at": document.get("started_at"),
    }
    return Fallback(path, run=run, results=results, end={"status": "complete", "exit_status": None})


def this_process() -> dict:
    """The recording process, as a fallback's run names it."""
    from ..environment.stack import process_start_time

    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "pid_start": process_start_time(pid)}


# --- loading into a database ------------------------------------------------------------------


@dataclass
class Loaded:
    """What ``gemmcheck db import`` did with one file."""

    run_id: int
    imported: int
    already: int  # stored before (an earlier import, or written after all)
    failed: dict[str, str]  # uid -> why it still cannot be stored
    status: str  # the run's status now

    def words(self) -> str:
        text = (
            f"run {self.run_id}: imported {self.imported} result{'s' if self.imported != 1 else ''}, "
            f"{self.already} already recorded; status {self.status}"
        )
        if self.failed:
            text += f"; {len(self.failed)} could not be stored ({reasons_words(self.failed.values())})"
        return text


def load(store, fallback: Fallback) -> Loaded:
    """Store what ``fallback`` holds and the run had not stored: into its run (found by its
    token), made from the file when the database has none. The run's status becomes the one the
    session ended with, once every result is stored."""
    from .store import RunInfo

    run = fallback.run
    found = store.run_of_token(run["token"]) if run.get("token") else None
    if found is None:
        info = RunInfo(
            **{
                name: run.get(name)
                for name in (
                    "tag",
                    "revision",
                    "dirty",
                    "command",
                    "rootdir",
                    "options",
                    "version",
                    "token",
                    "host",
                    "pid",
                    "pid_start",
                )
            },
            workers=run.get("workers") or 0,
        )
        started_at = datetime.fromisoformat(run["started_at"]) if run.get("started_at") else None
        run_id, status = store.begin_run(info, started_at=started_at, status="interrupted"), "interrupted"
    else:
        run_id, status = found
    uids = [uid for uid, _ in fallback.results]
    stored = store.stored_uids(uids)
    failed = store.add_each(run_id, [(uid, result) for uid, result in fallback.results if uid not in stored])
    if fallback.end is not None:  # the session ended: its status, or unrecorded while results remain out
        status = "unrecorded" if failed else fallback.end["status"]
        ended_at = fallback.end.get("ended_at")
        store.finish_run(
            run_id,
            status,
            fallback.end.get("exit_status"),
            ended_at=datetime.fromisoformat(ended_at) if ended_at else None,
        )
    return Loaded(
        run_id=run_id, imported=len(uids) - len(stored) - len(failed), already=len(stored), failed=failed, status=status
    )
