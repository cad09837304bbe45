import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
FAKE = HERE / "fake_compute_sanitizer.py"
# The child compute-sanitizer would run: the stand-in replays what the real one printed for it.
CHILD = [sys.executable, "-c", "pass"]


def recorded(stem: str) -> dict:
    """A recording's index entry, with its stdout and stderr and the path of its report."""
    entry = {e["stem"]: e for e in json.loads((DATA / "index.json").read_text())["recordings"]}[stem]
    return dict(
        entry,
        stdout=(DATA / f"{stem}.out").read_text(),
        stderr=(DATA / f"{stem}.err").read_text(),
        xml=DATA / f"{stem}.xml",
    )


class FakeSanitizer:
    """The stand-in, first on PATH as ``compute-sanitizer``."""

    def __init__(self, monkeypatch, folder: Path):
        self.monkeypatch, self.folder = monkeypatch, folder
        self.bin = folder / "bin"
        self.bin.mkdir()
        self.path = self.bin / "compute-sanitizer"
        self.path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")
        self.log_path = folder / "argv.json"
        monkeypatch.setenv("FAKE_SANITIZER_LOG", str(self.log_path))
        self.pidfile = folder / "grandchild.pid"
        monkeypatch.setenv("FAKE_SANITIZER_PIDFILE", str(self.pidfile))

    def replay(self, stem: str, *, mode: str = "replay", says: str | None = None) -> "FakeSanitizer":
        self.monkeypatch.setenv("FAKE_SANITIZER_RECORDING", stem)
        self.monkeypatch.setenv("FAKE_SANITIZER_MODE", mode)
        if says is None:
            self.monkeypatch.delenv("FAKE_SANITIZER_CHILD_SAYS", raising=False)
        else:
            self.monkeypatch.setenv("FAKE_SANITIZER_CHILD_SAYS", says)
        return self

    def mode(self, mode: str) -> "FakeSanitizer":
        self.monkeypatch.setenv("FAKE_SANITIZER_MODE", mode)
        return self

    def log(self) -> dict:
        return json.loads(self.log_path.read_text())


@pytest.fixture
def fake_sanitizer(tmp_path, monkeypatch):
    return FakeSanitizer(monkeypatch, tmp_path)


@pytest.fixture
def data_dir():
    """The recorded output (data/README.md)."""
    return DATA


@pytest.fixture
def recording():
    return recorded


@pytest.fixture
def child():
    return list(CHILD)


@pytest.fixture
def binary(fake_sanitizer):
    from pytest_gemmcheck.sanitize.locate import locate

    return locate()


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, which its parent reaps soon after a kill, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            return stat_file.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.fixture
def gone():
    """``gone(pid)``: whether ``pid`` has stopped running within a few seconds."""

    def wait(pid: int, within: float = 10) -> bool:
        deadline = time.monotonic() + within
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        return not alive(pid)

    return wait
