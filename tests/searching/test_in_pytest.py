"""The fixture's gemmcheck.search in real pytest sessions: the test fails with the smallest
failing configuration and its evidence, the option and the marker scale it, the probes are the
test's recorded cases, and --gemmcheck-processes spreads each probe."""

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest

from gemmcheck_dev import search_region_kernels
from pytest_gemmcheck.pytest_session.search_in_test import calls_search

REGIONS = Path(search_region_kernels.__file__).read_text()  # written as regions.py for the sessions

SUITE = textwrap.dedent("""
    import pytest
    from regions import correct, tail_of_half_a_tile

    def test_tail(gemmcheck):
        gemmcheck.search("tail", tail_of_half_a_tile, m=(128, 512, 64), n=(64, 128, 64), k=128, repeat=2,
                         examples=100)

    def test_clean(gemmcheck):
        found = gemmcheck.search("clean", correct, m=(64, 1024, 64), n=(64, 1024, 64), k=(128, 512, 128), repeat=1)
        assert found.minimal is None

    @pytest.mark.gemmcheck(search_examples=5)
    def test_clean_marked(gemmcheck):
        gemmcheck.search("clean_marked", correct, m=(64, 1024, 64), n=(64, 1024, 64), k=(128, 512, 128), repeat=1)

    @pytest.mark.gemmcheck(search_examples=5)
    def test_clean_named(gemmcheck):
        gemmcheck.search("clean_named", correct, m=(64, 1024, 64), n=(64, 1024, 64), k=128, repeat=1, examples=2)

    def test_unrecorded(gemmcheck):
        found = gemmcheck.search("unrecorded", correct, m=(64, 256, 64), n=64, k=128, repeat=1, db=None,
                                 examples=10)
        assert len(found.probes) == 4 and gemmcheck.results == []
""")


@pytest.fixture
def suite(pytester):
    pytester.makepyfile(regions=REGIONS, test_suite=SUITE)
    pytester.syspathinsert()
    return pytester


def results_by_test(path) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for result in json.loads(Path(path).read_text())["results"]:
        found.setdefault(result["nodeid"].split("::")[-1], []).append(result)
    return found


def test_a_search_fails_its_test_with_the_smallest_case_and_its_evidence(suite):
    done = suite.runpytest(
        "-p",
        "no:cacheprovider",
        "--gemmcheck-search-examples=3",
        "--gemmcheck-tag=nightly",
        "--gemmcheck-json=out.json",
    )
    done.assert_outcomes(failed=1, passed=4)
    text = done.stdout.str()
    assert 'gemmcheck.case("tail", m=192, n=64, k=128, quant="bf16")' in text
    assert "m: m=192 fails; m=128 and m=256 pass (n, k, quant and params as above)" in text
    assert "its evidence:" in text and "gemmcheck: tail bf16 192x64x128: regression" in text
    by_test = results_by_test(suite.path / "out.json")
    assert len(by_test["test_clean"]) == 3  # --gemmcheck-search-examples
    assert len(by_test["test_clean_marked"]) == 5  # the marker beats the option
    assert len(by_test["test_clean_named"]) == 2  # examples= beats both
    assert "test_unrecorded" not in by_test  # db=None
    tail = by_test["test_tail"]
    assert {(r["m"], r["verdict"]) for r in tail if r["n"] == 64 and r["k"] == 128} >= {
        (192, "regression"),
        (128, "pass"),
        (256, "pass"),
    }
    with sqlite3.connect(suite.path / ".gemmcheck" / "history.db") as connection:
        assert connection.execute("select tag from run").fetchall() == [("nightly",)]
        recorded = connection.execute("select count(*) from result").fetchone()[0]
    assert recorded == sum(len(results) for results in by_test.values())


def test_a_failure_found_once_replays_first_in_the_next_session(suite):
    first = suite.runpytest("-p", "no:cacheprovider", "-k", "tail")
    first.assert_outcomes(failed=1)
    assert "stored failing example" not in first.stdout.str()
    assert list((suite.path / ".gemmcheck" / "search").iterdir())
    second = suite.runpytest("-p", "no:cacheprovider", "-k", "tail")
    second.assert_outcomes(failed=1)
    assert "1 stored failing example tried first" in second.stdout.str()


def test_no_record_writes_no_example_database(suite):
    suite.runpytest("-p", "no:cacheprovider", "-k", "tail", "--gemmcheck-no-record").assert_outcomes(failed=1)
    assert not (suite.path / ".gemmcheck" / "search").exists()


@pytest.mark.parametrize(
    "argument,message",
    [
        ('tag="mine"', "gemmcheck.search(tag='mine') under pytest: the probes are cases of the session's run"),
        ('db="other.db"', "gemmcheck.search(db='other.db') under pytest"),
        ("m=(128, 64, 64)", "m=(128, 64, 64): lo 128 is above hi 64"),
    ],
)
def test_arguments_the_fixture_refuses(pytester, argument, message):
    pytester.makepyfile(
        textwrap.dedent(f"""
        def test_it(gemmcheck):
            gemmcheck.search("kern", lambda case, x: None,
                             **{{"m": (64, 128, 64), "n": 64, "k": 128, **dict({argument})}})
    """)
    )
    done = pytester.runpytest("-p", "no:cacheprovider", "--gemmcheck-no-record")
    done.assert_outcomes(failed=1)
    assert message in done.stdout.str()


def test_a_bad_marker_value_is_a_usage_error(pytester):
    pytester.makepyfile(
        textwrap.dedent("""
        import pytest

        @pytest.mark.gemmcheck(search_examples=0)
        def test_it(gemmcheck):
            pass
    """)
    )
    done = pytester.runpytest("-p", "no:cacheprovider", "--gemmcheck-no-record")
    assert done.ret == pytest.ExitCode.USAGE_ERROR  # at collection, before any test runs
    assert (
        "@pytest.mark.gemmcheck(search_examples=...): expected a whole number of examples >= 1, got 0"
        in done.stderr.str()
    )


def test_processes_spread_each_probe(pytester, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the children's torch, as this process's
    pytester.makepyfile(
        regions=REGIONS,
        test_spread=textwrap.dedent("""
        from regions import tail_of_half_a_tile

        def test_spread(gemmcheck):
            gemmcheck.search("spread", tail_of_half_a_tile, m=(128, 192, 64), n=64, k=128)
    """),
    )
    pytester.syspathinsert()
    done = pytester.runpytest(
        "-p", "no:cacheprovider", "--gemmcheck-processes=2", "--gemmcheck-repeat=2", "--gemmcheck-json=out.json"
    )
    done.assert_outcomes(failed=1)
    assert 'gemmcheck.case("spread", m=192, n=64, k=128, quant="bf16")' in done.stdout.str()
    results: dict[int, list] = {}
    for result in json.loads((pytester.path / "out.json").read_text())["results"]:
        results.setdefault(result["m"], []).append(result)
    assert set(results) == {128, 192}
    (passing,), (failing, evidence) = results[128], results[192]
    assert passing["verdict"] == "pass" and len({launch["pid"] for launch in passing["launches"]}) == 2
    # the first process's bad launch: no second process started (stop on bad)
    assert failing["verdict"] == "regression" and len(failing["launches"]) == 1
    # the smallest failing configuration's launches to the end, as evidence for its boundary: over both processes
    assert len(evidence["launches"]) == 12 and len({launch["pid"] for launch in evidence["launches"]}) == 2


def test_only_a_test_that_calls_the_fixtures_search_itself_runs_in_this_process():
    import re

    def searches(gemmcheck):
        return gemmcheck.search("kern", None, m=64, n=64, k=128)

    def searches_in_a_closure(gemmcheck):
        return (lambda: gemmcheck)() and gemmcheck.search("kern", None, m=64, n=64, k=128)

    def matches(gemmcheck):
        return re.search("a", "a") and gemmcheck.case("kern", m=64, n=64, k=128)

    def helper(fixture):
        return fixture.search("kern", None, m=64, n=64, k=128)

    def through_a_helper(gemmcheck):
        return helper(gemmcheck)

    assert calls_search(searches) and calls_search(searches_in_a_closure)
    assert not calls_search(matches) and not calls_search(through_a_helper) and not calls_search(None)


def test_a_skip_in_make_launch_leaves_its_configuration_out_of_the_search(pytester):
    pytester.makepyfile(
        regions=REGIONS,
        test_skips=textwrap.dedent("""
        import pytest
        from regions import tail_of_half_a_tile

        def skip_small(case, x):
            if case.m < 192:
                pytest.skip(f"no kernel for m={case.m}")
            return tail_of_half_a_tile(case, x)

        def test_some_skipped(gemmcheck):
            gemmcheck.search("tail", skip_small, m=(64, 512, 64), n=64, k=128, repeat=2)

        def test_all_skipped(gemmcheck):
            gemmcheck.search("none", lambda case, x: pytest.skip("no kernel here"), m=(64, 256, 64), n=64, k=128)
    """),
    )
    pytester.syspathinsert()
    done = pytester.runpytest("-p", "no:cacheprovider", "--gemmcheck-no-record", "-rs")
    done.assert_outcomes(failed=1, skipped=1)
    text = done.stdout.str()
    # the bug past the skipped configurations is found; they are said, never probed
    assert 'gemmcheck.case("tail", m=192, n=64, k=128, quant="bf16")' in text
    assert "2 configurations skipped by make_launch, left out of the search:" in text
    assert 'm=64, n=64, k=128, quant="bf16": no kernel for m=64' in text
    assert "gemmcheck.search none: make_launch skipped every configuration tried (4), the first: no kernel here" in text


def test_a_required_sanitizer_that_cannot_run_is_no_failing_shape(pytester):
    """On the CPU the sanitizer is skipped: the test fails for the requirement, and a correct
    kernel's probes stay passes in the results and the history."""
    pytester.makepyfile(
        regions=REGIONS,
        test_required=textwrap.dedent("""
        from regions import correct

        def test_required(gemmcheck):
            gemmcheck.search("clean", correct, m=(64, 256, 64), n=64, k=128, repeat=2)
    """),
    )
    pytester.syspathinsert()
    done = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--gemmcheck-sanitize=racecheck",
        "--gemmcheck-require-sanitize",
        "--gemmcheck-json=out.json",
    )
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "gemmcheck.search clean: stopped at its probe of m=64, n=64, k=128" in text
    assert "(--gemmcheck-require-sanitize: the launch must be sanitized)" in text
    assert "smallest failing configuration" not in text
    verdicts = [result["verdict"] for result in json.loads((pytester.path / "out.json").read_text())["results"]]
    assert verdicts == ["pass"]
    with sqlite3.connect(pytester.path / ".gemmcheck" / "history.db") as connection:
        assert connection.execute("select verdict from result").fetchall() == [("pass",)]
