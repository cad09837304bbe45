"""One tool's run under the stand-in compute-sanitizer, replaying what the real one printed on the
H200: every tool's reports, the print-limit totals, the harness's kernels left out, the skip,
the timeout, and reports that are missing, cut short or no XML."""

import sys

import pytest

from pytest_gemmcheck.records.sanitize import API, FAILED, MEMORY, RAN, SKIPPED, TIMED_OUT
from pytest_gemmcheck.sanitize import locate as locate_module
from pytest_gemmcheck.sanitize.locate import SanitizerBinary
from pytest_gemmcheck.sanitize.tool_launch import LAUNCH_MARKER, run_tool, run_tools

ACCELERATOR_ERROR = "torch.AcceleratorError: CUDA error: unspecified launch failure"


def test_racecheck_analysis_reports(fake_sanitizer, binary, child):
    fake_sanitizer.replay("racecheck__tail-racy-256__xml")
    run = run_tool("racecheck", child, binary=binary, timeout=60)
    assert (run.status, run.shown, run.errors, run.warnings, run.total_errors, run.total_warnings, run.exit_status) == (
        RAN,
        2,
        2,
        0,
        2,
        0,
        0,
    )
    assert run.has_hazard and run.reason == "" and run.tail == ""
    assert run.summary() == (
        "racecheck: 2 races in tail_gemm: Write at tail_gemm+0x5620 against 4 Read accesses "
        "(65,536 hazards), 2 errors, 0 warnings"
    )


def test_racecheck_hazards_beyond_the_print_limit(fake_sanitizer, binary, child):
    fake_sanitizer.replay("racecheck__tail-racy-256__all-limit3__xml")
    run = run_tool("racecheck", child, binary=binary, timeout=60, racecheck_report="all", print_limit=3)
    assert (run.shown, run.errors, run.unshown_errors, run.total_errors, run.total_warnings) == (
        3,
        3,
        114946 - 3,
        114946,
        16128,
    )
    assert run.summary() == (
        "racecheck: 3 RAW hazards (cp.async synchronization) in tail_gemm at __shared__ 0x21e0, "
        "block (3,2,0), 114,946 errors, 16,128 warnings, 3 shown"
    )
    assert [f.accesses[0].thread for f in run.findings] == [(20, 0, 0)] * 3


def test_errors_beyond_the_print_limit_fail_though_the_reports_shown_are_warnings(fake_sanitizer, binary, child):
    fake_sanitizer.replay("racecheck__tail-racy-256__hazard__xml")
    run = run_tool("racecheck", child, binary=binary, timeout=60, racecheck_report="hazard")
    assert (run.shown, run.errors, run.warnings, run.unshown_errors) == (3, 0, 3, 115200)
    assert run.has_hazard
    assert run.summary().startswith(
        "racecheck: 3 RAW hazards (cp.async synchronization, warning severity) in "
        "tail_gemm at __shared__ 0x2000, block (7,3,0), 115,200 errors, 15,872 warnings"
    )


@pytest.mark.parametrize(
    "stem, tool, options, line",
    [
        (
            "racecheck__tail-fixed-256__all__xml",
            "racecheck",
            dict(racecheck_report="all"),
            "racecheck: clean (0 errors, 0 warnings)",
        ),
        (
            "racecheck__tail-racy-256__excluded__xml",
            "racecheck",
            dict(exclude_kernels=["tail_gemm"]),
            "racecheck: clean (0 errors, 0 warnings)",
        ),
        ("synccheck__sync-divergent__xml", "synccheck", {}, "synccheck: clean (0 errors)"),
    ],
)
def test_clean_runs(fake_sanitizer, binary, child, stem, tool, options, line):
    fake_sanitizer.replay(stem, says=LAUNCH_MARKER)
    run = run_tool(tool, child, binary=binary, timeout=60, **options)
    assert (run.status, run.shown, run.has_hazard, run.summary()) == (RAN, 0, False, line)


@pytest.mark.parametrize("says", [None, f"not yet: {LAUNCH_MARKER}"])
def test_a_clean_report_without_the_launch_is_no_pass(fake_sanitizer, binary, child, says):
    fake_sanitizer.replay("racecheck__tail-fixed-256__all__xml", says=says)
    run = run_tool("racecheck", child, binary=binary, timeout=60, racecheck_report="all")
    assert (run.status, run.reason) == (FAILED, "the child exited before the launch: finite: True")


@pytest.mark.parametrize(
    "stem, options, exit_status, summary",
    [
        (
            "memcheck__oob-write__xml",
            {},
            1,
            "memcheck: 1 invalid __global__ write of 4 bytes (out of bounds) in write_past+0xc0 at 0x7fa242800fa0, "
            "1 byte after the 4,000-byte allocation at 0x7fa242800000, block (3,0,0), thread (232,0,0), "
            "4 errors (3 CUDA API errors among them)",
        ),
        (
            "memcheck__oob-write__nobacktrace__xml",
            dict(backtraces=False),
            6,
            "memcheck: 1 invalid __global__ write of 4 bytes (out of bounds) in write_past+0xc0 at 0x7fbc90800fa0, "
            "1 byte after the 4,000-byte allocation at 0x7fbc90800000, block (3,0,0), thread (232,0,0), "
            "6 errors (5 CUDA API errors among them)",
        ),
        (
            "memcheck__misaligned__plain__xml",
            {},
            1,
            "memcheck: 1 invalid __global__ write of 4 bytes (misaligned) in misaligned+0x40 at 0x7f3d4e800002, "
            "inside the 128-byte allocation at 0x7f3d4e800000, block (0,0,0), thread (0,0,0), "
            "4 errors (3 CUDA API errors among them)",
        ),
    ],
)
def test_memcheck_faults_decide_whatever_the_exit_status(
    fake_sanitizer, binary, child, recording, stem, options, exit_status, summary
):
    fake_sanitizer.replay(stem)
    run = run_tool("memcheck", child, binary=binary, timeout=60, **options)
    assert (run.status, run.exit_status, run.errors, run.has_hazard, run.unshown_errors) == (
        RAN,
        exit_status,
        1,
        True,
        0,
    )
    assert run.summary() == summary
    assert run.reason == f"the child then exited with status {exit_status}: {ACCELERATOR_ERROR}"
    assert [f.kind for f in run.findings] == [MEMORY] + [API] * run.api_errors
    assert run.tail.splitlines() == recording(stem)["stderr"].rstrip().splitlines()[-20:]


def test_initcheck_beyond_the_print_limit(fake_sanitizer, binary, child):
    fake_sanitizer.replay("initcheck__uninit-read__limit4__xml")
    run = run_tool("initcheck", child, binary=binary, timeout=60, print_limit=4)
    assert (run.shown, run.errors, run.unshown_errors, run.total_errors) == (4, 4, 1020, 1024)
    assert run.summary() == (
        "initcheck: 4 uninitialized __global__ reads of 4 bytes in copy+0xc0 at 0x7fd114800180, "
        "block (0,0,0), thread (96,0,0), 1,024 errors, 4 shown"
    )


def test_synccheck_barrier_errors(fake_sanitizer, binary, child):
    fake_sanitizer.replay("synccheck__syncwarp-mask__plain__xml")
    run = run_tool("synccheck", child, binary=binary, timeout=60)
    assert (run.status, run.exit_status, run.shown, run.errors, run.unshown_errors) == (RAN, 6, 4, 4, 28)
    assert run.summary() == (
        "synccheck: 4 barrier errors (Invalid arguments) in bad_syncwarp+0x80, block (0,0,0), "
        "thread (0,0,0), 32 errors, 4 shown"
    )


def test_the_harness_s_kernels_are_left_out(fake_sanitizer, binary, child):
    fake_sanitizer.replay("memcheck__oob-write__xml")
    run = run_tool("memcheck", child, binary=binary, timeout=60, harness_kernels=["write_*"])
    assert (run.shown, run.dropped, run.errors, run.api_errors, run.has_hazard) == (4, 1, 0, 3, False)
    assert [f.kind for f in run.findings] == [API] * 3
    assert run.summary().endswith("4 errors (3 CUDA API errors among them); 1 report on the harness's kernels left out")


def test_left_out_reports_cannot_vouch_for_those_not_printed(fake_sanitizer, binary, child):
    # the errors past --print-limit may be the kernel's: exclude the harness's kernels at the tool
    fake_sanitizer.replay("initcheck__uninit-read__limit4__xml")
    run = run_tool("initcheck", child, binary=binary, timeout=60, print_limit=4, harness_kernels=["copy"])
    assert (run.dropped, run.errors, run.unshown_errors, run.has_hazard) == (4, 0, 1020, True)


def test_evidence_is_capped_and_the_tally_is_not(fake_sanitizer, binary, child):
    fake_sanitizer.replay("racecheck__tail-racy-256__all-limit3__xml")
    run = run_tool("racecheck", child, binary=binary, timeout=60, racecheck_report="all", print_limit=3, evidence=2)
    assert len(run.findings) == 2 and run.tally == {"RAW hazard (cp.async synchronization)": 3}


def test_the_command_and_the_child_s_environment(fake_sanitizer, binary, child):
    fake_sanitizer.replay("racecheck__tail-racy-256__all-limit3__xml")
    run_tool("racecheck", child, binary=binary, timeout=60, racecheck_report="all", print_limit=3, exclude_kernels=[])
    log = fake_sanitizer.log()
    assert log["argv"][:4] == ["--tool", "racecheck", "--xml", "--save"]
    assert log["argv"][4].endswith("/racecheck.xml")
    assert log["argv"][5:] == ["--racecheck-report", "all", "--print-limit", "3", *child]
    assert log["environ"]["PYTORCH_NO_CUDA_MEMORY_CACHING"] == "1"


def test_no_sanitizer_skips_every_tool_with_the_reason(tmp_path, monkeypatch, child):
    monkeypatch.setattr(locate_module, "DEFAULT_CUDA_HOME", str(tmp_path / "no-cuda"))
    runs = run_tools(["racecheck", "memcheck"], child, timeout=60, environ={"PATH": str(tmp_path)})
    assert [(r.tool, r.status, r.has_hazard) for r in runs] == [
        ("racecheck", SKIPPED, False),
        ("memcheck", SKIPPED, False),
    ]
    assert runs[0].summary() == (
        f"racecheck: skipped: no compute-sanitizer on PATH, in $CUDA_HOME/bin or in "
        f"{tmp_path}/no-cuda/bin (it comes with the CUDA toolkit)"
    )


@pytest.mark.parametrize("platform, word", [("cpu", "CPU"), ("rocm", "ROCm has no racecheck")])
def test_cpu_and_rocm_skip(fake_sanitizer, child, platform, word):
    (run,) = run_tools(["racecheck"], child, timeout=60, platform=platform)
    assert run.status == SKIPPED and word in run.reason


def test_every_tool_in_turn(fake_sanitizer, child):
    fake_sanitizer.replay("synccheck__sync-divergent__xml", says=LAUNCH_MARKER)
    runs = run_tools(["synccheck", "racecheck"], child, timeout=60)
    # the stand-in refuses racecheck for a synccheck recording: each tool is its own command
    assert [(r.tool, r.status) for r in runs] == [("synccheck", RAN), ("racecheck", FAILED)]
    assert "fake compute-sanitizer: synccheck__sync-divergent__xml was recorded with --tool synccheck" in runs[1].tail


def test_the_time_limit_kills_compute_sanitizer_and_the_child(fake_sanitizer, binary, child, gone):
    fake_sanitizer.mode("hang")
    run = run_tool("racecheck", child, binary=binary, timeout=2)
    assert (run.status, run.has_hazard) == (TIMED_OUT, False)
    assert run.reason == "racecheck did not finish within 2 s; compute-sanitizer and the child were killed"
    assert 2 <= run.seconds < 20
    assert gone(int(fake_sanitizer.pidfile.read_text()))
    assert run.summary().startswith("racecheck: timed out: racecheck did not finish within 2 s")


def test_a_child_that_fails_before_the_launch(fake_sanitizer, binary):
    fake_sanitizer.mode("run-child")
    run = run_tool("memcheck", [sys.executable, "-c", "import gemmcheck_no_such_module"], binary=binary, timeout=60)
    assert (run.status, run.exit_status) == (FAILED, 1)
    assert run.reason == (
        "the child exited with status 1 before the launch: "
        "ModuleNotFoundError: No module named 'gemmcheck_no_such_module'"
    )
    assert "Traceback (most recent call last):" in run.tail


def test_a_child_that_fails_after_the_launch_with_no_report(fake_sanitizer, binary):
    fake_sanitizer.mode("run-child")
    script = f"print({LAUNCH_MARKER!r}, flush=True); raise RuntimeError('the check could not run')"
    run = run_tool("memcheck", [sys.executable, "-c", script], binary=binary, timeout=60)
    assert (run.status, run.reason) == (
        FAILED,
        "the child exited with status 1 and memcheck reported nothing: RuntimeError: the check could not run",
    )


def test_a_child_that_launches_and_exits_cleanly(fake_sanitizer, binary):
    fake_sanitizer.mode("run-child")
    script = (
        "import os; print('gemmcheck-sanitize: launching', flush=True); "
        "assert os.environ['PYTORCH_NO_CUDA_MEMORY_CACHING'] == '1'"
    )
    run = run_tool("memcheck", [sys.executable, "-c", script], binary=binary, timeout=60)
    assert (run.status, run.summary()) == (RAN, "memcheck: clean (0 errors)")


def test_a_report_cut_short_keeps_the_reports_before_the_cut(fake_sanitizer, binary, child, data_dir):
    whole = (data_dir / "memcheck__oob-write__xml.xml").read_text()
    fake_sanitizer.replay("memcheck__oob-write__xml", mode=f"truncate:{whole.index('<kind>Api</kind>')}")
    run = run_tool("memcheck", child, binary=binary, timeout=60)
    assert (run.status, run.shown, run.errors, run.has_hazard) == (RAN, 1, 1, True)
    assert run.reason.startswith("the report memcheck.xml breaks off after 1 record (no element found: ")
    assert run.reason.endswith(f"; the child then exited with status 1: {ACCELERATOR_ERROR}")


def test_a_report_cut_before_its_first_record_is_a_failure(fake_sanitizer, binary, child):
    fake_sanitizer.replay("memcheck__oob-write__xml", mode="truncate:300", says=LAUNCH_MARKER)
    run = run_tool("memcheck", child, binary=binary, timeout=60)
    assert run.status == FAILED and not run.has_hazard
    assert run.reason.startswith("the report memcheck.xml breaks off after 0 records (unclosed token: ")
    assert run.reason.endswith(f"; the child exited with status 1: {ACCELERATOR_ERROR}")


def test_garbage_is_a_failure_in_one_line(fake_sanitizer, binary, child):
    fake_sanitizer.mode("garbage")
    run = run_tool("racecheck", child, binary=binary, timeout=60, launch_marker=None)
    assert (run.status, run.total_errors, run.exit_status) == (FAILED, None, 3)
    assert run.reason.startswith("the report racecheck.xml is not well-formed XML after 0 records (")
    assert "\n" not in run.reason


@pytest.mark.parametrize(
    "stem, reason",
    [
        ("racecheck__tail-fixed-256__all__xml", "compute-sanitizer wrote no report (racecheck.xml)"),
        (
            "memcheck__oob-write__xml",
            f"compute-sanitizer wrote no report (memcheck.xml); the child exited with status 1: {ACCELERATOR_ERROR}",
        ),
    ],
)
def test_a_missing_report_is_a_failure(fake_sanitizer, binary, child, recording, stem, reason):
    fake_sanitizer.replay(stem, mode="no-save", says=LAUNCH_MARKER)
    entry = recording(stem)
    options = dict(racecheck_report="all") if entry["flags"] else {}
    run = run_tool(entry["tool"], child, binary=binary, timeout=60, **options)
    assert (run.status, run.reason) == (FAILED, reason)


def test_a_binary_that_cannot_start(tmp_path, child):
    run = run_tool("racecheck", child, binary=SanitizerBinary(str(tmp_path / "gone"), None), timeout=60)
    assert (run.status, run.reason) == (FAILED, "compute-sanitizer could not be started: No such file or directory")
