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
launch's synchronisation, which already waited for them: no synchronisation of their own. On
a GPU that work is one CUDA graph per output buffer, captured at its second use and replayed
after every launch into it, so that the host launches one graph rather than a dozen torch ops
(what a harness's ratio to the bare launches is made of). Inputs are compared exactly, as 64-bit
words where their size allows, reading each input and its copy once (with the fused check, one
Triton kernel for all of it: checking/triton/guard_pass.py). The slow paths (counting rows, restoring)
run only when something changed.
"""

from __future__ import annotations

import torch

from ..checking.graphs import GraphAtSecondUse
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
        self.after_offset = GUARD_ELEMENTS + m * n  # where the region after out begins
        self.bits = bits_view(self.block)
        # both guard regions as the two rows of one view: one op lays or counts them
        self._guards = self.bits.as_strided((2, GUARD_ELEMENTS), (self.after_offset, 1))
        self.canary = _signed(_CANARY[dtype], 8 * self.block.element_size())
        self.lay()

    def lay(self) -> None:
        """The canary into both guard regions."""
        self._guards.fill_(self.canary)

    def queue_count(self, counts: torch.Tensor) -> None:
        """Into ``counts[0]`` and ``counts[1]`` (int32): elements changed before and after ``out``."""
        torch.sum(self._guards != self.canary, dim=1, dtype=torch.int32, out=counts[:2])


def layout(t: torch.Tensor) -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


class InputGuard:
    """The inputs of a case as they were before its first launch, and the comparison of the
    live tensors with them after each launch."""

    def __init__(self, inputs: Inputs):
        self.live = {name: getattr(inputs, name) for name in INPUT_NAMES
                     if isinstance(getattr(inputs, name, None), torch.Tensor)}
        self.pristine = {name: tensor.detach().clone() for name, tensor in self.live.items()}
        # (live, pristine) flat views, compared after every launch
        self.pairs = [(_words(self.live[name]), _words(self.pristine[name])) for name in self.live]

    def __len__(self) -> int:
        return len(self.live)

    def queue_count(self, changed: torch.Tensor) -> None:
        """Into ``changed[i]`` (int32): 1 where the i-th input differs from its pristine copy, else 0."""
        for index, (live, pristine) in enumerate(self.pairs):
            changed[index].copy_(torch.any(live != pristine))

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
        self.pairs.clear()


def _words(t: torch.Tensor) -> torch.Tensor:
    """A flat view of ``t``'s bits as 64-bit words where its size and alignment allow (8x fewer
    elements to compare for fp8), else as same-width integers."""
    flat = bits_view(t).reshape(-1) if t.is_contiguous() else bits_view(t)
    try:
        return flat.view(torch.int64) if t.is_contiguous() else flat
    except RuntimeError:  # a size or offset that is not a multiple of 8 bytes
        return flat


class LaunchWatch:
    """The guard counts of each launch: queued right after the launch, read once the launch's
    event (recorded behind them) has completed."""

    def __init__(self, inputs: InputGuard | None, device: torch.device, *, fused: bool = False):
        self.inputs = inputs
        self.device = device
        self.fused = fused  # one Triton kernel for all of it (the fused check's backend), else torch ops
        # [before out, after out, then 1 for each input that changed]: int32 on the device
        self.values = torch.zeros(2 + len(INPUT_NAMES), dtype=torch.int32, device=device)
        self._on_gpu = device.type == "cuda"
        self._host = torch.zeros(self.values.numel(), dtype=torch.int32, pin_memory=True) if self._on_gpu else self.values
        self._graphs: dict[int, GraphAtSecondUse] = {}  # per output buffer (by id)

    def queue(self, buffer: GuardedBuffer) -> None:
        if not self._on_gpu:
            self._enqueue(buffer)
            return
        key = id(buffer)  # the loop keeps its buffers alive as long as this watch
        if key not in self._graphs:
            self._graphs[key] = GraphAtSecondUse(lambda: self._enqueue(buffer), self.device)
        self._graphs[key].run()

    def _enqueue(self, buffer: GuardedBuffer) -> None:
        pairs = self.inputs.pairs if self.inputs is not None else []
        if self.fused:
            from ..checking.triton.guard_pass import queue_guards

            queue_guards(pairs, buffer.bits, GUARD_ELEMENTS, buffer.after_offset, buffer.canary, self.values)
        else:
            buffer.queue_count(self.values)
            if pairs:
                self.inputs.queue_count(self.values[2:])
        if self._on_gpu:
            self._host.copy_(self.values, non_blocking=True)

    def read(self) -> tuple[int, int, list[str]]:
        """(elements written before out, after out, the inputs that changed), once the queued
        counts have completed."""
        values = self._host.tolist()
        changed = [name for name, flag in zip(self.inputs.names(), values[2:]) if flag] if self.inputs else []
        return values[0], values[1], changed
