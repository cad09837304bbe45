"""A correctness tool that never loses a record: values beyond 32 bits or 255 characters, one
row that cannot be stored among rows that can, the run row written at the first case, the
fallback file and ``gemmcheck db import``, passwords in URLs, and one line (never a traceback)
for a database or an argument that cannot be used."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from pytest_gemmcheck.cli import main as gemmcheck
from pytest_gemmcheck.errors import CaseError
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

WRONG = 8192 * 8192  # every element of an 8192x8192 output wrong: 33 such launches overflow 32 bits


@pytest.fixture
def with_kernels(pytester, write_suite):
    """A pytester folder with the example CPU kernels."""
    write_suite(pytester.path)
    return pytester


@pytest.fixture
def seeds(pytester, write_suite):
    """A pytester folder with the three-seed suite (the middle seed fits no column)."""
    write_suite(pytester.path, "seeds")
    return pytester


def a_result(**changes) -> CaseResult:
    fields = dict(
        key="0123456789abcdef",
        kernel="kern",
        m=8192,
        n=8192,
        k=256,
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
        verdict="pass",
        launches=[LaunchRecord(index=1, pid=1, host="h", device="cpu")],
    )
    fields.update(changes)
    return CaseResult(**fields)


def a_recorder(url, tmp_path, tag=None):
    from pytest_gemmcheck.history.recorder import Recorder

    return Recorder(url=make_url(url), rootdir=tmp_path, tag=tag, command="pytest", options={}, workers=0)


def one_line_refusal(result, pattern: str) -> str:
    """The session stopped at its first case with one line (exit status 4), no traceback."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    output = result.stdout.lines + result.stderr.lines
    assert "Traceback" not in "\n".join(output)
    lines = [line for line in output if "--gemmcheck-db" in line]
    assert len(lines) == 1, output
    result.stdout.fnmatch_lines([f"*Exit: {pattern}*"])
    return lines[0]


def cli(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    status = gemmcheck([str(arg) for arg in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- item 7: values that fit, and one bad row among good ones ---------------------------------


def test_counts_and_seeds_beyond_32_bits_and_text_beyond_255_characters_are_stored(db_url, history, tmp_path):
    launches = [
        LaunchRecord(index=i + 1, kinds=["wrong"], wrong=WRONG, wrong_rows=8192, pid=1, host="h", device="cpu")
        for i in range(33)
    ]
    recorder = a_recorder(db_url, tmp_path, tag="t" * 300)
    recorder.add(a_result(kernel="k" * 300, seed=2**31 + 7, launches=launches, verdict="regression"))
    recorder.finish(1, interrupted=False)
    assert recorder.summary().startswith("gemmcheck: recorded run 1 (1 results)"), recorder.summary()
    with history.connect() as connection:
        row = connection.execute(
            text(
                "SELECT r.seed, r.total_wrong, r.worst_wrong, c.kernel, u.tag, u.status FROM result r "
                'JOIN "case" c ON c.id = r.case_id JOIN run u ON u.id = r.run_id'
            )
        ).one()
    assert tuple(row) == (2**31 + 7, 33 * WRONG, WRONG, "k" * 300, "t" * 300, "complete")


def test_a_measurement_that_is_not_a_number_is_stored_as_json_null(db_url, history, tmp_path, capsys):
    recorder = a_recorder(db_url, tmp_path)
    recorder.add(a_result(stress={"kind": "copy", "gbps": float("nan"), "peak": [1.0, float("inf")]}))
    recorder.finish(0, interrupted=False)
    assert recorder.summary().startswith("gemmcheck: recorded run 1"), recorder.summary()
    with history.connect() as connection:
        stored = connection.execute(text("SELECT stress FROM result")).scalar()
    stored = json.loads(stored) if isinstance(stored, str) else stored
    assert stored == {"kind": "copy", "gbps": None, "peak": [1.0, None]}
    status, out, _ = cli(capsys, "--db", db_url, "history", "--json")
    assert status == 0 and json.loads(out, parse_constant=pytest.fail)  # standard JSON: no NaN


def test_one_row_that_cannot_be_stored_never_stops_the_others(seeds, db_url, history, leftovers):
    result = seeds.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db_url}", "--gemmcheck-repeat=2")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK  # recording failed, the tests did not
    [line] = leftovers.lines(result.stdout.lines)
    assert "NOT recorded" in line and "1 of 3 results" in line, line
    with history.connect() as connection:
        assert sorted(connection.execute(text("SELECT seed FROM result")).scalars()) == [1, 3]
        assert connection.execute(text("SELECT status FROM run")).scalar() == "unrecorded"
    [entry] = leftovers.entries(leftovers.saved_file(line))
    assert entry["result"]["seed"] == 2**64 and "seed" in entry["reason"], entry


def test_require_record_fails_a_passing_session_that_could_not_record_everything(seeds, tmp_path):
    result = seeds.runpytest(
        "-p",
        "no:cacheprovider",
        f"--gemmcheck-db={tmp_path / 'h.db'}",
        "--gemmcheck-repeat=2",
        "--gemmcheck-require-record",
    )
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    with sqlite3.connect(tmp_path / "h.db") as connection:
        assert connection.execute("SELECT status, exit_status FROM run").fetchone() == ("unrecorded", 4)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [1.0, float("-inf")]])
def test_a_non_finite_param_is_refused_at_the_case(make_case, value):
    with pytest.raises(CaseError, match="params"):
        make_case(m=16, n=16, k=32, params={"scale": value})


# --- item 6: the run row at the first case ---------------------------------------------------


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["plain", "xdist"])
def test_a_session_killed_in_its_first_case_leaves_a_run_marked_interrupted(
    with_kernels, leftovers, tmp_path, capsys, args
):
    if args:
        pytest.importorskip("xdist")
    db, started = tmp_path / "first.db", tmp_path / "started"
    with_kernels.makepyfile(
        test_first=textwrap.dedent(f"""
        import pathlib, time
        from kernels import bf16_matmul

        def test_first(gemmcheck):
            case = gemmcheck.case("first", m=16, n=16, k=32)
            x = case.inputs()
            def launch(out):
                pathlib.Path({str(started)!r}).write_text("x")
                time.sleep(120)
            case.run(launch)
    """)
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--gemmcheck-repeat=1",
            f"--gemmcheck-db={db}",
            *args,
        ],
        cwd=with_kernels.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    # under xdist the run is written when the worker's setup report reaches the controller
    while not (started.exists() and leftovers.rows(db, "run")):
        assert process.poll() is None and time.monotonic() < deadline, "no run row while the first case runs"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # the session and its workers
    process.wait()
    status, out, _ = cli(capsys, "--db", db, "runs", "--json")
    assert status == 0
    [run] = json.loads(out)
    assert run["status"] == "interrupted" and run["results"] == 0, run


# --- item 9: the fallback file, imported -----------------------------------------------------


def test_a_fallback_file_imports_once_into_the_history_and_the_baselines(
    with_kernels, write_suite, leftovers, db_url, history, capsys, monkeypatch
):
    monkeypatch.setenv("SABOTAGE_DB", db_url)
    write_suite(with_kernels.path, "sabotage")
    result = with_kernels.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db_url}", "--gemmcheck-repeat=2")
    result.assert_outcomes(passed=3)
    [line] = leftovers.lines(result.stdout.lines)
    assert "1 of 3 results" in line, line  # test_3 was recorded after test_2 could not be
    fallback = leftovers.saved_file(line)
    with history.connect() as connection:
        assert connection.execute(text("SELECT status FROM run")).scalar() == "unrecorded"

    status, out, _ = cli(capsys, "--db", db_url, "db", "import", fallback)
    assert status == 0 and "imported 1 result" in out and "run 1" in out, out
    status, out, _ = cli(capsys, "--db", db_url, "db", "import", fallback)
    assert status == 0 and "imported 0 results, 1 already recorded" in out, out
    with history.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM result")).scalar() == 3
        assert connection.execute(text("SELECT count(*) FROM launch")).scalar() == 6
        assert connection.execute(text("SELECT count(*) FROM run")).scalar() == 1
        assert connection.execute(text("SELECT status FROM run")).scalar() == "complete"
    status, out, _ = cli(capsys, "--db", db_url, "history", "--json")
    assert sorted(row["kernel"] for row in json.loads(out)) == ["after", "kept", "saved"]

    # a later session judges the imported result's case against it
    with_kernels.makepyfile(
        test_later=textwrap.dedent("""
        from kernels import bf16_matmul

        def test_saved_again(gemmcheck):
            case = gemmcheck.case("saved", m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
    """)
    )
    again = with_kernels.runpytest(
        "-p", "no:cacheprovider", f"--gemmcheck-db={db_url}", "test_later.py", "--gemmcheck-repeat=2"
    )
    again.assert_outcomes(passed=1)
    with history.connect() as connection:
        assert (
            connection.execute(text("SELECT baseline_source FROM result ORDER BY id DESC LIMIT 1")).scalar()
            == "history"
        )


def test_a_fallback_file_of_the_earlier_format_imports_once(tmp_path, capsys):
    """The single JSON document earlier versions wrote under .gemmcheck/unrecorded-*.json."""
    db = tmp_path / "h.db"
    legacy = tmp_path / "unrecorded-20260101T000000-123.json"
    legacy.write_text(
        json.dumps(
            {
                "database": "x",
                "reason": "server closed the connection",
                "tag": "old",
                "command": "pytest",
                "started_at": "2026-01-01T00:00:00+00:00",
                "results": [a_result().to_dict(), a_result(seed=5).to_dict()],
            }
        )
    )
    assert cli(capsys, "--db", db, "db", "upgrade")[0] == 0
    for expected in ("imported 2 results", "imported 0 results, 2 already recorded"):
        status, out, _ = cli(capsys, "--db", db, "db", "import", legacy)
        assert status == 0 and expected in out, out
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT tag, status FROM run").fetchall() == [("old", "complete")]
        assert connection.execute("SELECT count(*) FROM result").fetchone() == (2,)


def test_a_file_that_is_no_fallback_is_one_line(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    assert cli(capsys, "--db", tmp_path / "h.db", "db", "upgrade")[0] == 0
    status, _, err = cli(
        capsys, "--db", tmp_path / "h.db", "db", "import", tmp_path / "notes.txt", tmp_path / "absent.jsonl"
    )
    assert status == 1
    assert [line.split(":")[0] for line in err.splitlines()] == ["gemmcheck db import"] * 2, err


@pytest.mark.parametrize("removal", ["the folder", "the file, another made in its place"])
def test_a_database_deleted_while_the_session_runs_keeps_every_result(
    with_kernels, leftovers, tmp_path, capsys, removal
):
    """``git clean -xfd`` between two cases: SQLite would go on writing into the unlinked file,
    and the summary would say 'recorded run 1 (2 results)' of results no file holds. They are
    kept in the fallback file instead, said in the summary's one line, and import."""
    remove = (
        'shutil.rmtree(".gemmcheck")'
        if removal == "the folder"
        else 'os.remove(".gemmcheck/history.db"); sqlite3.connect(".gemmcheck/history.db").close()'
    )
    with_kernels.makepyfile(
        test_cleaned=textwrap.dedent(f"""
        import os, shutil, sqlite3
        from kernels import bf16_matmul

        def run(gemmcheck, kernel):
            case = gemmcheck.case(kernel, m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))

        def test_before(gemmcheck):
            run(gemmcheck, "before")

        def test_clean():
            {remove}

        def test_after(gemmcheck):
            run(gemmcheck, "after")
    """)
    )
    result = with_kernels.runpytest("-p", "no:cacheprovider", "--gemmcheck-repeat=2")
    result.assert_outcomes(passed=3)
    [line] = leftovers.lines(result.stdout.lines)
    reason = "deleted" if removal == "the folder" else "replaced"
    assert line.startswith("gemmcheck: NOT recorded to ") and "2 of 2 results" in line, line
    assert (
        f"(the database file {with_kernels.path / '.gemmcheck' / 'history.db'} was {reason} while the session "
        "ran)" in line
    ), line
    fallback = leftovers.saved_file(line)
    assert sorted(entry["result"]["kernel"] for entry in leftovers.entries(fallback)) == ["after", "before"]
    database = tmp_path / "restored.db"
    status, out, _ = cli(capsys, "--db", database, "db", "import", fallback)
    assert status == 0 and "imported 2 results" in out and "status complete" in out, out
    status, out, _ = cli(capsys, "--db", database, "history", "--json")
    assert sorted(row["kernel"] for row in json.loads(out)) == ["after", "before"]


# --- item 10: passwords ----------------------------------------------------------------------

PASSWORD = "c2VjcmV0==@:/%x"  # base64's '=', and every character a URL must encode


def test_passwords_with_url_characters_are_never_printed_or_stored(with_kernels, postgres_url):
    from pytest_gemmcheck.config.table import Settings
    from pytest_gemmcheck.history.recorder import masked_command

    assert gemmcheck(["--db", postgres_url, "db", "upgrade"]) == 0
    url = make_url(postgres_url)
    # base64's '=' as users leave it (it needs no encoding), the rest encoded as they must
    user = f"://{url.username}"
    with_password = (
        url.set(password=None)
        .render_as_string(hide_password=False)
        .replace(f"{user}@", f"{user}:{quote(PASSWORD, safe='=')}@", 1)
    )
    secrets = (PASSWORD, quote(PASSWORD, safe=""), quote(PASSWORD, safe="="), "c2VjcmV0")
    with_kernels.makepyfile(
        test_settings=textwrap.dedent("""
        from kernels import bf16_matmul

        def test_shows_its_settings(gemmcheck):
            settings = gemmcheck.settings
            case = gemmcheck.case("k", m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
            assert settings is None  # fails: --full-trace -l prints the locals
    """)
    )
    shown = []
    for args in (
        (f"--gemmcheck-db={with_password}",),
        ("--gemmcheck-db", with_password),
        ("-o", f"gemmcheck_db={with_password}"),
        (f"--gemmcheck-db={with_password.replace(str(url.port), '1')}",),
    ):  # unreachable: refused
        result = with_kernels.runpytest("-p", "no:cacheprovider", "--full-trace", "-l", "--gemmcheck-repeat=1", *args)
        shown.append(result.stdout.str() + result.stderr.str())
    assert "settings   = Settings(" in shown[0] and f"{url.username}:***@" in shown[0]
    assert "--gemmcheck-db: cannot use postgresql+psycopg://postgres:***@127.0.0.1:1/" in shown[-1]
    engine = create_engine(postgres_url)
    with engine.connect() as connection:
        stored = [json.dumps(list(row)) for row in connection.execute(text("SELECT command, options FROM run"))]
    engine.dispose()
    assert len(stored) == 3 and all("***" in row for row in stored), stored
    printed = (
        masked_command(["pytest", f"--gemmcheck-db={with_password}", "-o", f"gemmcheck_db={with_password}"]),
        repr(Settings(db=with_password)),
    )
    for where in (*shown, *stored, *printed):
        assert not any(secret in where for secret in secrets), where


# --- item 12: one line where a traceback was ---------------------------------------------------


@pytest.mark.parametrize(
    "value,pattern",
    [
        ("file.txt/x.db", "--gemmcheck-db: cannot create the folder of *file.txt/x.db*"),
        ("~gemmcheck_nobody_has_this_name/x.db", "--gemmcheck-db: *~gemmcheck_nobody_has_this_name*no such user*"),
        (
            f"postgresql+psycopg://u:{quote(PASSWORD, safe='')}@127.0.0.1:port/db",
            "--gemmcheck-db: *u:***@127.0.0.1:port*",
        ),
        ("sqlite://", "--gemmcheck-db: sqlite:// is an in-memory database*"),
        ("sqlite:///:memory:", "--gemmcheck-db: sqlite:///:memory: is an in-memory database*"),
    ],
)
def test_a_database_that_cannot_hold_a_history_is_one_line(seeds, value, pattern):
    (seeds.path / "file.txt").write_text("a file")
    result = seeds.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={value}")
    line = one_line_refusal(result, pattern)
    assert quote(PASSWORD, safe="") not in line
    assert not (seeds.path / "~gemmcheck_nobody_has_this_name").exists()


@pytest.mark.parametrize("damage", ["corrupt", "newer", "a folder"])
def test_no_record_judges_against_goldens_or_clean_when_the_history_is_unusable(seeds, leftovers, damage):
    db = seeds.path / "history.db"
    if damage == "corrupt":
        db.write_bytes(b"not a database" * 100)
    elif damage == "newer":
        assert gemmcheck(["--db", str(db), "db", "upgrade"]) == 0
        with sqlite3.connect(db) as connection:
            connection.execute("UPDATE alembic_version SET version_num = '9999_future'")
    else:
        db.mkdir()
    result = seeds.runpytest(
        "-p", "no:cacheprovider", "--gemmcheck-db=history.db", "--gemmcheck-no-record", "--gemmcheck-repeat=2"
    )
    result.assert_outcomes(passed=3)
    [line] = leftovers.lines(result.stdout.lines)
    assert line.startswith("gemmcheck: history not read (--gemmcheck-no-record): ") and "history.db" in line, line
    assert line.endswith("judged against goldens, else clean")


def a_history(tmp_path, keys=("0123456789abcdef",)):
    """A SQLite history with one recorded result per case key."""
    db = tmp_path / "h.db"
    recorder = a_recorder(f"sqlite:///{db}", tmp_path)
    for key in keys:
        recorder.add(a_result(key=key, kernel=f"kern_{key[-1]}"))
    recorder.finish(0, interrupted=False)
    assert "recorded run" in recorder.summary(), recorder.summary()
    return db


@pytest.mark.parametrize("limit", ["-1", "0", "99999999999999999999"])
def test_a_limit_out_of_range_is_a_usage_error(tmp_path, capsys, limit):
    db = a_history(tmp_path)
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        gemmcheck(["--db", str(db), "history", "--limit", limit])
    assert stopped.value.code == 2
    assert "argument --limit: expected a whole number of rows from 1 to" in capsys.readouterr().err


def test_goldens_export_into_a_file_is_one_line(tmp_path, capsys):
    db = a_history(tmp_path)
    (tmp_path / "a-file").write_text("x")
    for folder in (tmp_path / "a-file", tmp_path / "a-file" / "goldens"):
        status, _, err = cli(capsys, "--db", db, "goldens", "export", "--dir", folder)
        assert status == 2 and len(err.splitlines()) == 1 and "not a directory" in err, err
    assert (tmp_path / "a-file").read_text() == "x"


def test_db_current_on_a_newer_schema_advises_a_newer_plugin_not_an_upgrade(tmp_path, capsys):
    db = a_history(tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999_future'")
    status, out, _ = cli(capsys, "--db", db, "db", "current")
    assert status == 0 and "revision 9999_future" in out and "upgrade pytest-gemmcheck" in out, out
    assert "run gemmcheck db upgrade" not in out


def test_a_database_that_fails_its_quick_check_is_refused_in_one_line(seeds, tmp_path):
    db = a_history(tmp_path, keys=[f"{i:016x}" for i in range(400)])
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA journal_mode = DELETE")
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
    with open(db, "r+b") as file:  # scribble over the middle of the file: table pages, not the schema
        file.seek(page_size * (pages // 2) + 8)
        file.write(b"\xff" * 512)
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA quick_check").fetchone()[0] != "ok"
    result = seeds.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}")
    one_line_refusal(result, "--gemmcheck-db: * fails its integrity check (PRAGMA quick_check: *")


def test_history_of_a_case_prefix_that_matches_several_cases_has_a_case_column(tmp_path, capsys):
    db = a_history(tmp_path, keys=("abc1000000000000", "abc2000000000000"))
    status, out, _ = cli(capsys, "--db", db, "history", "--case", "abc")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["case", "run"], out
    assert sorted(line.split()[0] for line in lines[2:]) == ["abc1000000", "abc2000000"], out
    status, out, _ = cli(capsys, "--db", db, "history", "--case", "abc", "--json")
    assert sorted(row["key"] for row in json.loads(out)) == ["abc1000000000000", "abc2000000000000"]


@pytest.mark.parametrize("seed", [2**63, -1, 1.5, "x"])
def test_a_seed_no_column_holds_is_refused_at_the_case(make_case, seed):
    with pytest.raises(CaseError, match=r"seed: expected a whole number >= 0 and < 2\*\*63"):
        make_case(m=16, n=16, k=32, seed=seed)


def test_a_non_finite_param_is_named_where_it_is(make_case):
    with pytest.raises(CaseError, match=r"params\['fuse'\]\[1\] is not finite, and JSON has no NaN or infinity"):
        make_case(m=16, n=16, k=32, params={"fuse": [1.0, float("nan")]})


def test_json_output_is_standard_json_for_values_that_are_not_numbers():
    from pytest_gemmcheck.reporting.tables import Table

    table = Table(headers=["case", "max rel err"], rows=[["k", float("nan")], ["j", float("inf")]])
    assert json.loads(table.json(), parse_constant=pytest.fail) == [
        {"case": "k", "max rel err": None},
        {"case": "j", "max rel err": None},
    ]


def test_require_record_with_no_record_is_a_usage_error_naming_both(seeds):
    result = seeds.runpytest("-p", "no:cacheprovider", "--gemmcheck-require-record", "--gemmcheck-no-record")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--gemmcheck-require-record cannot be used with --gemmcheck-no-record: nothing is recorded*"]
    )
