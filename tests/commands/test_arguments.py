"""The options the commands share, and their parsers: every value validated with exit status 2
naming the option, and a command's own usage for an argument it does not take."""

import pytest


@pytest.mark.parametrize("alpha", ["2", "0", "-1", "1", "nan", "0.5.1"])
def test_compare_refuses_an_alpha_that_is_no_significance_level(empty_db, cli, alpha):
    status, out, err = cli("compare", "--db", empty_db, "--side", "a", "--side", "b", f"--alpha={alpha}")
    assert status == 2 and out == ""
    assert (
        f"gemmcheck compare: error: argument --alpha: expected a significance level between 0 and 1 (e.g. 0.05), "
        f"got '{alpha}'" in err
    )


def test_an_argument_a_command_does_not_take_gets_that_commands_usage(empty_db, tmp_path, cli):
    status, _, err = cli("report", "--db", empty_db, "--html", tmp_path / "r.html", "--format", "markdown")
    assert status == 2
    assert err.startswith("usage: gemmcheck report ")
    assert err.rstrip().endswith("gemmcheck report: error: unrecognized arguments: --format markdown")
    status, _, err = cli("goldens", "export", "--db", empty_db, "--nope")
    assert status == 2 and err.startswith("usage: gemmcheck goldens export ")


@pytest.mark.parametrize("command", [["runs"], ["history"], ["compare", "--side", "run:1", "--side", "tag:main"]])
@pytest.mark.parametrize("since", ["9999999999d", "999999999d", "99999999999999999999999w"])
def test_an_age_past_the_calendar_is_a_usage_error(recorded_db, cli, command, since):
    status, out, err = cli(*command, "--db", recorded_db, "--since", since)
    assert (status, out) == (2, "")
    assert (
        err == f"gemmcheck {command[0]}: --since {since!r}: an age back past the year 1; give a date such as "
        "2026-11-01, or leave the option out to match everything\n"
    )


def test_a_run_that_does_not_exist_is_a_usage_error(recorded_db, tmp_path, cli):
    for command in (["history"], ["runs"], ["coverage"]):
        status, out, err = cli(*command, "--db", recorded_db, "--run", "999")
        assert (status, out) == (2, ""), command
        assert err == f"gemmcheck {command[0]}: --run 999: no recorded run has that id (gemmcheck runs lists them)\n"
    status, _, err = cli("report", "--db", recorded_db, "--html", tmp_path / "page.html", "--show-run", "999")
    assert status == 2 and "--show-run 999: no recorded run has that id" in err
    assert not (tmp_path / "page.html").exists()
    for value in ("-1", "0", "٣", "1_0", "99999999999999999999"):
        status, _, err = cli("history", "--db", recorded_db, "--run", value)
        assert status == 2 and "argument --run: expected a run id, a whole number >= 1" in err, (value, err)
    assert cli("history", "--db", recorded_db, "--run", "1")[0] == 0
