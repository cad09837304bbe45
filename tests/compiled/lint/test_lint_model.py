"""The lint's ordering model on hand-written gfx950 assembly: one rule per test."""

import pytest

from pytest_gemmcheck.compiled.lint import Options, exit_status, lint_text
from pytest_gemmcheck.compiled.lint.asm import parse_instruction
from pytest_gemmcheck.compiled.lint.instructions import parse_waitcnt
from pytest_gemmcheck.compiled.lint.paths import Limits


def findings(text, severity=None):
    report = lint_text(text)
    assert report.kernels, report.notes
    return [f for f in report.findings if severity is None or f.severity == severity]


def test_wait_then_barrier_orders_other_waves_loads(asm_kernel, snippets):
    body = snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]
    assert findings(asm_kernel(body)) == []


def test_bare_barrier_is_a_rendezvous_not_a_completion_wait(asm_kernel, snippets):
    body = snippets["load_a"] + "\ts_barrier\n\ts_waitcnt vmcnt(0)\n" + snippets["read_next_a"]
    [error] = findings(asm_kernel(body), "error")
    assert error.instruction == "ds_read_b128 v[8:11], v5"
    assert error.reader_waves == [0, 1, 2, 3]
    assert [load.line for load in error.loads] == [error.line - 3]  # the DMA load, three lines up
    assert "rendezvous, not a completion wait" in error.why
    # every wave reads the next wave's 1 KiB slice: the whole of buffer A is involved
    assert error.lds == [(0, 4096)]


def test_no_barrier_at_all_is_an_error_for_other_waves_data(asm_kernel, snippets):
    body = snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n" + snippets["read_next_a"]
    [error] = findings(asm_kernel(body), "error")
    assert "passes no barrier" in error.why


def test_own_data_needs_only_the_own_wait(asm_kernel, snippets):
    own_slot = snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\tds_read_b128 v[8:11], v4 offset:0\n"
    # v4 is lane * 16: without the wave's base that is wave 0's slice, so read via M0's value
    own_slot = own_slot.replace(
        "ds_read_b128 v[8:11], v4 offset:0", "v_add_u32_e32 v6, s8, v4\n\tds_read_b128 v[8:11], v6"
    )
    assert findings(asm_kernel(own_slot)) == []
    unwaited = own_slot.replace("\ts_waitcnt vmcnt(0)\n", "")
    [error] = findings(asm_kernel(unwaited), "error")
    assert "without any wait that retires it" in error.why


def test_vmcnt_retires_all_but_the_youngest(asm_kernel, snippets):
    body = (
        snippets["load_a"]
        + snippets["load_b"]
        + "\ts_waitcnt vmcnt(1)\n\ts_barrier\n"
        + snippets["read_next_a"]
        + snippets["read_next_b"]
    )
    [error] = findings(asm_kernel(body), "error")
    assert error.instruction == "ds_read_b128 v[12:15], v5 offset:4096"
    assert error.lds == [(4096, 8192)]


def test_ordinary_vector_loads_share_the_counter_in_issue_order(asm_kernel, snippets):
    plain_load = "\tbuffer_load_dword v20, v4, s[4:7], 0 offen\n"
    dma_then_plain = snippets["load_a"] + plain_load + "\ts_waitcnt vmcnt(1)\n\ts_barrier\n" + snippets["read_next_a"]
    assert findings(asm_kernel(dma_then_plain)) == []
    plain_then_dma = plain_load + snippets["load_a"] + "\ts_waitcnt vmcnt(1)\n\ts_barrier\n" + snippets["read_next_a"]
    assert len(findings(asm_kernel(plain_then_dma), "error")) == 1


REFILL = (
    "\ts_waitcnt vmcnt(0)\n\ts_barrier\n"
    "{read}"
    "{drain}"
    "\ts_barrier\n"
    "\ts_mov_b32 m0, s8\n\tbuffer_load_dwordx4 v4, s[4:7], s11 offen lds\n"
    "\ts_waitcnt vmcnt(0)\n\ts_barrier\n"
)


def test_refill_after_reads_drained_is_ordered(asm_kernel, snippets):
    body = snippets["load_a"] + REFILL.format(read=snippets["read_next_a"], drain="\ts_waitcnt lgkmcnt(0)\n")
    assert findings(asm_kernel(body)) == []


def test_refill_may_overtake_reads_in_flight(asm_kernel, snippets):
    body = snippets["load_a"] + REFILL.format(read=snippets["read_next_a"], drain="")
    [warning] = findings(asm_kernel(body))
    assert warning.severity == "warning" and warning.kind == "refill-overtakes-read"
    assert "may overtake the read" in warning.why


def test_scalar_loads_do_not_retire_lds_reads(asm_kernel, snippets):
    # lgkmcnt(1) after a DS read and a scalar load: the scalar load may return first
    drain = "\ts_load_dword s20, s[0:1], 0x0\n\ts_waitcnt lgkmcnt(1)\n"
    body = snippets["load_a"] + REFILL.format(read=snippets["read_next_a"], drain=drain)
    assert [f.severity for f in findings(asm_kernel(body))] == ["warning"]
    drain_ds = "\tds_read_b32 v30, v4 offset:8192\n\ts_waitcnt lgkmcnt(1)\n"
    body = snippets["load_a"] + REFILL.format(read=snippets["read_next_a"], drain=drain_ds)
    assert findings(asm_kernel(body)) == []


LEAD_LAG = """\ts_cmp_lt_u32 s10, 2
\ts_cbranch_scc1 .LBB0_1
\ts_barrier
.LBB0_1:
"""


def test_wave_groups_a_barrier_phase_apart(asm_kernel, snippets):
    clean = snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]
    assert findings(asm_kernel(clean)) == []
    # waves 2 and 3 pass one extra barrier first: wave 1's barrier pairs with their extra one,
    # which comes before their loads, so wave 1's read of wave 2's slice is unordered
    [error] = findings(asm_kernel(LEAD_LAG + clean), "error")
    assert error.reader_waves == [1]
    assert [load.waves for load in error.loads] == [[2]]
    assert "barrier phase apart" in error.why


# How FlyDSL's compiled code spells "if wave_m == 1: s_barrier()" for 4 waves in 2 groups:
# a vector compare into vcc, its lanes ANDed with exec, a branch on the resulting SCC.
LEAD_LAG_VECTOR = """\tv_lshrrev_b32_e32 v7, 7, v0
\tv_cmp_eq_u32_e32 vcc, 0, v7
\ts_and_b64 s[14:15], vcc, exec
\ts_cbranch_scc1 .LBB0_1
\ts_barrier
.LBB0_1:
"""


def test_wave_dependent_branch_through_vcc(asm_kernel, snippets):
    clean = snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]
    [error] = findings(asm_kernel(LEAD_LAG_VECTOR + clean), "error")
    assert error.reader_waves == [1] and "barrier phase apart" in error.why


LOOP = """\ts_mov_b32 s12, 0
.LBB0_2:
\ts_mov_b32 m0, s8
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
\ts_waitcnt vmcnt(0)
\ts_barrier
\tds_read_b128 v[8:11], v5
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\ts_add_u32 s12, s12, 1
\ts_cmp_lt_u32 s12, {trips}
\ts_cbranch_scc1 .LBB0_2
"""


def test_loop_with_a_back_edge(asm_kernel):
    assert findings(asm_kernel(LOOP.format(trips=4))) == []
    report = lint_text(asm_kernel(LOOP.format(trips=4).replace("\ts_waitcnt vmcnt(0)\n", "")))
    [error] = report.errors
    # no wait anywhere retires a load: every wave's read races the next wave's loads, four
    # (reader, writer) pairs of the one read and the one load (iterations are not counted apart)
    assert error.instances == 4
    assert error.reader_waves == [0, 1, 2, 3] and [load.waves for load in error.loads] == [[0, 1, 2, 3]]


def test_loop_whose_trip_count_is_unknown_is_unrolled_boundedly(asm_kernel):
    # the trip count is a kernel argument: the loop runs --loop-unroll times (and is left earlier
    # in other scenarios), the same way in every wave
    unknown = "\ts_load_dword s13, s[0:1], 0x0\n\ts_waitcnt lgkmcnt(0)\n" + LOOP.format(trips="s13")
    assert findings(asm_kernel(unknown)) == []
    racy = unknown.replace("\ts_waitcnt vmcnt(0)\n\ts_barrier\n\tds_read", "\ts_barrier\n\tds_read")
    [error] = lint_text(asm_kernel(racy)).errors
    assert error.scenario == ""  # found on the first path: the back edge taken while unrolling
    assert error.instances >= 4


def test_global_load_lds_destination_includes_the_instruction_offset(asm_kernel):
    body = (
        "\ts_mov_b32 m0, s8\n\tglobal_load_lds_dwordx4 v[20:21], off offset:64\n"
        "\ts_barrier\n\tv_add_u32_e32 v6, 0x40, v5\n\tds_read_b128 v[8:11], v6\n"
    )
    [error] = findings(asm_kernel(body), "error")
    assert error.lds == [(64, 4096), (4096, 4096 + 64)] or error.lds == [(64, 4096 + 64)]


def test_ds_read2_addresses(asm_kernel, snippets):
    body = snippets["load_a"] + "\ts_barrier\n\tds_read2_b32 v[8:9], v5 offset0:0 offset1:2\n"
    [error] = findings(asm_kernel(body), "error")
    # each lane reads 4 bytes at +0 and +8 of its 16-byte slot
    assert all(hi - lo == 4 for lo, hi in error.lds)


def test_unresolved_addresses_are_unchecked_not_guessed(asm_kernel, snippets):
    body = snippets["load_a"] + (
        "\ts_barrier\n\tbuffer_load_dword v6, v4, s[4:7], 0 offen\n\ts_waitcnt vmcnt(0)\n\tds_read_b128 v[8:11], v6\n"
    )
    report = lint_text(asm_kernel(body))
    assert report.errors == []
    [unchecked] = [f for f in report.findings if f.kind == "unresolved-address"]
    assert unchecked.severity == "unchecked" and unchecked.instruction == "ds_read_b128 v[8:11], v6"
    assert unchecked.reader_waves == [0, 1, 2, 3] and report.unchecked == [unchecked]


def test_partial_last_wave(asm_kernel, snippets):
    body = snippets["load_a"] + "\ts_barrier\n" + snippets["read_next_a"]
    [error] = findings(asm_kernel(body, threads=160), "error")  # waves 0, 1 and half of wave 2
    # wave 2 reads slice 3, which no wave writes; wave 1 reads slice 2, of which wave 2's 32 live
    # lanes write the first 512 bytes
    assert error.reader_waves == [0, 1]
    assert error.lds == [(1024, 2048 + 512)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("s_waitcnt vmcnt(3) lgkmcnt(0)", (3, 0)),
        ("s_waitcnt vmcnt(0)", (0, None)),
        ("s_waitcnt lgkmcnt(2)", (None, 2)),
        ("s_waitcnt 0", (0, 0)),
        ("s_waitcnt 0xc07f", (None, 0)),  # vmcnt all ones: no wait on it
        ("s_waitcnt 0x0f72", (2, None)),
    ],
)
def test_waitcnt_fields(text, expected):
    assert parse_waitcnt(parse_instruction(text)) == expected


# Waves 2 and 3 spin in a loop of 40 trips before they wait for their load: a visit limit cuts
# their traces there, before the wait and the barrier the other waves pair with.
SPIN = """\ts_cmp_lt_u32 s10, 2
\ts_cbranch_scc1 .LBB0_9
\ts_mov_b32 s20, 0
.LBB0_8:
\ts_add_u32 s20, s20, 1
\ts_cmp_lt_u32 s20, 40
\ts_cbranch_scc1 .LBB0_8
.LBB0_9:
"""


def test_path_engine_reports_a_cut_trace_as_unchecked_not_as_races(asm_kernel, snippets):
    body = snippets["load_a"] + SPIN + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]
    whole = lint_text(asm_kernel(body), options=Options(engine="paths"))
    assert whole.findings == []
    cut = lint_text(asm_kernel(body), options=Options(engine="paths", limits=Limits(max_visits=8)))
    # wave 1 reads wave 2's slice after a barrier wave 2's cut trace never reached: not an error
    # (its wait and barrier are past the cut), and not a pass either
    assert cut.errors == [] and cut.warnings == []
    [unchecked] = cut.unchecked
    assert unchecked.kind == "not-followed" and "stopped at line" in unchecked.why and "after 8 visits" in unchecked.why
    assert exit_status([cut]) == 3


def test_path_engine_pairs_a_cut_readers_later_barriers(asm_kernel, snippets):
    # waves 2 and 3 read, then spin past the visit limit: their traces end before the barrier
    # that orders their reads before the refill. They still reach it: the refill is no warning
    published = snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]
    body = published + SPIN + "\ts_waitcnt lgkmcnt(0)\n\ts_barrier\n" + snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n"
    assert lint_text(asm_kernel(body), options=Options(engine="paths")).findings == []
    cut = lint_text(asm_kernel(body), options=Options(engine="paths", limits=Limits(max_visits=8)))
    assert cut.warnings == [] and cut.errors == [] and [f.kind for f in cut.unchecked] == ["not-followed"]
