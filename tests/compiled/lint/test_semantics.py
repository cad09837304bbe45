"""The register model's instruction semantics, one wave at a time: folded counters, scalar and
vector integer operations, lane swaps and moves, 64-bit operations, lane masks of compares, and
which values are the same in every wave."""

import numpy as np
import pytest

from pytest_gemmcheck.compiled.lint import affine
from pytest_gemmcheck.compiled.lint.asm import parse_instruction
from pytest_gemmcheck.compiled.lint.semantics import WaveState
from pytest_gemmcheck.compiled.lint.values import Affine, Lanes


def run(state: WaveState, *lines: str) -> WaveState:
    for line in lines:
        state.execute(parse_instruction(line))
    return state


def test_mod_3_of_a_folded_counter_is_exact_for_every_iteration():
    # k = 4 + 12 J for every natural J (a loop folded with period 12): k mod 3 == 1 whatever J is
    state = WaveState(64)
    state.sgpr[12] = Affine(4, 12, symbol=1)
    run(
        state,
        "s_mul_hi_u32 s21, s12, 0xaaaaaaab",
        "s_lshr_b32 s21, s21, 1",
        "s_mul_i32 s21, s21, 3",
        "s_sub_u32 s20, s12, s21",
        "s_lshl_b32 s22, s12, 2",
    )
    assert state.sgpr_value(20) == 1
    assert state.sgpr[22] == Affine(16, 48, symbol=1)  # still symbolic, not a guess
    run(state, "s_and_b32 s23, s12, 3", "s_and_b32 s24, s12, 7")
    assert state.sgpr_value(23) == 0 and state.sgpr_value(24) is None  # 12 J mod 8 depends on J


def test_scalar_instructions_compilers_emit_for_addresses():
    state = run(
        WaveState(64),
        "s_mov_b32 s20, 0",
        "s_bitset1_b32 s20, 12",
        "s_mov_b32 s21, 0xff",
        "s_bitset0_b32 s21, 0",
        "s_movk_i32 s22, 0x10",
        "s_addk_i32 s22, 0xfff0",
        "s_cmp_eq_u32 s22, 0",
        "s_cselect_b32 s23, s20, s21",
        "s_mul_hi_u32 s24, s21, 0x10000000",
    )
    assert [state.sgpr_value(i) for i in range(20, 25)] == [0x1000, 0xFE, 0, 0x1000, 0xF]


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


@pytest.mark.parametrize(
    "swap, first, second",
    [
        # rows 1 and 3 of the first with rows 0 and 2 of the second (16-lane rows)
        (
            "v_permlane16_swap_b32_e32 v1, v2",
            [*range(0, 16), *range(100, 116), *range(32, 48), *range(132, 148)],
            [*range(16, 32), *range(116, 132), *range(48, 64), *range(148, 164)],
        ),
        # lanes 32-63 of the first with lanes 0-31 of the second
        ("v_permlane32_swap_b32_e32 v1, v2", [*range(0, 32), *range(100, 132)], [*range(32, 64), *range(132, 164)]),
        ("v_swap_b32 v1, v2", list(range(100, 164)), list(range(64))),
    ],
)
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


@pytest.mark.parametrize(
    "move, low, high",
    [
        ("v_pk_mov_b32 v[4:5], v[2:3], v[2:3] op_sel:[0,1]", 0, 100),  # LLVM's 64-bit copy
        ("v_pk_mov_b32 v[4:5], v[2:3], v[6:7] op_sel:[1,0]", 100, 200),  # a window one dword along
        ("v_pk_mov_b32 v[2:3], v[2:3], v[6:7] op_sel:[1,0]", 100, 200),  # in place: sources read first
        ("v_pk_mov_b32 v[4:5], v[2:3], v[6:7]", 0, 200),
    ],
)
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
    run(
        state,
        "s_mul_hi_i32 s0, s16, 0x55555556",
        "s_lshr_b32 s1, s0, 31",
        "s_add_i32 s0, s0, s1",
        "s_mul_i32 s0, s0, 3",
        "s_sub_i32 s0, s16, s0",
    )
    assert state.sgpr_value(0) == 1


def test_64_bit_vector_compares_of_known_scalars():
    state = WaveState(64)
    state.sgpr[126] = state.sgpr[127] = 0xFFFFFFFF  # a full wave
    run(
        state,
        "s_mov_b32 s20, 6",
        "s_mov_b32 s21, 0",
        "v_cmp_gt_i64_e64 s[30:31], s[20:21], 5",
        "s_mov_b32 s22, -1",
        "s_mov_b32 s23, -1",
        "v_cmp_gt_i64_e64 s[32:33], s[22:23], 5",
        "v_cmp_gt_u64_e64 s[34:35], s[22:23], 5",
    )
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


def test_a_vector_load_of_one_uniform_address_is_uniform_data():
    def loaded(*setup: str) -> WaveState:
        state = WaveState(64)
        state.sgpr[126] = state.sgpr[127] = 0xFFFFFFFF
        return run(state, *setup, "buffer_load_dwordx2 v[4:5], v1, s[4:7], 0 offen", "v_readfirstlane_b32 s33, v4")

    assert 33 not in loaded("s_mov_b32 s7, 0x27000", "v_mov_b32_e32 v1, s2").nonuniform  # the same bytes in every wave
    assert 33 in loaded("v_mov_b32_e32 v1, s2").nonuniform  # the resource's last word unknown (a scratch descriptor?)
    assert 33 in loaded("s_mov_b32 s7, 0x827000", "v_mov_b32_e32 v1, s2").nonuniform  # ADD_TID_ENABLE: per lane
    assert 33 in loaded("s_mov_b32 s7, 0x27000", "v_mov_b32_e32 v1, v0").nonuniform  # per-lane offsets


def test_llvm_if_else_gives_exec_back():
    # exec & X, its complement, then their union: the mask as it was, known again (X unknown)
    state = run(
        WaveState(64),
        "s_mov_b64 exec, -1",
        "ds_read_b32 v20, v4",
        "v_cmp_ne_u32_e32 vcc, -1, v20",
        "s_and_saveexec_b64 s[2:3], vcc",
        "s_xor_b64 s[2:3], exec, s[2:3]",
    )
    assert state.exec_mask is None
    run(state, "s_andn2_saveexec_b64 s[2:3], s[2:3]")
    assert state.exec_mask is None
    run(state, "s_or_b64 exec, exec, s[2:3]")
    assert state.exec_mask == 0xFFFFFFFFFFFFFFFF
    # a mask of another compare's result does not combine with this one's
    run(
        state,
        "v_cmp_ne_u32_e32 vcc, -1, v20",
        "s_and_saveexec_b64 s[2:3], vcc",
        "v_cmp_eq_u32_e32 vcc, 0, v20",
        "s_or_b64 exec, exec, vcc",
    )
    assert state.exec_mask is None


def test_an_address_computed_under_a_bounds_checked_exec_is_known_in_its_lanes():
    # a row check and a column check and-ed into one exec (an epilogue's guarded store): which
    # lanes run is unknown, but a value computed in the region is what those lanes hold
    state = WaveState(64)
    state.vgpr[5] = Lanes(np.arange(64, dtype=np.int64) * 16, np.ones(64, dtype=bool))
    region = (
        "s_mov_b64 exec, -1",
        "v_cmp_gt_u32_e32 vcc, s16, v5",
        "v_cmp_gt_u32_e64 s[26:27], s17, v5",
        "s_and_b64 s[28:29], vcc, s[26:27]",
        "s_and_saveexec_b64 s[30:31], s[28:29]",
        "v_add_u32_e32 v7, 0x4000, v5",
    )
    for index, line in enumerate(region):  # each compare's result is named by its instruction
        state.execute(parse_instruction(line, index=index))
    assert state.exec_mask is None
    assert state.read("v7").values.tolist() == [0x4000 + 16 * lane for lane in range(64)]
    # out of the region the lanes that did not run keep what they held: unknown here
    run(state, "s_or_b64 exec, exec, s[30:31]")
    assert state.exec_mask == 0xFFFFFFFFFFFFFFFF and not state.read("v7").known.any()


def test_bit_0_of_a_counter_folded_two_iterations_apart_picks_the_stage():
    # MLA decode on gfx942 picks its ring stage's M0 with s_bitcmp0_b32 of the loop counter
    state = WaveState(64)
    state.sgpr[13], state.sgpr[58], state.sgpr[59] = Affine(3, 2, symbol=1), 44096, 82112
    run(state, "s_bitcmp0_b32 s13, 0", "s_cselect_b32 s5, s58, s59")
    assert state.sgpr_value(5) == 82112  # 3 + 2J is odd
    run(state, "s_bitcmp0_b32 s13, 1")
    assert state.scc is None  # bit 1 of 3 + 2J is not known
