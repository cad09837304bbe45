"""The guards of a launch (:mod:`pytest_gemmcheck.case.guards`) as one Triton kernel: whether
each input still equals its pristine copy, and how many elements of the canary around ``out``
changed, into one small int32 vector. It reads each input and its copy once at memory speed and
the guard regions once; with torch ops the same takes two kernels per tensor and a temporary as
large as each comparison, several times this kernel's GPU time at the shapes of a real GEMM.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .kernels import INTERPRETED
from .launch import launch
from .plan import multiprocessors

_BLOCK = 1024  # elements per program and step: 8 KB of each tensor for 64-bit words
_PROGRAMS_PER_SM = 8  # in all, shared among the slots (each input, and the guard regions)
SLOTS = 5  # four inputs and the guard regions
# result[0], result[1]: canary elements changed before and after out; result[2 + i]: input i changed


@triton.jit
def _differs(live, copy, numel, flag, index, programs, BLOCK: tl.constexpr):
    differ = tl.full([BLOCK], 0, tl.int32)
    block = index  # block indices (numel // BLOCK < 2**31 for any tensor a GPU holds), offsets in 64 bits
    blocks = (numel + BLOCK - 1) // BLOCK
    while block < blocks:  # not range(): see kernels._LOOPS
        offsets = block.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offsets < numel
        a = tl.load(live + offsets, mask=inside, other=0)
        b = tl.load(copy + offsets, mask=inside, other=0)
        differ |= (a != b).to(tl.int32)
        block += programs
    changed = tl.max(differ, axis=0)
    if changed != 0:
        tl.atomic_max(flag, changed)


# sizes and program ranges change from case to case: a specialisation on them would compile the
# kernel again inside a CUDA graph's capture
@triton.jit(do_not_specialize=["a_numel", "b_numel", "c_numel", "d_numel", "guard_numel", "after_offset", "canary",
                               "end_a", "end_b", "end_c", "end_d"])
def _guard_kernel(a_live, a_copy, a_numel, b_live, b_copy, b_numel, c_live, c_copy, c_numel, d_live, d_copy, d_numel,
                  block, guard_numel, after_offset, canary, result, end_a, end_b, end_c, end_d,
                  BLOCK: tl.constexpr):
    """Programs [0, end_a) compare input a with its copy into ``result[2]``, [end_a, end_b)
    input b into ``result[3]``, and so on; the programs from end_d count the canary into
    ``result[0:2]``. Each slot has programs in proportion to the bytes it reads, so that all
    finish together."""
    pid = tl.program_id(0)
    if pid < end_a:
        _differs(a_live, a_copy, a_numel, result + 2, pid, end_a, BLOCK)
    elif pid < end_b:
        _differs(b_live, b_copy, b_numel, result + 3, pid - end_a, end_b - end_a, BLOCK)
    elif pid < end_c:
        _differs(c_live, c_copy, c_numel, result + 4, pid - end_b, end_c - end_b, BLOCK)
    elif pid < end_d:
        _differs(d_live, d_copy, d_numel, result + 5, pid - end_c, end_d - end_c, BLOCK)
    else:
        index = pid - end_d
        programs = tl.num_programs(0) - end_d
        before = tl.full([BLOCK], 0, tl.int32)
        after = tl.full([BLOCK], 0, tl.int32)
        start = index * BLOCK
        while start < 2 * guard_numel:  # the two regions end to end: [0, G) before out, [G, 2G) after it
            offsets = start + tl.arange(0, BLOCK)
            inside = offsets < 2 * guard_numel
            first = offsets < guard_numel
            where = tl.where(first, offsets, offsets - guard_numel + after_offset).to(tl.int64)
            bits = tl.load(block + where, mask=inside, other=canary)
            changed = (bits != canary) & inside
            before += (changed & first).to(tl.int32)
            after += (changed & (offsets >= guard_numel)).to(tl.int32)
            start += programs * BLOCK
        before_count = tl.sum(before, axis=0)
        after_count = tl.sum(after, axis=0)
        if before_count != 0:
            tl.atomic_add(result, before_count)
        if after_count != 0:
            tl.atomic_add(result + 1, after_count)


def queue_guards(pairs: list[tuple[torch.Tensor, torch.Tensor]], block: torch.Tensor, guard_numel: int,
                 after_offset: int, canary: int, result: torch.Tensor) -> None:
    """Into ``result`` (int32, length 2 + 4), on the current stream and not waited for:
    elements of ``block`` (an integer view) in ``[0, guard_numel)`` and ``[after_offset,
    after_offset + guard_numel)`` that differ from ``canary``, then 1 for each of the (at most
    four) pairs of flat same-dtype tensors that differ, else 0."""
    if len(pairs) > SLOTS - 1:
        raise ValueError(f"at most {SLOTS - 1} inputs are guarded, got {len(pairs)}")
    result.zero_()
    arguments = []
    for index in range(SLOTS - 1):
        if index < len(pairs):
            live, copy = pairs[index]
            arguments += [live, copy, live.numel()]
        else:
            arguments += [result, result, 0]  # nothing to compare
    # programs per slot in proportion to its elements (each at least one), PROGRAMS_PER_SM in all
    sizes = [live.numel() for live, _ in pairs] + [0] * (SLOTS - 1 - len(pairs)) + [2 * guard_numel]
    if INTERPRETED:
        total = SLOTS
    else:
        total = max(SLOTS, _PROGRAMS_PER_SM * multiprocessors(block.device))
    blocks = [-(-size // _BLOCK) for size in sizes]
    counts = [min(b, max(1, round(total * size / max(1, sum(sizes))))) if b else 0 for b, size in zip(blocks, sizes)]
    counts[-1] = max(1, counts[-1])  # the canary's programs also run when the regions are empty
    ends = [sum(counts[:i + 1]) for i in range(SLOTS)]
    launch(_guard_kernel, ends[-1], (*arguments, block, guard_numel, after_offset, canary, result, *ends[:SLOTS - 1]),
           dict(BLOCK=_BLOCK), 4, interpreted=INTERPRETED)
