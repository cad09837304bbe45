"""A session's cached inputs of one case, proved as they were made before each time they are
handed out.

``case.inputs()`` hands out the cached tensors themselves: the test's kernel, the launch loop's
guards and the reference all read the same tensors, so that what a launch does to them is seen
(guards.py). A test may change them all the same, before its launches or after them
(``x.a.zero_()``, ``x.a.mul_(0.5)``, ``x.a = ...``), and the next case of the same inputs, in
that test or a later one, would be given and judged against what it left. So each hand-out first
proves them unchanged, and puts them back as they were made when they are not: on the CPU by a
memcmp with a pristine copy kept beside them, on a GPU by their checksums (one read of each,
against those taken when they were made; the pristine bytes then come from making them again).
Once per ``case.inputs()``, never per launch.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Callable

import torch

from ..checking.checksum import word_view, words_checksum
from ..launch.guards import guard_kernel_sums, layout, same_bits
from .quant import Inputs


def input_checksums(tensors: list[torch.Tensor], fused: bool) -> list[int]:
    """checksum.words_checksum of each tensor: with the fused check by its guard kernel (one read
    of each, all in one launch), else by torch ops."""
    words = [word_view(t) for t in tensors]
    if not fused:
        return [words_checksum(w) for w in words]
    return guard_kernel_sums(words)


class KeptInputs:
    """One cache entry: the inputs as handed out, and what proves them as they were made."""

    def __init__(self, inputs: Inputs, checksums: Callable[[list[torch.Tensor]], list[int]] | None = None):
        """``checksums``: how their checksums are taken (a GPU's way: input_checksums); None: by
        pristine copies instead (the CPU's)."""
        self.inputs = inputs
        self._fields = {f.name: getattr(inputs, f.name) for f in fields(inputs)}  # x.a = ... is undone too
        self._tensors = {name: t for name, t in self._fields.items() if isinstance(t, torch.Tensor)}
        self._layouts = {name: layout(t) for name, t in self._tensors.items()}
        self._checksums = checksums
        self._pristine = {name: t.clone() for name, t in self._tensors.items()} if checksums is None else None
        self._sums = None if checksums is None else checksums(list(self._tensors.values()))

    @property
    def pristine(self) -> dict[str, torch.Tensor]:
        """The pristine copies by field name (the CPU's way; empty where checksums prove them):
        never written, so that the launch loop's guards may read them as their own."""
        return self._pristine or {}

    @property
    def checksums(self) -> dict[str, int]:
        """The checksums they were made with, by field name (a GPU's way; empty where pristine
        copies prove them)."""
        return dict(zip(self._tensors, self._sums)) if self._sums is not None else {}

    def nbytes(self) -> int:
        return self.inputs.nbytes() * (1 if self._pristine is None else 2)

    def _reshaped(self) -> bool:
        """Whether a tensor of theirs was changed in place past its bits (resize_, set_)."""
        return any(layout(t) != self._layouts[name] for name, t in self._tensors.items())

    def _rebound(self) -> bool:
        return any(
            getattr(self.inputs, name) is not value
            if isinstance(value, torch.Tensor)
            else getattr(self.inputs, name) != value
            for name, value in self._fields.items()
        )

    def _bits_changed(self) -> bool:
        if self._pristine is not None:
            return not all(same_bits(t, self._pristine[name]) for name, t in self._tensors.items())
        return self._checksums(list(self._tensors.values())) != self._sums

    def changed(self) -> bool:
        """Whether anything of theirs differs from what was made: a field rebound, a tensor
        reshaped in place, or its bits."""
        return self._rebound() or self._reshaped() or self._bits_changed()

    def restore(self, make: Callable[[], Inputs]) -> bool:
        """Put them back as they were made: their fields rebound, their bits copied back (from
        the pristine copies, or on a GPU from ``make()``'s inputs). False when a tensor was
        reshaped in place and cannot be put back: the entry is to be dropped and made again."""
        if self._reshaped():
            return False
        for name, value in self._fields.items():
            setattr(self.inputs, name, value)
        made = self._pristine if self._pristine is not None else {name: getattr(make(), name) for name in self._tensors}
        with torch.no_grad():
            for name, t in self._tensors.items():
                t.copy_(made[name])
        return True
