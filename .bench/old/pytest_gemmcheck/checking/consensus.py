"""The consistency detector's memory: which launches gave the same bits, and which output the
launches agree on.

A deterministic kernel gives the same bits on every launch with the same inputs. Storing
every output would cost launches x output bytes, so outputs are grouped as they come: each
launch is compared bitwise with the few distinct outputs kept so far (one, when the kernel is
consistent) and joins the group it matches exactly; an output that matches none is kept while
there is room, else grouped by checksum. At the end the largest group is the consensus and
every launch outside it is reported with its count of differing elements. A bad *first*
launch therefore comes out as the one that differs, not as "11 launches differ".

Outputs can also be grouped by checksum from the start (:meth:`Consensus.observe_checksum`,
for the fused check, which computes checksums in its pass): then a launch reads no kept
copy, and kept copies are compared with each other only at the end, for the groups that
differ from the consensus; the counts come out the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .checksum import checksum
from .rule import DiffStats
from .torch_backend import compare


@dataclass
class Agreement:
    """How one launch relates to the consensus."""

    differing: DiffStats | None  # None: it differs, by a count unknown (its output was not kept)
    in_consensus: bool


class Consensus:
    def __init__(
        self,
        rowmax: torch.Tensor,
        tile: tuple[int, int] | None,
        max_copies: int = 4,
        *,
        checksum=checksum,
        compare=compare,
    ):
        self.checksum = checksum
        self.compare = compare
        self.rowmax = rowmax
        self.tile = tile
        self.max_copies = max_copies
        self.copies: list[torch.Tensor] = []
        self._group_of: dict[int, object] = {}  # launch -> copy index, or ("sum", checksum)
        self._first_launch: dict[object, int] = {}
        self._diff: dict[tuple[int, int], DiffStats] = {}  # (launch, copy) -> differences
        self._group_of_checksum: dict[int, object] = {}  # observe_checksum's groups

    def observe(self, launch: int, out: torch.Tensor, diffs: list[DiffStats]):
        """Record launch ``launch`` whose output ``out`` compared as ``diffs`` with ``self.copies``
        (in order, as check_launch returned them); its group (a kept copy's index, or its
        checksum's group)."""
        group: object = None
        for copy_index, diff in enumerate(diffs):
            self._diff[(launch, copy_index)] = diff
            if group is None and diff.differing.elements == 0:
                group = copy_index
        if group is None:
            group = self._keep(out)
            if group is None:
                group = ("sum", self.checksum(out))
        self._join(launch, group)
        return group

    def observe_copy(self, launch: int, copy_index: int) -> None:
        """Record launch ``launch`` whose output has the bits of kept copy ``copy_index`` (compared
        by the caller): its differences from the other copies are theirs, worked out at the end."""
        self._join(launch, copy_index)

    def _keep(self, out: torch.Tensor) -> int | None:
        """A new output kept while there is room: its copy's index, else None."""
        if len(self.copies) >= self.max_copies:
            return None
        self.copies.append(out.detach().clone())
        return len(self.copies) - 1

    def _join(self, launch: int, group) -> None:
        self._group_of[launch] = group
        self._first_launch.setdefault(group, launch)

    def observe_checksum(self, launch: int, out: torch.Tensor, total: int) -> None:
        """Record launch ``launch`` whose output ``out`` has checksum ``total``: it joins the
        group with that checksum; a new output is kept while there is room, and otherwise
        compared with the kept ones now, while ``out`` still holds it."""
        group = self._group_of_checksum.get(total)
        if group is None:
            group = self._keep(out)
            if group is None:
                group = ("sum", total)
                for copy_index, copy in enumerate(self.copies):
                    self._diff[(launch, copy_index)] = self.compare(out, copy, self.rowmax, self.tile)
            self._group_of_checksum[total] = group
        elif not isinstance(group, int):  # same bits as a launch already compared: same differences
            first = self._first_launch[group]
            for copy_index in range(len(self.copies)):
                self._diff[(launch, copy_index)] = self._diff[(first, copy_index)]
        self._join(launch, group)

    def reads_output(self, total: int | None) -> bool:
        """Whether :meth:`observe_checksum` of an output with checksum ``total`` reads the output
        (to keep it, or to compare it with the kept ones): only a checksum not seen before."""
        return total is not None and total not in self._group_of_checksum

    def observe_unkept(self, launch: int, total: int) -> None:
        """Record launch ``launch`` by its checksum alone (its output cannot be read any more):
        it joins the group of equal checksums; against a new one its differences are unknown."""
        group = self._group_of_checksum.setdefault(total, ("sum", total))
        self._join(launch, group)

    def outside_largest(self) -> set[int]:
        """The launches so far outside the largest group of equal outputs (the first seen among
        equals): those the consensus would blame if the launches ended now."""
        if not self._group_of:
            return set()
        sizes: dict[object, int] = {}
        for group in self._group_of.values():
            sizes[group] = sizes.get(group, 0) + 1
        largest = max(sizes, key=lambda g: (sizes[g], -self._first_launch[g]))
        return {launch for launch, group in self._group_of.items() if group != largest}

    def _consensus_group(self, accurate: set[int] = frozenset()):
        """The largest group of outputs that passed the accuracy check, if any did, else the
        largest group; among equals the one seen first. A majority of wrong or unwritten
        outputs never makes the right ones the inconsistent ones."""
        sizes: dict[object, int] = {}
        accurate_in: dict[object, int] = {}
        for launch, group in self._group_of.items():
            sizes[group] = sizes.get(group, 0) + 1
            accurate_in[group] = accurate_in.get(group, 0) + (launch in accurate)
        consensus = max(sizes, key=lambda g: (accurate_in[g] > 0, sizes[g], accurate_in[g], -self._first_launch[g]))
        return consensus, sizes

    def finish(self, accurate: set[int] = frozenset()) -> tuple[dict[int, Agreement], int, str]:
        """Per launch, its agreement with the consensus; the consensus group's size; a note
        for anything unusual (ties, a consensus output that was not kept). ``accurate`` holds
        the launches the accuracy detector passed, to break ties."""
        if not self._group_of:
            return {}, 0, ""
        consensus, sizes = self._consensus_group(accurate)
        note = ""
        tied = [g for g in sizes if sizes[g] == sizes[consensus]]
        if len(tied) > 1 and len(self._group_of) > 1:
            note = (
                f"no majority: {len(tied)} different outputs each from {sizes[consensus]} launches; "
                f"the consensus is taken as the one launch {self._first_launch[consensus]} gave"
            )
        agreements: dict[int, Agreement] = {}
        between_copies: dict[int, DiffStats] = {}
        for launch, group in self._group_of.items():
            if group == consensus:
                agreements[launch] = Agreement(None, True)
                continue
            differing = None
            if isinstance(consensus, int):
                differing = self._diff.get((launch, consensus))
                if differing is None and isinstance(group, int):
                    # launch came before the consensus output was kept: compare the kept copies
                    if group not in between_copies:
                        between_copies[group] = self.compare(
                            self.copies[group], self.copies[consensus], self.rowmax, self.tile
                        )
                    differing = between_copies[group]
            agreements[launch] = Agreement(differing, False)
        if not isinstance(consensus, int):
            extra = (
                "the consensus output appeared only after "
                f"{self.max_copies} other outputs and was not kept, so differing counts are unknown"
            )
            note = f"{note}; {extra}" if note else extra
        return agreements, sizes[consensus], note

    def consensus_copy(self, accurate: set[int] = frozenset()) -> torch.Tensor | None:
        """The kept output most launches agree with (None when it was not kept)."""
        if not self._group_of:
            return None
        consensus, _ = self._consensus_group(accurate)
        return self.copies[consensus] if isinstance(consensus, int) else None

    def kept_pair(self, launch: int, accurate: set[int] = frozenset()) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The output of ``launch`` and the consensus output, when both were kept and differ
        (what a map of where they differ needs); None otherwise."""
        group = self._group_of.get(launch)
        if group is None:
            return None
        consensus, _ = self._consensus_group(accurate)
        if isinstance(group, int) and isinstance(consensus, int) and group != consensus:
            return self.copies[group], self.copies[consensus]
        return None

    def release(self) -> None:
        self.copies.clear()
