"""One collective ``case.run`` across its ranks (rank_group.py says who they are): the rendezvous
before each launch, each launch's output checksum where the collective gives every rank the same
bits (``all_reduce``), and at the end those checksums compared launch by launch, so that a rank
whose bits differ from the others' on launch i has ``ranks_disagree`` there.

Each rank has one rendezvous word: the run it is in (its collective runs counted, alike on every
rank), the launch it reached, and whether it stopped. Before launch i a rank posts i and, under
``--gemmcheck-collective-sync=launch``, waits until every other rank reached i in the same run:
launch i starts together everywhere, after launch i - 1 was read on every rank (on a GPU, after
it finished there). A rank that stopped before i (a launch raised or hung, its stopping rule was
met, it gave up waiting) stops the others there, so no rank waits in a collective for a rank that
will not come. ``free`` waits for no one and stops where a rank stopped before it. On one host the
words are shared memory, read without a system call; across hosts each rendezvous is a gloo
``all_gather`` of the words.

The disagreement of launch i: the ranks that checked an output of launch i are grouped by its
checksum; a checksum more than half of them have is the agreed one, else the one every rank whose
launch passed its own checks has (when they have one), else none; every rank off the agreed
checksum has ``ranks_disagree`` on launch i (with none agreed: every rank).
"""

from __future__ import annotations

import os
import time
import zlib
from collections import Counter
from typing import Callable

import torch

from ..records.result import HUNG, RANKS_DISAGREE, CaseResult
from .rank_group import Harness

RUN_SHIFT = 32
STOPPED = 1 << 31  # the word's rank stopped after the launch it names
_INDEX = STOPPED - 1
_SPINS = 200  # polls without a system call first: a rank already on its way arrives within microseconds
_SPIN_S = 1e-3  # then polls yielding the processor this long
_NAP_S = 5e-5  # then this often: ranks beyond the cores let the ones still launching run
_ALIVE_EVERY_S = 0.05  # how often a waiting rank looks for the processes of the ranks it waits for


# the processor to another process that can run (a rank we wait for, on a machine with fewer cores than ranks)
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def rendezvous_word(run: int, index: int, stopped: bool = False) -> int:
    return (run << RUN_SHIFT) | (STOPPED if stopped else 0) | index


def read_word(word: int) -> tuple[int, int, bool]:
    """(run, launch, stopped) of a rendezvous word."""
    return word >> RUN_SHIFT, word & _INDEX, bool(word & STOPPED)


def cpu_digest(out: torch.Tensor) -> int:
    """A CRC-32 of an output's bytes (7 GB/s on one core): two outputs that differ in any run of
    up to 32 bits always differ in it, any others but once in 2**32."""
    if out.requires_grad:
        out = out.detach()
    if not out.is_contiguous():
        out = out.contiguous()
    return zlib.crc32(out.view(torch.uint8).numpy())  # each torch op a few microseconds: as few as can be


def _why_stop(words: list[int], rank: int, run: int, index: int) -> tuple[str, list[int]]:
    """Against the others' words: why this rank stops before launch ``index`` ("" when it does
    not), and the ranks it still waits for."""
    waiting = []
    for other, word in enumerate(words):
        if other == rank:
            continue
        their_run, reached, stopped = read_word(word)
        if their_run > run or (their_run == run and reached >= index):
            continue
        if their_run == run and stopped:
            where = f"after launch {reached}" if reached else "before its first launch"
            return f"rank {other} stopped {where}", []
        waiting.append(other)
    return "", waiting


def _ranks(ranks: list[int]) -> str:
    return f"rank{'s' if len(ranks) > 1 else ''} {', '.join(str(rank) for rank in ranks)}"


class _SharedRendezvous:
    """The rendezvous over shared words (one host)."""

    def __init__(self, harness: Harness):
        self.words = harness.words
        self.rank = harness.rank
        self.world_size = harness.world_size
        self.timeout_s = harness.timeout_s
        self.others = [rank for rank in range(harness.world_size) if rank != harness.rank]

    def arrive(self, run: int, index: int, wait: bool) -> str:
        words = self.words
        reached = rendezvous_word(run, index)
        words.post(reached)
        # a rank is there when its word is this run's at this launch or later (stopped or not), or
        # a later run's; two comparisons a rank, the usual case without a list or a system call
        running_below, stopped_from = rendezvous_word(run, 0, stopped=True), rendezvous_word(run, index, stopped=True)
        polls = 0
        began = looked = 0.0
        while True:
            if all(
                reached <= (word := words.read(rank)) < running_below or word >= stopped_from for rank in self.others
            ):
                return ""
            why, waiting = _why_stop([words.read(rank) for rank in range(self.world_size)], self.rank, run, index)
            if why or not wait:
                return why
            polls += 1
            if polls <= _SPINS:
                continue
            now = time.monotonic()
            if not began:
                began = looked = now
            if now - looked > _ALIVE_EVERY_S:
                looked = now
                ended = [rank for rank in waiting if words.ended(rank)]
                if ended:
                    return f"the process of {_ranks(ended)} ended"
            if now - began > self.timeout_s:
                return f"{_ranks(waiting)} did not reach launch {index} within {self.timeout_s:g} s"
            if now - began < _SPIN_S:
                _yield()
            else:
                time.sleep(_NAP_S)

    def leave(self, run: int, last: int) -> None:
        self.words.post(rendezvous_word(run, last, stopped=True))


class _GroupRendezvous:
    """The rendezvous through the harness's gloo group (ranks on several hosts): an all_gather of
    the words at each one; leaving repeats it until every rank has stopped, so that every rank
    makes as many calls as the others."""

    def __init__(self, harness: Harness):
        self.group = harness.group
        self.rank = harness.rank
        self.world_size = harness.world_size
        self.broken = ""  # the exchange failed: no more of them

    def _exchange(self, word: int) -> list[int]:
        import torch.distributed as dist

        words = [torch.zeros(1, dtype=torch.int64) for _ in range(self.world_size)]
        dist.all_gather(words, torch.tensor([word], dtype=torch.int64), group=self.group)
        return [int(t) for t in words]

    def arrive(self, run: int, index: int, wait: bool) -> str:
        if not wait or self.broken:
            return self.broken
        try:
            words = self._exchange(rendezvous_word(run, index))
        except RuntimeError as exc:  # gloo's timeout, or a rank's process gone
            self.broken = f"the rendezvous before launch {index} failed: {str(exc).splitlines()[0]}"
            return self.broken
        return _why_stop(words, self.rank, run, index)[0]

    def leave(self, run: int, last: int) -> None:
        while not self.broken:
            try:
                words = self._exchange(rendezvous_word(run, last, stopped=True))
            except RuntimeError as exc:
                self.broken = str(exc).splitlines()[0]
                return
            if all(read_word(word)[0] == run and read_word(word)[2] for word in words):
                return


def disagreeing(everyone: list[dict[int, tuple[int, bool]]]) -> dict[int, set[int]]:
    """The ranks that disagree on each launch: ``everyone[rank]`` maps a launch to its output's
    checksum and whether the launch passed its own checks (see the module's words)."""
    flagged: dict[int, set[int]] = {}
    for index in sorted(set().union(*everyone)):
        present = {rank: seen[index] for rank, seen in enumerate(everyone) if index in seen}
        if len(present) < 2 or len({digest for digest, _ in present.values()}) == 1:
            continue
        digest, count = Counter(digest for digest, _ in present.values()).most_common(1)[0]
        agreed = digest if 2 * count > len(present) else None
        if agreed is None:
            clean = {digest for digest, passed in present.values() if passed}
            agreed = clean.pop() if len(clean) == 1 else None
        flagged[index] = {rank for rank, (digest, _) in present.items() if digest != agreed}
    return flagged


class RankSync:
    """A collective run's part on this rank. The launch loop calls :meth:`before_launch` before
    each launch (False: stop, ``stop_reason`` says why) and :meth:`launched` with each output;
    the case calls :meth:`finish` once the loop returned."""

    def __init__(
        self, harness: Harness, *, synchronised: bool, compare_bits: bool, checksum_of: Callable[[torch.Tensor], int]
    ):
        harness.runs += 1
        self.harness = harness
        self.run = harness.runs
        self.rank = harness.rank
        self.synchronised = synchronised
        self.compare_bits = compare_bits
        self.checksum_of = checksum_of  # a GPU output's checksum (the check backend's)
        self.rendezvous = _SharedRendezvous(harness) if harness.words is not None else _GroupRendezvous(harness)
        self.digests: dict[int, int] = {}
        self._pending: tuple[int, torch.Tensor] | None = None  # a GPU output's copy, summed once it is done
        self.launched_index = 0
        self.stop_reason = ""

    def before_launch(self, index: int) -> bool:
        self._take_pending()  # the launch before it was read: its copy is done too
        why = self.rendezvous.arrive(self.run, index, self.synchronised)
        if why:
            self.stop_reason = f"stopped before launch {index}: {why}"
            return False
        self.launched_index = index
        return True

    def launched(self, index: int, checked: torch.Tensor | None) -> None:
        """Launch ``index`` returned; ``checked`` is its output (None: it has none)."""
        if not self.compare_bits or checked is None:
            return
        if checked.device.type == "cpu":
            self.digests[index] = cpu_digest(checked)
        else:  # queued behind the launch, summed at the next rendezvous, when the loop has read it
            self._pending = (index, checked.detach().clone())

    def _take_pending(self) -> None:
        if self._pending is not None:
            index, copy = self._pending
            self._pending = None
            self.digests[index] = self.checksum_of(copy)

    def finish(self, result: CaseResult, *, gather: bool = False) -> list[CaseResult] | None:
        """After the loop: this rank stops at the rendezvous, and the ranks exchange in one call
        what they need (each a gloo collective: hundreds of microseconds, more on a busy machine):
        for all_reduce each launch's checksum, the launches that disagree marked; with ``gather``
        (ranks judged by rank 0) every rank's part, which is returned in rank order."""
        if not any(HUNG in launch.kinds for launch in result.launches[-1:]):  # a hung GPU is not read again
            self._take_pending()
        self._pending = None
        self.rendezvous.leave(self.run, self.launched_index)
        if self.stop_reason:
            result.stopped = self.stop_reason
        if not (self.compare_bits or gather):
            return None
        import torch.distributed as dist

        passed = {launch.index: not launch.kinds for launch in result.launches}
        mine = {index: (digest, passed.get(index, False)) for index, digest in self.digests.items()}
        everyone: list = [None] * self.harness.world_size
        try:  # the records themselves, pickled: CaseResult.to_dict (dataclasses.asdict) costs 0.3 ms a launch
            dist.all_gather_object(everyone, (mine, result if gather else None), group=self.harness.group)
        except RuntimeError as exc:  # a rank's process ended, or gloo's timeout
            self._note(result, f"the ranks' outputs could not be compared: {str(exc).splitlines()[0]}")
            return None
        parts = [result if rank == self.rank else part for rank, (_, part) in enumerate(everyone)]
        if self.compare_bits:
            flagged = disagreeing([digests for digests, _ in everyone])
            for rank, part in enumerate(parts):
                if part is not None:
                    self._mark(part, sorted(index for index, ranks in flagged.items() if rank in ranks))
        return parts if gather else None

    def abandon(self) -> None:
        """The run ended in an error of the harness's (not a launch's): this rank stops."""
        self._pending = None
        self.rendezvous.leave(self.run, self.launched_index)

    def _mark(self, part: CaseResult, disagreeing_launches: list[int]) -> None:
        """A rank's launches that disagree with the others, and a note that says so."""
        if not disagreeing_launches:
            return
        for launch in part.launches:
            if launch.index in disagreeing_launches:
                launch.add_kind(RANKS_DISAGREE)
        shown = ", ".join(str(index) for index in disagreeing_launches[:8])
        shown += ", ..." if len(disagreeing_launches) > 8 else ""
        self._note(
            part,
            f"its output's bits differ from the agreed ones of the other ranks on launch"
            f"{'es' if len(disagreeing_launches) > 1 else ''} {shown}",
        )

    @staticmethod
    def _note(result: CaseResult, text: str) -> None:
        result.consensus_note = "; ".join(note for note in (result.consensus_note, text) if note)
