"""``gemmcheck bisect``: its budget's words, and end to end on a throwaway git repository whose
CPU test starts corrupting launches at one commit (the search itself, simulated:
tests/bisect/test_model.py)."""

import argparse
import json
import os
import shutil
import subprocess
import sys

import pytest

from pytest_gemmcheck.bisect.model import Budget
from pytest_gemmcheck.commands.bisect import parse_budget


def test_budget_words():
    assert parse_budget("2000") == Budget(launches=2000)
    assert parse_budget("10m") == Budget(seconds=600)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_budget("lots")


TEST_K = """
import os
import random
from pathlib import Path

from kernels import FaultInjector, tiled_gemm

RATE = float((Path(__file__).parent / "BAD_RATE").read_text())


def test_k(gemmcheck):
    case = gemmcheck.case("bisected", m=32, n=32, k=64, quant="bf16", tile="16x16")
    x = case.inputs()
    # a seeded RNG per launch: the revision's rate, the process, the launch
    rng = random.Random(f"{RATE}:{os.getpid()}")
    bad = {i for i in range(1, 100_000) if rng.random() < RATE}
    case.run(FaultInjector(lambda out: tiled_gemm(x, out, tile=(16, 16)), "tile", bad, tile=(8, 8)))
"""


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def bisect_repo(tmp_path, examples_dir):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    shutil.copy(examples_dir / "cpu" / "kernels.py", repo / "kernels.py")
    (repo / "test_k.py").write_text(TEST_K)
    shas = []
    for i in range(12):
        (repo / "BAD_RATE").write_text("0.3\n" if i >= 8 else "0.0\n")
        (repo / "NOTES").write_text(f"commit {i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"commit {i}" + (": the tail race" if i == 8 else ""))
        shas.append(_git(repo, "rev-parse", "HEAD"))
    return repo, shas


def test_end_to_end_finds_commit_8_in_worktrees_and_leaves_the_tree_alone(bisect_repo, db_url):
    """On SQLite and on the PostgreSQL server: the probes record into the user's database."""
    repo, shas = bisect_repo
    (repo / "untracked.txt").write_text("mine\n")
    before = _git(repo, "status", "--porcelain"), _git(repo, "rev-parse", "HEAD")
    db = db_url
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("GEMMCHECK_DB", None)
    command = [
        sys.executable,
        "-m",
        "pytest_gemmcheck.cli",
        "bisect",
        "--good",
        shas[0],
        "--bad",
        shas[11],
        "--test",
        "test_k.py::test_k",
        "--db",
        str(db),
    ]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"first bad revision: {shas[8][:12]} ")
    assert "commit 8: the tail race" in done.stdout
    assert "stopped: one revision holds the asked confidence" in done.stdout
    # the user's tree is as it was, and no worktree is left
    assert (_git(repo, "status", "--porcelain"), _git(repo, "rev-parse", "HEAD")) == before
    assert len(_git(repo, "worktree", "list").splitlines()) == 1
    # each probe is a recorded run tagged bisect:<rev>; a second bisect reruns nothing
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    with engine.connect() as connection:
        tags = [row[0] for row in connection.execute(text("select tag from run"))]
    engine.dispose()
    assert tags and all(tag.startswith("bisect:") for tag in tags)
    again = subprocess.run(
        command + ["--format", "json"], cwd=repo, env=env, capture_output=True, text=True, timeout=900
    )
    report = json.loads(again.stdout)
    assert report["first_bad"]["revision"] == shas[8]
    assert report["launches"] == 0 and {p["source"] for p in report["probes"]} == {"history"}


def test_a_probe_command_that_exits_125_is_a_skip_and_no_worktree_is_left(bisect_repo, tmp_path):
    repo, shas = bisect_repo
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_gemmcheck.cli",
            "bisect",
            "--good",
            shas[0],
            "--bad",
            shas[11],
            "--db",
            str(tmp_path / "h.db"),
            "--",
            "sh",
            "-c",
            "exit 125",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout.startswith("no first bad revision: the --bad revision could not be probed (a skip)")
    assert f"skipped {shas[11][:12]}: exit status 125" in done.stdout
    assert len(_git(repo, "worktree", "list").splitlines()) == 1


def test_a_test_that_does_not_exist_measures_nothing_and_claims_no_rate(bisect_repo, tmp_path):
    """Every probe skipped: zero launches counted, so no rate on either side, in words or JSON."""
    repo, shas = bisect_repo
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("GEMMCHECK_DB", None)
    command = [
        sys.executable,
        "-m",
        "pytest_gemmcheck.cli",
        "bisect",
        "--good",
        shas[0],
        "--bad",
        shas[11],
        "--test",
        "test_k.py::nosuch",
        "--db",
        str(tmp_path / "h.db"),
    ]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr
    assert done.stdout.startswith("no first bad revision: the --bad revision could not be probed (a skip)")
    assert "counted in launches: none was counted (every probe was skipped), so there is no rate to tell" in done.stdout
    assert "rate before" not in done.stdout
    assert f"skipped {shas[11][:12]}: exit status 4" in done.stdout
    report = json.loads(
        subprocess.run(
            command + ["--format", "json"], cwd=repo, env=env, capture_output=True, text=True, timeout=300
        ).stdout
    )
    assert (report["units_counted"], report["rate_good"], report["rate_bad"]) == (0, None, None)
