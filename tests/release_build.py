"""The release's sdist and wheel, built once per test session for tests/test_packaging.py and
tests/test_downstream.py.

The build runs on a snapshot of the source tree in a temporary directory (the files git tracks
or would track: ``git ls-files --cached --others --exclude-standard``), never in the tree
itself: setuptools writes ``build/`` and ``*.egg-info`` where it builds, and other work may be
editing the tree meanwhile. ``python -m build`` makes the sdist, then the wheel from the
unpacked sdist, so the wheel also proves the sdist complete. Under pytest-xdist the workers
share one build (a lock file in the session's temporary root).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# What a snapshot leaves out when the tree is not a git checkout (an unpacked sdist)
NOT_SOURCES = (
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    ".gemmcheck",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    "artifacts",
)
# Lines of pip's output that mean the build environment could not be installed (no network)
NO_NETWORK = (
    "Could not find a version that satisfies the requirement setuptools",
    "No matching distribution found for setuptools",
    "NewConnectionError",
    "Network is unreachable",
)


@dataclass
class Dists:
    source: Path  # the snapshot that was built
    sdist: Path
    wheel: Path
    seconds: float
    isolation: bool  # False: built with this environment's setuptools (no network for an isolated one)
    log: str
    left_in_tree: list[str]  # what appeared in the source tree itself while building (nothing)


def _snapshot(target: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:  # not a checkout: copy the tree, less what is never a source
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(*NOT_SOURCES))
        return
    for name in listed.stdout.split("\0"):
        source = ROOT / name
        if name and source.is_file():  # tracked but deleted in the tree: not part of it
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _build(work: Path) -> Dists:
    source, outdir = work / "src", work / "dist"
    shutil.rmtree(work, ignore_errors=True)
    source.mkdir(parents=True)
    _snapshot(source)
    watched = [ROOT / "build", ROOT / "dist"]
    before = {path for path in watched if path.exists()}
    started = time.monotonic()
    command = [sys.executable, "-m", "build", "--outdir", str(outdir), str(source)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    log, isolation = done.stdout + done.stderr, True
    if done.returncode != 0 and any(line in log for line in NO_NETWORK):
        # the isolated build environment needs setuptools from an index; offline, build with
        # this environment's own (build checks that it meets build-system.requires)
        done = subprocess.run(command + ["--no-isolation"], capture_output=True, text=True, timeout=600)
        log, isolation = log + "\n--- --no-isolation ---\n" + done.stdout + done.stderr, False
    if done.returncode != 0:
        raise AssertionError(f"python -m build failed (exit {done.returncode}):\n{log[-6000:]}")
    sdists, wheels = sorted(outdir.glob("*.tar.gz")), sorted(outdir.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, (
        f"expected one sdist and one wheel in {outdir}: {sorted(outdir.iterdir())}"
    )
    left = sorted(str(path) for path in watched if path.exists() and path not in before)
    return Dists(source, sdists[0], wheels[0], time.monotonic() - started, isolation, log, left)


def build_dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """The session's sdist and wheel (built at the first call of this session)."""
    pytest.importorskip("build", reason="building the release needs the build package (pip install -e '.[test]')")
    basetemp = tmp_path_factory.getbasetemp()
    # xdist workers' temp dirs sit in one per-session folder: share the build through it
    shared = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    work, record = shared / "gemmcheck-release", shared / "gemmcheck-release.json"
    with open(shared / "gemmcheck-release.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if record.exists():
            fields = json.loads(record.read_text())
            return Dists(**{k: Path(v) if k in ("source", "sdist", "wheel") else v for k, v in fields.items()})
        dists = _build(work)
        record.write_text(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in asdict(dists).items()}))
        return dists
