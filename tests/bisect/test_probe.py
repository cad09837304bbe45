"""bisect/probe.py through ``gemmcheck bisect``: a revision git cannot resolve is one line naming
the option, not git's own message; and a range whose --good fails too ends at once, said."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from pytest_gemmcheck.cli import main as gemmcheck


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def small_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    for i in range(3):
        (repo / "NOTES").write_text(f"commit {i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"commit {i}")
    return repo


@pytest.mark.parametrize(
    "good, bad, line",
    [
        ("nope", "HEAD", "--good 'nope': no such commit in {repo} (a branch, tag, commit id or HEAD~N)"),
        ("HEAD~1", "HEAD~9", "--bad 'HEAD~9': no such commit in {repo} (a branch, tag, commit id or HEAD~N)"),
        ("HEAD~1", "-n", "--bad '-n': no such commit in {repo} (a branch, tag, commit id or HEAD~N)"),
        ("HEAD~1", "HEAD:NOTES", "--bad 'HEAD:NOTES': no such commit in {repo} (a branch, tag, commit id or HEAD~N)"),
    ],
)
def test_a_revision_git_cannot_resolve_is_one_line_naming_the_option(
    small_repo, tmp_path, capsys, monkeypatch, good, bad, line
):
    """Before: 'git rev-parse --verify --quiet nope^{commit}: failed'."""
    monkeypatch.chdir(small_repo)
    status = gemmcheck(
        ["bisect", f"--good={good}", f"--bad={bad}", "--test", "t.py::t", "--db", str(tmp_path / "h.db")]
    )
    err = capsys.readouterr().err
    assert status == 2 and err == f"gemmcheck bisect: {line.format(repo=small_repo)}\n", err
    assert not (tmp_path / "h.db").exists()


def test_a_folder_outside_any_repository_is_said_so(tmp_path, capsys):
    status = gemmcheck(["bisect", "--good", "HEAD~1", "--bad", "HEAD", "--test", "t.py::t", "--repo", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and err == (
        f"gemmcheck bisect: --repo {tmp_path}: not in a git repository (give the kernel "
        "repository's folder with --repo)\n"
    ), err


FAILING_TEST = """
from kernels import bf16_matmul

def test_k(gemmcheck):
    case = gemmcheck.case("always", m=16, n=16, k=32)
    x = case.inputs()

    def launch(out):
        bf16_matmul(x, out)
        out[0, 0] += 100

    case.run(launch)
"""


def test_a_good_revision_that_fails_too_is_found_at_once_and_said(small_repo, examples_dir, tmp_path):
    """Every commit of the range fails, --good too: after --bad shows its failure, --good is
    probed, fails, and the bisection ends there (exit status 3) saying so."""
    shutil.copy(examples_dir / "cpu" / "kernels.py", small_repo / "kernels.py")
    (small_repo / "test_k.py").write_text(FAILING_TEST)
    _git(small_repo, "add", "-A")
    _git(small_repo, "commit", "-q", "-m", "a kernel that always fails")
    for i in range(3):
        (small_repo / "NOTES").write_text(f"later {i}\n")
        _git(small_repo, "commit", "-q", "-am", f"later {i}")
    good = _git(small_repo, "rev-parse", "HEAD~3")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("GEMMCHECK_DB", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_gemmcheck.cli",
            "bisect",
            "--good",
            good,
            "--bad",
            "HEAD",
            "--test",
            "test_k.py::test_k",
            "--db",
            str(tmp_path / "h.db"),
        ],
        cwd=small_repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith(
        "no first bad revision: the --good revision fails too: the failure is older than "
        "the range, so no commit in it made it start; give an earlier --good"
    ), done.stdout
    rows = [line.split() for line in done.stdout.splitlines() if re.match(r"\d+ +[0-9a-f]{12} ", line)]
    assert [(row[2], row[3]) for row in rows] == [("bad", "1/1"), ("good", "1/1")], done.stdout
    assert "counted in launches: --good 1/1 bad, --bad 1/1 bad\n" in done.stdout
    assert "rate before" not in done.stdout
