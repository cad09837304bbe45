"""The dataflow engine's own rules: folded loops, unchecked reads, local labels, the scalar
instructions it models, latent findings, gfx942, and the command line's exit statuses."""

import numpy as np
import pytest

from pytest_gemmcheck.compiled.lint import affine, lint_text
from pytest_gemmcheck.compiled.lint.asm import parse_instruction
from pytest_gemmcheck.compiled.lint.command import exit_status, main
from pytest_gemmcheck.compiled.lint.semantics import WaveState
from pytest_gemmcheck.compiled.lint.values import Affine, Lanes

ARGUMENT = "\ts_load_dword s16, s[0:1], 0x10\n\ts_waitcnt lgkmcnt(0)\n"  # s16: a kernel argument, unknown
BARE_RACE = "{load_a}\ts_barrier\n{read_next_a}"


def run(state: WaveState, *lines: str) -> WaveState:
    for line in lines:
        state.execute(parse_instruction(line))
    return state


def test_magic_numbers_are_the_divisions_llvm_emits():
    assert affine.magic_divisor(0xAAAAAAAB) == (3, 1)  # x / 3: mul_hi, then >> 1
    assert affine.magic_divisor(0xCCCCCCCD) == (5, 2)
    assert affine.magic_divisor(0x12345) is None


def test_mod_3_of_a_folded_counter_is_exact_for_every_iteration():
    # k = 4 + 12 J for every natural J (a loop folded with period 12): k mod 3 == 1 whatever J is
    state = WaveState(64)
    state.sgpr[12] = Affine(4, 12, symbol=1)
    run(state, "s_mul_hi_u32 s21, s12, 0xaaaaaaab", "s_lshr_b32 s21, s21, 1", "s_mul_i32 s21, s21, 3",
        "s_sub_u32 s20, s12, s21", "s_lshl_b32 s22, s12, 2")
    assert state.sgpr_value(20) == 1
    assert state.sgpr[22] == Affine(16, 48, symbol=1)  # still symbolic, not a guess
    run(state, "s_and_b32 s23, s12, 3", "s_and_b32 s24, s12, 7")
    assert state.sgpr_value(23) == 0 and state.sgpr_value(24) is None  # 12 J mod 8 depends on J


def test_scalar_instructions_compilers_emit_for_addresses():
    state = run(WaveState(64), "s_mov_b32 s20, 0", "s_bitset1_b32 s20, 12", "s_mov_b32 s21, 0xff",
                "s_bitset0_b32 s21, 0", "s_movk_i32 s22, 0x10", "s_addk_i32 s22, 0xfff0", "s_cmp_eq_u32 s22, 0",
                "s_cselect_b32 s23, s20, s21", "s_mul_hi_u32 s24, s21, 0x10000000")
    assert [state.sgpr_value(i) for i in range(20, 25)] == [0x1000, 0xFE, 0, 0x1000, 0xF]


def test_unmodelled_instruction_makes_the_read_unchecked_and_the_result_incomplete(asm_kernel, snippets):
    body = snippets["load_a"] + "\ts_barrier\n\ts_quadmask_b32 s20, 0\n\tv_add_u32_e32 v6, s20, v5\n\tds_read_b128 v[8:11], v6\n"
    report = lint_text(asm_kernel(body))
    [unchecked] = report.findings
    assert unchecked.severity == "unchecked" and unchecked.instruction == "ds_read_b128 v[8:11], v6"
    assert "instructions the model does not know" in unchecked.why
    assert [line.split(": ", 1)[1] for line in report.incomplete] == ["s_quadmask_b32 s20, 0"]


def test_numeric_local_labels_resolve(asm_kernel, snippets):
    # inline asm: "s_cbranch_scc0 1f ... 1:"; the code after the label is checked, not cut off
    body = ARGUMENT + "\ts_cmp_eq_u32 s16, 0\n\ts_cbranch_scc0 1f\n\ts_nop 0\n1:\n" + BARE_RACE.format(**snippets)
    report = lint_text(asm_kernel(body))
    [error] = report.findings
    assert error.severity == "error" and error.instruction == "ds_read_b128 v[8:11], v5"


RING = ARGUMENT + """\ts_mov_b32 s12, 0
.LBB0_1:
\ts_and_b32 s20, s12, 1
\ts_lshl_b32 s20, s20, 12
\ts_add_u32 s21, s20, s8
\ts_mov_b32 m0, s21
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
\ts_waitcnt vmcnt(0)
\ts_barrier
\tv_add_u32_e32 v6, s20, v5
\tds_read_b128 v[8:11], v6
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\ts_add_u32 s12, s12, 1
\ts_cmp_lg_u32 s12, s16
\ts_cbranch_scc1 .LBB0_1
"""


def test_runtime_loop_is_analysed_for_any_trip_count(asm_kernel):
    report = lint_text(asm_kernel(RING))
    assert report.findings == []
    racy = lint_text(asm_kernel(RING.replace("\ts_waitcnt vmcnt(0)\n", "")))
    [error] = racy.errors
    assert error.instruction == "ds_read_b128 v[8:11], v6" and error.lds == [(0, 8192)]  # both stages
    assert racy.unchecked == []


LATENT = """{load_a}\ts_barrier
\ts_cmp_lt_u32 s10, 2
\ts_cbranch_scc1 .LBB0_9
\ts_barrier
.LBB0_9:
\ts_waitcnt vmcnt(0)
\ts_barrier
{read_next_a}"""


def test_latent_when_only_a_phase_offset_leaves_the_read_unordered(asm_kernel, snippets):
    # waves 2-3 pass one more barrier between their load and their wait: wave 1's barrier pairs
    # with that one, so wave 2's load is not yet retired, though wave 2 retires it before the next
    [latent] = lint_text(asm_kernel(LATENT.format(**snippets))).findings
    assert latent.severity == "latent" and latent.kind == "read-across-phase-offset"
    assert latent.reader_waves == [1] and [load.waves for load in latent.loads] == [[2]]
    aligned = LATENT.replace("\ts_cmp_lt_u32 s10, 2\n\ts_cbranch_scc1 .LBB0_9\n\ts_barrier\n.LBB0_9:\n", "")
    assert lint_text(asm_kernel(aligned.format(**snippets))).findings == []


GFX942_DMA = "\ts_mov_b32 m0, s8\n\tbuffer_load_dword v4, s[4:7], 0 offen lds sc0 sc1\n"


def test_gfx942_dword_dma_and_its_syntax(asm_kernel, snippets):
    racy = lint_text(asm_kernel(GFX942_DMA + "\ts_barrier\n" + snippets["read_next_a"], arch="gfx942"))
    [error] = racy.errors
    assert error.lds == [(0, 256), (1024, 1280), (2048, 2304), (3072, 3328)]  # 64 lanes x 4 bytes per wave
    fixed = GFX942_DMA + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]
    assert lint_text(asm_kernel(fixed, arch="gfx942")).findings == []


def test_gfx942_limits(asm_kernel, snippets):
    # gfx942 has no 16-byte LDS DMA (gfx950 added it) and a 6-bit vmcnt
    report = lint_text(asm_kernel(BARE_RACE.format(**snippets), arch="gfx942"))
    assert [f.severity for f in report.findings] == ["unchecked"]
    assert "gfx942 cannot" in report.findings[0].why
    wide = lint_text(asm_kernel(GFX942_DMA + "\ts_waitcnt vmcnt(64)\n", arch="gfx942"))
    assert [f.severity for f in wide.findings] == ["unchecked"] and "at most 63" in wide.findings[0].why
    assert lint_text(asm_kernel(BARE_RACE.format(**snippets))).errors  # the same code is fine for gfx950


@pytest.fixture
def write(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def test_exit_statuses(write, asm_kernel, snippets, capsys):
    unchecked = write("unchecked.s", asm_kernel(snippets["load_a"] + "\ts_barrier\n\ts_quadmask_b32 s20, 0\n"
                                                "\tv_add_u32_e32 v6, s20, v5\n\tds_read_b128 v[8:11], v6\n"))
    assert main([unchecked]) == 3
    assert capsys.readouterr().out.strip().endswith("0 error(s), 0 warning(s), 1 unchecked in 1 kernel(s)")
    latent = write("latent.s", asm_kernel(LATENT.format(**snippets)))
    assert main([latent]) == 0
    assert main(["--fail-on-latent", latent]) == 1
    assert capsys.readouterr().out.strip().endswith("0 error(s), 0 warning(s), 1 latent in 1 kernel(s)")
    # an error outweighs what was not checked
    assert main([unchecked, write("racy.s", asm_kernel(BARE_RACE.format(**snippets)))]) == 1


def test_time_limit_names_the_unfinished_kernel(write, lint_corpus, capsys):
    path = write("hti.s", lint_corpus.bf16_gemm(hti=True, loop_wait=0))  # no error to find before the limit
    assert main(["--time-limit", "0.05", path]) == 3
    out = capsys.readouterr().out
    assert "unchecked: unfinished" in out and "bf16_gemm_hti" in out and "time limit (0.05 s)" in out
    assert main(["--time-limit", "0", path]) == 2


def test_path_engine_on_request(write, example_asm, capsys):
    path = write("racy.s", example_asm["fp8_tail_gemm_racy_k512"])
    assert main(["--engine", "paths", path]) == 1
    assert capsys.readouterr().out.strip().endswith("16 error(s), 0 warning(s) in 1 kernel(s)")


def test_a_folded_64_bit_counter_keeps_its_high_word():
    # s[12:13] += 2 in a loop folded to 14 + 72 J: the low word never wraps (the assumption of
    # affine.py), so no carry reaches the high word, and a compare of the pair stays decidable
    state = WaveState(64)
    state.sgpr[12], state.sgpr[13] = Affine(14, 72, symbol=1), 0
    run(state, "s_add_u32 s12, s12, 2", "s_addc_u32 s13, s13, 0")
    assert state.sgpr[12] == Affine(16, 72, symbol=1) and state.sgpr_value(13) == 0
    run(state, "s_sub_u32 s20, s12, 16", "s_subb_u32 s21, s13, 0")  # 16 + 72 J >= 16: no borrow
    assert state.sgpr[20] == Affine(0, 72, symbol=1) and state.sgpr_value(21) == 0
    run(state, "s_sub_u32 s22, s12, 17", "s_subb_u32 s23, s13, 0")  # borrows at J = 0 only: not known
    assert state.sgpr_value(23) is None
    state.sgpr[24] = Affine(0xFFFFFFFF, 72, symbol=1)
    run(state, "s_add_u32 s24, s24, 2", "s_addc_u32 s25, s13, 0")  # carries at J = 0: not known
    assert state.sgpr_value(25) is None


def _lanes(start):
    return Lanes(np.arange(start, start + 64, dtype=np.int64), np.ones(64, dtype=bool))


@pytest.mark.parametrize("swap, first, second", [
    # rows 1 and 3 of the first with rows 0 and 2 of the second (16-lane rows)
    ("v_permlane16_swap_b32_e32 v1, v2",
     [*range(0, 16), *range(100, 116), *range(32, 48), *range(132, 148)],
     [*range(16, 32), *range(116, 132), *range(48, 64), *range(148, 164)]),
    # lanes 32-63 of the first with lanes 0-31 of the second
    ("v_permlane32_swap_b32_e32 v1, v2", [*range(0, 32), *range(100, 132)], [*range(32, 64), *range(132, 164)]),
    ("v_swap_b32 v1, v2", list(range(100, 164)), list(range(64))),
])
def test_lane_swaps_write_both_registers(swap, first, second):
    state = run(WaveState(64), "s_mov_b64 exec, -1")
    state.vgpr[1], state.vgpr[2] = _lanes(0), _lanes(100)
    assert state.execute(parse_instruction(swap))
    assert state.vgpr[1].known.all() and state.vgpr[1].values.tolist() == first
    assert state.vgpr[2].known.all() and state.vgpr[2].values.tolist() == second


def test_a_permlane_swap_under_a_partial_exec_leaves_neither_register_known():
    # which lanes move when some are inactive is not modelled: both operands are written, so
    # neither may keep its old value (an address computed from the second would be stale)
    state = run(WaveState(64), "s_mov_b32 exec_lo, -1", "s_mov_b32 exec_hi, 0")
    state.vgpr[1], state.vgpr[2] = _lanes(0), _lanes(100)
    assert not state.execute(parse_instruction("v_permlane32_swap_b32_e32 v1, v2"))
    assert not state.vgpr.get(1, Lanes.unknown(64)).known[:32].any()
    assert not state.vgpr.get(2, Lanes.unknown(64)).known[:32].any()


@pytest.mark.parametrize("move, low, high", [
    ("v_pk_mov_b32 v[4:5], v[2:3], v[2:3] op_sel:[0,1]", 0, 100),  # LLVM's 64-bit copy
    ("v_pk_mov_b32 v[4:5], v[2:3], v[6:7] op_sel:[1,0]", 100, 200),  # a window one dword along
    ("v_pk_mov_b32 v[2:3], v[2:3], v[6:7] op_sel:[1,0]", 100, 200),  # in place: sources read first
    ("v_pk_mov_b32 v[4:5], v[2:3], v[6:7]", 0, 200),
])
def test_a_packed_move_takes_each_dword_its_op_sel_names(move, low, high):
    state = run(WaveState(64), "s_mov_b64 exec, -1")
    state.vgpr[2], state.vgpr[3], state.vgpr[6], state.vgpr[7] = _lanes(0), _lanes(100), _lanes(200), _lanes(300)
    assert state.execute(parse_instruction(move))
    dest = int(move.split("v[")[1].split(":")[0])
    assert state.vgpr[dest].values.tolist() == list(range(low, low + 64))
    assert state.vgpr[dest + 1].values.tolist() == list(range(high, high + 64))


def test_64_bit_vector_shifts():
    state = run(WaveState(64), "s_mov_b64 exec, -1", "v_mov_b32_e32 v2, 0x80000003", "v_mov_b32_e32 v3, 1")
    run(state, "v_lshlrev_b64 v[4:5], 9, v[2:3]", "v_lshrrev_b64 v[6:7], 1, v[2:3]", "v_ashrrev_i64 v[8:9], 4, v[4:5]")
    value = (1 << 32) | 0x80000003
    shifted = (value << 9) & (2**64 - 1)
    assert (state.vgpr[4].values[0], state.vgpr[5].values[0]) == (shifted & 0xFFFFFFFF, shifted >> 32)
    assert (state.vgpr[6].values[0], state.vgpr[7].values[0]) == ((value >> 1) & 0xFFFFFFFF, value >> 33)
    assert (state.vgpr[8].values[0], state.vgpr[9].values[0]) == ((shifted >> 4) & 0xFFFFFFFF, shifted >> 36)
    assert state.vgpr[4].known.all() and state.vgpr[9].known.all()
    state.vgpr[3] = Lanes.unknown(64)
    run(state, "v_lshlrev_b64 v[4:5], 9, v[2:3]")
    assert not state.vgpr[5].known.any()


def test_vector_lanes_stay_affine_through_a_folded_counter():
    state = run(WaveState(64), "s_mov_b64 exec, -1")
    state.sgpr[12] = Affine(1, 12, symbol=1)
    run(state, "v_mov_b32_e32 v3, s12", "v_and_b32_e32 v4, 3, v3", "v_lshlrev_b32_e32 v5, 4, v3")
    assert state.vgpr[4].known.all() and (state.vgpr[4].values == np.full(64, 1)).all()
    assert not state.vgpr[5].known.any() and state.vgpr[5].affine.all() and (state.vgpr[5].step == 192).all()


def test_signed_division_by_a_magic_number_is_exact_on_a_folded_counter():
    # LLVM's signed k / 3 and k mod 3: mul_hi_i32 by 0x55555556, plus the sign bit (0 for k >= 0)
    assert affine.signed_magic_divisor(0x55555556) == (3, 0)
    assert affine.signed_magic_divisor(0x12345) is None
    state = WaveState(64)
    state.sgpr[16] = Affine(4, 12, symbol=1)
    run(state, "s_mul_hi_i32 s0, s16, 0x55555556", "s_lshr_b32 s1, s0, 31", "s_add_i32 s0, s0, s1",
        "s_mul_i32 s0, s0, 3", "s_sub_i32 s0, s16, s0")
    assert state.sgpr_value(0) == 1


def test_64_bit_vector_compares_of_known_scalars():
    state = WaveState(64)
    state.sgpr[126] = state.sgpr[127] = 0xFFFFFFFF  # a full wave
    run(state, "s_mov_b32 s20, 6", "s_mov_b32 s21, 0", "v_cmp_gt_i64_e64 s[30:31], s[20:21], 5",
        "s_mov_b32 s22, -1", "s_mov_b32 s23, -1", "v_cmp_gt_i64_e64 s[32:33], s[22:23], 5",
        "v_cmp_gt_u64_e64 s[34:35], s[22:23], 5")
    assert state.sgpr64(30) == 0xFFFFFFFFFFFFFFFF  # 6 > 5
    assert state.sgpr64(32) == 0  # -1 > 5 is false, signed
    assert state.sgpr64(34) == 0xFFFFFFFFFFFFFFFF  # 2**64 - 1 > 5, unsigned


def test_a_vector_compare_of_wave_uniform_values_is_a_uniform_condition():
    state = WaveState(64)
    state.sgpr[126] = state.sgpr[127] = 0xFFFFFFFF
    run(state, "v_mov_b32_e32 v10, s16", "v_cmp_lt_u32_e32 vcc, s12, v10")
    assert 106 not in state.nonuniform  # vcc: the same in every wave, as s16 and s12 are
    run(state, "v_cmp_lt_u32_e32 vcc, s12, v0")  # a lane id: differs between waves
    assert 106 in state.nonuniform
    run(state, "ds_read_b32 v10, v0", "v_cmp_lt_u32_e32 vcc, s12, v10")  # loaded data
    assert 106 in state.nonuniform


def test_a_read_of_unknown_address_after_vmcnt0_and_a_barrier_is_safe(asm_kernel, snippets):
    # no load of any wave can be in flight at the read: its address is not needed
    body = snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n\ts_quadmask_b32 s20, 0\n" \
        "\tv_add_u32_e32 v6, s20, v5\n\tds_read_b128 v[8:11], v6\n"
    report = lint_text(asm_kernel(body))
    assert report.findings == []


def test_the_paths_engine_never_passes_an_unresolved_read(asm_kernel, snippets):
    from pytest_gemmcheck.compiled.lint.analysis import Options
    from pytest_gemmcheck.compiled.lint.command import exit_status

    body = snippets["load_a"] + "\ts_barrier\n\ts_quadmask_b32 s20, 0\n\tv_add_u32_e32 v6, s20, v5\n\tds_read_b128 v[8:11], v6\n"
    report = lint_text(asm_kernel(body), options=Options(engine="paths"))
    assert [f.severity for f in report.findings] == ["unchecked"]
    assert exit_status([report]) == 3


def _guarded_gather(pages: int, load: str, drain: str) -> str:
    """``pages`` exec-mask diamonds, each loading a page into LDS in the lanes that have one and
    zero-filling it in the others (MLA decode's gather), then a barrier and a read of the next
    wave's slice."""
    body = "\tbuffer_load_dword v20, v0, s[4:7], 0 offen\n\ts_waitcnt vmcnt(0)\n\tv_cmp_ne_u32_e32 vcc, -1, v20\n"
    for page in range(pages):
        body += (f"\ts_and_saveexec_b64 s[2:3], vcc\n\ts_xor_b64 s[2:3], exec, s[2:3]\n\ts_cbranch_execz .LBB0_{2 * page}\n"
                 + load + f".LBB0_{2 * page}:\n\ts_andn2_saveexec_b64 s[2:3], s[2:3]\n"
                 f"\ts_cbranch_execz .LBB0_{2 * page + 1}\n\ts_waitcnt vmcnt(0)\n\tds_write_b32 v4, v21 offset:8192\n"
                 f".LBB0_{2 * page + 1}:\n\ts_or_b64 exec, exec, s[2:3]\n")
    return body + drain + "\ts_barrier\n\tds_read_b128 v[8:11], v5\n"


def test_a_guarded_gather_is_joined_at_its_branches_and_its_race_still_found(asm_kernel, snippets):
    # 12 diamonds: 4**12 paths, and as many queue shapes (which loads are left after the last
    # vmcnt(0)); past 192 states at a branch they are joined, queues included
    from pytest_gemmcheck.compiled.lint.analysis import Options

    racy = lint_text(asm_kernel(_guarded_gather(12, snippets["load_a"], "")), options=Options(time_limit=60))
    assert racy.unfinished == [] and [f.severity for f in racy.findings] == ["error"]
    assert racy.findings[0].instruction == "ds_read_b128 v[8:11], v5"
    fixed = lint_text(asm_kernel(_guarded_gather(12, snippets["load_a"], "\ts_waitcnt vmcnt(0)\n")),
                      options=Options(time_limit=60))
    assert fixed.unfinished == [] and fixed.findings == []


def test_a_vector_load_of_one_uniform_address_is_uniform_data():
    def loaded(*setup: str) -> WaveState:
        state = WaveState(64)
        state.sgpr[126] = state.sgpr[127] = 0xFFFFFFFF
        return run(state, *setup, "buffer_load_dwordx2 v[4:5], v1, s[4:7], 0 offen", "v_readfirstlane_b32 s33, v4")

    assert 33 not in loaded("s_mov_b32 s7, 0x27000", "v_mov_b32_e32 v1, s2").nonuniform  # the same bytes in every wave
    assert 33 in loaded("v_mov_b32_e32 v1, s2").nonuniform  # the resource's last word unknown (a scratch descriptor?)
    assert 33 in loaded("s_mov_b32 s7, 0x827000", "v_mov_b32_e32 v1, s2").nonuniform  # ADD_TID_ENABLE: per lane
    assert 33 in loaded("s_mov_b32 s7, 0x27000", "v_mov_b32_e32 v1, v0").nonuniform  # per-lane offsets


def test_a_kernel_without_dma_loads_or_ds_writes_has_nothing_to_pair(asm_kernel):
    # an unknown address and an unmodelled instruction do not matter where nothing can race
    unknown = "\ts_quadmask_b32 s20, 0\n\tv_add_u32_e32 v6, s20, v5\n"
    assert lint_text(asm_kernel(unknown + "\ts_barrier\n\tds_read_b128 v[8:11], v6\n")).findings == []
    # a DS write retired before the barrier: no other wave's write can pair with the read, whatever
    # the addresses; left in flight at the barrier, the pair is not decided: a note, not a pass
    written = unknown + "\tds_write_b128 v6, v[8:11]\n"
    read = "\ts_barrier\n\tds_read_b128 v[8:11], v6\n"
    assert lint_text(asm_kernel(written + "\ts_waitcnt lgkmcnt(0)\n" + read)).findings == []
    report = lint_text(asm_kernel(written + read))
    [note] = report.findings
    assert (note.severity, note.kind) == ("note", "ds-write-undecided") and "DS write" in note.why
    assert exit_status([report]) == 0
    wide = lint_text(asm_kernel("\ts_waitcnt vmcnt(64)\n\ts_barrier\n", arch="gfx942"))
    assert [f.severity for f in wide.findings] == ["unchecked"] and "at most 63" in wide.findings[0].why


def test_llvm_if_else_gives_exec_back():
    # exec & X, its complement, then their union: the mask as it was, known again (X unknown)
    state = run(WaveState(64), "s_mov_b64 exec, -1", "ds_read_b32 v20, v4", "v_cmp_ne_u32_e32 vcc, -1, v20",
                "s_and_saveexec_b64 s[2:3], vcc", "s_xor_b64 s[2:3], exec, s[2:3]")
    assert state.exec_mask is None
    run(state, "s_andn2_saveexec_b64 s[2:3], s[2:3]")
    assert state.exec_mask is None
    run(state, "s_or_b64 exec, exec, s[2:3]")
    assert state.exec_mask == 0xFFFFFFFFFFFFFFFF
    # a mask of another compare's result does not combine with this one's
    run(state, "v_cmp_ne_u32_e32 vcc, -1, v20", "s_and_saveexec_b64 s[2:3], vcc", "v_cmp_eq_u32_e32 vcc, 0, v20",
        "s_or_b64 exec, exec, vcc")
    assert state.exec_mask is None


def test_an_address_computed_under_a_bounds_checked_exec_is_known_in_its_lanes():
    # a row check and a column check and-ed into one exec (an epilogue's guarded store): which
    # lanes run is unknown, but a value computed in the region is what those lanes hold
    state = WaveState(64)
    state.vgpr[5] = Lanes(np.arange(64, dtype=np.int64) * 16, np.ones(64, dtype=bool))
    region = ("s_mov_b64 exec, -1", "v_cmp_gt_u32_e32 vcc, s16, v5", "v_cmp_gt_u32_e64 s[26:27], s17, v5",
              "s_and_b64 s[28:29], vcc, s[26:27]", "s_and_saveexec_b64 s[30:31], s[28:29]", "v_add_u32_e32 v7, 0x4000, v5")
    for index, line in enumerate(region):  # each compare's result is named by its instruction
        state.execute(parse_instruction(line, index=index))
    assert state.exec_mask is None
    assert state.read("v7").values.tolist() == [0x4000 + 16 * lane for lane in range(64)]
    # out of the region the lanes that did not run keep what they held: unknown here
    run(state, "s_or_b64 exec, exec, s[30:31]")
    assert state.exec_mask == 0xFFFFFFFFFFFFFFFF and not state.read("v7").known.any()


def test_a_uniform_branch_after_a_guarded_gather_is_taken_alike_by_every_wave(asm_kernel, snippets):
    # the gather leaves exec as it found it: a branch on a kernel argument after it is uniform.
    # Were it taken per wave, a wave reading after its wait and barrier would pair with another
    # wave's load still in flight at the same barrier on the other side
    uniform_tail = ("\ts_cmp_eq_u32 s16, 0\n\ts_cselect_b64 s[2:3], -1, 0\n\ts_and_b64 vcc, exec, s[2:3]\n"
                    "\ts_cbranch_vccz .LBB1_0\n" + snippets["load_b"] + "\ts_barrier\n\ts_waitcnt vmcnt(0)\n"
                    "\ts_branch .LBB1_1\n.LBB1_0:\n" + snippets["load_b"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n"
                    + snippets["read_next_b"] + ".LBB1_1:\n")
    body = ARGUMENT + _guarded_gather(2, snippets["load_a"], "\ts_waitcnt vmcnt(0)\n") + uniform_tail
    report = lint_text(asm_kernel(body))
    assert report.unfinished == [] and report.findings == []


def test_a_loop_whose_registers_alternate_is_folded_two_iterations_apart():
    from pytest_gemmcheck.compiled.lint.lattice import alternates, fold_registers
    from pytest_gemmcheck.compiled.lint.phase_states import PERIOD

    def iteration(counter: int, **sgprs: int) -> WaveState:
        state = WaveState(64)
        state.sgpr[13] = counter
        for name, value in sgprs.items():
            state.sgpr[int(name[1:])] = value
        return state

    # a two-stage ring that swaps its LDS bases (s7, s14) while its counter s13 grows by one
    ring = [iteration(k, s7=(8704, 46720)[k % 2], s14=(46720, 8704)[k % 2]) for k in (1, 2, 3)]
    assert alternates(ring[2], ring[0], ring[1])
    fold_registers(ring[2], ring[0], ring[1], symbol=1, period=2)
    assert ring[2].sgpr[13] == Affine(3, 2, symbol=1)
    # a stage computed from the counter alternates nothing: the period stays, k mod 3 exact
    counted = [iteration(k, s20=k % 3) for k in (1, 2, 3)]
    assert not alternates(counted[2], counted[0], counted[1])
    assert PERIOD % 3 == 0
    # and a register that changes otherwise (not back to its value two iterations before) neither
    assert not alternates(iteration(3, s7=5), iteration(1, s7=1), iteration(2, s7=2 ** 20))


def test_an_issue_count_is_forgotten_once_no_instance_can_pair():
    from pytest_gemmcheck.compiled.lint.phase_states import WaveAbs, relative_counts

    def wave(index: int, count: int, in_flight: bool) -> WaveAbs:
        return WaveAbs(index, 10, WaveState(64), vm={(5, ((0, 64),)): 0} if in_flight else {}, issued={5: count})

    # every wave issued load 5 three times and none is in flight: the next instance pairs alike
    # whatever the count, so states that differ only in it are one
    settled, shift = relative_counts([wave(0, 3, False), wave(1, 3, False)])
    assert [w.issued for w in settled] == [{}, {}] and shift == {5: 3}
    # one still in flight: "issued" stays told apart from "never"
    pending, shift = relative_counts([wave(0, 3, True), wave(1, 3, False)])
    assert [w.issued for w in pending] == [{5: 1}, {5: 1}] and shift == {5: 2}
    # waves at different counts keep the difference
    apart, _ = relative_counts([wave(0, 4, False), wave(1, 3, False)])
    assert [w.issued for w in apart] == [{5: 2}, {5: 1}]


def test_bit_0_of_a_counter_folded_two_iterations_apart_picks_the_stage():
    # MLA decode on gfx942 picks its ring stage's M0 with s_bitcmp0_b32 of the loop counter
    state = WaveState(64)
    state.sgpr[13], state.sgpr[58], state.sgpr[59] = Affine(3, 2, symbol=1), 44096, 82112
    run(state, "s_bitcmp0_b32 s13, 0", "s_cselect_b32 s5, s58, s59")
    assert state.sgpr_value(5) == 82112  # 3 + 2J is odd
    run(state, "s_bitcmp0_b32 s13, 1")
    assert state.scc is None  # bit 1 of 3 + 2J is not known


def test_the_paths_engine_stops_at_the_time_limit_unchecked(asm_kernel, snippets):
    from pytest_gemmcheck.compiled.lint.analysis import Options
    from pytest_gemmcheck.compiled.lint.command import exit_status

    report = lint_text(asm_kernel(snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"]),
                       options=Options(engine="paths", time_limit=0))
    assert report.unfinished == ["k"]
    assert [f.kind for f in report.findings] == ["unfinished"] and exit_status([report]) == 3


def test_selects_that_no_lds_address_depends_on_are_joined_not_decided(asm_kernel, snippets):
    # twenty uniform selects on an unknown SCC (an unsigned division's corrections) whose values
    # feed only a global offset: deciding each both ways would run the phase 2**20 times. Only a
    # select an LDS address is computed from, right after it, is decided
    corrections = "".join(f"\ts_cmp_lt_u32 s16, {k}\n\ts_cselect_b32 s17, 1, 2\n\ts_add_u32 s18, s18, s17\n"
                          for k in range(20))
    body = (ARGUMENT + "\ts_mov_b32 s18, 0\n" + corrections + "\tbuffer_load_dword v9, v4, s[4:7], s18 offen\n"
            + snippets["load_a"] + "\ts_waitcnt vmcnt(0)\n\ts_barrier\n" + snippets["read_next_a"])
    report = lint_text(asm_kernel(body))
    assert report.findings == [] and report.unfinished == []
    racy = lint_text(asm_kernel(body.replace("\ts_waitcnt vmcnt(0)\n\ts_barrier\n", "\ts_barrier\n")))
    assert [f.severity for f in racy.findings] == ["error"]
    assert not any(step.startswith("select line") for step in racy.findings[0].trace)


def test_a_select_inside_an_innermost_loop_is_joined(lint_corpus):
    # the pipelined loop's reads moved by a select on the tile against a kernel argument: a choice
    # per iteration would keep the loop from folding. Joined, the two offsets make the address
    # unknown, and with the next tile in flight the reads are unchecked, never a pass
    moved = "\ts_cmp_lt_u32 s12, s17\n\ts_cselect_b32 s26, 0, 0x40\n\tv_add_u32_e32 v6, s26, v6\n\tds_read_b128 v[8:11], v6\n"
    text = lint_corpus.pipelined_loop().replace("\tds_read_b128 v[8:11], v6\n", moved)
    report = lint_text(text)
    assert report.unfinished == [] and report.errors == []
    assert {f.kind for f in report.unchecked} == {"unresolved-address"}
    assert all(not step.startswith("select line") for f in report.findings for step in f.trace)


def test_the_same_report_whatever_the_hash_seed(write, example_asm):
    # sets of the analysis iterate in an order that depends on the process's string hashes: the
    # finding that stands for a group of pairs (the waves its text names) must not
    import os
    import subprocess
    import sys

    path = write("ring.s", example_asm["ring_loop_racy"])
    outputs = {
        subprocess.run([sys.executable, "-m", "pytest_gemmcheck.compiled.lint", "--format", "json", path],
                       env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, timeout=600).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outputs) == 1 and '"findings"' in next(iter(outputs))
