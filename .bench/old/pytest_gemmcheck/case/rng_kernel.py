"""rng.bell on a GPU: one Triton kernel that writes the bits rng.bell_numpy makes on the CPU.

The same unsigned 32-bit hash (records.mix.mix32 as the check's kernels have it, products
wrapping modulo 2**32), the same sum of halves, and a conversion that is exact: one pass that
writes 4 bytes an element, where the torch ops of the CPU's way would be forty. Imported only
where a case makes its inputs on a GPU with Triton.
"""

from __future__ import annotations

import contextlib

import torch
import triton
import triton.language as tl

from ..checking.triton.kernels import _mix32
from .rng import BELL_STEP, HALVES_MEAN, HI_MULTIPLIER

BLOCK = 1024
WARPS = 4
_HI_MULTIPLIER: tl.constexpr = tl.constexpr(HI_MULTIPLIER)
_HALVES_MEAN: tl.constexpr = tl.constexpr(HALVES_MEAN)
_BELL_STEP: tl.constexpr = tl.constexpr(BELL_STEP)


def _as_int32(key: int) -> int:
    """A 32-bit key as the int32 of its bits: Triton types every key argument alike (int32)."""
    return key - (1 << 32) if key >= 1 << 31 else key


@triton.jit(do_not_specialize=["first", "k1", "k2", "k3"])
def _bell_kernel(out_ptr, numel, first, k1, k2, k3, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    counters = first.to(tl.int64) + offsets
    lo = (counters & 0xFFFFFFFF).to(tl.uint32)
    hi = (counters >> 32).to(tl.uint32)
    x = _mix32(lo ^ k1.to(tl.uint32, bitcast=True))
    w1 = _mix32(x ^ k2.to(tl.uint32, bitcast=True) ^ (hi * _HI_MULTIPLIER))
    w2 = _mix32(w1 ^ k3.to(tl.uint32, bitcast=True))
    halves = (w1 & 0xFFFF) + (w1 >> 16) + (w2 & 0xFFFF) + (w2 >> 16)
    value = (halves.to(tl.int32) - _HALVES_MEAN).to(tl.float32) * _BELL_STEP
    tl.store(out_ptr + offsets, value, mask=offsets < numel)


def bell_on_gpu(numel: int, keys: tuple[int, int, int], device: torch.device, first: int = 0) -> torch.Tensor:
    """rng.bell_numpy's float32 values of the stream ``keys`` (counters first..first+numel-1),
    written on ``device`` (a GPU; the CPU in Triton's interpreter)."""
    out = torch.empty(numel, dtype=torch.float32, device=device)
    if numel:
        k1, k2, k3 = (_as_int32(key) for key in keys)
        with torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext():
            _bell_kernel[(triton.cdiv(numel, BLOCK),)](out, numel, first, k1, k2, k3, BLOCK=BLOCK, num_warps=WARPS)
    return out
