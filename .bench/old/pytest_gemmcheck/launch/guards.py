"""What a launch may not touch, watched on every launch: its inputs, the copies of the
reference the case handed out, and the memory around its output.

* **Inputs.** A kernel that writes into its operands or scales would poison every later launch
  and test that shares them (a session caches inputs). A pristine copy of each is taken before
  the first launch; after every launch each live tensor is compared with it (on a GPU with the
  fused check by checksum: one read of the input, the pristine copy's checksum taken once), and
  one that changed is counted by rows, blamed on that launch and restored before the next
  launch runs, so that later launches run on the inputs the reference was made from.
* **References handed out.** ``case.reference()`` gives copies; the harness judges with its
  own. A copy that a launch changed is blamed on it as a changed input named ``reference`` and
  set right again.
* **Guard regions.** Each output buffer is the middle of one allocation with ``GUARD_ELEMENTS``
  of a canary bit pattern before and after it. A launch that writes past either end of ``out``
  changes the canary first: it is counted ("wrote 12 elements past the end of out"), blamed on
  that launch, and the canary is laid again. (Writes beyond the guards reach memory no check can
  see; those usually fault.)

On a GPU the counts are queued on the current stream right after the launch, into the launch's
row of a small device tensor that comes back to the host in batches (loop.py): nothing waits
for them. With the fused check that is one Triton kernel (checking/triton/guard_pass.py), part
of the CUDA graph of the launch's own work. On the CPU they are worked out at once, with one
``torch.equal`` per tensor. The slow paths (counting rows, restoring) run only when something
changed.
"""

from __future__ import annotations

import ctypes
import functools

import torch

from ..checking.checksum import word_view
from ..checking.torch_backend import bits_view

# Before and after each output buffer: 4096 elements, a multiple of 256 bytes for every output
# dtype, so that ``out`` keeps the allocation's alignment (the fused check loads 16-byte vectors).
GUARD_ELEMENTS = 4096
# A NaN with a payload no kernel writes by accident; any change of its bits counts.
_CANARY = {torch.bfloat16: 0x7FA5, torch.float16: 0x7E5A, torch.float32: 0x7FC0A5A5}
INPUT_NAMES = ("a", "b", "a_scale", "b_scale")
# A launch's row of guard counts: [before out, after out, one per input (a checksum, or 1 when it
# changed), unused, the output's checksum]
ROW_WIDTH = 8
CHECKSUM_COLUMN = 7


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


class GuardedBuffer:
    """An output tensor handed to launches, between two guard regions of one allocation, and
    what it was when made: a launch that replaces or reshapes it is caught on every later use."""

    def __init__(self, m: int, n: int, dtype: torch.dtype, device: torch.device):
        self.block = torch.empty(2 * GUARD_ELEMENTS + m * n, dtype=dtype, device=device)
        self.tensor = self.block[GUARD_ELEMENTS : GUARD_ELEMENTS + m * n].view(m, n)
        self.identity = layout(self.tensor)
        self.after_offset = GUARD_ELEMENTS + m * n  # where the region after out begins
        self.bits = bits_view(self.block)
        # both guard regions as the two rows of one view: one op lays, counts or compares them
        self._guards = self.bits.as_strided((2, GUARD_ELEMENTS), (self.after_offset, 1))
        self.canary = _signed(_CANARY[dtype], 8 * self.block.element_size())
        self._laid = _laid_canary(self.canary, self.bits.dtype, self.block.device)
        self.lay()
        self._intact = self._comparison()

    def _comparison(self):
        """Both regions against the laid canary as a function of no arguments (count_now runs it
        every launch): on the CPU two memcmps of addresses worked out here, with no view of each
        region to set up (a 64x64 ring of two buffers, 0.111-0.117 ms before, 0.101-0.110 after)."""
        if _MEMCMP is None or self.block.device.type != "cpu":
            regions = list(zip(self._guards, self._laid))
            return lambda: all(same_bits(region, laid) for region, laid in regions)
        length = GUARD_ELEMENTS * self.block.element_size()
        block, laid = self.block.data_ptr(), self._laid.data_ptr()
        after = block + self.after_offset * self.block.element_size()
        return lambda: _MEMCMP(block, laid, length) == 0 and _MEMCMP(after, laid + length, length) == 0

    def lay(self) -> None:
        """The canary into both guard regions."""
        self._guards.copy_(self._laid)

    def queue_count(self, counts: torch.Tensor) -> None:
        """Into ``counts[0]`` and ``counts[1]``: elements changed before and after ``out``."""
        counts[:2].copy_(torch.sum(self._guards != self.canary, dim=1))

    def count_now(self) -> tuple[int, int]:
        """Elements changed before and after ``out``, read now (a comparison of bytes when none did)."""
        if self._intact():
            return 0, 0
        before, after = torch.sum(self._guards != self.canary, dim=1).tolist()
        return before, after


@functools.lru_cache(maxsize=16)
def _laid_canary(canary: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Both guard regions' canary as laid, shared by the buffers of a dtype on a device (never
    written: GuardedBuffer.lay copies from it)."""
    return torch.full((2, GUARD_ELEMENTS), canary, dtype=dtype, device=device)


def layout(t: torch.Tensor) -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


def _memcmp():
    try:
        function = ctypes.CDLL(None).memcmp
    except (OSError, AttributeError):  # no C library to ask: torch.equal does
        return None
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return function


_MEMCMP = _memcmp()


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit for bit (a NaN equals itself), read now. Contiguous CPU tensors by memcmp: 7 us for
    128 KB on one core here, where torch.equal took 31 us on 64-bit words and 85 us on bf16."""
    if (
        _MEMCMP is not None
        and a.device.type == "cpu"
        and b.device.type == "cpu"
        and a.is_contiguous()
        and b.is_contiguous()
        and a.dtype == b.dtype
        and a.shape == b.shape
    ):
        return _MEMCMP(a.data_ptr(), b.data_ptr(), a.numel() * a.element_size()) == 0
    return torch.equal(bits_view(a), bits_view(b))


def _comparison(a: torch.Tensor, b: torch.Tensor):
    """same_bits(a, b) as a function of no arguments, for tensors compared again and again: by
    memcmp of their addresses where same_bits would use it (the checks done once)."""
    if (
        _MEMCMP is not None
        and a.device.type == "cpu"
        and b.device.type == "cpu"
        and a.is_contiguous()
        and b.is_contiguous()
        and a.dtype == b.dtype
        and a.shape == b.shape
    ):
        pointers = (a.data_ptr(), b.data_ptr(), a.numel() * a.element_size())
        return lambda: _MEMCMP(*pointers) == 0
    return lambda: same_bits(a, b)


class InputGuard:
    """The inputs of a case as they were before its first launch, and the comparison of the
    live tensors with them after each launch."""

    def __init__(self, inputs, pristine: dict[str, torch.Tensor] | None = None):
        """``inputs``: a case's Inputs; ``pristine``: copies of them as they are now, kept
        elsewhere and never written (the case's own on the CPU), else each is copied here."""
        self.live = {
            name: getattr(inputs, name) for name in INPUT_NAMES if isinstance(getattr(inputs, name, None), torch.Tensor)
        }
        kept = pristine or {}
        self.pristine = {
            name: kept[name] if name in kept else tensor.detach().clone() for name, tensor in self.live.items()
        }
        # each way of watching them made at its first use: one way serves a run (the CPU's
        # comparisons; a GPU's guard kernel, or its torch ops); the views of the others and the
        # second copy were 36 of a 64^3 case's 149 torch ops on the CPU
        self._pairs: list | None = None
        self._words: list | None = None
        self._compare: list | None = None

    @property
    def pairs(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """(live, pristine) flat views, compared after every launch by torch ops."""
        if self._pairs is None:
            self._pairs = [(_words(self.live[name]), _words(self.pristine[name])) for name in self.live]
        return self._pairs

    @property
    def words(self) -> list[torch.Tensor]:
        """The live inputs as the guard kernel reads them, for their checksums."""
        if self._words is None:
            self._words = [word_view(self.live[name]) for name in self.live]
        return self._words

    def __len__(self) -> int:
        return len(self.live)

    def queue_count(self, changed: torch.Tensor) -> None:
        """Into ``changed[i]``: 1 where the i-th input differs from its pristine copy, else 0."""
        for index, (live, pristine) in enumerate(self.pairs):
            changed[index].copy_(torch.any(live != pristine))

    def changed_now(self) -> list[str]:
        """The inputs that differ from their pristine copies, read now."""
        if self._compare is None:
            self._compare = [(name, _comparison(self.live[name], self.pristine[name])) for name in self.live]
        return [name for name, same in self._compare if not same()]

    def names(self) -> list[str]:
        return list(self.live)

    def changed_rows(self, name: str) -> int:
        """Rows (elements, for a tensor of one dimension or none) of input ``name`` that differ."""
        return differing_rows(self.live[name], self.pristine[name])

    def restore(self, name: str) -> None:
        self.live[name].copy_(self.pristine[name])

    def release(self) -> None:
        self.pristine.clear()
        self._pairs, self._words, self._compare = [], [], []


def guard_kernel_sums(words: list[torch.Tensor]) -> list[int]:
    """checksum.words_checksum of each of ``words`` (four at most) by the fused check's guard
    kernel, read now: one read of each, all in one launch."""
    from ..checking.triton.guard_pass import RESULT_WIDTH, queue_guards

    row = torch.zeros(ROW_WIDTH, dtype=torch.int64, device=words[0].device)
    queue_guards(words, row, 0, 0, 0, row[:RESULT_WIDTH])  # no canary region: the row itself, empty
    return row.tolist()[2 : 2 + len(words)]


def differing_rows(live: torch.Tensor, pristine: torch.Tensor) -> int:
    differ = bits_view(live) != bits_view(pristine)
    if differ.dim() >= 2:
        return int(differ.reshape(differ.shape[0], -1).any(dim=1).sum())
    return int(differ.sum())


def _words(t: torch.Tensor) -> torch.Tensor:
    """A flat view of ``t``'s bits as 64-bit words where its size and alignment allow (8x fewer
    elements to compare for fp8), else as same-width integers."""
    flat = bits_view(t).reshape(-1) if t.is_contiguous() else bits_view(t)
    try:
        return flat.view(torch.int64) if t.is_contiguous() else flat
    except RuntimeError:  # a size or offset that is not a multiple of 8 bytes
        return flat


class ReferenceCopies:
    """The copies of the reference a case handed out (``case.reference()``), compared with the
    harness's own after each launch. A copy that already differed when the launches began is the
    test's own business and is not watched; one handed out during a launch is."""

    def __init__(self, case, reference: torch.Tensor):
        self._case = case
        self.reference = reference
        self._ignored = {id(copy) for copy in case.handed_out_references() if not same_bits(copy, reference)}

    def queue(self) -> list[tuple[torch.Tensor, object]]:
        """(copy, whether it changed: a bool, or on a GPU a pinned host tensor filled behind the
        launch, read once the launch's event completed) for each copy."""
        if not self._case.hands_out_references:
            return []
        watched = [copy for copy in self._case.handed_out_references() if id(copy) not in self._ignored]
        if self.reference.device.type != "cuda":
            return [(copy, not same_bits(copy, self.reference)) for copy in watched]
        flags = []
        for copy in watched:
            host = torch.empty((), dtype=torch.bool, pin_memory=True)
            host.copy_(torch.any(bits_view(copy) != bits_view(self.reference)), non_blocking=True)
            flags.append((copy, host))
        return flags


class LaunchWatch:
    """Each launch's guards, in one of three ways: the fused check's guard kernel (input
    checksums, compared with the pristine inputs' ones), torch ops queued on a GPU (comparisons
    with the pristine copies), or on the CPU worked out at once."""

    def __init__(
        self,
        inputs: InputGuard,
        device: torch.device,
        *,
        fused: bool = False,
        pristine_sums: dict[str, int] | None = None,
    ):
        """``pristine_sums``: the inputs' checksums (checksum.words_checksum, what the guard kernel
        takes) as they were made, by name: a case's kept inputs on a GPU, proved by them when
        handed out to the run just before. Without them the guard kernel takes them here (a
        kernel and a wait before the first launch: 0.15-0.23 ms of a case on an H100)."""
        self.inputs = inputs
        self.device = device
        self.fused = fused
        self.at_once = device.type != "cuda" and not fused
        self.expected: list[int] = []
        if fused:
            names = inputs.names()
            if pristine_sums is not None and all(name in pristine_sums for name in names):
                self.expected = [pristine_sums[name] for name in names]
            else:
                self.expected = guard_kernel_sums(inputs.words)

    def _queue_kernel(self, buffer: GuardedBuffer, row: torch.Tensor) -> None:
        from ..checking.triton.guard_pass import RESULT_WIDTH, queue_guards

        queue_guards(
            self.inputs.words, buffer.bits, GUARD_ELEMENTS, buffer.after_offset, buffer.canary, row[:RESULT_WIDTH]
        )

    def queue_watched(self, buffer: GuardedBuffer, row: torch.Tensor) -> None:
        """The fused check's guards and the checksum of ``buffer``'s output (at CHECKSUM_COLUMN)
        as one kernel, added into ``row`` (zeroed beforehand), on the current stream."""
        from ..checking.triton.guard_pass import queue_watch

        queue_watch(
            self.inputs.words,
            buffer.bits,
            GUARD_ELEMENTS,
            buffer.after_offset,
            buffer.canary,
            buffer.tensor,
            row,
            CHECKSUM_COLUMN,
        )

    def queue(self, buffer: GuardedBuffer, row: torch.Tensor) -> list[int] | None:
        """Into ``row`` (int64, ROW_WIDTH), on the current stream; on the CPU without the fused
        check worked out at once instead, and returned as the row's values."""
        if self.at_once:
            before, after = buffer.count_now()
            changed = set(self.inputs.changed_now())
            return [before, after] + [int(name in changed) for name in self.inputs.names()]
        if self.fused:
            self._queue_kernel(buffer, row)
        else:
            buffer.queue_count(row)
            self.inputs.queue_count(row[2 : 2 + len(self.inputs)])
        return None

    def read(self, values: list[int]) -> tuple[int, int, list[str]]:
        """(elements written before out, after out, the inputs that changed) from a launch's row."""
        flags = values[2 : 2 + len(self.inputs)]
        if self.fused:
            changed = [
                name for name, total, expected in zip(self.inputs.names(), flags, self.expected) if total != expected
            ]
        else:
            changed = [name for name, flag in zip(self.inputs.names(), flags) if flag]
        return values[0], values[1], changed
