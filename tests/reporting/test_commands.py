"""The gemmcheck command's own checks: every value validated with exit status 2 naming the
option, a command's own usage for an argument it does not take, nothing created by a question,
nothing checked never read as a pass, and a database URL printed as it was written."""

import pytest

from pytest_gemmcheck.cli import main as gemmcheck
from pytest_gemmcheck.history.engine import head_revision


def run(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        status = gemmcheck([str(a) for a in args])
    except SystemExit as exc:  # argparse's refusals
        status = exc.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def empty_db(tmp_path, capsys):
    path = tmp_path / "h.db"
    assert run(capsys, "--db", path, "db", "upgrade")[0] == 0
    return path


@pytest.mark.parametrize("alpha", ["2", "0", "-1", "1", "nan", "0.5.1"])
def test_compare_refuses_an_alpha_that_is_no_significance_level(empty_db, capsys, alpha):
    status, out, err = run(capsys, "compare", "--db", empty_db, "--side", "a", "--side", "b", f"--alpha={alpha}")
    assert status == 2 and out == ""
    assert f"gemmcheck compare: error: argument --alpha: expected a significance level between 0 and 1 (e.g. 0.05), " \
           f"got '{alpha}'" in err


def test_db_current_of_a_missing_file_creates_nothing(tmp_path, capsys):
    missing = tmp_path / "missing.db"
    status, out, err = run(capsys, "db", "current", "--db", missing)
    assert (status, out) == (1, "") and err == f"gemmcheck: no history database at {missing}\n"
    assert not missing.exists()
    # history on the same path says the same
    assert run(capsys, "history", "--db", missing)[2] == err


def test_a_file_with_no_kernel_is_unchecked_never_passed(tmp_path, capsys):
    pytest.importorskip("pytest_gemmcheck.compiled.lint.command")
    empty = tmp_path / "notes.s"
    empty.write_text("; a comment, no kernel code\n")
    status, out, _ = run(capsys, "lint", empty)
    assert status == 3, out
    assert "0 kernel(s)" in out


def test_an_argument_a_command_does_not_take_gets_that_commands_usage(empty_db, tmp_path, capsys):
    status, _, err = run(capsys, "report", "--db", empty_db, "--html", tmp_path / "r.html", "--format", "markdown")
    assert status == 2
    assert err.startswith("usage: gemmcheck report ")
    assert err.rstrip().endswith("gemmcheck report: error: unrecognized arguments: --format markdown")
    status, _, err = run(capsys, "goldens", "export", "--db", empty_db, "--nope")
    assert status == 2 and err.startswith("usage: gemmcheck goldens export ")


def test_an_unknown_case_key_is_a_usage_error_as_explain_says(empty_db, capsys):
    status, out, err = run(capsys, "history", "--db", empty_db, "--case", "zzzz")
    assert (status, out) == (2, "")
    assert err == "gemmcheck history: --case 'zzzz': no recorded case has a key starting with it (gemmcheck history " \
                  "lists them)\n"
    status, _, err = run(capsys, "explain", "--db", empty_db, "zzz")
    assert status == 2 and err.startswith("gemmcheck explain: ")


def test_a_read_only_sqlite_uri_is_read_and_printed_as_written(empty_db, capsys):
    url = f"sqlite:///file:{empty_db}?mode=ro&uri=true"
    status, out, _ = run(capsys, "db", "current", "--db", url)
    assert status == 0 and out.startswith(f"{url}: revision ")
    status, out, _ = run(capsys, "history", "--db", url)
    assert status == 0 and out.startswith("no recorded cases match")


@pytest.fixture
def recorded_db(tmp_path):
    """A SQLite history of one run with one result."""
    from pytest_gemmcheck.history.engine import open_database, resolve_url
    from pytest_gemmcheck.history.store import HistoryStore, RunInfo
    from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

    path = tmp_path / "recorded.db"
    store = HistoryStore(open_database(resolve_url(str(path), tmp_path), auto_upgrade=True))
    stack = {"gpu_arch": None, "fingerprint": "fcpu"}
    run_id = store.begin_run(RunInfo(tag="main"), stack)
    launches = [LaunchRecord(index=i, pid=1, host="h", device="cpu", kinds=["wrong"] if i == 2 else [],
                             wrong=5 if i == 2 else 0, elapsed_s=0.001) for i in (1, 2, 3)]
    store.add_results(run_id, [CaseResult(key="0123456789abcdef", kernel="kern", m=16, n=16, k=32, quant="bf16",
                                          tile=None, out_dtype="bfloat16", params={}, fp8=None, seed=0, device="cpu",
                                          deterministic=True, rtol=0.05, floor=1.0, launches=launches, stack=stack,
                                          verdict="regression")])
    store.finish_run(run_id, "complete", 1)
    store.engine.dispose()
    return path


READ_COMMANDS = [["history"], ["runs"], ["coverage"], ["compare", "--side", "run:1", "--side", "run:2"],
                 ["report", "--html", "page.html"], ["explain", "0123"], ["goldens", "export", "--dir", "goldens"],
                 ["db", "current"]]


def _foreign_database(path):
    """Another application's SQLite file: a table of its own, the default rollback journal."""
    import sqlite3

    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO users (name) VALUES ('ada')")
    connection.close()


@pytest.mark.parametrize("kind", ["another application's", "empty"])
@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda command: command[0] + "-" + command[-1])
def test_a_read_command_leaves_a_file_that_is_no_history_as_it_was(tmp_path, capsys, monkeypatch, kind, command):
    """Reading never creates or migrates: a foreign SQLite file, or an empty one, is said in one
    line and left byte for byte as it was (before, `history` added the schema's six tables to it
    and switched it to WAL; `db current` switched it to WAL)."""
    database = tmp_path / "other.db"
    if kind == "empty":
        database.write_bytes(b"")
    else:
        _foreign_database(database)
    before = database.read_bytes()
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "--db", database, *command)
    if command == ["db", "current"] and kind == "empty":  # the question has an answer: no schema yet
        assert status == 0 and err == "" and out.endswith(": no gemmcheck schema (head is "
                                                          f"{head_revision()}: run gemmcheck db upgrade)\n"), out
    else:
        assert status == 1 and out == "" and len(err.splitlines()) == 1, (status, out, err)
        assert ("is empty: no gemmcheck history" if kind == "empty" else "is not a gemmcheck history") in err, err
    assert database.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["other.db"]  # no journal, WAL, page or goldens


@pytest.mark.parametrize("command", [["history"], ["runs"], ["report", "--html", "page.html"], ["explain", "0123"]])
def test_a_history_without_one_of_its_tables_is_one_line(recorded_db, tmp_path, capsys, monkeypatch, command):
    import sqlite3

    with sqlite3.connect(recorded_db) as connection:
        connection.execute("DROP TABLE launch")
    connection.close()
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "--db", recorded_db, *command)
    assert status == 1 and out == "" and len(err.splitlines()) == 1, (status, out, err)
    assert "is a gemmcheck history without its launch table; restore it from a copy" in err, err


@pytest.mark.parametrize("command", [["runs"], ["history"], ["compare", "--side", "run:1", "--side", "tag:main"]])
@pytest.mark.parametrize("since", ["9999999999d", "999999999d", "99999999999999999999999w"])
def test_an_age_past_the_calendar_is_a_usage_error(recorded_db, capsys, command, since):
    status, out, err = run(capsys, *command, "--db", recorded_db, "--since", since)
    assert (status, out) == (2, "")
    assert err == f"gemmcheck {command[0]}: --since {since!r}: an age back past the year 1; give a date such as " \
                  "2026-11-01, or leave the option out to match everything\n"


def test_a_run_that_does_not_exist_is_a_usage_error(recorded_db, tmp_path, capsys):
    for command in (["history"], ["runs"], ["coverage"]):
        status, out, err = run(capsys, *command, "--db", recorded_db, "--run", "999")
        assert (status, out) == (2, ""), command
        assert err == f"gemmcheck {command[0]}: --run 999: no recorded run has that id (gemmcheck runs lists them)\n"
    status, _, err = run(capsys, "report", "--db", recorded_db, "--html", tmp_path / "page.html", "--show-run", "999")
    assert status == 2 and "--show-run 999: no recorded run has that id" in err
    assert not (tmp_path / "page.html").exists()
    for value in ("-1", "0", "٣", "1_0", "99999999999999999999"):
        status, _, err = run(capsys, "history", "--db", recorded_db, "--run", value)
        assert status == 2 and f"argument --run: expected a run id, a whole number >= 1" in err, (value, err)
    assert run(capsys, "history", "--db", recorded_db, "--run", "1")[0] == 0
