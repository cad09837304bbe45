"""``gemmcheck selftest`` (commands/selftest.py; its kernels, commands/selftest_probes.py) on the
CPU: it passes on a sound plugin, says what it proved, records nothing unless asked, and fails
when the checker it runs is broken (an accuracy rule that sees nothing wrong, a consistency
check that sees no difference)."""

import io
import os
import sqlite3
import subprocess
import sys

import pytest

from pytest_gemmcheck.commands import selftest
from pytest_gemmcheck.commands.selftest_probes import PROBES


def run_command(*args, cwd):
    env = {key: value for key, value in os.environ.items() if key not in ("GEMMCHECK_DB", "TRITON_INTERPRET")}
    return subprocess.run(
        [sys.executable, "-m", "pytest_gemmcheck", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_the_command_passes_on_the_cpu_and_says_what_it_proved(tmp_path):
    done = run_command("selftest", "--device", "cpu", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "device   cpu" in out and "check    torch (torch ops)" in out and "fp8 e4m3fn" in out
    for probe in PROBES:
        assert f"  {probe.name}" in out and probe.what in out
    assert out.count("as expected") == len(PROBES)
    assert "launches 1, 6: inconsistent, wrong" in out  # a bad first launch is the bad one
    assert "launch 5: inconsistent)" in out  # under the tolerance: consistency alone
    assert not (tmp_path / ".gemmcheck").exists()  # nothing recorded


def test_record_writes_the_runs_to_the_history_and_a_second_run_still_passes(tmp_path):
    database = tmp_path / "history.db"
    for _ in range(2):  # the second is judged against the first's history: still judged right
        done = run_command("--db", str(database), "selftest", "--device", "cpu", "--record", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(database) as connection:
        tags = connection.execute("SELECT tag FROM run").fetchall()
        results = connection.execute("SELECT count(*) FROM result").fetchone()[0]
    assert tags == [("selftest",), ("selftest",)] and results == 2 * len(PROBES)


def test_a_device_that_is_not_there_is_a_usage_error(tmp_path):
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("there is a GPU")
    done = run_command("selftest", "--device", "cuda:0", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "gemmcheck selftest: --device cuda:0: no GPU is available"


def _clean_accuracy(real):
    """torch_backend.check_launch whose accuracy half sees nothing wrong."""
    from pytest_gemmcheck.checking.rule import AccuracyStats, Locations

    def check_launch(out, ref, rowmax, tol, tile=None, copies=()):
        accuracy, diffs = real(out, ref, rowmax, tol, tile, copies)
        return AccuracyStats(Locations(tiles=accuracy.wrong.tiles), 0, 0.0, 0.0, 0.0), diffs

    return check_launch


def _blind_consistency(real):
    """torch_backend.check_launch whose consistency half sees no difference."""
    from pytest_gemmcheck.checking.rule import DiffStats, Locations

    def check_launch(out, ref, rowmax, tol, tile=None, copies=()):
        accuracy, diffs = real(out, ref, rowmax, tol, tile, copies)
        return accuracy, [DiffStats(Locations(tiles=diff.differing.tiles), 0.0) for diff in diffs]

    return check_launch


@pytest.mark.parametrize(
    "broken, misjudged",
    [
        (_clean_accuracy, ["corrupted row", "unwritten output"]),
        (_blind_consistency, ["race under tolerance"]),
    ],
)
def test_a_broken_checker_fails_the_self_test(monkeypatch, broken, misjudged):
    from pytest_gemmcheck.checking import torch_backend

    monkeypatch.setattr(torch_backend, "check_launch", broken(torch_backend.check_launch))
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    out = io.StringIO()
    assert selftest.selftest("cpu", out=out) == 1
    text = out.getvalue()
    assert "FAILED" in text and "proved" not in text
    assert sorted(line.split("  ")[1].strip() for line in text.splitlines() if "MISJUDGED" in line) == sorted(misjudged)


def test_the_unbroken_checker_passes_in_process():
    """The control of the test above: the same call, nothing patched."""
    out = io.StringIO()
    assert selftest.selftest("cpu", out=out) == 0, out.getvalue()
