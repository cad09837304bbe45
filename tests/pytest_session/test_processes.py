"""--gemmcheck-processes children run with their parent's resolved settings, and nothing else:
every option that applies to a child reaches it (the command line's, the ini file's, the
environment's and the marker's), and the child resolves none of them again."""

import textwrap

import pytest

from pytest_gemmcheck.config.table import OPTIONS, Settings, child_settings, settings_from_child

SUITE = textwrap.dedent("""
    import os
    import time

    import pytest
    import torch


    @pytest.mark.gemmcheck(repeat=8)
    def test_marked(gemmcheck):
        case = gemmcheck.case("marked", m=16, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: out.copy_(x.a.float() @ x.b.float().T))


    def test_hangs_in_the_child(gemmcheck):
        case = gemmcheck.case("hangs", m=16, n=16, k=32)
        x = case.inputs()

        def launch(out):
            if os.environ.get("GEMMCHECK_CHILD_INDEX"):
                time.sleep(float(os.environ["HANG_S"]))
            out.copy_(x.a.float() @ x.b.float().T)

        case.run(launch)
""")


@pytest.fixture
def suite(pytester):
    pytester.makepyfile(test_kernel=SUITE)
    return pytester


def test_a_markers_repeat_is_spread_over_the_processes(suite):
    result = suite.runpytest_subprocess(
        "-k", "marked", "--gemmcheck-processes=2", "--gemmcheck-no-record", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1)
    # 8 launches in all, 4 in each of 2 processes (the children do not apply the marker again)
    result.stdout.fnmatch_lines(["PASS * 0/8 launches bad", "    rate < * (95%), 2 processes"])


def test_a_command_line_launch_timeout_reaches_the_children(suite, monkeypatch):
    monkeypatch.setenv("HANG_S", "600")  # far past the 60 s default: a child given the default hangs the test
    result = suite.runpytest_subprocess(
        "-k",
        "hangs",
        "--gemmcheck-processes=2",
        "--gemmcheck-repeat=2",
        "--gemmcheck-launch-timeout=1",
        "--gemmcheck-no-record",
        "-p",
        "no:cacheprovider",
        timeout=300,
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*did not finish within 1 s*--gemmcheck-launch-timeout=*"])


def test_child_settings_carry_every_option_that_applies_to_a_child():
    changed = Settings(
        repeat=7,
        target_rate=0.02,
        budget=3.0,
        stop_on_bad=True,
        rtol=0.1,
        floor=0.5,
        seed=9,
        nondeterministic=("splitk*",),
        stress="copy",
        wait_idle=2.0,
        launch_timeout=5.0,
        check_backend="torch",
        repeat_check="full",
        scope="stack",
        alpha=0.01,
        worst_factor=3.0,
        static="fail",
        db="pg://x",
        tag="t",
        processes=4,
        devices="0,1",
        summary="s.md",
        json="r.json",
        goldens="g",
        accept=True,
    )
    child = settings_from_child(child_settings(changed, repeat=2))
    for option in OPTIONS:
        if option.child:
            expected = 2 if option.field == "repeat" else getattr(changed, option.field)
            assert getattr(child, option.field) == expected, option.field
    # what only the parent does: record, spread, write files, accept goldens
    assert child.no_record and child.processes == 1
    assert (child.db, child.tag, child.devices, child.summary, child.json, child.goldens, child.accept) == (
        None,
        None,
        None,
        None,
        None,
        None,
        False,
    )
