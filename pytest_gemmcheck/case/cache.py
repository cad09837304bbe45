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
        self._entries: OrderedDict[tuple, object] = OrderedDict()

    def get(self, key: tuple, make):
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key]
        value = make()
        if nbytes(value) <= self.budget_bytes:
            self._entries[key] = value
            while sum(nbytes(v) for v in self._entries.values()) > self.budget_bytes:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        self._entries.clear()

    def discard(self, wanted) -> None:
        """Drop the entries whose key ``wanted(key)`` accepts."""
        for key in [key for key in self._entries if wanted(key)]:
            del self._entries[key]
