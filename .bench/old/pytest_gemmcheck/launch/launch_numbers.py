"""A launch's finished check onto its record (loop.py reads the launches and decides which
outputs are checked in full): its accuracy, its output to the consistency detector, the worst
launch's wrong elements and the most differing launch's elements mapped over the output's
tiles, and the numbers kept for later outputs with the same bits."""

from __future__ import annotations

from typing import Callable

import torch

from ..checking.backends import Checker, Outcome
from ..checking.consensus import Consensus
from ..checking.rule import AccuracyStats
from ..checking.torch_backend import differing_tile_map, wrong_tile_map
from ..records.result import CaseResult, LaunchRecord
from . import launch_records
from .guards import same_bits

VERIFIED_KEPT = 256  # distinct outputs checked in full whose numbers are kept per reference and way of judging


class KnownOutputs:
    """The torch check's outputs checked in full, kept for comparing later outputs bit for bit:
    an output equal to one of them has its numbers (and its consistency group)."""

    def __init__(self, limit: int = 4):
        self.limit = limit
        self.entries: list[tuple[torch.Tensor, AccuracyStats, int | None]] = []  # (bits, accuracy, group)

    def find(self, out: torch.Tensor):
        for kept, accuracy, group in self.entries:
            if same_bits(out, kept):
                return accuracy, group
        return None

    def add(self, out: torch.Tensor, accuracy: AccuracyStats, group: int | None, kept: torch.Tensor | None) -> None:
        if len(self.entries) < self.limit:
            self.entries.append((kept if kept is not None else out.detach().clone(), accuracy, group))


class LaunchNumbers:
    """What a run's checks found, launch by launch, onto ``result``."""

    def __init__(
        self,
        case,
        result: CaseResult,
        protected,
        checker: Checker,
        consensus: Consensus | None,
        *,
        by_checksum_pass: bool,
        repeat_check: str,
        settle: Callable[[], None],
        spoiled: Callable[[LaunchRecord, int, str], None],
    ):
        self.case = case
        self.result = result
        self.ref = protected.tensor
        self.rowmax = protected.rowmax()
        self.checker = checker
        self.consensus = consensus
        self.by_checksum_pass = by_checksum_pass
        self.settle = settle  # waits for every queued launch, each under its deadline
        self.spoiled = spoiled  # a later launch wrote into this launch's output: the loop blames it
        self.mapped_wrong = 0  # wrong elements of the launch whose tile map the result holds
        # checksum -> accuracy of the outputs checked in full (by this run or an earlier one of
        # the case), for later launches with those bits
        self.verified: dict[int, AccuracyStats] = protected.verified(checker.name, case.tolerance, case.tile)
        self.known = KnownOutputs() if not checker.by_checksum and repeat_check == "checksum" else None

    def finish(self, record: LaunchRecord, checked, outcome: Outcome) -> None:
        """A launch's finished check onto its record; its output to the consistency detector;
        the worst launch's wrong elements mapped over the output's tiles (its output is still
        in its buffer)."""
        launch_records.fill_accuracy(record, outcome.accuracy, checked)
        if (
            self.by_checksum_pass
            and outcome.checksum is not None
            and outcome.checksum not in self.verified
            and len(self.verified) < VERIFIED_KEPT
        ):
            self.verified[outcome.checksum] = outcome.accuracy.copy()
        uses_output = (record.wrong > self.mapped_wrong and self.case.tile is not None) or (
            self.consensus is not None and self.checker.by_checksum and self.consensus.reads_output(outcome.checksum)
        )
        if uses_output:
            self.settle()  # reading the output now waits for the launches in flight: each under its deadline
        if uses_output and not self._still_as_checked(record, checked, outcome):
            return
        self.map_tiles(record, checked)
        group = None
        if self.consensus is not None:
            if self.checker.by_checksum:
                self.consensus.observe_checksum(record.index, checked, outcome.checksum)
            else:
                group = self.consensus.observe(record.index, checked, outcome.diffs)
        if self.known is not None:
            kept = self.consensus.copies[group] if isinstance(group, int) else None
            if self.consensus is None or kept is not None:
                self.known.add(checked, outcome.accuracy, group, kept)

    def map_tiles(self, record: LaunchRecord, checked) -> None:
        if record.wrong > self.mapped_wrong and self.case.tile is not None:
            self.mapped_wrong = record.wrong
            self.result.worst_tiles = {
                "launch": record.index,
                "wrong": record.wrong,
                **wrong_tile_map(checked, self.ref, self.rowmax, self.case.tolerance, self.case.tile),
            }

    def fill_consistency(self, wants_consensus_checksum: bool) -> None:
        """Every launch against the consensus, once the launches are done; the consensus output's
        checksum when a parent compares it across processes."""
        result, consensus = self.result, self.consensus
        accurate = self._accurate()
        launch_records.fill_consistency(result, *consensus.finish(accurate))
        if self.case.tile is not None:
            self._map_differing(accurate)
        if wants_consensus_checksum:
            kept = consensus.consensus_copy(accurate)
            result.consensus_checksum = self.checker.checksum(kept) if kept is not None else None

    def _map_differing(self, accurate: set[int]) -> None:
        """The most differing launch's elements off the consensus, per tile, beside the wrong
        elements' map (``worst_tiles["differing"]``): where a race too small for the tolerance
        wrote. Only when both outputs were kept (a consensus keeps a few distinct ones)."""
        differing = [launch for launch in self.result.launches if launch.differing]
        if not differing:
            return
        top = max(differing, key=lambda launch: launch.differing)
        pair = self.consensus.kept_pair(top.index, accurate)
        if pair is not None:
            self.result.worst_tiles = {
                **self.result.worst_tiles,
                "differing": {
                    "launch": top.index,
                    "elements": top.differing,
                    **differing_tile_map(*pair, self.case.tile),
                },
            }

    def _still_as_checked(self, record: LaunchRecord, checked, outcome: Outcome) -> bool:
        """Whether ``checked`` holds what its check read, now that later launches have run; if not,
        one wrote into it (another output buffer): the launch after it is blamed, and this output
        is used no further (its consistency is then judged by its checksum alone)."""
        if outcome.checksum is None or self.checker.checksum(checked) == outcome.checksum:
            return True
        self.spoiled(record, outcome.checksum, "until its check was finished")
        return False

    def _accurate(self) -> set[int]:
        """Launches with no failure so far (before consistency is judged: accuracy only)."""
        return {launch.index for launch in self.result.launches if not launch.kinds}
