"""compute-sanitizer runs in every output, through real sessions: the terminal lines, the
failure, JUnit properties, the markdown summary, the JSON file, and the history read back
(history, a case's runs, compare, the report page). No GPU here: a conftest gives each result
its sanitizer runs (SanitizedLaunch records) just before it is judged, where the sanitizer step
puts them."""

import json
import shutil
import textwrap
import xml.etree.ElementTree as ET

import pytest

from pytest_gemmcheck.cli import main as gemmcheck
from pytest_gemmcheck.records.sanitize import ERROR, MEMORY, RAN, SKIPPED, Allocation, SanitizedLaunch, SanitizerFinding

OUT_OF_BOUNDS = SanitizerFinding(
    tool="memcheck",
    kind=MEMORY,
    severity=ERROR,
    text="Invalid __global__ write of size 4 bytes is out of bounds",
    kernel="write_past",
    pc="0xc0",
    block=(3, 0, 0),
    thread=(232, 0, 0),
    space="__global__",
    address="0x7fca0a800fa0",
    size=4,
    direction="write",
    error="out of bounds",
    allocation=Allocation("0x7fca0a800000", 4000, "after", 1),
    record="Precise",
)
MEMCHECK_ERROR = SanitizedLaunch(
    tool="memcheck",
    status=RAN,
    seconds=6.6,
    shown=1,
    errors=1,
    total_errors=1,
    tally={OUT_OF_BOUNDS.label(): 1},
    findings=(OUT_OF_BOUNDS,),
)
RACECHECK_SKIPPED = SanitizedLaunch(tool="racecheck", status=SKIPPED, reason="no compute-sanitizer on a CPU device")

CONFTEST = textwrap.dedent('''
    import json
    import os

    import pytest

    import pytest_gemmcheck.case.case as case_module
    from pytest_gemmcheck.records.sanitize import SanitizedLaunch


    @pytest.fixture(autouse=True)
    def sanitized(monkeypatch):
        """Each result gets the runs of $SANITIZE_RUNS before it is judged."""
        runs = [SanitizedLaunch.from_dict(data) for data in json.loads(os.environ.get("SANITIZE_RUNS", "[]"))]
        judge = case_module.conclude

        def conclude(result, *args, **kwargs):
            result.sanitize = list(runs)
            return judge(result, *args, **kwargs)

        monkeypatch.setattr(case_module, "conclude", conclude)
''')

SUITE = textwrap.dedent("""
    from kernels import bf16_matmul

    def test_one(gemmcheck):
        case = gemmcheck.case("small", m=16, n=16, k=32)
        x = case.inputs()
        case.run(lambda out: bf16_matmul(x, out))
""")


@pytest.fixture
def suite(pytester, examples_dir, monkeypatch):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_one=SUITE)
    return pytester


def sanitized_run(suite, monkeypatch, runs, *args):
    monkeypatch.setenv("SANITIZE_RUNS", json.dumps([run.to_dict() for run in runs]))
    return suite.runpytest("-p", "no:cacheprovider", "--gemmcheck-repeat=4", *args)


def command(capsys, *args) -> tuple[int, str]:
    capsys.readouterr()
    status = gemmcheck([str(a) for a in args])
    return status, capsys.readouterr().out


def test_an_error_hazard_fails_the_case_and_shows_everywhere(suite, monkeypatch, capsys):
    result = sanitized_run(
        suite,
        monkeypatch,
        [MEMCHECK_ERROR],
        "--junitxml=junit.xml",
        "--gemmcheck-summary=summary.md",
        "--gemmcheck-json=results.json",
    )
    result.assert_outcomes(failed=1)
    summary_line = MEMCHECK_ERROR.summary()
    assert summary_line.startswith("memcheck: 1 invalid __global__ write of 4 bytes (out of bounds) in write_past+0xc0")
    # the failure, then the case's lines in the terminal summary
    result.stdout.fnmatch_lines(
        [
            "*gemmcheck: small bf16 16x16x32: regression",
            f"*compute-sanitizer {summary_line}",
            "*compute-sanitizer memcheck, its first error report:",
            f"*{OUT_OF_BOUNDS.describe()}",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "REGRESSION small bf16 16x16x32: 0/4 launches bad",
            "    vs clean: no bad launch expected",
            "    rate < 52.7% (95%), 1 process [[]hazard[]]",
            "    memcheck: 1 invalid __global__ write of 4 bytes (out of bounds) in*",
        ]
    )
    properties = {p.get("name"): p.get("value") for p in ET.parse(suite.path / "junit.xml").iter("property")}
    assert (properties["gemmcheck.1.verdict"], properties["gemmcheck.1.kinds"], properties["gemmcheck.1.hazards"]) == (
        "regression",
        "hazard",
        "1",
    )
    assert properties["gemmcheck.1.sanitize"] == summary_line
    markdown = (suite.path / "summary.md").read_text().splitlines()
    assert markdown[2].endswith("| worst | sanitizer | baseline | test |")
    assert f"| 0 wrong (hazard) | {summary_line} | clean (no bad launch expected) |" in markdown[4]
    document = json.loads((suite.path / "results.json").read_text())
    assert document["totals"]["hazards"] == 1 and document["totals"]["sanitizer_runs"]["ran"] == 1
    assert document["results"][0]["sanitize"][0]["findings"][0]["error"] == "out of bounds"
    # the history read back: the hazards figure, the case's runs, compare, the page
    db = suite.path / ".gemmcheck" / "history.db"
    status, out = command(capsys, "history", "--db", db, "--json")
    assert status == 0 and json.loads(out)[0]["hazards"] == 1
    status, out = command(capsys, "history", "--db", db)
    header, _, row = out.splitlines()[:3]
    assert row[header.index("hazards") :].split()[0] == "1"  # the columns are aligned
    key = json.loads(command(capsys, "history", "--db", db, "--json")[1])[0]["key"]
    status, out = command(capsys, "history", "--db", db, "--case", key[:6], "--json")
    (run,) = json.loads(out)
    assert run["hazards"] == 1 and run["sanitize"] == [
        {"tool": "memcheck", "status": "ran", "hazard": True, "summary": summary_line}
    ]
    assert "memcheck hazard" in command(capsys, "history", "--db", db, "--case", key[:6])[1]
    # a second run whose sanitizer was skipped: compare names the hazards of the first
    sanitized_run(suite, monkeypatch, [RACECHECK_SKIPPED]).assert_outcomes(passed=1)
    status, out = command(capsys, "compare", "--db", db, "--side", "run:1", "--side", "run:2", "--json")
    sides = json.loads(out)[0]["sides"]
    assert (sides["run 1"]["hazards"], sides["run 2"]["hazards"]) == (1, 0)
    assert "passes 0/4, 1 hazard" in command(capsys, "compare", "--db", db, "--side", "run:1", "--side", "run:2")[1]
    page = suite.path / "report.html"
    assert command(capsys, "report", "--db", db, "--html", page, "--show-run", 1)[0] == 0
    html = page.read_text()
    assert "<h4>compute-sanitizer</h4>" in html and "memcheck: 1 invalid __global__ write of 4 bytes" in html


def test_a_skipped_sanitizer_run_is_said_on_the_line_and_in_the_record(suite, monkeypatch, capsys):
    result = sanitized_run(suite, monkeypatch, [RACECHECK_SKIPPED], "--gemmcheck-json=results.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "PASS       small bf16 16x16x32: 0/4 launches bad",
            "    rate < 52.7% (95%), 1 process",
            "    racecheck: skipped: no compute-sanitizer on a CPU device: not checked, not",
            "      passed",
        ]
    )
    document = json.loads((suite.path / "results.json").read_text())
    (recorded,) = document["results"]
    assert recorded["verdict"] == "pass" and "racecheck: skipped" in recorded["message"]
    assert document["totals"]["sanitizer_runs"]["skipped"] == 1
    status, out = command(capsys, "history", "--db", suite.path / ".gemmcheck" / "history.db", "--json")
    assert json.loads(out)[0]["hazards"] == 0  # sanitized, none found; "-" only where it never ran
