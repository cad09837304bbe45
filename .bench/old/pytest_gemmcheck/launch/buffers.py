"""The output buffers a case's launches write, and their poison: a ring, so that launches can be
queued ahead of their checks (a launch's output stays in its buffer until its results are read;
see loop.py). Two buffers at least where they fit, so that a launch's check can finish while
the next launch fills the other one (see checking/backends.py); one when the device has no room
for a second."""

from __future__ import annotations

import torch

from .guards import GuardedBuffer


class OutputBuffers:
    def __init__(self, m: int, n: int, dtype: torch.dtype, device: torch.device, size: int = 2):
        self._shape = (m, n, dtype, device)
        self.buffers = [GuardedBuffer(m, n, dtype, device)]
        while len(self.buffers) < size:
            spare = self.spare()
            if spare is None:
                break
            self.buffers.append(spare)
        # buffers a pass already poisoned for their next launch (by id)
        self.poisoned_ahead: set[int] = set()
        # storage of outputs a kernel returned, poisoned after their check: returning one again
        # unwritten then shows
        self.poisoned_returns: set[int] = set()

    @property
    def first(self) -> GuardedBuffer:
        return self.buffers[0]

    @property
    def single(self) -> bool:
        return len(self.buffers) == 1

    def __len__(self) -> int:
        return len(self.buffers)

    def spare(self) -> GuardedBuffer | None:
        """One more buffer, or None when the device has no room for it (launches then take turns
        with their checks in fewer buffers: slower, the same results)."""
        try:
            return GuardedBuffer(*self._shape)
        except torch.OutOfMemoryError:
            return None

    def position(self, index: int) -> int:
        """The ring position launch ``index`` (1-based) writes."""
        return (index - 1) % len(self.buffers)

    def for_launch(self, index: int) -> GuardedBuffer:
        return self.buffers[self.position(index)]

    def following(self, index: int) -> GuardedBuffer:
        """The buffer the launch after ``index`` will write."""
        return self.buffers[index % len(self.buffers)]

    def poison(self, buffer: GuardedBuffer) -> None:
        """NaN into the buffer before its launch, unless a pass already wrote it."""
        if id(buffer) in self.poisoned_ahead:
            self.poisoned_ahead.discard(id(buffer))
        else:
            buffer.tensor.fill_(float("nan"))

    def poison_returned(self, returned: torch.Tensor) -> None:
        """A kernel's own output, after its check."""
        returned.fill_(float("nan"))
        self.poisoned_returns.add(returned.data_ptr())

    def was_poisoned(self, returned: torch.Tensor) -> bool:
        return returned.data_ptr() in self.poisoned_returns
