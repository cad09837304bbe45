"""A cache of tensors bounded by bytes, for a session's inputs and references."""

from __future__ import annotations

from collections import OrderedDict

import torch


def nbytes(value) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    return value.nbytes()


class LruCache:
    """Least-recently-used tensors (or Inputs), bounded by bytes: the device's memory belongs
    to the kernel under test, so cached references and inputs must not pile up."""

    def __init__(self, budget_bytes: int = 4 << 30):
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[tuple, tuple[object, int]] = OrderedDict()  # key -> (value, its bytes)
        # what the entries hold, kept as they come and go: summed over every entry at each new
        # one, a suite of 200 new shapes paid 0.5 ms a case for it by its hundredth
        self._bytes = 0

    def __contains__(self, key) -> bool:
        return key in self._entries

    def get(self, key: tuple, make):
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key][0]
        value = make()
        size = nbytes(value)
        if size <= self.budget_bytes:
            self._entries[key] = (value, size)
            self._bytes += size
            while self._bytes > self.budget_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped
        return value

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    def discard(self, wanted) -> None:
        """Drop the entries whose key ``wanted(key)`` accepts."""
        for key in [key for key in self._entries if wanted(key)]:
            self._bytes -= self._entries.pop(key)[1]
