"""The dataflow engine's lattice: how registers fold."""

from pytest_gemmcheck.compiled.lint.lattice import alternates, fold_registers
from pytest_gemmcheck.compiled.lint.phase_states import PERIOD
from pytest_gemmcheck.compiled.lint.semantics import WaveState
from pytest_gemmcheck.compiled.lint.values import Affine


def test_a_loop_whose_registers_alternate_is_folded_two_iterations_apart():
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
    assert not alternates(iteration(3, s7=5), iteration(1, s7=1), iteration(2, s7=2**20))
