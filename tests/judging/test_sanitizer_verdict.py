"""compute-sanitizer runs in the verdict: an error-severity hazard fails a case whatever its
launches said, warnings are stated and never fail, a run that did not run to a report is
stated (never a silent pass) and, under require_sanitize, fails the test as an unmet
requirement with the verdict left as the launches say. Results built by hand with
SanitizedLaunch records, judged directly and through conclude()."""

import dataclasses
import types

from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.judging.baseline import Baseline, Evidence
from pytest_gemmcheck.judging.conclude import conclude
from pytest_gemmcheck.judging.verdict import KNOWN_BAD, PASS, REGRESSION, judge, unmet_requirements
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.records.sanitize import (
    ERROR,
    RACE_HAZARD,
    RAN,
    SKIPPED,
    TIMED_OUT,
    WARNING,
    Access,
    SanitizedLaunch,
    SanitizerFinding,
)

FINDING = SanitizerFinding(
    tool="racecheck",
    kind=RACE_HAZARD,
    severity=ERROR,
    text="Potential RAW hazard detected",
    kernel="tail_gemm",
    block=(3, 4, 0),
    space="__shared__",
    address="0x22a0",
    hazard="RAW",
    memcpy_async=True,
    record="Hazard",
    accesses=(
        Access("Write", "tail_gemm", "0x5620", thread=(8, 0, 0)),
        Access("Read", "tail_gemm", "0x6250", thread=(64, 0, 0)),
    ),
)
WARNED = dataclasses.replace(FINDING, severity=WARNING, hazard="WAR")
HAZARD_RUN = SanitizedLaunch(
    tool="racecheck",
    status=RAN,
    seconds=9.1,
    shown=2,
    errors=2,
    total_errors=2,
    total_warnings=0,
    tally={FINDING.label(): 2},
    findings=(FINDING, FINDING),
)
WARNING_RUN = SanitizedLaunch(
    tool="racecheck",
    status=RAN,
    shown=1,
    warnings=1,
    total_errors=0,
    total_warnings=1,
    tally={WARNED.label(): 1},
    findings=(WARNED,),
)
CLEAN_RUN = SanitizedLaunch(tool="memcheck", status=RAN, total_errors=0)
SKIPPED_RUN = SanitizedLaunch(tool="racecheck", status=SKIPPED, reason="no compute-sanitizer on a CPU device")
TIMED_OUT_RUN = SanitizedLaunch(tool="memcheck", status=TIMED_OUT, reason="killed after 600 s")


def result_with(runs, bad: int = 0, launches: int = 12) -> CaseResult:
    records = [
        LaunchRecord(
            index=i + 1,
            kinds=["wrong"] if i < bad else [],
            wrong=64 if i < bad else 0,
            pid=1,
            host="h",
            device="cuda:0",
            device_uuid="GPU-1",
        )
        for i in range(launches)
    ]
    return CaseResult(
        key="k1",
        kernel="tail_gemm",
        m=512,
        n=512,
        k=256,
        quant="ptpc",
        tile="128x128",
        out_dtype="bfloat16",
        params={},
        fp8="e4m3fn",
        seed=0,
        device="cuda:0",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=records,
        sanitize=list(runs),
        stack={"gpu_arch": "sm_90", "fingerprint": "f"},
    )


def test_a_hazard_fails_a_case_whose_launches_all_passed():
    verdict = judge(result_with([HAZARD_RUN, CLEAN_RUN]))
    assert verdict.kind == REGRESSION
    assert verdict.reasons == [f"compute-sanitizer {HAZARD_RUN.summary()}"]
    assert verdict.reasons[0].startswith(
        "compute-sanitizer racecheck: 2 RAW hazards (cp.async synchronization) in tail_gemm at __shared__ 0x22a0"
    )
    # the first reports are the evidence, threads and all
    assert "compute-sanitizer racecheck, its first error reports:" in verdict.lines
    assert f"  {FINDING.describe()}" in verdict.lines
    assert "compute-sanitizer memcheck: clean (0 errors)" in verdict.lines


def test_a_hazard_fails_whatever_the_baseline_accepts():
    """A golden accepting a bad rate tracks a known bug in the launches; it accepts no race the
    sanitizer proved."""
    accepting = Baseline(
        source="golden",
        description="golden goldens/tail_gemm.json [any]",
        evidence=Evidence(launches=12, bad=3, per_process=[(3, 12)], gpus=1, worst_wrong=64, kinds=["hazard", "wrong"]),
    )
    assert judge(result_with([], bad=3), accepting).kind == KNOWN_BAD
    assert judge(result_with([HAZARD_RUN], bad=3), accepting).kind == REGRESSION


def test_warnings_are_reported_never_failed():
    verdict = judge(result_with([WARNING_RUN]))
    assert verdict.kind == PASS
    assert any(
        line.startswith("compute-sanitizer racecheck: 1 WAR hazard (cp.async synchronization, warning severity)")
        and line.endswith("(warnings are reported, not failed on)")
        for line in verdict.lines
    ), verdict.lines


def test_a_run_that_did_not_report_is_said_never_judged_and_unmet_only_when_required():
    verdict = judge(result_with([SKIPPED_RUN, TIMED_OUT_RUN]))
    assert verdict.kind == PASS
    assert (
        "compute-sanitizer racecheck: skipped: no compute-sanitizer on a CPU device: not checked, not passed"
        in verdict.lines
    )
    assert "compute-sanitizer memcheck: timed out: killed after 600 s: not checked, not passed" in verdict.lines
    assert unmet_requirements(result_with([SKIPPED_RUN])) == []
    assert unmet_requirements(result_with([SKIPPED_RUN, TIMED_OUT_RUN, CLEAN_RUN]), require_sanitize=True) == [
        "compute-sanitizer racecheck: skipped: no compute-sanitizer on a CPU device (--gemmcheck-require-sanitize: "
        "the launch must be sanitized)",
        "compute-sanitizer memcheck: timed out: killed after 600 s (--gemmcheck-require-sanitize: the launch must be "
        "sanitized)",
    ]
    assert unmet_requirements(result_with([CLEAN_RUN, HAZARD_RUN]), require_sanitize=True) == []


def _settings(**changes):
    return types.SimpleNamespace(**{**dataclasses.asdict(Settings()), **changes})


def test_conclude_states_a_skip_in_the_message_of_a_pass_and_fails_it_when_required():
    result = result_with([SKIPPED_RUN])
    conclusion = conclude(result, _settings(), lambda r: Baseline())
    assert conclusion.failure is None and result.verdict == PASS
    # a pass has no message, unless something was not checked: then it says so
    assert "racecheck: skipped: no compute-sanitizer on a CPU device: not checked, not passed" in result.message
    assert conclude(result_with([CLEAN_RUN]), _settings(), lambda r: Baseline()).failure is None
    clean = result_with([CLEAN_RUN])
    conclude(clean, _settings(), lambda r: Baseline())
    assert clean.message == ""


def test_an_unmet_requirement_fails_the_test_and_leaves_the_verdict_to_the_launches():
    """A sanitizer that could not run found nothing about the kernel: a correct kernel's verdict
    stays a pass (the history never reads 'regression' for it), and the test fails as what it is."""
    required = result_with([SKIPPED_RUN])
    conclusion = conclude(required, _settings(require_sanitize=True), lambda r: Baseline())
    assert required.verdict == PASS and not required.failed and conclusion.verdict.reasons == []
    message = str(conclusion.failure)
    assert message.splitlines()[:3] == [
        "gemmcheck: tail_gemm ptpc 512x512x256 tile 128x128: requirement not met (the launches' verdict: pass)",
        "  compute-sanitizer racecheck: skipped: no compute-sanitizer on a CPU device (--gemmcheck-require-sanitize: "
        "the launch must be sanitized)",
        "gemmcheck: tail_gemm ptpc 512x512x256 tile 128x128: pass",
    ]
    assert "0/12 launches bad" in message and required.message == message
    # bad launches are judged as ever, and the requirement is said with them
    bad = result_with([SKIPPED_RUN], bad=2)
    conclusion = conclude(bad, _settings(require_sanitize=True), lambda r: Baseline())
    assert bad.verdict == REGRESSION and "(the launches' verdict: regression)" in str(conclusion.failure)
    # a hazard is a finding: a regression, required or not
    hazard = result_with([HAZARD_RUN])
    conclude(hazard, _settings(require_sanitize=True), lambda r: Baseline())
    assert hazard.verdict == REGRESSION and "requirement not met" not in hazard.message


def test_the_failure_message_carries_the_hazard_and_its_first_reports():
    result = result_with([HAZARD_RUN])
    conclusion = conclude(result, _settings(), lambda r: Baseline())
    message = str(conclusion.failure)
    assert message.startswith(
        "gemmcheck: tail_gemm ptpc 512x512x256 tile 128x128: regression\n  compute-sanitizer racecheck: 2 RAW hazards"
    )
    assert "0/12 launches bad" in message and FINDING.describe() in message
    assert result.kinds == ["hazard"]
