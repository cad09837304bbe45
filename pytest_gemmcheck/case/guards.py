"""What a launch may not touch, watched on every launch: its inputs, and the memory around its
output.

* **Inputs.** A kernel that writes into its operands or scales would poison every later launch
  and test that shares them (a session caches inputs). A pristine copy of each is taken before
  the first launch; after every launch each live tensor is compared with it bit for bit on its
  device, and one that changed is counted by rows, blamed on that launch and restored before
  the next one, so that later launches run on the inputs the reference was made from.
* **Guard regions.** Each output buffer is the middle of one allocation with ``GUARD_ELEMENTS``
  of a canary bit pattern before and after it. A launch that writes past either end of ``out``
  changes the canary first: it is counted ("wrote 12 elements past the end of out"), blamed on
  that launch, and the canary is laid again. (Writes beyond the guards reach memory no check can
  see; those usually fault.)

Both are queued on the current stream right after the launch's check, as a handful of counts
in one small device tensor copied to pinned host memory; the host reads them after the
launch's synchronisation, which already waited for them: no synchronisation of their own. The
slow paths (counting rows, restoring) run only when something changed.
"""

from __future__ import annotations

import torch

from ..checking.torch_backend import bits_view
from .quant import Inputs

# Before and after each output buffer: 4096 elements, a multiple of 256 bytes for every output
# dtype, so that ``out`` keeps the allocation's alignment (the fused check loads 16-byte vectors).
GUARD_ELEMENTS = 4096
# A NaN with a payload no kernel writes by accident; any change of its bits counts.
_CANARY = {torch.bfloat16: 0x7FA5, torch.float16: 0x7E5A, torch.float32: 0x7FC0A5A5}
INPUT_NAMES = ("a", "b", "a_scale", "b_scale")


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


class GuardedBuffer:
    """An output tensor handed to launches, between two guard regions of one allocation, and
    what it was when made: a launch that replaces or reshapes it is caught on every later use."""

    def __init__(self, m: int, n: int, dtype: torch.dtype, device: torch.device):
        self.block = torch.empty(2 * GUARD_ELEMENTS + m * n, dtype=dtype, device=device)
        self.tensor = self.block[GUARD_ELEMENTS:GUARD_ELEMENTS + m * n].view(m, n)
        self.identity = layout(self.tensor)
        self._before = bits_view(self.block[:GUARD_ELEMENTS])
        self._after = bits_view(self.block[GUARD_ELEMENTS + m * n:])
        self._canary = _signed(_CANARY[dtype], 8 * self.block.element_size())
        self.lay()

    def lay(self) -> None:
        """The canary into both guard regions."""
        self._before.fill_(self._canary)
        self._after.fill_(self._canary)

    def queue_count(self, counts: torch.Tensor, slot: int) -> None:
        """Into ``counts[slot]`` and ``counts[slot + 1]``: elements changed before and after ``out``."""
        counts[slot].copy_(torch.count_nonzero(self._before != self._canary))
        counts[slot + 1].copy_(torch.count_nonzero(self._after != self._canary))


def layout(t: torch.Tensor) -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


class InputGuard:
    """The inputs of a case as they were before its first launch, and the comparison of the
    live tensors with them after each launch."""

    def __init__(self, inputs: Inputs):
        self.live = {name: getattr(inputs, name) for name in INPUT_NAMES
                     if isinstance(getattr(inputs, name, None), torch.Tensor)}
        self.pristine = {name: tensor.detach().clone() for name, tensor in self.live.items()}

    def __len__(self) -> int:
        return len(self.live)

    def queue_count(self, counts: torch.Tensor, slot: int) -> None:
        """Into ``counts[slot + i]``: whether the i-th input differs from its pristine copy."""
        for offset, (name, tensor) in enumerate(self.live.items()):
            counts[slot + offset].copy_(torch.any(bits_view(tensor) != bits_view(self.pristine[name])))

    def names(self) -> list[str]:
        return list(self.live)

    def changed_rows(self, name: str) -> int:
        """Rows (elements, for a tensor of one dimension or none) of input ``name`` that differ."""
        differ = bits_view(self.live[name]) != bits_view(self.pristine[name])
        if differ.dim() >= 2:
            return int(differ.reshape(differ.shape[0], -1).any(dim=1).sum())
        return int(differ.sum())

    def restore(self, name: str) -> None:
        self.live[name].copy_(self.pristine[name])

    def release(self) -> None:
        self.pristine.clear()


class LaunchWatch:
    """One launch's guard counts: queued after the launch, read after its synchronisation."""

    def __init__(self, inputs: InputGuard | None, device: torch.device):
        self.inputs = inputs
        self.size = 2 + (len(inputs) if inputs is not None else 0)
        self.counts = torch.zeros(self.size, dtype=torch.int64, device=device)
        self.host = (torch.zeros(self.size, dtype=torch.int64, pin_memory=True) if device.type == "cuda"
                     else self.counts)

    def queue(self, buffer: GuardedBuffer) -> None:
        buffer.queue_count(self.counts, 0)
        if self.inputs is not None:
            self.inputs.queue_count(self.counts, 2)
        if self.host is not self.counts:
            self.host.copy_(self.counts, non_blocking=True)

    def read(self) -> tuple[int, int, list[str]]:
        """(elements written before out, after out, the inputs that changed); after the launch's
        synchronisation, which waited for the queued counts too."""
        values = self.host.tolist()
        changed = [name for name, flag in zip(self.inputs.names(), values[2:]) if flag] if self.inputs else []
        return values[0], values[1], changed
