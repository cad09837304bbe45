"""Mutations of the compiled example (examples/flydsl/fp8_tail_gemm.py, K=512, gfx950).

The assembly under data/ is what FlyDSL 0.5.0 wrote for the example; each variant edits its text
the way a kernel author's change would, and the lint must see the difference.
"""

import pytest

from pytest_gemmcheck.compiled.lint import lint_text


def lines_of(text):
    return text.splitlines()


def at(lines, number, expected):
    """The 0-based index of 1-based line ``number``, checked against its expected text."""
    assert lines[number - 1].strip() == expected, lines[number - 1]
    return number - 1


def lint(lines):
    report = lint_text("\n".join(lines) + "\n", "mutant.s")
    return len(report.errors), len(report.warnings), report


def delete_loop_wait(lines):
    # the wait at the end of main-loop step 0 that lands tile 1 before step 1 reads it
    del lines[at(lines, 227, "s_waitcnt vmcnt(8)")]
    return lines


def tail_wait_to_bare_barrier(lines):
    del lines[at(lines, 325, "s_waitcnt vmcnt(0)")]
    return lines


def loop_wait_one_stage_short(lines):
    lines[at(lines, 293, "s_waitcnt vmcnt(8)")] = "\ts_waitcnt vmcnt(16)"
    return lines


def drop_reads_drained(lines):
    del lines[at(lines, 268, "s_waitcnt lgkmcnt(0)")]
    del lines[at(lines, 203, "s_waitcnt lgkmcnt(0)")]
    return lines


def refill_before_reads_done_barrier(lines):
    barrier = lines.pop(at(lines, 204, "s_barrier"))
    lines.insert(at(lines, 226, "s_waitcnt vmcnt(8)"), barrier)
    return lines


FIXED_MUTATIONS = {
    # variant: (edit, errors, warnings)
    "unchanged": (lambda lines: lines, 0, 0),
    "delete a loop wait": (delete_loop_wait, 16, 0),
    "turn the tail wait into a bare barrier": (tail_wait_to_bare_barrier, 16, 0),
    "loop waits one stage short": (loop_wait_one_stage_short, 16, 0),
    "drop the reads-drained waits": (drop_reads_drained, 0, 32),
    "refill before the reads-done barrier": (refill_before_reads_done_barrier, 0, 16),
}


@pytest.mark.parametrize("variant", list(FIXED_MUTATIONS))
def test_mutations_of_the_fixed_kernel(example_asm, variant):
    edit, errors, warnings = FIXED_MUTATIONS[variant]
    found_errors, found_warnings, _ = lint(edit(lines_of(example_asm["fp8_tail_gemm_fixed_k512"])))
    assert (found_errors, found_warnings) == (errors, warnings)


def test_racy_kernel_and_the_inserted_wait(example_asm):
    racy = lines_of(example_asm["fp8_tail_gemm_racy_k512"])
    errors, warnings, report = lint(list(racy))
    assert (errors, warnings) == (16, 0)
    # the sixteen reads of the final tile, right after the bare barrier
    bare = at(racy, 323, "s_barrier")
    assert [f.line for f in report.errors] == list(range(bare + 2, bare + 18))
    inserted = list(racy)
    inserted.insert(bare, "\ts_waitcnt vmcnt(0)")
    assert lint(inserted)[:2] == (0, 0)


def test_racy_tail_finding_names_the_loads_and_the_barrier(example_asm):
    _, _, report = lint(lines_of(example_asm["fp8_tail_gemm_racy_k512"]))
    finding = report.errors[-1]
    assert finding.instruction == "ds_read_b128 v[202:205], v82 offset:38912"
    assert finding.reader_waves == [0, 1, 2, 3]
    assert {load.line for load in finding.loads} == {284, 290}  # B tile 3, issued at main-loop step 1
    assert "line 323" in finding.why and "rendezvous, not a completion wait" in finding.why
    assert all(0xC000 <= lo < hi <= 0x10000 for lo, hi in finding.lds)  # stage 1's B tile


def test_zero_trip_main_loop_at_k256(example_asm):
    # at K=256 the main loop runs zero times; only the prologue's wait covers tile 0
    errors, warnings, report = lint(lines_of(example_asm["fp8_tail_gemm_racy_k256"]))
    assert (errors, warnings) == (16, 0)
    assert all(all(lo >= 0x8000 for lo, _ in f.lds) for f in report.errors)  # all in stage 1
