"""The gemmcheck command's own checks: every value validated with exit status 2 naming the
option, a command's own usage for an argument it does not take, nothing created by a question,
nothing checked never read as a pass, and a database URL printed as it was written."""

import pytest

from pytest_gemmcheck.cli import main as gemmcheck


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
