"""LDS bytes as sets of merged ranges: their union and overlap, and the bytes a DMA load or a DS
access touches in a wave's active lanes, computed from its registers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .asm import Instruction
from .instructions import dma_size, ds_access
from .operands import M0

if TYPE_CHECKING:
    from .registers import RegisterFile

Ranges = tuple[tuple[int, int], ...]  # merged, sorted half-open LDS byte ranges


def _merge(starts: np.ndarray, length: int | np.ndarray) -> Ranges:
    if len(starts) == 0:
        return ()
    order = np.argsort(starts, kind="stable")
    first = starts[order]
    last = np.broadcast_to(starts + length, starts.shape)[order]
    reach = np.maximum.accumulate(last)
    # a range starts where a start lies past every end before it (touching ranges join)
    begins = np.flatnonzero(np.concatenate(([True], first[1:] > reach[:-1])))
    return tuple(zip(first[begins].tolist(), np.maximum.reduceat(last, begins).tolist()))


def merge_ranges(ranges: list[tuple[int, int]]) -> Ranges:
    if not ranges:
        return ()
    starts = np.array([r[0] for r in ranges], dtype=np.int64)
    ends = np.array([r[1] for r in ranges], dtype=np.int64)
    return _merge(starts, ends - starts)


def overlap(a: Ranges, b: Ranges) -> Ranges:
    """The bytes two range sets share."""
    if not a or not b or a[-1][1] <= b[0][0] or b[-1][1] <= a[0][0]:
        return ()
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def _offset(inst: Instruction, name: str = "offset") -> int:
    value = inst.modifier(name)
    return int(value, 0) if value else 0


def dma_ranges(state: RegisterFile, inst: Instruction) -> Ranges | None:
    """The LDS bytes a DMA load writes in the active lanes; None when M0 is not known."""
    m0 = state.sgpr_value(M0)
    if m0 is None:
        return None
    size = dma_size(inst)
    stride = 4 if size <= 4 else 16
    lanes = np.nonzero(state.active())[0].astype(np.int64)
    # the instruction offset moves the LDS destination as well as the source
    starts = m0 + _offset(inst) + lanes * stride
    return _merge(starts, size)


def ds_ranges(state: RegisterFile, inst: Instruction) -> Ranges | None:
    """The LDS bytes a DS instruction accesses in the active lanes; None when the address is not known."""
    _, size, count = ds_access(inst)
    if not inst.operands:
        return None
    address_operand = (
        inst.operands[0]
        if inst.mnemonic.startswith(("ds_write", "ds_store"))
        else (inst.operands[1] if len(inst.operands) > 1 else inst.operands[0])
    )
    if not inst.mnemonic.startswith(("ds_read", "ds_load", "ds_write", "ds_store")):
        # atomics: "ds_add_u32 vaddr, vdata" or "ds_add_rtn_u32 vdst, vaddr, vdata"
        address_operand = inst.operands[1] if "_rtn" in inst.mnemonic else inst.operands[0]
    address = state.read(address_operand).broadcast(state.width)
    active = state.active()
    if not address.known[active].all():
        return None
    base = address.values[active]
    if count == 2:
        unit = size * (64 if "st64" in inst.mnemonic else 1)
        offsets = [_offset(inst, "offset0") * unit, _offset(inst, "offset1") * unit]
    else:
        offsets = [_offset(inst)]
    key = (inst, base.tobytes())
    ranges = _DS_RANGES.get(key)
    if ranges is None:
        starts = np.concatenate([base + off for off in offsets]) if len(base) else np.array([], dtype=np.int64)
        ranges = _merge(starts, size)
        if len(_DS_RANGES) >= _DS_RANGES_KEPT:
            _DS_RANGES.clear()
        _DS_RANGES[key] = ranges
    return ranges


# a wave reaches one access with the same addresses in every state of a loop and under every
# decision: the sorted, merged bytes are worked out once
_DS_RANGES: dict[tuple, Ranges] = {}
_DS_RANGES_KEPT = 1 << 16
