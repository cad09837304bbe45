"""Verdicts against goldens and history, with the numbers of each scenario in its name."""

import json
import shutil
import textwrap

import pytest
from sqlalchemy import create_engine, text

from pytest_gemmcheck.judging.baseline import CLEAN, Baseline, Evidence
from pytest_gemmcheck.judging.goldens import GoldenStore
from pytest_gemmcheck.judging.stats import (
    binom_cdf,
    design_effect,
    fisher_greater,
    format_interval,
    rate_interval,
    rate_upper_bound,
)
from pytest_gemmcheck.judging.verdict import IMPROVED, KNOWN_BAD, PASS, REGRESSION, judge
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord


def result_of(processes, *, worst_wrong=50, kinds=("wrong",), arch="sm_90", key="k1", kernel="fused"):
    """A result whose launches ran in ``processes``: a list of (bad, launches) per process."""
    launches = []
    for number, (bad, count) in enumerate(processes):
        for i in range(count):
            record = LaunchRecord(
                index=len(launches) + 1, pid=1000 + number, host="h", device="cuda:0", device_uuid="GPU-1"
            )
            if i < bad:
                for kind in kinds:
                    record.add_kind(kind)
                record.wrong = worst_wrong if "wrong" in kinds else 0
                record.nonfinite = 7 if "nonfinite" in kinds else 0
            launches.append(record)
    return CaseResult(
        key=key,
        kernel=kernel,
        m=64,
        n=64,
        k=64,
        quant="ptpc",
        tile=None,
        out_dtype="bfloat16",
        params={},
        fp8="e4m3fn",
        seed=0,
        device="cuda:0",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=launches,
        stack={"gpu_arch": arch, "fingerprint": "f" + arch},
    )


def history(processes, **kwargs):
    evidence = Evidence.of(result_of(processes, **kwargs))
    return Baseline(source="history", description="history: test", evidence=evidence)


def golden(processes, **kwargs):
    evidence = Evidence.of(result_of(processes, **kwargs))
    return Baseline(source="golden", description="golden goldens/fused.json [any]", evidence=evidence)


def test_rate_bounds_match_the_design_numbers():
    assert rate_upper_bound(0, 12) == pytest.approx(0.221, abs=5e-4)
    assert rate_upper_bound(0, 900) == pytest.approx(0.00332, abs=5e-5)
    # Clopper-Pearson for 3/12 is 0.5273 (exact beta quantile)
    assert rate_upper_bound(3, 12) == pytest.approx(0.5273, abs=5e-4)


def test_fisher_one_sided_exact_values():
    assert fisher_greater(1, 12, 0, 900) == pytest.approx(12 / 912)
    assert fisher_greater(4, 4, 0, 4) == pytest.approx(1 / 70)  # 4 of 8, all in the first 4: 1/C(8,4)
    assert fisher_greater(0, 12, 5, 12) == 1.0


def test_history_0_of_900_now_1_of_12_is_a_regression():
    verdict = judge(result_of([(1, 12)]), history([(0, 900)]))
    assert verdict.kind == REGRESSION
    assert "1 bad launch against a baseline without bad launches (0/900)" in verdict.reasons[0]
    assert verdict.p_value == pytest.approx(12 / 912)
    text_lines = "\n".join(verdict.lines)
    assert "current: 1/12 (rate < 33.9%) launches in 1 process on 1 GPU" in text_lines
    assert "baseline: 0/900 (rate < 0.33%) launches in 1 process on 1 GPU, from history: test" in text_lines
    assert "p = 0.0132" in text_lines
    assert "rests on a single process" in text_lines


def test_history_0_of_12_now_0_of_12_passes():
    assert judge(result_of([(0, 12)]), history([(0, 12)])).kind == PASS


def test_golden_accepting_8_of_12_now_9_of_12_is_known_bad_and_passes():
    verdict = judge(result_of([(9, 12)]), golden([(8, 12)]))
    assert verdict.kind == KNOWN_BAD and not verdict.failed
    assert verdict.p_value == pytest.approx(0.5)


def test_golden_8_of_12_now_12_of_12_is_a_regression():
    verdict = judge(result_of([(12, 12)]), golden([(8, 12)]))
    assert verdict.kind == REGRESSION
    assert verdict.p_value == pytest.approx(0.0466, abs=1e-4)
    assert "12/12 is worse than the baseline's 8/12 (p = 0.0466 < 0.05)" in verdict.reasons[0]


def test_history_8_of_12_now_0_of_12_is_improved_and_says_how_to_accept():
    verdict = judge(result_of([(0, 12)]), history([(8, 12)]))
    assert verdict.kind == IMPROVED and not verdict.failed
    assert "--gemmcheck-accept" in verdict.reasons[0]


def test_binomial_tail_by_the_incomplete_beta_equals_the_direct_sum():
    import math

    def direct(k, n, p):
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    for n in (1, 12, 37, 300):
        for k in range(0, n, max(1, n // 9)):
            for p in (1e-4, 0.05, 0.3, 0.5, 0.9, 0.999):
                assert binom_cdf(k, n, p) == pytest.approx(direct(k, n, p), abs=1e-11), (k, n, p)


def test_two_sided_intervals_as_the_dashboard_shows_them():
    assert rate_interval(12, 12) == pytest.approx((0.025 ** (1 / 12), 1.0))  # 74-100%, not "< 100%"
    assert rate_interval(0, 12) == pytest.approx((0.0, 1 - 0.025 ** (1 / 12)))
    assert [
        format_interval(*rate_interval(bad, n)) for bad, n in ((12, 12), (0, 12), (0, 900), (11, 12), (1, 100_000))
    ] == ["74–100%", "0–26%", "0–0.41%", "62–99.8%", "0.000025–0.0056%"]


def test_same_rate_but_worst_wrong_count_10x_is_a_regression():
    verdict = judge(result_of([(4, 12)], worst_wrong=5000), history([(4, 12)], worst_wrong=500))
    assert verdict.kind == REGRESSION
    assert verdict.reasons == ["worst launch has 5,000 wrong elements, more than 2x the baseline's 500"]
    # within the factor: as bad as the history, which is known-bad, never a pass
    assert judge(result_of([(4, 12)], worst_wrong=900), history([(4, 12)], worst_wrong=500)).kind == KNOWN_BAD


def test_first_nan_ever_is_a_regression():
    verdict = judge(result_of([(4, 12)], kinds=("wrong", "nonfinite")), history([(4, 12)]))
    assert verdict.kind == REGRESSION
    assert verdict.reasons == ["non-finite elements where the baseline had none"]


def test_first_inconsistent_launch_against_a_clean_history_is_a_regression():
    verdict = judge(result_of([(1, 12)], kinds=("inconsistent",)), history([(0, 500)]))
    assert verdict.kind == REGRESSION


def test_history_of_4_processes_0_of_100_against_4_processes_25_of_25_is_a_regression_at_the_process_level():
    verdict = judge(result_of([(25, 25)] * 4), history([(0, 100)] * 4))
    assert verdict.kind == REGRESSION
    assert any("at the process level too: 4/4 processes bad against 0/4" in reason for reason in verdict.reasons)
    assert "process level: 4/4 processes with a bad launch, baseline 0/4 (Fisher p = 0.0143)" in verdict.lines


def test_clustered_launches_count_for_less():
    # 2 of 4 processes race on every launch: 50/100 launches, but the evidence is 2 processes
    processes = [(25, 25), (0, 25), (25, 25), (0, 25)]
    assert design_effect(processes) == pytest.approx(100 / 3)
    verdict = judge(result_of(processes), history([(20, 100)] * 2))
    line = next(line for line in verdict.lines if line.startswith("current launches cluster"))
    assert "design effect 33.3 over 4 processes" in line and "counted as 2/3 independent launches" in line
    # counted as 300 independent launches, the same 50% against 20% would be decisive
    assert verdict.kind == KNOWN_BAD
    assert judge(result_of([(50, 100)]), history([(20, 100)] * 2)).kind == REGRESSION


def test_a_bad_result_is_never_a_pass_against_a_history_that_was_bad_too():
    """No golden, a history of 3/12 bad and now 3/12: as bad as before. Known-bad, with the
    history named as what it holds to, and that no golden accepts it."""
    verdict = judge(result_of([(3, 12)]), history([(3, 12)]))
    assert verdict.kind == KNOWN_BAD and not verdict.failed
    assert verdict.reasons == [
        "as bad as its history: 3/12 against 3/12 from history: test; no golden accepts it: "
        "fix the kernel, or accept the rate with --gemmcheck-accept to track it as a known bug"
    ]
    # a clean result against the same history is a pass; a golden's known-bad says the golden
    assert judge(result_of([(0, 12)]), history([(3, 12)])).kind == PASS
    assert judge(result_of([(3, 12)]), golden([(3, 12)])).reasons[0].startswith("a known bad rate, accepted by golden")


def test_clean_baseline_any_bad_launch_is_a_regression():
    assert judge(result_of([(1, 12)]), CLEAN).kind == REGRESSION
    assert judge(result_of([(0, 12)]), CLEAN).kind == PASS


def test_goldens_are_deterministic_sorted_files(tmp_path):
    store = GoldenStore(tmp_path)
    for key in ("kb", "ka"):
        store.accept(result_of([(3, 12), (0, 12)], key=key), "arch", "accepted at abc")
    path = store.write("fused")
    first = path.read_text()
    again = GoldenStore(tmp_path)
    again.entries("fused")
    again.write("fused")
    assert path.read_text() == first
    data = json.loads(first)
    assert [case["key"] for case in data["cases"]] == ["ka", "kb"]
    assert data["cases"][0]["per_process"] == ["0/12", "3/12"] and data["cases"][0]["scope"] == "arch:sm_90"
    assert first.index('"bad_launches"') < first.index('"case"')  # sorted keys
    # looked up for the same arch, not for another
    assert GoldenStore(tmp_path).lookup(result_of([(0, 12)], key="ka")).evidence.bad == 3
    assert GoldenStore(tmp_path).lookup(result_of([(0, 12)], key="ka", arch="gfx942")) is None


# --- through real sessions and a real history database --------------------------------------

SUITE = textwrap.dedent("""
    import os
    from kernels import FaultInjector, tiled_gemm

    def test_kernel(gemmcheck):
        case = gemmcheck.case("fused", m=32, n=32, k=64, quant="ptpc")
        x = case.inputs()
        bad = {int(i) for i in os.environ.get("BAD_LAUNCHES", "").split(",") if i}
        case.run(FaultInjector(lambda out: tiled_gemm(x, out), "tile", bad, at=(0, 0)))
""")


@pytest.fixture
def suite(pytester, examples_dir, monkeypatch):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(test_kernel=SUITE)
    monkeypatch.delenv("BAD_LAUNCHES", raising=False)
    return pytester


def test_history_0_of_900_then_1_of_12_fails_naming_the_history(suite, monkeypatch):
    suite.runpytest("--gemmcheck-repeat=900").assert_outcomes(passed=1)
    monkeypatch.setenv("BAD_LAUNCHES", "5")
    result = suite.runpytest("--gemmcheck-repeat=12")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*gemmcheck: fused ptpc 32x32x64: regression",
            "*1 bad launch against a baseline without bad launches (0/900)",
            "*baseline: 0/900 (rate < 0.33%) launches in 1 process on the CPU, from history: 1 earlier run on cpu "
            "(torch *)",
            "*test: one-sided Fisher exact, p = 0.0132*",
        ]
    )
    # and the regression does not become the baseline of the next run
    result = suite.runpytest("--gemmcheck-repeat=12")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*0/900*"])


def test_an_arch_with_no_history_gets_a_clean_baseline(suite, tmp_path, monkeypatch):
    from pytest_gemmcheck.case.case import Case, CaseContext
    from pytest_gemmcheck.config.table import Settings
    from pytest_gemmcheck.history.engine import open_database, resolve_url
    from pytest_gemmcheck.history.store import HistoryStore, RunInfo

    # a history of 6/12 bad launches of this very case, on another arch (gfx942)
    engine = open_database(resolve_url(str(suite.path / ".gemmcheck" / "history.db"), tmp_path), auto_upgrade=True)
    store = HistoryStore(engine)
    elsewhere = result_of([(6, 12)], arch="gfx942", worst_wrong=135, kinds=("wrong", "inconsistent"))
    elsewhere.key = Case(CaseContext(Settings()), "fused", m=32, n=32, k=64, quant="ptpc").key
    elsewhere.verdict = "pass"
    store.add_results(store.begin_run(RunInfo(), elsewhere.stack), [elsewhere])
    engine.dispose()
    monkeypatch.setenv("BAD_LAUNCHES", "1,2,3,4,5,6")
    # on this arch (the CPU) there is no history: the baseline is clean, 6/12 is a regression ...
    here = suite.runpytest("--gemmcheck-repeat=12")
    here.assert_outcomes(failed=1)
    here.stdout.fnmatch_lines(
        [
            "*6 bad launches against a clean baseline*",
            "*baseline: clean (no history, no golden: no bad launch expected)*",
        ]
    )
    # ... while judged against any arch, gfx942's 6/12 is the baseline and 6/12 holds it: as bad
    # as the history, which no golden accepts, so known-bad (the test passes), never a pass
    anywhere = suite.runpytest("--gemmcheck-repeat=12", "--gemmcheck-scope=any")
    anywhere.assert_outcomes(passed=1)
    anywhere.stdout.fnmatch_lines(
        ["KNOWN-BAD * 6/12 launches bad*", "    vs 6/12 (history): history: 1 earlier run on any stack*"]
    )
    assert "PASS " not in anywhere.stdout.str()


def test_accept_writes_goldens_and_the_next_run_is_known_bad(suite, monkeypatch):
    monkeypatch.setenv("BAD_LAUNCHES", "2,5,9")
    accepted = suite.runpytest("--gemmcheck-repeat=12", "--gemmcheck-accept", "--gemmcheck-no-record")
    accepted.assert_outcomes(passed=1)
    accepted.stdout.fnmatch_lines(["gemmcheck: accepted as goldens: */goldens/fused.json"])
    golden_file = suite.path / "goldens" / "fused.json"
    data = json.loads(golden_file.read_text())
    assert (data["cases"][0]["launches"], data["cases"][0]["bad_launches"], data["cases"][0]["scope"]) == (
        12,
        3,
        "arch:cpu",
    )
    again = suite.runpytest("--gemmcheck-repeat=12", "--gemmcheck-no-record")
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(
        ["KNOWN-BAD * 3/12 launches bad*", "    vs 3/12 (golden): golden*", "*/goldens/fused.json*"]
    )
    monkeypatch.setenv("BAD_LAUNCHES", ",".join(str(i) for i in range(1, 13)))
    worse = suite.runpytest("--gemmcheck-repeat=12", "--gemmcheck-no-record")
    worse.assert_outcomes(failed=1)
    worse.stdout.fnmatch_lines(
        ["*12/12 is worse than the baseline's 3/12*", "*from golden */goldens/fused.json [[]arch:cpu[]]*"]
    )


def test_an_accepted_regression_says_accepted_and_the_run_passes(suite, monkeypatch):
    monkeypatch.setenv("BAD_LAUNCHES", "2,5,9")
    accepted = suite.runpytest(
        "--gemmcheck-repeat=12",
        "--gemmcheck-accept",
        "--gemmcheck-no-record",
        "--junitxml=junit.xml",
        "--gemmcheck-summary=summary.md",
    )
    accepted.assert_outcomes(passed=1)
    accepted.stdout.fnmatch_lines(
        [
            "ACCEPTED   fused ptpc 32x32x64: 3/12 launches bad, worst *",
            "    vs clean: no bad launch expected",
            "    a regression against that baseline, accepted: --gemmcheck-accept makes this",
            "      run the case's golden",
            "gemmcheck: accepted as goldens: */goldens/fused.json",
        ]
    )
    assert "REGRESSION" not in accepted.stdout.str()
    import xml.etree.ElementTree as ET

    properties = {p.get("name"): p.get("value") for p in ET.parse(suite.path / "junit.xml").iter("property")}
    assert (properties["gemmcheck.1.verdict"], properties["gemmcheck.1.accepted"]) == ("regression", "true")
    assert properties["gemmcheck.1.summary"].startswith("ACCEPTED fused ptpc 32x32x64: 3/12 launches bad")
    summary = (suite.path / "summary.md").read_text()
    assert "**gemmcheck: 1 case: 1 accepted**" in summary and "| ACCEPTED | fused |" in summary
    # without --gemmcheck-accept the same result is a regression that fails
    failed = suite.runpytest("--gemmcheck-repeat=12", "--gemmcheck-no-record", "--gemmcheck-goldens=elsewhere")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["REGRESSION fused ptpc 32x32x64: 3/12 launches bad, worst *"])


def test_goldens_export_from_history(suite, tmp_path, capsys):
    from pytest_gemmcheck.cli import main

    suite.runpytest("--gemmcheck-repeat=20").assert_outcomes(passed=1)
    suite.runpytest("--gemmcheck-repeat=30").assert_outcomes(passed=1)
    capsys.readouterr()
    out_dir = tmp_path / "exported"
    assert (
        main(["--db", str(suite.path / ".gemmcheck" / "history.db"), "goldens", "export", "--dir", str(out_dir)]) == 0
    )
    data = json.loads((out_dir / "fused.json").read_text())
    (entry,) = data["cases"]
    assert (entry["launches"], entry["bad_launches"], entry["per_process"]) == (50, 0, ["0/20", "0/30"])
    assert entry["note"] == "exported from 2 recorded runs"


def test_repeat_auto_stops_when_the_bound_reaches_the_target(suite):
    result = suite.runpytest("--gemmcheck-repeat=auto", "--gemmcheck-target-rate=0.05", "--gemmcheck-no-record")
    result.assert_outcomes(passed=1)
    # 0 bad launches in n: the bound 1 - 0.05**(1/n) is below 5% from n = 59
    result.stdout.fnmatch_lines(
        [
            "PASS * 0/59 launches bad",
            "    rate < 4.95% (95%), 1 process",
            "    stopped after 59 launches: rate < 4.95% reached the target 5*",
        ]
    )


def test_repeat_auto_reports_a_budget_that_ran_out(suite):
    # clean: 0.01% takes 29,956 clean launches to show, more than 0.3 s holds
    result = suite.runpytest(
        "--gemmcheck-repeat=auto", "--gemmcheck-budget=0.3", "--gemmcheck-target-rate=0.0001", "--gemmcheck-no-record"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*stopped after * launches: the 0.3 s budget ran out with the rate shown*"])


def test_processes_4_gives_one_result_with_4_process_ids(suite):
    result = suite.runpytest_subprocess("--gemmcheck-repeat=8", "--gemmcheck-processes=4", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["PASS * 0/8 launches bad", "    rate < 31.2% (95%), 4 processes"])
    engine = create_engine(f"sqlite:///{suite.path / '.gemmcheck' / 'history.db'}")
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT count(*), count(DISTINCT pid) FROM launch")).one()
        results = connection.execute(text("SELECT count(*) FROM result")).scalar()
    engine.dispose()
    assert tuple(rows) == (8, 4) and results == 1


def test_processes_find_a_race_decided_per_process(suite, monkeypatch):
    # process 2 of 4 is the racing one: every launch there is bad
    suite.makepyfile(
        test_kernel=SUITE.replace(
            'bad = {int(i) for i in os.environ.get("BAD_LAUNCHES", "").split(",") if i}',
            'bad = set(range(1, 100)) if os.environ.get("GEMMCHECK_CHILD_INDEX") == "1" else set()',
        )
    )
    result = suite.runpytest_subprocess("--gemmcheck-repeat=40", "--gemmcheck-processes=4", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*10/40 launches bad (launches 11, 12, *); rate < * (95%), 4 processes",
            "*process level: 1/4 processes with a bad launch*",
        ]
    )


def test_stop_on_bad_ends_the_launches_at_the_first_bad_one(suite, monkeypatch):
    monkeypatch.setenv("BAD_LAUNCHES", "5,9")
    result = suite.runpytest("--gemmcheck-repeat=12", "--gemmcheck-stop-on-bad")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*1/5 launches bad (launch 5)*", "*stopped at launch 5, the first bad one (--gemmcheck-stop-on-bad)*"]
    )
    engine = create_engine(f"sqlite:///{suite.path / '.gemmcheck' / 'history.db'}")
    with engine.connect() as connection:
        assert tuple(connection.execute(text("SELECT launches, bad_launches FROM result")).one()) == (5, 1)
    engine.dispose()
    # a clean kernel runs every launch
    monkeypatch.setenv("BAD_LAUNCHES", "")
    clean = suite.runpytest("--gemmcheck-repeat=12", "--gemmcheck-stop-on-bad", "--gemmcheck-no-record")
    clean.assert_outcomes(passed=1)
    clean.stdout.fnmatch_lines(["PASS * 0/12 launches bad*"])


def test_stop_on_bad_starts_no_process_after_one_with_a_bad_launch(suite):
    suite.makepyfile(
        test_kernel=SUITE.replace(
            'bad = {int(i) for i in os.environ.get("BAD_LAUNCHES", "").split(",") if i}',
            'bad = set(range(1, 100)) if os.environ.get("GEMMCHECK_CHILD_INDEX") == "1" else set()',
        )
    )
    result = suite.runpytest_subprocess(
        "--gemmcheck-repeat=40", "--gemmcheck-processes=4", "--gemmcheck-stop-on-bad", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)
    # process 1 clean through its 10 launches, process 2 bad at its first; 3 and 4 never started
    result.stdout.fnmatch_lines(["*1/11 launches bad (launch 11)*"])
