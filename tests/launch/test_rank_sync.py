"""The pieces of a collective run across ranks that need no second process: the rendezvous words,
when a rank stops or waits, which ranks disagree on a launch, and the CPU output digest."""

import threading
import time
from types import SimpleNamespace

import pytest
import torch

from pytest_gemmcheck.launch.rank_sync import (
    STOPPED,
    _SharedRendezvous,
    _why_stop,
    cpu_digest,
    disagreeing,
    read_word,
    rendezvous_word,
)


def test_a_word_holds_its_run_launch_and_whether_its_rank_stopped():
    for run, index, stopped in ((1, 1, False), (7, 1_000_000, True), (2**30, STOPPED - 1, False)):
        assert read_word(rendezvous_word(run, index, stopped)) == (run, index, stopped)
    assert rendezvous_word(2, 1) > rendezvous_word(1, 99, stopped=True)  # a later run is a larger word


def test_a_rank_waits_for_ranks_behind_it_and_stops_where_one_stopped_before_it():
    words = [rendezvous_word(3, 5), rendezvous_word(3, 4), rendezvous_word(2, 12, stopped=True)]
    assert _why_stop(words, 0, 3, 5) == ("", [1, 2])  # rank 1 is at launch 4; rank 2 in the run before
    words[1] = rendezvous_word(3, 5)
    words[2] = rendezvous_word(3, 5, stopped=True)  # reached launch 5 and stops after it: launch 5 goes on
    assert _why_stop(words, 0, 3, 5) == ("", [])
    assert _why_stop(words, 0, 3, 6) == ("rank 2 stopped after launch 5", [])
    words[2] = rendezvous_word(3, 0, stopped=True)
    assert _why_stop(words, 0, 3, 1) == ("rank 2 stopped before its first launch", [])


class _Words:
    """Shared words in one process: a list, and which ranks' processes ended."""

    def __init__(self, world_size):
        self.values = [0] * world_size
        self.gone = set()

    def read(self, rank):
        return self.values[rank]

    def ended(self, rank):
        return rank in self.gone


def _rendezvous(words, rank, world_size=2, timeout_s=30.0):
    view = SimpleNamespace(post=lambda word: words.values.__setitem__(rank, word), read=words.read, ended=words.ended)
    return _SharedRendezvous(SimpleNamespace(words=view, rank=rank, world_size=world_size, timeout_s=timeout_s))


def test_ranks_start_each_launch_together():
    words = _Words(2)
    first, second = _rendezvous(words, 0), _rendezvous(words, 1)
    reasons = []
    waiter = threading.Thread(target=lambda: reasons.append(first.arrive(1, 1, wait=True)))
    waiter.start()
    time.sleep(0.05)
    assert waiter.is_alive()  # rank 1 has not arrived
    assert second.arrive(1, 1, wait=True) == ""
    waiter.join(10)
    assert reasons == [""]


def test_a_rank_that_stopped_stops_the_others_and_a_free_rank_does_not_wait():
    words = _Words(2)
    first, second = _rendezvous(words, 0), _rendezvous(words, 1)
    assert first.arrive(1, 1, wait=False) == ""  # free-running: rank 1 not there yet, no wait
    second.leave(1, 0)
    assert first.arrive(1, 2, wait=True) == "rank 1 stopped before its first launch"


def test_a_rank_gives_up_on_a_rank_that_never_comes_or_whose_process_ended():
    words = _Words(3)
    assert (
        _rendezvous(words, 0, 3, timeout_s=0.2).arrive(1, 1, wait=True)
        == "ranks 1, 2 did not reach launch 1 within 0.2 s"
    )
    words.gone.add(2)
    assert _rendezvous(words, 0, 3).arrive(1, 1, wait=True) == "the process of rank 2 ended"


@pytest.mark.parametrize(
    "seen,expected",
    [
        ([{1: (5, True)}, {1: (5, True)}], {}),  # every rank has the same bits
        ([{1: (5, True)}, {1: (5, True)}, {1: (5, True)}, {1: (6, True)}], {1: {3}}),  # the majority's
        ([{1: (5, True)}, {1: (6, False)}], {1: {1}}),  # two ranks: the one whose launch passed its checks
        ([{1: (5, True)}, {1: (6, True)}], {1: {0, 1}}),  # two ranks, both passed: no way to tell, both
        ([{1: (5, True)}, {1: (5, True)}, {1: (6, True)}, {1: (6, True)}], {1: {0, 1, 2, 3}}),  # 2 against 2
        ([{1: (5, True), 2: (5, True)}, {1: (6, True)}, {2: (5, True)}], {1: {0, 1}}),  # launch 2: rank 1 has none
    ],
)
def test_the_ranks_that_disagree_on_a_launch(seen, expected):
    assert disagreeing(seen) == expected


def test_the_cpu_digest_changes_with_any_bit():
    out = torch.randn(64, 48).to(torch.bfloat16)
    same = out.clone()
    assert cpu_digest(out) == cpu_digest(same)
    flipped = same.view(torch.int16)
    flipped[17, 5] ^= 1  # the lowest bit of one element
    assert cpu_digest(out) != cpu_digest(same)
    assert cpu_digest(out.t()) == cpu_digest(out.t().contiguous())  # a transposed view: its values
