"""A command under a time limit: its output and status, and at the limit the whole process group
killed, grandchildren included."""

import os
import sys
import time

from pytest_gemmcheck.sanitize.process import run_limited


def test_output_and_status(tmp_path):
    done = run_limited(
        [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(6)"],
        timeout=30,
        environ=os.environ,
        workdir=tmp_path,
    )
    assert (done.exit_status, done.stdout, done.stderr, done.timed_out) == (6, "out\n", "err\n", False)


def test_the_environment_is_the_one_given(tmp_path):
    done = run_limited(
        [sys.executable, "-c", "import os; print(os.environ['ONLY'])"],
        timeout=30,
        environ={"ONLY": "this", "PATH": os.environ["PATH"]},
        workdir=tmp_path,
    )
    assert done.stdout == "this\n"


def test_at_the_limit_the_group_is_killed(tmp_path, gone):
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time, pathlib\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'])\n"
        f"pathlib.Path({str(pidfile)!r}).write_text(str(g.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(3600)\n"
    )
    began = time.monotonic()
    done = run_limited([sys.executable, "-c", script], timeout=2, environ=os.environ, workdir=tmp_path)
    assert done.timed_out and done.exit_status is None
    assert 2 <= time.monotonic() - began < 20
    assert done.stdout == "started\n"  # what it printed before the kill is kept
    assert gone(int(pidfile.read_text()))


def test_what_a_finished_command_left_running_is_killed(tmp_path, gone):
    pidfile = tmp_path / "left.pid"
    script = (
        "import subprocess, sys, pathlib\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'],\n"
        "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"pathlib.Path({str(pidfile)!r}).write_text(str(g.pid))\n"
    )
    done = run_limited([sys.executable, "-c", script], timeout=30, environ=os.environ, workdir=tmp_path)
    assert done.exit_status == 0 and not done.timed_out
    assert gone(int(pidfile.read_text()))


def test_a_command_that_cannot_start(tmp_path):
    done = run_limited([str(tmp_path / "missing")], timeout=30, environ=os.environ, workdir=tmp_path)
    assert done.error == "No such file or directory" and done.exit_status is None
