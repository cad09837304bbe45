"""The dataflow engine's abstract states: issue counts kept relative."""

from pytest_gemmcheck.compiled.lint.phase_states import WaveAbs, relative_counts
from pytest_gemmcheck.compiled.lint.semantics import WaveState


def test_an_issue_count_is_forgotten_once_no_instance_can_pair():
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
