"""Faults a recording session must survive: its controller or one xdist worker killed, SIGTERM,
a full disk, a read-only database file, database folder or rootdir. After each, the database
passes PRAGMA integrity_check, every finished result is in it or in the fallback file (which
imports), and the run's status says what happened.

Read-only is what a user without write permission meets: as root, the session runs as
``nobody`` on files root made; otherwise write permission is taken away. The full disk is a
small tmpfs, mounted where this machine lets root do it. Where neither can be had, the test
skips and says why."""

import json
import os
import pwd
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from pytest_gemmcheck.cli import main as gemmcheck

QUICK = 6
# QUICK short cases, then a long plain test that says when it started (and its pid), for the kill
KILLED_MID_RUN = textwrap.dedent(f"""
    import os, pathlib, time
    import pytest
    from kernels import bf16_matmul

    @pytest.mark.parametrize("m", [16 * (i + 1) for i in range({QUICK})])
    def test_quick(gemmcheck, m):
        case = gemmcheck.case("quick", m=m, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: bf16_matmul(x, out))

    def test_zz_long():
        pathlib.Path(os.environ["LONG_STARTED"]).write_text(str(os.getpid()))
        time.sleep(120)
""")


def whole_results(db: Path) -> int:
    """How many results the database holds; each must hold every launch it declares."""
    with sqlite3.connect(db) as connection:
        per_result = connection.execute(
            "SELECT r.launches, count(l.id) FROM result r LEFT JOIN launch l ON l.result_id = r.id GROUP BY r.id"
        ).fetchall()
    assert all(declared == stored for declared, stored in per_result), per_result
    return len(per_result)


def runs(capsys, db: Path) -> list[dict]:
    """`gemmcheck runs`: the next look, which marks a dead session's run interrupted."""
    capsys.readouterr()
    assert gemmcheck(["--db", str(db), "runs", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def killable(pytester, write_suite, leftovers, tmp_path):
    """start(*args): a pytest session (its own process group) over KILLED_MID_RUN, once its long
    test runs and every quick result is recorded; stop(process): its group ended."""
    write_suite(pytester.path)
    pytester.makepyfile(test_killed=KILLED_MID_RUN)
    db, started, log = tmp_path / "killed.db", tmp_path / "long-started", tmp_path / "session.log"
    sessions = []

    def start(*args) -> subprocess.Popen:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--gemmcheck-repeat=2",
                f"--gemmcheck-db={db}",
                *args,
            ],
            cwd=pytester.path,
            env={**os.environ, "LONG_STARTED": str(started)},
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        sessions.append(process)
        deadline = time.monotonic() + 180
        while not (started.exists() and leftovers.rows(db, "result") == QUICK):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        return process

    start.db, start.pid_file, start.log = db, started, log
    yield start
    for process in sessions:  # the session's other processes (xdist workers) too
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


@pytest.mark.parametrize(
    "how,args", [(signal.SIGKILL, ("-n", "2")), (signal.SIGTERM, ())], ids=["sigkill-xdist-controller", "sigterm"]
)
def test_a_session_killed_mid_run_keeps_every_finished_result_and_is_marked_interrupted(
    killable, capsys, leftovers, how, args
):
    if args:
        pytest.importorskip("xdist")
    process = killable(*args)
    process.send_signal(how)
    assert process.wait(timeout=60) != 0
    assert whole_results(killable.db) == QUICK
    [run] = runs(capsys, killable.db)
    assert run["status"] == "interrupted", run
    assert leftovers.integrity(killable.db) == "ok"


def test_a_killed_xdist_worker_fails_its_test_and_the_run_completes(killable, capsys, leftovers):
    pytest.importorskip("xdist")
    process = killable("-n", "2")
    os.kill(int(killable.pid_file.read_text()), signal.SIGKILL)
    assert process.wait(timeout=180) == pytest.ExitCode.TESTS_FAILED, killable.log.read_text()
    assert whole_results(killable.db) == QUICK
    [run] = runs(capsys, killable.db)
    assert run["status"] == "complete", run
    assert leftovers.integrity(killable.db) == "ok"


# --- a full disk ---------------------------------------------------------------------------

DISK_FULL = textwrap.dedent("""
    import os
    from kernels import bf16_matmul

    def run(gemmcheck, kernel):
        case = gemmcheck.case(kernel, m=16, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: bf16_matmul(x, out))

    def test_1(gemmcheck):
        run(gemmcheck, "before")

    def test_2(gemmcheck):
        run(gemmcheck, "filling")
        with open(os.environ["FILLER"], "wb") as filler:
            try:
                while True:
                    filler.write(b"\\0" * 65536)
                    filler.flush()
            except OSError:
                pass  # the disk is full

    def test_3(gemmcheck):
        run(gemmcheck, "full")
""")


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs, where this machine lets root mount one."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_keeps_the_results_in_the_fallback_file_and_they_import(
    pytester, write_suite, small_disk, leftovers, capsys, monkeypatch
):
    db, filler = small_disk / "history.db", small_disk / "filler"
    assert gemmcheck(["--db", str(db), "db", "upgrade"]) == 0
    monkeypatch.setenv("FILLER", str(filler))
    write_suite(pytester.path)
    pytester.makepyfile(test_full=DISK_FULL)
    result = pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}", "--gemmcheck-repeat=2")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    [line] = leftovers.lines(result.stdout.lines)
    assert "2 of 3 results (database or disk is full)" in line, line
    saved = leftovers.saved_file(line)
    assert saved.parent == pytester.path / ".gemmcheck"
    filler.unlink()
    assert leftovers.integrity(db) == "ok"
    capsys.readouterr()
    assert gemmcheck(["--db", str(db), "db", "import", str(saved)]) == 0
    assert "imported 2 results" in capsys.readouterr().out
    assert whole_results(db) == 3
    [run] = runs(capsys, db)
    assert run["status"] == "complete", run


# --- read-only files and folders -------------------------------------------------------------


class Unprivileged:
    """Sessions run by a user who cannot write what ``deny`` is given: ``nobody`` when this is
    root (on files root made), else this user with write permission taken away."""

    def __init__(self, folder: Path):
        self.folder = folder  # readable by that user; the tests' files go here, and it is its HOME
        self.root = os.geteuid() == 0
        self.nobody = pwd.getpwnam("nobody") if self.root else None
        # Triton's cache defaults to HOME, which these tests make read-only: a writable one elsewhere
        self.cache = self.own(readable_folder("gemmcheck-triton-"))

    def own(self, path: Path) -> Path:
        """The session's user may write ``path``."""
        if self.root:
            os.chown(path, self.nobody.pw_uid, self.nobody.pw_gid)
        return path

    def deny(self, path: Path) -> Path:
        """The session's user may read ``path`` but not write it."""
        path.chmod(0o555 if path.is_dir() else 0o444)
        return path

    def run(self, *args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
        prefix = (
            ["setpriv", f"--reuid={self.nobody.pw_uid}", f"--regid={self.nobody.pw_gid}", "--clear-groups"]
            if self.root
            else []
        )
        environment = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.folder),
            "PYTHONDONTWRITEBYTECODE": "1",
            "TRITON_CACHE_DIR": str(self.cache),
            **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
            **(env or {}),
        }
        return subprocess.run(
            [*prefix, sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300
        )

    def pytest(self, *args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
        return self.run(
            "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--gemmcheck-repeat=2", *args, cwd=cwd, env=env
        )


def readable_folder(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="session")
def unprivileged_python():
    """Why an unprivileged user cannot run this Python here, or None (asked once)."""
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        return "running a session as nobody needs setpriv"
    folder = readable_folder("gemmcheck-probe-")
    user = Unprivileged(folder)
    probe = user.run("-c", "import pytest_gemmcheck, sqlalchemy, torch", cwd=folder)
    shutil.rmtree(folder)
    shutil.rmtree(user.cache)
    return f"an unprivileged user cannot run this Python: {probe.stderr.strip()[-300:]}" if probe.returncode else None


@pytest.fixture
def unprivileged(unprivileged_python):
    if unprivileged_python:
        pytest.skip(unprivileged_python)
    folder = readable_folder("gemmcheck-readonly-")
    user = Unprivileged(folder)
    yield user
    for path in (folder, *folder.rglob("*")):
        if path.is_dir():
            path.chmod(0o755)  # a non-root user's own folders, writable again to be removed
    shutil.rmtree(folder)
    shutil.rmtree(user.cache, ignore_errors=True)


def refusal_line(done: subprocess.CompletedProcess) -> str:
    """The one line of a session refused at its first case (exit status 4)."""
    output = (done.stdout + done.stderr).splitlines()
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    [line] = [line for line in output if "--gemmcheck-db" in line]
    return line


def test_a_read_only_database_file_is_refused_at_the_first_case(unprivileged, write_suite, leftovers):
    folder = unprivileged.own(write_suite(unprivileged.folder, "seeds"))
    db = folder / "history.db"
    assert gemmcheck(["--db", str(db), "db", "upgrade"]) == 0
    before = unprivileged.deny(db).read_bytes()
    line = refusal_line(unprivileged.pytest(f"--gemmcheck-db={db}", cwd=folder))
    assert "cannot write to" in line and "readonly database" in line, line
    assert db.read_bytes() == before and leftovers.integrity(db) == "ok"


def test_a_read_only_database_folder_is_refused_at_the_first_case(unprivileged, write_suite, leftovers):
    folder = unprivileged.own(write_suite(unprivileged.folder, "seeds"))
    data = folder / "data"
    data.mkdir()
    db = data / "history.db"
    assert gemmcheck(["--db", str(db), "db", "upgrade"]) == 0
    unprivileged.own(db)
    unprivileged.deny(data)  # the file may be written, its -wal and -shm files cannot be made
    line = refusal_line(unprivileged.pytest(f"--gemmcheck-db={db}", cwd=folder))
    assert str(db) in line, line
    assert leftovers.integrity(db) == "ok"


def test_under_a_read_only_rootdir_the_fallback_file_goes_to_the_temp_dir_and_imports(
    unprivileged, write_suite, leftovers, capsys
):
    rootdir = unprivileged.deny(write_suite(unprivileged.folder, "sabotage"))
    data = unprivileged.own(readable_folder("gemmcheck-data-"))
    db = data / "history.db"
    try:
        done = unprivileged.pytest(f"--gemmcheck-db={db}", cwd=rootdir, env={"SABOTAGE_DB": f"sqlite:///{db}"})
        assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr  # recording failed, no test did
        [line] = leftovers.lines(done.stdout.splitlines())
        saved = leftovers.saved_file(line)
        assert saved.parent == Path(tempfile.gettempdir()) and saved.exists(), line
        assert not (rootdir / ".gemmcheck").exists()
        capsys.readouterr()
        assert gemmcheck(["--db", str(db), "db", "import", str(saved)]) == 0
        assert "imported 1 result" in capsys.readouterr().out
        assert whole_results(db) == 3 and leftovers.integrity(db) == "ok"
        [run] = runs(capsys, db)
        assert run["status"] == "complete", run
        saved.unlink()
    finally:
        shutil.rmtree(data)
