"""The Triton kernels behind ``--gemmcheck-stress``: persistent loops with a small grid.

Each program walks the buffer with a grid-sized stride, so the grid can be a few programs per
SM however large the buffer is. That is the point: a kernel with one block per 1024 elements
(torch's own copy and elementwise kernels) occupies every SM slot until its last block is
dispatched, so a GEMM launched on another stream waits behind it instead of running beside
it. A grid of a few programs per SM (an AMD compute unit) leaves most of each SM to the kernel
under test, which then runs *concurrently* with the load: its loads queue behind the copy's in
L2 and DRAM, and its warps share issue slots with the elementwise loop.

Imported only when a GPU stressor starts (or by the tests, under Triton's interpreter).
"""

from __future__ import annotations

import triton
import triton.language as tl

# Elements per program per step, and warps per program: 32 fp32 elements in flight per thread
# keep enough bytes outstanding per SM for DRAM bandwidth with two programs per SM. On AMD CDNA
# a warp is a wavefront of 64 threads: 16 elements per thread, 8 wavefronts per compute unit.
BLOCK = 4096
NUM_WARPS = 4
# Fused multiply-adds per element in the compute loop: about 16 flops per byte moved, enough
# that it contends for issue slots as well as for memory.
FMA_ROUNDS = 64


# Each program takes blocks pid, pid + programs, pid + 2 programs, ... The loops are `while`
# loops: Triton 3.6's interpreter cannot run `for ... in range(runtime bound)` with numpy >= 2.4
# (triton-lang/triton#9171); compiled, both are the same loop.


@triton.jit
def copy_loop(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    """dst[:] = src[:]."""
    lanes = tl.arange(0, BLOCK)
    start = tl.program_id(0) * BLOCK
    while start < n_elements:
        offsets = start + lanes
        mask = offsets < n_elements
        tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)
        start += tl.num_programs(0) * BLOCK


@triton.jit
def fma_loop(buf_ptr, n_elements, ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    """buf[:] = f^ROUNDS(buf[:]) with f(x) = 0.999 x + 0.001 (its fixed point is 1, so values
    stay finite however often the loop runs)."""
    lanes = tl.arange(0, BLOCK)
    start = tl.program_id(0) * BLOCK
    while start < n_elements:
        offsets = start + lanes
        mask = offsets < n_elements
        x = tl.load(buf_ptr + offsets, mask=mask, other=0.0)
        for _ in tl.static_range(ROUNDS):
            x = x * 0.999 + 0.001
        tl.store(buf_ptr + offsets, x, mask=mask)
        start += tl.num_programs(0) * BLOCK


def _programs(n: int, programs: int) -> int:
    return max(1, min(programs, triton.cdiv(n, BLOCK)))


def launch_copy(src, dst, programs: int) -> None:
    n = src.numel()
    copy_loop[(_programs(n, programs),)](src, dst, n, BLOCK=BLOCK, num_warps=NUM_WARPS)


def launch_fma(buf, programs: int, rounds: int = FMA_ROUNDS) -> None:
    n = buf.numel()
    fma_loop[(_programs(n, programs),)](buf, n, ROUNDS=rounds, BLOCK=BLOCK, num_warps=NUM_WARPS)
