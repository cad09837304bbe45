"""pytest-xdist and --gemmcheck-processes together: every case runs and is recorded once, with
the launches of both its processes (a checksum below -2**31, which the processes compare, rides
on an xdist report as JSON text), and a test that fails after its case.run in a child fails."""

import sqlite3
import textwrap

SUITE = textwrap.dedent("""
    import pytest


    @pytest.mark.parametrize("m", [16, 32, 48, 64])
    def test_gemm(gemmcheck, m):
        case = gemmcheck.case("spread", m=m, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: out.copy_(x.a.float() @ x.b.float().T))
""")


def test_xdist_workers_spreading_cases_over_processes(pytester):
    pytester.makepyfile(test_spread=SUITE)
    result = pytester.runpytest_subprocess(
        "-n", "2", "--gemmcheck-processes=2", "--gemmcheck-repeat=2", "-p", "no:cacheprovider", timeout=600
    )
    result.assert_outcomes(passed=4)
    assert "INTERNALERROR" not in result.stdout.str()
    connection = sqlite3.connect(pytester.path / ".gemmcheck" / "history.db")
    runs = connection.execute("SELECT status FROM run").fetchall()
    per_result = connection.execute("SELECT count(*), count(DISTINCT pid) FROM launch GROUP BY result_id").fetchall()
    connection.close()
    assert runs == [("complete",)] and per_result == [(2, 2)] * 4


def test_a_tests_own_failure_in_a_child_fails_the_test(pytester):
    pytester.makepyfile(
        textwrap.dedent("""
        def test_gemm(gemmcheck):
            case = gemmcheck.case("spread", m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: out.copy_(x.a.float() @ x.b.float().T))
            assert False, "the test's own check"
    """)
    )
    result = pytester.runpytest_subprocess(
        "--gemmcheck-processes=2", "--gemmcheck-repeat=2", "-p", "no:cacheprovider", timeout=600
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the test failed in process 1 of 2*", "*the test's own check*"])
    connection = sqlite3.connect(pytester.path / ".gemmcheck" / "history.db")
    assert connection.execute("SELECT count(*) FROM result").fetchone() == (1,)  # recorded all the same
    connection.close()
