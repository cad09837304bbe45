"""How the commands read the history: never created or migrated by a question, a file that is
no gemmcheck history (another application's, an empty one, one without a table) said in one line
and left as it was, a key that names no case a usage error, and a database URL printed as it was
written."""

import pytest

from pytest_gemmcheck.history.engine import head_revision

READ_COMMANDS = [
    ["history"],
    ["runs"],
    ["coverage"],
    ["compare", "--side", "run:1", "--side", "run:2"],
    ["report", "--html", "page.html"],
    ["explain", "0123"],
    ["goldens", "export", "--dir", "goldens"],
    ["db", "current"],
]


def _foreign_database(path):
    """Another application's SQLite file: a table of its own, the default rollback journal."""
    import sqlite3

    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO users (name) VALUES ('ada')")
    connection.close()


def test_an_unknown_case_key_is_a_usage_error_as_explain_says(empty_db, cli):
    status, out, err = cli("history", "--db", empty_db, "--case", "zzzz")
    assert (status, out) == (2, "")
    assert (
        err == "gemmcheck history: --case 'zzzz': no recorded case has a key starting with it (gemmcheck history "
        "lists them)\n"
    )
    status, _, err = cli("explain", "--db", empty_db, "zzz")
    assert status == 2 and err.startswith("gemmcheck explain: ")


def test_a_read_only_sqlite_uri_is_read_and_printed_as_written(empty_db, cli):
    url = f"sqlite:///file:{empty_db}?mode=ro&uri=true"
    status, out, _ = cli("db", "current", "--db", url)
    assert status == 0 and out.startswith(f"{url}: revision ")
    status, out, _ = cli("history", "--db", url)
    assert status == 0 and out.startswith("no recorded cases match")


@pytest.mark.parametrize("kind", ["another application's", "empty"])
@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda command: command[0] + "-" + command[-1])
def test_a_read_command_leaves_a_file_that_is_no_history_as_it_was(tmp_path, cli, monkeypatch, kind, command):
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
    status, out, err = cli("--db", database, *command)
    if command == ["db", "current"] and kind == "empty":  # the question has an answer: no schema yet
        assert (
            status == 0
            and err == ""
            and out.endswith(f": no gemmcheck schema (head is {head_revision()}: run gemmcheck db upgrade)\n")
        ), out
    else:
        assert status == 1 and out == "" and len(err.splitlines()) == 1, (status, out, err)
        assert ("is empty: no gemmcheck history" if kind == "empty" else "is not a gemmcheck history") in err, err
    assert database.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["other.db"]  # no journal, WAL, page or goldens


@pytest.mark.parametrize("command", [["history"], ["runs"], ["report", "--html", "page.html"], ["explain", "0123"]])
def test_a_history_without_one_of_its_tables_is_one_line(recorded_db, tmp_path, cli, monkeypatch, command):
    import sqlite3

    with sqlite3.connect(recorded_db) as connection:
        connection.execute("DROP TABLE launch")
    connection.close()
    monkeypatch.chdir(tmp_path)
    status, out, err = cli("--db", recorded_db, *command)
    assert status == 1 and out == "" and len(err.splitlines()) == 1, (status, out, err)
    assert "is a gemmcheck history without its launch table; restore it from a copy" in err, err
