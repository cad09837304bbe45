"""CI-native output in real sessions: each case's evidence as JUnit XML properties, the markdown
summary (--gemmcheck-summary, appended as GitHub's step summary needs), the JSON file
(--gemmcheck-json), and the header line; plain and under pytest-xdist."""

import json
import math
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

import pytest_gemmcheck
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

# A failing case (launches 2, 5 and 9 of 12 corrupt a tile), a test of two passing cases, and
# a test without gemmcheck.
SUITE = textwrap.dedent("""
    from kernels import tiled_gemm, bf16_matmul, FaultInjector

    def test_flaky(gemmcheck):
        case = gemmcheck.case("fused_gemm", m=128, n=128, k=128, quant="ptpc", tile="64x64", params={"fuse": False})
        x = case.inputs()
        case.run(FaultInjector(lambda out: tiled_gemm(x, out), "tile", {2, 5, 9}, tile=(16, 32), at=(64, 0)))

    def test_two(gemmcheck):
        for n in (32, 48):
            case = gemmcheck.case("small", m=16, n=n, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))

    def test_plain():
        pass
""")

PASSING = textwrap.dedent("""
    from kernels import bf16_matmul

    def test_one(gemmcheck):
        case = gemmcheck.case("small", m=16, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: bf16_matmul(x, out))
""")

HEADER = [
    "| verdict | kernel | quant | shape | tile | params | bad/launches | rate (95%) | worst | baseline | test |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
]
XDIST = [(), ("-n", "2")]


@pytest.fixture
def suite(pytester, examples_dir):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    return pytester


def run(suite, *args):
    if "-n" in args:
        pytest.importorskip("xdist")
    return suite.runpytest_subprocess("-p", "no:cacheprovider", *args)


def properties(path) -> dict[str, dict[str, str]]:
    """test name -> {property name: value}, from a JUnit XML file."""
    tree = ET.parse(path)
    return {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in tree.iter("testcase")
    }


# --- JUnit XML ---------------------------------------------------------------------------------


@pytest.mark.parametrize("xdist", XDIST, ids=["plain", "xdist"])
def test_each_case_evidence_is_a_property_of_its_junit_test_case(suite, xdist):
    suite.makepyfile(test_suite=SUITE)
    result = run(suite, "--junitxml=junit.xml", *xdist)
    result.assert_outcomes(failed=1, passed=2)
    found = properties(suite.path / "junit.xml")
    flaky = found["test_flaky"]
    assert flaky["gemmcheck.cases"] == "1"
    assert {
        name: flaky[f"gemmcheck.1.{name}"]
        for name in ("verdict", "kernel", "quant", "shape", "tile", "params", "launches", "bad_launches", "kinds")
    } == {
        "verdict": "regression",
        "kernel": "fused_gemm",
        "quant": "ptpc",
        "shape": "128x128x128",
        "tile": "64x64",
        "params": '{"fuse": false}',
        "launches": "12",
        "bad_launches": "3",
        "kinds": "wrong,inconsistent",
    }
    assert math.isclose(float(flaky["gemmcheck.1.rate_upper_95"]), 0.5273, abs_tol=1e-4)  # 3/12: rate < 52.7%
    assert int(flaky["gemmcheck.1.worst_wrong"]) > 0
    assert len(flaky["gemmcheck.1.key"]) == 16 and int(flaky["gemmcheck.1.key"], 16) >= 0
    assert flaky["gemmcheck.1.baseline"] == "clean (no bad launch expected)"
    assert re.fullmatch(
        r"REGRESSION fused_gemm ptpc 128x128x128 tile 64x64 fuse=False: 3/12 launches bad, worst "
        r"\d+ wrong, \d+ differing",
        flaky["gemmcheck.1.summary"],
    ), flaky["gemmcheck.1.summary"]
    assert int(flaky["gemmcheck.1.worst_differing"]) > 0
    assert (flaky["gemmcheck.1.hazards"], flaky["gemmcheck.1.sanitize"], flaky["gemmcheck.1.accepted"]) == (
        "0",
        "",
        "false",
    )
    two = found["test_two"]  # both cases, numbered in the order they ran
    assert two["gemmcheck.cases"] == "2"
    assert (two["gemmcheck.1.shape"], two["gemmcheck.2.shape"]) == ("16x32x32", "16x48x32")
    assert two["gemmcheck.1.verdict"] == two["gemmcheck.2.verdict"] == "pass"
    assert two["gemmcheck.2.bad_launches"] == "0" and two["gemmcheck.2.tile"] == ""
    assert found["test_plain"] == {}


def test_a_baseline_from_the_history_is_said_in_words(suite):
    suite.makepyfile(test_one=PASSING)
    run(suite, "--gemmcheck-repeat=3").assert_outcomes(passed=1)
    run(suite, "--gemmcheck-repeat=3", "--junitxml=junit.xml").assert_outcomes(passed=1)
    baseline = properties(suite.path / "junit.xml")["test_one"]["gemmcheck.1.baseline"]
    # each fact once: the scope names the arch, the stack its torch
    assert re.fullmatch(r"0/3 \(rate < 63\.2%\), history: 1 earlier run on cpu \(torch [^()\s]+\)", baseline), baseline


# --- the terminal ------------------------------------------------------------------------------


def test_each_case_reads_in_an_80_column_terminal(suite):
    """A short first line (verdict, case, bad launches, the worst), the details indented under
    it, as pytest's own reports are; nothing wider than 80 columns but a word that cannot break."""
    suite.makepyfile(test_suite=SUITE)
    result = run(suite, "--gemmcheck-no-record")
    result.assert_outcomes(failed=1, passed=2)
    lines = result.stdout.lines
    section = lines[next(i for i, line in enumerate(lines) if "- gemmcheck -" in line) + 1 :]
    section = section[: next(i for i, line in enumerate(section) if line.startswith("=="))]
    assert all(len(line) <= 80 or " " not in line.strip() for line in section), [
        line for line in section if len(line) > 80
    ]
    first = section.index(next(line for line in section if line.startswith("REGRESSION")))
    assert section[first] == "REGRESSION fused_gemm ptpc 128x128x128 tile 64x64 fuse=False: 3/12 launches bad,"
    assert re.fullmatch(r" {11}worst \d+ wrong, \d+ differing", section[first + 1])  # its end, under the case
    assert section[first + 2] == "    vs clean: no bad launch expected"
    assert section[first + 3] == "    launches 2, 5, 9; rate < 52.7% (95%), 1 process [wrong, inconsistent]"
    assert "    test_suite.py::test_flaky" in section[first:]
    assert sum(line.startswith("PASS       small bf16 16x") for line in section) == 2


# --- the markdown summary ----------------------------------------------------------------------


@pytest.mark.parametrize("xdist", XDIST, ids=["plain", "xdist"])
def test_summary_is_a_markdown_table_appended_to_the_file(suite, xdist):
    suite.makepyfile(test_suite=SUITE)
    summary = suite.path / "step-summary.md"
    summary.write_text("## an earlier step\n")
    first = run(suite, "--gemmcheck-summary=step-summary.md", "--gemmcheck-no-record", *xdist)
    first.assert_outcomes(failed=1, passed=2)
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    first.stdout.fnmatch_lines([f"gemmcheck: summary appended to {summary}"])
    lines = summary.read_text().splitlines()
    assert lines[:4] == ["## an earlier step", "", "**gemmcheck: 3 cases: 1 regression, 2 pass**", ""]
    assert lines[4:6] == HEADER
    rows = lines[6:9]
    assert rows[0].startswith("| REGRESSION | fused_gemm | ptpc | 128x128x128 | 64x64 | fuse=False | 3/12 | < 52.7% | ")
    assert re.search(
        r"\| \d+ wrong, \d+ differing \(wrong, inconsistent\) \| clean \(no bad launch expected\) \| "
        r"test_suite.py::test_flaky \|$",
        rows[0],
    ), rows[0]
    assert sorted(rows[1:]) == [
        "| PASS | small | bf16 | 16x32x32 |  |  | 0/12 | < 22.1% | 0 wrong | clean (no bad launch expected) | "
        "test_suite.py::test_two |",
        "| PASS | small | bf16 | 16x48x32 |  |  | 0/12 | < 22.1% | 0 wrong | clean (no bad launch expected) | "
        "test_suite.py::test_two |",
    ]
    assert lines[9] == "" and lines[10].startswith("rate: the one-sided 95% upper bound")
    assert len(lines) == 11
    run(suite, "--gemmcheck-summary=step-summary.md", "--gemmcheck-no-record", *xdist)
    again = summary.read_text().splitlines()
    assert again[:11] == lines and again[11] == "" and again[12:] == lines[2:]  # appended, never overwritten


def test_ini_keys_name_the_files(suite):
    suite.makepyfile(test_one=PASSING)
    suite.makeini("[pytest]\ngemmcheck_summary = out/summary.md\ngemmcheck_json = out/results.json\n")
    run(suite, "--gemmcheck-repeat=2").assert_outcomes(passed=1)
    assert HEADER[0] in (suite.path / "out" / "summary.md").read_text()  # missing folders are made
    assert len(json.loads((suite.path / "out" / "results.json").read_text())["results"]) == 1


def test_a_session_without_cases_writes_no_file(suite):
    suite.makepyfile("def test_plain(): pass")
    run(suite, "--gemmcheck-summary=summary.md", "--gemmcheck-json=results.json").assert_outcomes(passed=1)
    assert not (suite.path / "summary.md").exists() and not (suite.path / "results.json").exists()
    # an empty value (an unset $GITHUB_STEP_SUMMARY) is no file
    suite.makepyfile(test_one=PASSING)
    result = run(suite, "--gemmcheck-summary=", "--gemmcheck-repeat=2", "--gemmcheck-no-record")
    result.assert_outcomes(passed=2)
    assert "summary" not in result.stdout.str()


@pytest.mark.parametrize("where,reason", [("folder", "Is a directory"), ("a-file/summary.md", "Not a directory")])
def test_a_file_that_cannot_be_written_is_one_line_and_keeps_the_results_and_exit_status(suite, where, reason):
    suite.makepyfile(test_one=PASSING)
    (suite.path / "folder").mkdir()
    (suite.path / "a-file").write_text("")
    result = run(
        suite,
        f"--gemmcheck-summary={where}",
        f"--gemmcheck-json={where}",
        "--gemmcheck-repeat=2",
        "--junitxml=junit.xml",
    )
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    for flag in ("--gemmcheck-summary", "--gemmcheck-json"):
        result.stdout.fnmatch_lines([f"gemmcheck: {flag}: NOT written to {where}: {reason}"])
    result.stdout.fnmatch_lines(
        ["PASS * small bf16 16x16x32: 0/2 launches bad", "gemmcheck: recorded run 1 (1 results) to *"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert properties(suite.path / "junit.xml")["test_one"]["gemmcheck.1.verdict"] == "pass"
    # what the session was required to record includes its files
    required = run(suite, f"--gemmcheck-summary={where}", "--gemmcheck-repeat=2", "--gemmcheck-require-record")
    required.assert_outcomes(passed=1)
    assert required.ret == pytest.ExitCode.USAGE_ERROR


# --- JSON --------------------------------------------------------------------------------------


@pytest.mark.parametrize("xdist", XDIST, ids=["plain", "xdist"])
def test_json_has_the_run_and_every_result(suite, xdist):
    suite.makepyfile(test_suite=SUITE)
    (suite.path / "results.json").write_text("old")
    result = run(suite, "--gemmcheck-json=results.json", "--gemmcheck-tag=ci", *xdist)
    result.assert_outcomes(failed=1, passed=2)
    text = (suite.path / "results.json").read_text()
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"not standard JSON: {name}"))
    assert list(document) == ["format", "version", "run", "totals", "results"]
    assert (document["format"], document["version"]) == (1, pytest_gemmcheck.__version__)
    run_info = document["run"]
    assert (run_info["id"], run_info["tag"], run_info["exit_status"], run_info["interrupted"]) == (1, "ci", 1, False)
    assert run_info["history"].startswith("recorded run 1 (3 results) to ")
    assert document["totals"] == {
        "cases": 3,
        "launches": 36,
        "bad_launches": 3,
        "verdicts": {"regression": 1, "improved": 0, "known-bad": 0, "pass": 2},
        "accepted": 0,
        "hazards": 0,
        "sanitizer_runs": {"ran": 0, "skipped": 0, "timed_out": 0, "failed": 0},
    }
    results = [CaseResult.from_dict(data) for data in document["results"]]  # each reads back as a result
    assert sorted((r.kernel, r.n, r.verdict, len(r.bad_launches)) for r in results) == [
        ("fused_gemm", 128, "regression", 3),
        ("small", 32, "pass", 0),
        ("small", 48, "pass", 0),
    ]


def test_json_writes_what_is_not_a_number_as_null():
    from pytest_gemmcheck.reporting.ci_output import json_document

    result = CaseResult(
        key="0" * 16,
        kernel="k",
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
        launches=[LaunchRecord(1, kinds=["nonfinite"], nonfinite=1, max_abs_err=math.nan, max_rel_err=math.inf)],
    )
    document = json.loads(json_document([result], {}, "0"), parse_constant=lambda name: pytest.fail(name))
    launch = document["results"][0]["launches"][0]
    assert (launch["max_abs_err"], launch["max_rel_err"]) == (None, None)


# --- the header line ---------------------------------------------------------------------------


def test_the_header_says_what_gemmcheck_will_do(suite):
    suite.makepyfile(test_one=PASSING)
    version = pytest_gemmcheck.__version__
    result = run(suite, "--collect-only")
    result.stdout.fnmatch_lines(
        [
            f"gemmcheck {version}: repeat 12, history .gemmcheck/history.db (opened at the first "
            "case), scope arch, check backend auto"
        ]
    )
    result = run(
        suite,
        "--co",
        "--gemmcheck-db=postgresql+psycopg://user:s3cret@db.example/history",
        "--gemmcheck-repeat=auto",
        "--gemmcheck-scope=stack",
        "--gemmcheck-summary=summary.md",
    )
    result.stdout.fnmatch_lines(
        [
            f"gemmcheck {version}: repeat auto (until rate < 1% or 60 s), history "
            "postgresql+psycopg://user:***@db.example/history (opened at the first case), scope "
            "stack, check backend auto, summary to summary.md"
        ]
    )
    assert "s3cret" not in result.stdout.str()
    result = run(suite, "--co", "--gemmcheck-no-record")
    result.stdout.fnmatch_lines(
        [
            f"gemmcheck {version}: repeat 12, no record (baselines read from "
            ".gemmcheck/history.db if it exists), scope arch, check backend auto"
        ]
    )
    assert not (suite.path / ".gemmcheck").exists()  # the database is not opened for it


def test_the_header_is_printed_once_under_xdist(suite):
    suite.makepyfile(test_one=PASSING)
    result = run(suite, "-n", "2", "--gemmcheck-repeat=2", "--gemmcheck-no-record")
    result.assert_outcomes(passed=1)
    assert sum(line.startswith("gemmcheck ") for line in result.stdout.lines) == 1, result.stdout.str()


def test_the_header_imports_nothing_heavy():
    code = textwrap.dedent("""
        import sys
        from pytest_gemmcheck.config.table import Settings
        from pytest_gemmcheck.reporting.header import header_line
        print(header_line(Settings(no_record=True, db="sqlite:///x.db", tag="t", processes=3, stress="copy"), "0"))
        heavy = sorted(m for m in ("sqlalchemy", "alembic", "torch", "triton") if m in sys.modules)
        assert not heavy, heavy
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "gemmcheck 0: repeat 12, 3 processes per case, stress copy, no record "
        "(baselines read from sqlite:///x.db if it exists), scope arch, check backend auto, "
        "tag t"
    )
