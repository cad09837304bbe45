"""--gemmcheck-sanitize in real sessions, on the CPU: the test runs again in a child under the
stand-in compute-sanitizer (tests/sanitize/fake_compute_sanitizer.py), which runs that child and
then replays a report recorded on an H200. The child launches the named case once, at its
sanitize_shape, and no other case; the runs come back as records on the result."""

import json
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gemmcheck.records.result import CaseResult

FAKE = Path(__file__).resolve().parents[1] / "sanitize" / "fake_compute_sanitizer.py"

SUITE = textwrap.dedent("""
    import json
    import os

    import pytest


    def kernel(x, out):
        if os.environ.get("GEMMCHECK_SANITIZE_CASE"):  # the child: say what it launched
            with open(os.environ["LAUNCHED"], "a") as log:
                log.write(json.dumps(list(out.shape)) + "\\n")
        out.copy_(x.a.float() @ x.b.float().T)


    @pytest.mark.gemmcheck(sanitize_shape=(32, 32, 64))
    def test_gemm(gemmcheck):
        for m in (128, 96):
            case = gemmcheck.case("gemm", m=m, n=64, k=64)
            x = case.inputs()
            case.run(lambda out: kernel(x, out))
""")

# the parent thinks its CPU device is a CUDA GPU, so that the stand-in is asked
CONFTEST = textwrap.dedent("""
    import pytest_gemmcheck.case.sanitized as sanitized

    sanitized.platform_of = lambda device: "cuda"
""")


@pytest.fixture
def suite(pytester, monkeypatch, tmp_path):
    pytester.makepyfile(test_kernel=SUITE)
    pytester.makeconftest(CONFTEST)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in = bin_dir / "compute-sanitizer"
    stand_in.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    monkeypatch.setenv("FAKE_SANITIZER_MODE", "run-child-then-replay")
    monkeypatch.setenv("LAUNCHED", str(tmp_path / "launched.jsonl"))
    return pytester


def results(suite, *args):
    out = suite.path / "results.json"
    outcome = suite.runpytest_subprocess(
        "--gemmcheck-no-record",
        f"--gemmcheck-json={out}",
        "--gemmcheck-repeat=2",
        "-p",
        "no:cacheprovider",
        *args,
        timeout=600,
    )
    return outcome, json.loads(out.read_text())["results"]


def launched(tmp_path):
    return [json.loads(line) for line in (tmp_path / "launched.jsonl").read_text().splitlines()]


def test_a_racecheck_report_on_the_kernel_comes_back_on_its_result(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_SANITIZER_RECORDING", "racecheck__tail-racy-256__all-limit3__xml")
    outcome, found = results(suite, "--gemmcheck-sanitize=racecheck")
    # a hazard is a regression: the first case fails the test, the second never runs
    outcome.assert_outcomes(failed=1)
    (result,) = found
    (run,) = result["sanitize"]
    assert run["tool"] == "racecheck" and run["status"] == "ran", run
    assert run["errors"] > 0 and run["findings"][0]["kernel"] == "tail_gemm"
    assert "hazard" in CaseResult.from_dict(result).kinds
    outcome.stdout.fnmatch_lines(["*gemm bf16 128x64x64: regression*", "*compute-sanitizer racecheck: 3 RAW hazards*"])
    # the case's child launched that case alone, once, at the test's sanitize_shape
    assert launched(tmp_path) == [[32, 32]]


def test_a_clean_report_is_a_clean_run(suite, monkeypatch):
    monkeypatch.setenv("FAKE_SANITIZER_RECORDING", "racecheck__tail-fixed-256__all__xml")
    outcome, found = results(suite, "--gemmcheck-sanitize=racecheck")
    outcome.assert_outcomes(passed=1)
    for result in found:
        (run,) = result["sanitize"]
        assert (run["status"], run["errors"], run["warnings"]) == ("ran", 0, 0), run
        assert "hazard" not in CaseResult.from_dict(result).kinds


def test_each_tool_is_its_own_run(suite, monkeypatch):
    monkeypatch.setenv("FAKE_SANITIZER_RECORDING_RACECHECK", "racecheck__tail-fixed-256__all__xml")
    monkeypatch.setenv("FAKE_SANITIZER_RECORDING_MEMCHECK", "memcheck__oob-write__xml")
    outcome, found = results(suite, "--gemmcheck-sanitize=racecheck,memcheck")
    for result in found:
        racecheck, memcheck = result["sanitize"]
        assert (racecheck["tool"], racecheck["errors"]) == ("racecheck", 0)
        assert memcheck["tool"] == "memcheck" and memcheck["errors"] >= 1
        assert "out of bounds" in json.dumps(memcheck["findings"][0])


def test_without_a_sanitizer_each_tool_is_skipped_with_the_reason(pytester, monkeypatch):
    pytester.makepyfile(test_kernel=SUITE)  # the real platform: the CPU
    monkeypatch.setenv("LAUNCHED", str(pytester.path / "launched.jsonl"))
    out = pytester.path / "results.json"
    outcome = pytester.runpytest_subprocess(
        "--gemmcheck-no-record",
        f"--gemmcheck-json={out}",
        "--gemmcheck-sanitize=racecheck,initcheck",
        "--gemmcheck-repeat=2",
    )
    outcome.assert_outcomes(passed=1)
    for result in json.loads(out.read_text())["results"]:
        assert [(run["tool"], run["status"]) for run in result["sanitize"]] == [
            ("racecheck", "skipped"),
            ("initcheck", "skipped"),
        ]
        assert "CPU" in result["sanitize"][0]["reason"]
    assert not (pytester.path / "launched.jsonl").exists()  # no child ran


@pytest.mark.parametrize(
    "args, message",
    [
        (["--gemmcheck-sanitize=racecheck,helgrind"], "*--gemmcheck-sanitize*'helgrind'*"),
        (["--gemmcheck-sanitize-timeout=0"], "*--gemmcheck-sanitize-timeout*"),
    ],
)
def test_bad_sanitize_options_are_usage_errors_naming_the_option(pytester, args, message):
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_bad_sanitize_shape_names_itself(pytester):
    pytester.makepyfile(
        textwrap.dedent("""
        import pytest

        @pytest.mark.gemmcheck(sanitize_shape=(32, 0, 64))
        def test_gemm(gemmcheck):
            gemmcheck.case("gemm", m=64, n=64, k=64)
    """)
    )
    result = pytester.runpytest("--gemmcheck-no-record")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # at collection, before any test runs
    result.stderr.fnmatch_lines(
        ["*sanitize_shape=...): expected (m, n, k) of whole numbers from 1 to 2**31 - 1, got (32, 0, 64)*"]
    )


def test_require_sanitize_fails_a_case_whose_sanitized_launch_was_skipped(pytester, monkeypatch):
    pytester.makepyfile(test_kernel=SUITE)  # the real platform: the CPU, where no tool can run
    monkeypatch.setenv("LAUNCHED", str(pytester.path / "launched.jsonl"))
    outcome = pytester.runpytest_subprocess(
        "--gemmcheck-no-record",
        "--gemmcheck-repeat=2",
        "--gemmcheck-sanitize=racecheck",
        "--gemmcheck-require-sanitize",
    )
    outcome.assert_outcomes(failed=1)
    # an unmet requirement, not a finding about the kernel: its verdict stays a pass
    outcome.stdout.fnmatch_lines(
        [
            "*gemm bf16 128x64x64: requirement not met (the launches' verdict: pass)*",
            "*(--gemmcheck-require-sanitize: the launch must be sanitized)*",
        ]
    )
    # without it the same skip is stated and the case passes
    outcome = pytester.runpytest_subprocess(
        "--gemmcheck-no-record", "--gemmcheck-repeat=2", "--gemmcheck-sanitize=racecheck"
    )
    outcome.assert_outcomes(passed=1)
