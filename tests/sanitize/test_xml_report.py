"""Reading the XML reports recorded on the H200, field by field, for every tool; and reports that
break off, are no XML or are not compute-sanitizer's, read without a traceback."""

import pytest

from pytest_gemmcheck.records.sanitize import (
    API,
    BARRIER,
    ERROR,
    MEMORY,
    OTHER,
    RACE,
    RACE_HAZARD,
    UNINITIALIZED,
    UNKNOWN,
    Access,
)
from pytest_gemmcheck.sanitize.xml_report import ReportUnreadable, read_findings


def read(data_dir, stem, tool=None):
    return list(read_findings(data_dir / f"{stem}.xml", tool or stem.split("__")[0]))


def test_racecheck_analysis_records(data_dir):
    races = read(data_dir, "racecheck__tail-racy-256__xml")
    assert [(f.kind, f.record, f.severity, f.text, f.kernel, f.pc, f.count) for f in races] == [
        (RACE, "Analysis", ERROR, "Race condition", "tail_gemm", "0x5620", 4 * 16384),
        (RACE, "Analysis", ERROR, "Race condition", "tail_gemm", "0x5640", 4 * 16384),
    ]
    assert races[0].accesses == (
        Access("Write", "tail_gemm", "0x5620"),
        *(Access("Read", "tail_gemm", pc, count=16384) for pc in ("0x6250", "0x6270", "0x6290", "0x62b0")),
    )


def test_racecheck_hazard_records(data_dir):
    hazards = read(data_dir, "racecheck__tail-racy-256__all-limit3__xml")
    assert [f.address for f in hazards] == ["0x21e0", "0x21e1", "0x21e2"]
    first = hazards[0]
    # 2025.3.1 writes no level, no memory space and no memcpy_async note into a Hazard record:
    # the text has them (test_text.py)
    assert (
        first.kind,
        first.record,
        first.severity,
        first.text,
        first.hazard,
        first.block,
        first.space,
        first.memcpy_async,
    ) == (RACE_HAZARD, "Hazard", UNKNOWN, "Potential RAW hazard detected", "RAW", (3, 2, 0), None, None)
    assert first.accesses == (
        Access("Write", "tail_gemm", "0x5620", thread=(20, 0, 0)),
        Access("Read", "tail_gemm", "0x6250", thread=(160, 0, 0)),
    )
    assert (first.kernel, first.pc) == ("tail_gemm", "0x5620")


@pytest.mark.parametrize(
    "stem, kernel, pc, thread, block, address, error, apis",
    [
        (
            "memcheck__oob-write__xml",
            "write_past",
            "0xc0",
            (232, 0, 0),
            (3, 0, 0),
            "0x7fa242800fa0",
            "out of bounds",
            ["cudaDeviceSynchronize", "cudaGetLastError", "cuModuleUnload"],
        ),
        (
            "memcheck__oob-write__nobacktrace__xml",
            "write_past",
            "0xc0",
            (232, 0, 0),
            (3, 0, 0),
            "0x7fbc90800fa0",
            "out of bounds",
            ["cudaDeviceSynchronize", "cudaGetLastError", "cuModuleUnload", "cudaFree", "cudaGetLastError"],
        ),
        (
            "memcheck__misaligned__plain__xml",
            "misaligned",
            "0x40",
            (0, 0, 0),
            (0, 0, 0),
            "0x7f3d4e800002",
            "misaligned",
            ["cudaDeviceSynchronize", "cudaGetLastError", "cuModuleUnload"],
        ),
    ],
)
def test_memcheck_records(data_dir, stem, kernel, pc, thread, block, address, error, apis):
    access, *calls = read(data_dir, stem)
    assert (
        access.kind,
        access.record,
        access.severity,
        access.kernel,
        access.pc,
        access.thread,
        access.block,
        access.space,
        access.size,
        access.direction,
        access.address,
        access.error,
    ) == (MEMORY, "Precise", ERROR, kernel, pc, thread, block, "__global__", 4, "write", address, error)
    assert access.text == f"Invalid __global__ write of size 4 bytes is {error}"
    # what follows the fault: the launch failure, at every CUDA call after it
    assert [(c.kind, c.severity, c.api) for c in calls] == [(API, ERROR, api) for api in apis]
    assert {c.error for c in calls} <= {"cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED"}
    assert calls[0].text.startswith("Program hit cudaErrorLaunchFailure (error 719)")


def test_initcheck_records(data_dir):
    reads = read(data_dir, "initcheck__uninit-read__limit4__xml")
    assert [(f.kind, f.record, f.severity, f.kernel, f.pc, f.space, f.size, f.direction) for f in reads] == [
        (UNINITIALIZED, "Initcheck", ERROR, "copy", "0xc0", "__global__", 4, "read")
    ] * 4
    assert [(f.thread, f.block, f.address) for f in reads] == [
        ((96 + i, 0, 0), (0, 0, 0), f"0x7fd1148001{0x80 + 4 * i:02x}") for i in range(4)
    ]


def test_synccheck_records(data_dir):
    barriers = read(data_dir, "synccheck__syncwarp-mask__plain__xml")
    assert [(f.kind, f.record, f.severity, f.text, f.error, f.kernel, f.pc, f.thread, f.block) for f in barriers] == [
        (
            BARRIER,
            "Synccheck",
            ERROR,
            "Barrier error",
            "Invalid arguments",
            "bad_syncwarp",
            "0x80",
            (i, 0, 0),
            (0, 0, 0),
        )
        for i in range(4)
    ]


@pytest.mark.parametrize(
    "stem",
    [
        "racecheck__tail-fixed-256__all__xml",
        "racecheck__tail-racy-256__excluded__xml",
        "synccheck__sync-divergent__xml",
    ],
)
def test_a_clean_report_has_no_records(data_dir, stem):
    assert read(data_dir, stem) == []


def test_a_report_that_breaks_off_gives_the_records_before_the_break(data_dir, tmp_path):
    whole = (data_dir / "memcheck__oob-write__xml.xml").read_text()
    cut = tmp_path / "cut.xml"
    cut.write_text(whole[: whole.index("<record>", whole.index("<kind>Api</kind>")) + 40])
    findings = read_findings(cut, "memcheck")
    assert [f.kind for f in (next(findings), next(findings))] == [MEMORY, API]
    with pytest.raises(ReportUnreadable) as raised:
        next(findings)
    assert str(raised.value).startswith("the report cut.xml breaks off after 2 records (no element found: line ")


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "the report r.xml is empty"),
        (
            b"\x00\xff<record><kind>Hazard</k",
            "the report r.xml is not well-formed XML after 0 records (not well-formed",
        ),
        (b"<html><body>no</body></html>", "the report r.xml is <html>, not <ComputeSanitizerOutput>"),
        (
            b"<ComputeSanitizerOutput><record><kind>Api</kind></record><record></ComputeSanitizerOutput>",
            "the report r.xml is not well-formed XML after 1 record (mismatched tag: line 1",
        ),
    ],
)
def test_bad_reports_are_one_line(tmp_path, content, problem):
    (tmp_path / "r.xml").write_bytes(content)
    with pytest.raises(ReportUnreadable) as raised:
        list(read_findings(tmp_path / "r.xml", "memcheck"))
    assert str(raised.value).startswith(problem)
    assert "\n" not in str(raised.value)


def test_a_missing_report(tmp_path):
    with pytest.raises(ReportUnreadable, match=r"^no report at .*nothing\.xml \(No such file or directory\)$"):
        list(read_findings(tmp_path / "nothing.xml", "memcheck"))


def test_records_of_kinds_it_does_not_know_and_fields_it_cannot_read(tmp_path):
    (tmp_path / "r.xml").write_text(
        "<ComputeSanitizerOutput>"
        "<record><kind>Leak</kind><level>Error</level><what><text>Leaked 4 bytes</text></what></record>"
        "<record><kind>Precise</kind><who><blockIdx><x>1</x><y>two</y><z>0</z></blockIdx></who>"
        "<what><size>four</size><address> 0x10 </address></what><where><func>k</func><path>/src/k.cu</path>"
        "<line>12</line></where></record>"
        "<record/>"
        "<sessionDetails><x>ignored: not a record</x></sessionDetails>"
        "</ComputeSanitizerOutput>"
    )
    leak, access, bare = read_findings(tmp_path / "r.xml", "memcheck")
    assert (leak.kind, leak.record, leak.severity, leak.text) == (OTHER, "Leak", ERROR, "Leaked 4 bytes")
    assert (access.kind, access.severity, access.block, access.size, access.address, access.kernel, access.source) == (
        MEMORY,
        ERROR,
        None,
        None,
        "0x10",
        "k",
        "/src/k.cu:12",
    )
    assert (bare.kind, bare.severity, bare.text) == (OTHER, UNKNOWN, "a record without a kind")
