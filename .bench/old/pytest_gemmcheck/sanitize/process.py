"""Running a command under a time limit, in a process group of its own that is killed whole when
the limit passes (compute-sanitizer, the child it starts, and anything that child starts)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

POLL_S = 0.05  # how often the exit is looked for: nothing against runs of seconds


@dataclass(frozen=True)
class Finished:
    exit_status: int | None  # None: killed at the time limit
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    error: str | None = None  # why it could not be started


def run_limited(
    command: Sequence[str], *, timeout: float, environ: Mapping[str, str], workdir: Path, cwd: str | None = None
) -> Finished:
    """Runs ``command`` with stdout and stderr in files under ``workdir`` (a pipe a grandchild
    keeps open would hold the reader past the kill), for at most ``timeout`` seconds."""
    out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
    began = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            process = subprocess.Popen(
                list(command),
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=dict(environ),
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            return Finished(None, "", "", time.monotonic() - began, error=exc.strerror or str(exc))
        try:
            timed_out = not _exited(process.pid, began + timeout)
        finally:
            # The group is killed while its leader is unreaped, so that its id cannot have been
            # reused: at the limit (or an interrupt) everything in it, after an exit whatever
            # was left running.
            _kill_group(process.pid)
            status = process.wait()
        if timed_out:
            status = None
    return Finished(status, _read(out_path), _read(err_path), time.monotonic() - began, timed_out)


def _exited(pid: int, deadline: float) -> bool:
    """Whether ``pid`` exited before ``deadline``, leaving it unreaped (a zombie) either way."""
    while True:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(POLL_S, left))


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")
