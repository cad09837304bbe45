"""The history database in real sessions, on SQLite and on a real PostgreSQL server."""

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from sqlalchemy import create_engine, text

from pytest_gemmcheck.cli import main as gemmcheck_cli
from pytest_gemmcheck.history.engine import head_revision

HEAD = head_revision()

SUITE = textwrap.dedent("""
    import pytest
    from kernels import tiled_gemm

    @pytest.mark.parametrize("quant", ["bf16", "ptpc", "blockscale"])
    @pytest.mark.parametrize("m", [32, 48, 64, 80, 96, 112, 128, 144])
    def test_case(gemmcheck, quant, m):
        case = gemmcheck.case("tiny_gemm", m=m, n=32, k=128, quant=quant, tile="16x16")
        x = case.inputs()
        case.run(lambda out: tiled_gemm(x, out, tile=(16, 16)))
""")  # 24 cases


@pytest.fixture
def suite(pytester, examples_dir):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def refused(result, pattern: str) -> str:
    """The session stopped with one line naming the database, at its first case and before any
    launch (exit status 4, the usage error's)."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.lines + result.stderr.lines
    lines = [line for line in output if "--gemmcheck-db" in line or "SQLAlchemy" in line]
    assert len(lines) == 1, output
    assert "Traceback" not in "\n".join(output)
    result.stdout.fnmatch_lines([f"*Exit: {pattern}*"])
    return lines[0]


def counts(engine):
    with engine.connect() as connection:
        return {
            table: connection.execute(text(f'SELECT count(*) FROM "{table}"')).scalar()
            for table in ("run", "case", "result", "launch", "stack")
        }


def test_a_session_records_its_run_cases_results_and_launches(suite, db_url, history):
    result = suite.runpytest("-k", "bf16", f"--gemmcheck-db={db_url}", "--gemmcheck-repeat=3", "--gemmcheck-tag=pr-123")
    result.assert_outcomes(passed=8)
    assert counts(history) == {"run": 1, "case": 8, "result": 8, "launch": 24, "stack": 1}
    with history.connect() as connection:
        run = connection.execute(text("SELECT status, tag, command, exit_status, ended_at FROM run")).one()
        assert run.status == "complete" and run.tag == "pr-123" and run.exit_status == 0 and run.ended_at
        assert "--gemmcheck-repeat=3" in run.command
        launch = connection.execute(
            text(
                "SELECT l.launch_index, l.kinds, l.wrong, l.nonfinite, l.differing, l.elapsed_s, l.pid "
                'FROM launch l JOIN result r ON r.id = l.result_id JOIN "case" c ON c.id = r.case_id '
                "WHERE c.m = 32 ORDER BY l.launch_index"
            )
        ).all()
        assert [row.launch_index for row in launch] == [1, 2, 3]
        assert all(row.kinds == "" and row.wrong == 0 and row.differing == 0 and row.elapsed_s > 0 for row in launch)
    result.stdout.fnmatch_lines(["gemmcheck: recorded run 1 (8 results) to *"])


def test_xdist_24_cases_give_240_launch_rows_and_one_run(suite, db_url, history):
    pytest.importorskip("xdist")
    result = suite.runpytest_subprocess(
        "-n", "4", "--gemmcheck-repeat=10", f"--gemmcheck-db={db_url}", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=24)
    assert counts(history)["run"] == 1
    assert counts(history)["result"] == 24
    assert counts(history)["launch"] == 240
    with history.connect() as connection:
        pids = connection.execute(text("SELECT count(DISTINCT pid) FROM launch")).scalar()
    assert pids > 1, "launches ran in the workers, and the controller wrote them"
    assert "database is locked" not in result.stdout.str().lower()


def test_two_xdist_sessions_at_once_on_one_sqlite_file_lose_nothing(suite, tmp_path):
    pytest.importorskip("xdist")
    db = tmp_path / "shared.db"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-n",
        "4",
        "--gemmcheck-repeat=10",
        f"--gemmcheck-db={db}",
        "-p",
        "no:cacheprovider",
        "-q",
    ]
    sessions = [
        subprocess.Popen(command, cwd=suite.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)
    ]
    outputs = [s.communicate(timeout=600)[0] for s in sessions]
    for session, output in zip(sessions, outputs):
        assert session.returncode == 0, output
        assert "24 passed" in output
        assert "database is locked" not in output.lower()
    engine = create_engine(f"sqlite:///{db}")
    assert counts(engine) == {"run": 2, "case": 24, "result": 48, "launch": 480, "stack": 1}
    with engine.connect() as connection:
        assert connection.execute(text("SELECT DISTINCT status FROM run")).scalars().all() == ["complete"]
    engine.dispose()


def test_a_session_killed_mid_run_leaves_a_consistent_database_marked_interrupted(suite, tmp_path):
    db = tmp_path / "killed.db"
    started = tmp_path / "long-test-started"
    suite.makepyfile(
        test_zz_long=textwrap.dedent(f"""
        import pathlib, time
        def test_long():
            pathlib.Path({str(started)!r}).write_text("x")
            time.sleep(120)
    """)
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-k",
            "bf16 or long",
            "--gemmcheck-repeat=4",
            f"--gemmcheck-db={db}",
        ],
        cwd=suite.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while not started.exists():
        assert process.poll() is None, process.stdout.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.1)
    process.send_signal(signal.SIGKILL)
    process.wait()
    engine = create_engine(f"sqlite:///{db}")
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA integrity_check")).scalar() == "ok"
        assert connection.execute(text("SELECT status FROM run")).scalar() == "running"
        # every result written before the kill is whole: 8 cases, 4 launches each
        per_result = connection.execute(
            text("SELECT r.launches, count(l.id) FROM result r LEFT JOIN launch l ON l.result_id = r.id GROUP BY r.id")
        ).all()
    assert len(per_result) == 8 and all(declared == stored == 4 for declared, stored in per_result)
    # the next look at the history sees the dead process and marks its run interrupted
    assert gemmcheck_cli(["--db", str(db), "runs"]) == 0
    with engine.connect() as connection:
        assert connection.execute(text("SELECT status FROM run")).scalar() == "interrupted"
    engine.dispose()


def test_no_record_writes_nothing(suite):
    suite.runpytest("-k", "bf16 and 32", "--gemmcheck-repeat=2", "--gemmcheck-no-record").assert_outcomes(passed=1)
    assert not (suite.path / ".gemmcheck").exists()


def test_default_database_is_created_under_the_rootdir_and_env_var_wins(suite, tmp_path, monkeypatch):
    suite.runpytest("-k", "bf16 and 32", "--gemmcheck-repeat=2").assert_outcomes(passed=1)
    assert (suite.path / ".gemmcheck" / "history.db").exists()
    elsewhere = tmp_path / "from-env.db"
    monkeypatch.setenv("GEMMCHECK_DB", str(elsewhere))
    suite.runpytest("-k", "bf16 and 48", "--gemmcheck-repeat=2").assert_outcomes(passed=1)
    engine = create_engine(f"sqlite:///{elsewhere}")
    assert counts(engine)["result"] == 1
    engine.dispose()


def test_a_suite_without_cases_creates_no_database(pytester):
    pytester.makepyfile("def test_plain(): pass")
    pytester.runpytest().assert_outcomes(passed=1)
    assert not (pytester.path / ".gemmcheck").exists()


def test_passwords_are_never_printed_or_stored(suite, postgres_url):
    from sqlalchemy.engine import make_url

    assert gemmcheck_cli(["--db", postgres_url, "db", "upgrade"]) == 0
    with_password = make_url(postgres_url).set(password="s3cret").render_as_string(hide_password=False)
    result = suite.runpytest("-k", "bf16 and 32", "--gemmcheck-repeat=2", f"--gemmcheck-db={with_password}")
    result.assert_outcomes(passed=1)
    assert "s3cret" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["gemmcheck: recorded run 1 (1 results) to postgresql+psycopg://postgres:***@*"])
    engine = create_engine(postgres_url)
    with engine.connect() as connection:
        command, options = connection.execute(text("SELECT command, options FROM run")).one()
    engine.dispose()
    assert "s3cret" not in command and "***" in command
    assert "s3cret" not in json.dumps(options)
    # and an unreachable server names itself without the password
    bad = with_password.replace("127.0.0.1:5432", "127.0.0.1:1")
    failed = suite.runpytest("-k", "bf16 and 32", f"--gemmcheck-db={bad}")
    refused(failed, "--gemmcheck-db: cannot use postgresql+psycopg://postgres:***@127.0.0.1:1/*")
    assert "s3cret" not in failed.stdout.str() + failed.stderr.str()


def test_an_empty_server_database_gets_its_schema_from_a_fleet_of_sessions_at_once(suite, postgres_url):
    """Four sessions start on a new PostgreSQL database at the same moment: the schema is made
    once, under the migration lock, and every session records its run."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-k",
        "bf16 and 32",
        "--gemmcheck-repeat=2",
        f"--gemmcheck-db={postgres_url}",
    ]
    sessions = [
        subprocess.Popen(command, cwd=suite.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(4)
    ]
    for session in sessions:
        output = session.communicate(timeout=300)[0]
        assert session.returncode == 0, output
        assert "1 passed" in output
    engine = create_engine(postgres_url)
    try:
        assert counts(engine)["run"] == 4
        with engine.connect() as connection:
            assert connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [HEAD]
    finally:
        engine.dispose()


def test_an_older_server_schema_says_how_to_upgrade(suite, postgres_url):
    from alembic import command

    from pytest_gemmcheck.history.engine import _alembic_config

    engine = create_engine(postgres_url)
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0003")
    engine.dispose()
    result = suite.runpytest("-k", "bf16 and 32", f"--gemmcheck-db={postgres_url}")
    refused(result, f"--gemmcheck-db: * is at schema revision 0003 (head {HEAD}); run: gemmcheck db upgrade --db *")
    assert gemmcheck_cli(["db", "upgrade", "--db", postgres_url]) == 0  # --db after the command, as the message says
    suite.runpytest("-k", "bf16 and 32", f"--gemmcheck-db={postgres_url}").assert_outcomes(passed=1)


def test_a_newer_schema_is_refused_in_one_line(suite, db_url, history, capsys):
    with history.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999_future'"))
    line = refused(suite.runpytest("-k", "bf16 and 32", f"--gemmcheck-db={db_url}"), "--gemmcheck-db: *")
    assert "has schema revision 9999_future, newer than this pytest-gemmcheck" in line
    assert "upgrade pytest-gemmcheck" in line
    assert gemmcheck_cli(["--db", db_url, "history"]) == 1
    assert "newer than this pytest-gemmcheck" in capsys.readouterr().err


def test_a_corrupt_database_is_one_line_not_a_traceback(suite, capsys):
    db = suite.path / ".gemmcheck" / "history.db"
    db.parent.mkdir()
    db.write_bytes(b"this is not a database, it is a text file" * 100)
    result = suite.runpytest("-k", "bf16 and 32")
    refused(result, "--gemmcheck-db: cannot use sqlite+pysqlite:///*history.db: file is not a database")
    assert gemmcheck_cli(["--db", str(db), "history"]) == 1
    assert "file is not a database" in capsys.readouterr().err
    assert db.read_bytes().startswith(b"this is not a database")  # left as it was


def test_a_database_failing_mid_session_loses_no_results(tmp_path):
    from pytest_gemmcheck.history.engine import resolve_url
    from pytest_gemmcheck.history.recorder import Recorder
    from pytest_gemmcheck.history.store import HistoryStore
    from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

    class BrokenStore(HistoryStore):
        def add_results(self, run_id, results, uids=None):
            raise RuntimeError("server closed the connection unexpectedly\nmore detail")

    recorder = Recorder(
        url=resolve_url(str(tmp_path / "h.db"), tmp_path),
        rootdir=tmp_path,
        tag=None,
        command="pytest",
        options={},
        workers=0,
    )
    recorder.open()
    recorder.store = BrokenStore(recorder.store.engine)
    result = CaseResult(
        key="k",
        kernel="kern",
        m=1,
        n=1,
        k=1,
        quant="bf16",
        tile=None,
        out_dtype="bfloat16",
        params={},
        fp8=None,
        seed=0,
        device="cpu",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=[LaunchRecord(index=1)],
    )
    recorder.add(result)
    recorder.flush()
    recorder.add(result)
    assert recorder.finish(0, interrupted=False) == 0  # recording failed, the session did not
    path = recorder.saved_to
    assert path.parent == tmp_path / ".gemmcheck"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    reasons = [entry["reason"] for entry in lines if "result" in entry]
    assert reasons == ["server closed the connection unexpectedly"] * 2
    assert lines[-1]["end"]["status"] == "complete"
    assert "NOT recorded" in recorder.summary() and str(path) in recorder.summary()


def test_migrations_match_the_schema(db_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlalchemy.engine import make_url

    from pytest_gemmcheck.history.engine import create, upgrade
    from pytest_gemmcheck.history.schema import metadata

    engine = create(make_url(db_url))
    upgrade(engine, engine.url)
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), metadata)
    engine.dispose()
    assert diff == []


def test_db_commands(db_url, capsys):
    assert gemmcheck_cli(["--db", db_url, "db", "current"]) == 0
    assert f"revision {HEAD} (up to date)" in capsys.readouterr().out
    assert gemmcheck_cli(["--db", db_url, "db", "upgrade"]) == 0
    assert f"already at {HEAD}" in capsys.readouterr().out


def test_history_dashboard_shows_each_case_and_its_runs(suite, tmp_path, capsys):
    db = tmp_path / "dash.db"
    suite.runpytest("-k", "32 or 48", "--gemmcheck-repeat=3", f"--gemmcheck-db={db}").assert_outcomes(passed=6)
    suite.runpytest("-k", "ptpc and 32", "--gemmcheck-repeat=5", f"--gemmcheck-db={db}", "--gemmcheck-tag=again")
    capsys.readouterr()  # the sessions' own output
    assert gemmcheck_cli(["--db", str(db), "history", "--quant", "ptpc"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "tiny_gemm" in line]
    assert len(lines) == 2
    assert "32x32x128" in lines[0] and " 2 " in lines[0] and "0/8" in lines[0] and "0–37%" in lines[0]
    assert gemmcheck_cli(["--db", str(db), "history", "--json", "--kernel", "tiny_*"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 6
    key = next(row["key"] for row in rows if row["quant"] == "ptpc" and row["shape"] == "32x32x128")
    assert gemmcheck_cli(["--db", str(db), "history", "--case", key[:8]]) == 0
    out = capsys.readouterr().out
    assert "again" in out and "0/5" in out and "0/3" in out
    assert gemmcheck_cli(["--db", str(tmp_path / "missing.db"), "history"]) == 1
    assert "no history database at" in capsys.readouterr().err


def test_an_older_sqlite_history_is_migrated_in_place_keeping_its_rows(suite, tmp_path):
    from alembic import command

    from pytest_gemmcheck.history.engine import _alembic_config

    db = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0001")
        connection.execute(
            text(
                "INSERT INTO run (status, started_at, options, workers) "
                "VALUES ('complete', '2026-01-01 00:00:00', '{}', 0)"
            )
        )
    suite.runpytest("-k", "bf16 and 32", "--gemmcheck-repeat=2", f"--gemmcheck-db={db}").assert_outcomes(passed=1)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
        assert connection.execute(text("SELECT count(*) FROM run")).scalar() == 2
        host, uuid = connection.execute(text("SELECT host, device_uuid FROM launch LIMIT 1")).one()
    engine.dispose()
    assert host  # the new columns are filled from now on
    assert uuid is None  # a CPU launch has no GPU


def test_without_sqlalchemy_recording_is_a_usage_error_and_no_record_still_works(suite, tmp_path, monkeypatch):
    shadow = tmp_path / "shadow" / "sqlalchemy"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named sqlalchemy (shadowed by the test)')\n")
    monkeypatch.setenv("PYTHONPATH", str(shadow.parent))
    failed = suite.runpytest_subprocess("-k", "bf16 and 32", "--gemmcheck-repeat=2", "--gemmcheck-db=x.db")
    refused(
        failed,
        "pytest-gemmcheck records into a database through SQLAlchemy and Alembic, and "
        "cannot import them (*): install them, or pass --gemmcheck-no-record",
    )
    passed = suite.runpytest_subprocess("-k", "bf16 and 32", "--gemmcheck-repeat=2", "--gemmcheck-no-record")
    passed.assert_outcomes(passed=1)


def test_no_history_yet_is_known_without_importing_sqlalchemy(suite, tmp_path, monkeypatch):
    """Looking a baseline up where no history database exists costs no SQLAlchemy import (most of
    a second, which a short session would otherwise pay in its first case)."""
    shadow = tmp_path / "shadow" / "sqlalchemy"
    shadow.mkdir(parents=True)
    attempted = tmp_path / "imported"
    (shadow / "__init__.py").write_text(f"open({str(attempted)!r}, 'w').close()\nraise ImportError('shadowed')\n")
    monkeypatch.setenv("PYTHONPATH", str(shadow.parent))
    result = suite.runpytest_subprocess("-k", "bf16 and 32", "--gemmcheck-repeat=2", "--gemmcheck-no-record")
    result.assert_outcomes(passed=1)
    assert not attempted.exists()


def test_an_unusable_database_stops_the_session_at_its_first_case_before_any_launch(pytester, examples_dir):
    """Plain tests before the first gemmcheck case run as usual; that case's test launches
    nothing; the session stops with the one line (exit status 4)."""
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    launched = pytester.path / "launched"
    pytester.makepyfile(
        test_order=textwrap.dedent(f"""
        import pathlib
        from kernels import bf16_matmul

        def test_a_plain():
            pass

        def test_b_case(gemmcheck):
            case = gemmcheck.case("k", m=16, n=16, k=32)
            x = case.inputs()
            def launch(out):
                pathlib.Path({str(launched)!r}).write_text("x")
                bf16_matmul(x, out)
            case.run(launch)
    """)
    )
    (pytester.path / "broken.db").write_bytes(b"not a database" * 100)
    result = pytester.runpytest("-p", "no:cacheprovider", "--gemmcheck-db=broken.db")
    refused(result, "--gemmcheck-db: cannot use *broken.db: file is not a database")
    result.stdout.fnmatch_lines(["*test_order.py .*"])  # the plain test ran and passed
    assert not launched.exists()


def test_rows_are_looked_up_first_and_only_the_missing_ones_inserted_once(db_url):
    from sqlalchemy import func, select
    from sqlalchemy.engine import make_url

    from pytest_gemmcheck.history.engine import create, write_transaction
    from pytest_gemmcheck.history.schema import stack_table
    from pytest_gemmcheck.history.store import _ids_adding_missing

    engine = create(make_url(db_url))
    try:
        with write_transaction(engine) as connection:  # two new, one of them twice in the list
            first = _ids_adding_missing(connection, stack_table, [{"fingerprint": f} for f in "aba"], "fingerprint")
        with write_transaction(engine) as connection:  # one stored, one new; then one stored alone
            second = _ids_adding_missing(connection, stack_table, [{"fingerprint": f} for f in "bc"], "fingerprint")
            third = _ids_adding_missing(connection, stack_table, [{"fingerprint": "c"}], "fingerprint")
        with engine.connect() as connection:
            rows = connection.execute(select(func.count()).select_from(stack_table)).scalar()
    finally:
        engine.dispose()
    assert set(first) == {"a", "b"} and second["b"] == first["b"] and third == {"c": second["c"]}
    assert len({*first.values(), second["c"]}) == 3 and rows == 3
