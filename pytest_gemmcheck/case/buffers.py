"""The output buffers a case's launches write, and their poison. Two buffers are used in turn, so
that a launch's check can finish while the next launch fills the other one (see
checking/backends.py); one when the device has no room for a second."""

from __future__ import annotations

import torch

from .guards import GuardedBuffer


class OutputBuffers:
    def __init__(self, m: int, n: int, dtype: torch.dtype, device: torch.device):
        self._shape = (m, n, dtype, device)
        self.buffers = [GuardedBuffer(m, n, dtype, device)]
        # the buffer a repeat pass already poisoned for the next launch
        self.poisoned_ahead: GuardedBuffer | None = None
        # storage of outputs a kernel returned, poisoned after their check: returning one again
        # unwritten then shows
        self.poisoned_returns: set[int] = set()

    @property
    def first(self) -> GuardedBuffer:
        return self.buffers[0]

    @property
    def single(self) -> bool:
        return len(self.buffers) == 1

    def for_launch(self, index: int) -> GuardedBuffer:
        """The buffer launch ``index`` (1-based) writes; the second is made at launch 2, if it fits."""
        if index == 2 and self.single:
            spare = self.spare()
            if spare is not None:
                self.buffers.append(spare)
        return self.buffers[(index - 1) % len(self.buffers)]

    def spare(self) -> GuardedBuffer | None:
        """The second buffer, or None when the device has no room for it (launches then take turns
        with their checks in one buffer: slower, the same results)."""
        try:
            return GuardedBuffer(*self._shape)
        except torch.OutOfMemoryError:
            return None

    def following(self, index: int) -> GuardedBuffer:
        """The buffer the launch after ``index`` will write."""
        return self.buffers[index % len(self.buffers)]

    def poison(self, buffer: GuardedBuffer) -> None:
        """NaN into the buffer before its launch, unless a repeat pass already wrote it."""
        if self.poisoned_ahead is not buffer:
            buffer.tensor.fill_(float("nan"))
        self.poisoned_ahead = None

    def poison_returned(self, returned: torch.Tensor) -> None:
        """A kernel's own output, after its check."""
        returned.fill_(float("nan"))
        self.poisoned_returns.add(returned.data_ptr())

    def was_poisoned(self, returned: torch.Tensor) -> bool:
        return returned.data_ptr() in self.poisoned_returns
