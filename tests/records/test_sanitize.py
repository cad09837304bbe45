"""The sanitizer records: JSON round trips, refusals of bad records, and the one-line summary."""

import json

import pytest

from pytest_gemmcheck.records.sanitize import (
    API,
    ERROR,
    FAILED,
    HAZARD,
    MEMORY,
    RACE,
    RACE_HAZARD,
    RAN,
    SKIPPED,
    STATUSES,
    TIMED_OUT,
    TOOLS,
    UNKNOWN,
    WARNING,
    Access,
    Allocation,
    SanitizedLaunch,
    SanitizerFinding,
)

HAZARD_FINDING = SanitizerFinding(
    tool="racecheck",
    kind=RACE_HAZARD,
    severity=ERROR,
    text="Potential RAW hazard detected",
    kernel="tail_gemm",
    pc="0x5620",
    block=(3, 4, 0),
    space="__shared__",
    address="0x22a0",
    hazard="RAW",
    memcpy_async=True,
    note="invalid memcpy_async synchronization",
    record="Hazard",
    accesses=(
        Access("Write", "tail_gemm", "0x5620", thread=(8, 0, 0)),
        Access(
            "Read",
            "read_slice(const unsigned char *, int, Slice &)",
            "0x6250",
            thread=(64, 0, 0),
            source="f5ec.cubin.cu:156",
        ),
    ),
)
MEMORY_FINDING = SanitizerFinding(
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
API_FINDING = SanitizerFinding(
    tool="memcheck",
    kind=API,
    severity=ERROR,
    text="Program hit cudaErrorLaunchFailure",
    api="cudaDeviceSynchronize",
    error="cudaErrorLaunchFailure",
    record="Api",
)


def test_the_failure_kind_and_the_choice_lists():
    assert HAZARD == "hazard"
    assert TOOLS == ("racecheck", "memcheck", "synccheck", "initcheck")
    assert STATUSES == ("ran", "skipped", "timed_out", "failed")


@pytest.mark.parametrize("finding", [HAZARD_FINDING, MEMORY_FINDING, API_FINDING])
def test_a_finding_survives_json(finding):
    data = json.loads(json.dumps(finding.to_dict()))
    assert SanitizerFinding.from_dict(data) == finding
    assert data["block"] == (list(finding.block) if finding.block else None)


def test_a_run_survives_json():
    run = SanitizedLaunch(
        tool="memcheck",
        status=RAN,
        reason="the child then exited with status 1",
        seconds=6.63,
        exit_status=1,
        shown=4,
        errors=1,
        api_errors=3,
        total_errors=4,
        tally={MEMORY_FINDING.label(): 1, API_FINDING.label(): 3},
        tail="Traceback ...",
        findings=(MEMORY_FINDING, API_FINDING),
    )
    assert SanitizedLaunch.from_dict(json.loads(json.dumps(run.to_dict()))) == run


@pytest.mark.parametrize(
    "change, message",
    [
        ({"tool": "helgrind"}, "tool must be one of racecheck, memcheck, synccheck, initcheck, got 'helgrind'"),
        ({"status": "passed"}, "status must be one of ran, skipped, timed_out, failed, got 'passed'"),
        ({"colour": "red"}, "unknown field(s) of a SanitizedLaunch record: colour"),
    ],
)
def test_a_bad_run_record_is_refused_in_one_line(change, message):
    data = dict(SanitizedLaunch(tool="racecheck", status=RAN).to_dict(), **change)
    with pytest.raises(ValueError) as raised:
        SanitizedLaunch.from_dict(data)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "change, message",
    [
        ({"kind": "leak"}, "kind must be one of hazard, race, memory, uninitialized, barrier, api, other, got 'leak'"),
        ({"block": [1, 2]}, "block must be three whole numbers, got [1, 2]"),
        (
            {"accesses": [{"direction": "Write", "function": "k", "pc": "0x0", "thread": ["a", 0, 0]}]},
            "thread must be three whole numbers, got ['a', 0, 0]",
        ),
    ],
)
def test_a_bad_finding_record_is_refused_in_one_line(change, message):
    with pytest.raises(ValueError) as raised:
        SanitizerFinding.from_dict(dict(HAZARD_FINDING.to_dict(), **change))
    assert str(raised.value) == message
    with pytest.raises(ValueError, match="must be a dict, got list"):
        SanitizedLaunch.from_dict([])


def test_the_summary_names_the_hazard_its_place_and_the_totals():
    run = SanitizedLaunch(
        tool="racecheck",
        status=RAN,
        shown=100,
        errors=100,
        total_errors=114690,
        total_warnings=0,
        tally={HAZARD_FINDING.label(): 2},
        findings=(HAZARD_FINDING,),
    )
    assert run.summary() == (
        "racecheck: 2 RAW hazards (cp.async synchronization) in tail_gemm at __shared__ 0x22a0, "
        "block (3,4,0), 114,690 errors, 0 warnings, 100 shown"
    )
    assert run.has_hazard


def test_a_finding_describes_itself_with_its_threads_and_allocation():
    assert HAZARD_FINDING.describe() == (
        "Error: RAW hazard (cp.async synchronization) in tail_gemm at __shared__ 0x22a0, block (3,4,0), "
        "Write thread (8,0,0) at tail_gemm+0x5620, Read thread (64,0,0) at "
        "read_slice(const unsigned char *, int, Slice &)+0x6250 (f5ec.cubin.cu:156)"
    )
    assert MEMORY_FINDING.describe() == (
        "Error: invalid __global__ write of 4 bytes (out of bounds) in write_past+0xc0 at 0x7fca0a800fa0, "
        "1 byte after the 4,000-byte allocation at 0x7fca0a800000, block (3,0,0), thread (232,0,0)"
    )
    assert API_FINDING.describe() == "Error: CUDA API error (cudaErrorLaunchFailure in cudaDeviceSynchronize)"
    race = SanitizerFinding(
        tool="racecheck",
        kind=RACE,
        severity=ERROR,
        text="Race condition",
        kernel="tail_gemm",
        accesses=(
            Access("Write", "tail_gemm", "0x5620"),
            Access("Read", "tail_gemm", "0x6250", count=16384),
            Access("Read", "tail_gemm", "0x6270", count=16384),
        ),
        count=32768,
    )
    assert race.describe() == (
        "Error: race in tail_gemm: Write at tail_gemm+0x5620 against 2 Read accesses (32,768 hazards)"
    )


@pytest.mark.parametrize(
    "run, line, hazard",
    [
        (
            SanitizedLaunch(tool="racecheck", status=RAN, total_errors=0, total_warnings=0),
            "racecheck: clean (0 errors, 0 warnings)",
            False,
        ),
        (SanitizedLaunch(tool="memcheck", status=RAN, total_errors=0), "memcheck: clean (0 errors)", False),
        (
            SanitizedLaunch(tool="racecheck", status=SKIPPED, reason="no compute-sanitizer on PATH"),
            "racecheck: skipped: no compute-sanitizer on PATH",
            False,
        ),
        (
            SanitizedLaunch(tool="initcheck", status=TIMED_OUT, reason="initcheck did not finish within 5 s"),
            "initcheck: timed out: initcheck did not finish within 5 s",
            False,
        ),
        (
            SanitizedLaunch(tool="synccheck", status=FAILED, reason="the child exited with status 1"),
            "synccheck: failed: the child exited with status 1",
            False,
        ),
        # the errors beyond --print-limit fail it though every record shown is a warning
        (
            SanitizedLaunch(
                tool="racecheck",
                status=RAN,
                shown=1,
                warnings=1,
                unshown_errors=115200,
                total_errors=115200,
                total_warnings=15872,
                findings=(
                    SanitizerFinding(
                        tool="racecheck",
                        kind=RACE_HAZARD,
                        severity=WARNING,
                        text="Potential RAW hazard detected",
                        kernel="tail_gemm",
                        hazard="RAW",
                        space="__shared__",
                        address="0x2000",
                    ),
                ),
            ),
            "racecheck: 1 RAW hazard (warning severity) in tail_gemm at __shared__ 0x2000, 115,200 errors, "
            "15,872 warnings, 1 shown",
            True,
        ),
        # a failed run is no hazard whatever it counted: the step failed, and says why
        (
            SanitizedLaunch(tool="memcheck", status=FAILED, errors=1, reason="the report breaks off"),
            "memcheck: failed: the report breaks off",
            False,
        ),
        (
            SanitizedLaunch(tool="memcheck", status=RAN, shown=3, dropped=3, total_errors=3),
            "memcheck: clean: no report on the kernel under test (3 errors in all; 3 reports on the harness's kernels "
            "left out)",
            False,
        ),
        (
            SanitizedLaunch(
                tool="memcheck", status=RAN, shown=1, api_errors=1, total_errors=1, findings=(API_FINDING,)
            ),
            "memcheck: 1 CUDA API error (cudaErrorLaunchFailure in cudaDeviceSynchronize), 1 error (1 CUDA API error "
            "among them)",
            False,
        ),
        (
            SanitizedLaunch(tool="initcheck", status=RAN, shown=4, dropped=4, unshown_errors=1020, total_errors=1024),
            "initcheck: 1,020 errors beyond the 4 reports shown (1,024 errors, 4 shown); 4 reports on the harness's "
            "kernels left out",
            True,
        ),
    ],
)
def test_summaries_of_every_status(run, line, hazard):
    assert run.summary() == line
    assert run.has_hazard is hazard


def test_a_hazard_of_unknown_severity_counts_as_an_error():
    unknown = SanitizerFinding(tool="racecheck", kind=RACE_HAZARD, severity=UNKNOWN, text="Potential WAW hazard")
    assert unknown.is_error and not API_FINDING.is_error
