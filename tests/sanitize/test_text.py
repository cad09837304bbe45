"""The text output recorded on the H200: the summary lines' totals, its records, and what they add
to the XML records of the same run (and nothing when they are not the same run's)."""

import pytest

from pytest_gemmcheck.records.sanitize import ERROR, UNKNOWN, WARNING, Allocation
from pytest_gemmcheck.sanitize.text import TextEnricher, Totals, read_totals, text_records
from pytest_gemmcheck.sanitize.xml_report import read_findings


def enriched(data_dir, xml_stem, stdout):
    enricher = TextEnricher(stdout)
    return [enricher.enrich(f) for f in read_findings(data_dir / f"{xml_stem}.xml", xml_stem.split("__")[0])]


@pytest.mark.parametrize(
    "stem, totals",
    [
        ("racecheck__tail-racy-256__xml", Totals(displayed=2, errors=2, warnings=0)),
        ("racecheck__tail-racy-256__all-limit3__xml", Totals(displayed=3, errors=114946, warnings=16128)),
        ("racecheck__tail-racy-256__hazard__xml", Totals(displayed=100, errors=115200, warnings=15872)),
        ("racecheck__tail-fixed-256__all__xml", Totals(displayed=0, errors=0, warnings=0)),
        ("racecheck__matmul", Totals(displayed=0, errors=0, warnings=0)),
        ("memcheck__oob-write__xml", Totals(errors=4)),
        ("memcheck__oob-write__nobacktrace__xml", Totals(errors=6)),
        ("memcheck__matmul", Totals(errors=0)),
        ("initcheck__uninit-read__limit4__xml", Totals(errors=1024, not_printed=1020)),
        ("initcheck__matmul", Totals(errors=32768, not_printed=32668)),
        ("synccheck__syncwarp-mask__plain__xml", Totals(errors=32)),
    ],
)
def test_totals_of_the_summary_lines(recording, stem, totals):
    assert read_totals(recording(stem)["stdout"]) == totals


def test_no_summary_line_no_totals():
    assert read_totals("finite: True\n\x00 garbage ==== ERROR SUMMARY\n") == Totals()


def test_text_records_leave_out_the_target_s_lines_and_the_backtraces(recording):
    records = text_records(recording("memcheck__oob-write__xml")["stdout"])
    assert [r.header for r in records] == [
        "Invalid __global__ write of size 4 bytes",
        *(
            f'Program hit {e} (error 719) due to "unspecified launch failure" on CUDA API call to {api}.'
            for e, api in (
                ("cudaErrorLaunchFailure", "cudaDeviceSynchronize"),
                ("cudaErrorLaunchFailure", "cudaGetLastError"),
                ("CUDA_ERROR_LAUNCH_FAILED", "cuModuleUnload"),
            )
        ),
        "Target application returned an error",
    ]
    assert records[0].lines == (
        "at write_past+0xc0",
        "by thread (232,0,0) in block (3,0,0)",
        "Access to 0x7fa242800fa0 is out of bounds",
        "and is 1 bytes after the nearest allocation at 0x7fa242800000 of size 4,000 bytes",
    )


def test_a_hazard_s_severity_space_and_memcpy_async_note(data_dir, recording):
    stem = "racecheck__tail-racy-256__all-limit3__xml"
    hazards = enriched(data_dir, stem, recording(stem)["stdout"])
    assert [(h.severity, h.space, h.memcpy_async, h.note) for h in hazards] == [
        (ERROR, "__shared__", True, "invalid memcpy_async synchronization")
    ] * 3
    assert hazards[0].label() == "RAW hazard (cp.async synchronization)"


def test_a_warp_level_hazard_is_a_warning(data_dir, recording):
    stem = "racecheck__tail-racy-256__hazard__xml"
    hazards = enriched(data_dir, stem, recording(stem)["stdout"])
    assert [(h.severity, h.note, h.accesses[0].thread, h.accesses[1].thread) for h in hazards] == [
        (WARNING, "Warp Level Programming; invalid memcpy_async synchronization", (0, 0, 0), (0, 0, 0))
    ] * 3


@pytest.mark.parametrize(
    "stem, allocation",
    [
        ("memcheck__oob-write__xml", Allocation("0x7fa242800000", 4000, "after", 1)),
        ("memcheck__oob-write__nobacktrace__xml", Allocation("0x7fbc90800000", 4000, "after", 1)),
        ("memcheck__misaligned__plain__xml", Allocation("0x7f3d4e800000", 128, "inside")),
    ],
)
def test_memcheck_s_nearest_allocation(data_dir, recording, stem, allocation):
    access, *calls = enriched(data_dir, stem, recording(stem)["stdout"])
    assert access.allocation == allocation
    assert all(call.allocation is None for call in calls)


def test_source_lines_with_lineinfo(data_dir, recording):
    # the -lineinfo launch's text with the plain launch's XML: the same SASS, the same PCs
    races = enriched(data_dir, "racecheck__tail-racy-256__xml", recording("racecheck__tail-racy-lineinfo")["stdout"])
    cubin = "f5ecca9ef23ab29fc8d8a2c2e3d65e44991aa16e.cubin.cu"
    for race, line in zip(races, (156, 157)):
        write, *reads = race.accesses
        assert (write.function, write.source) == ("cp_async_16(void *, const void *)", f"{cubin}:84")
        assert {(r.function, r.source) for r in reads} == {
            ("read_slice(const unsigned char *, int, Slice &)", f"{cubin}:{line}")
        }
        assert (race.kernel, race.source) == ("tail_gemm", f"{cubin}:84")


def test_the_text_of_another_run_adds_nothing(data_dir, recording):
    # the same launch recorded twice: the hazards shown are at other addresses
    stem = "racecheck__tail-racy-256__all-limit3__xml"
    plain = list(read_findings(data_dir / f"{stem}.xml", "racecheck"))
    assert enriched(data_dir, stem, recording("racecheck__tail-racy-256__hazard__xml")["stdout"]) == plain
    assert enriched(data_dir, stem, "\x00 not a sanitizer's output\n") == plain


def test_a_record_missing_from_the_text_leaves_the_others_in_step(data_dir, recording):
    stem = "racecheck__tail-racy-256__all-limit3__xml"
    stdout = recording(stem)["stdout"]
    first = stdout.index("========= Error: Potential")
    second = stdout.index("========= Error: Potential", first + 1)
    hazards = enriched(data_dir, stem, stdout[:first] + stdout[second:])
    assert [h.severity for h in hazards] == [UNKNOWN, ERROR, ERROR]
