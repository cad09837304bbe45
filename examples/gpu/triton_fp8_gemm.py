"""A small Triton fp8 GEMM with per-token / per-channel (ptpc) scales applied in the epilogue:

    out[M, N] = bf16((A[M, K] @ B[N, K]^T) * a_scale[M, None] * b_scale[None, N])

fp8 x fp8 -> fp32 ``tl.dot`` (wgmma on sm_90, MFMA on gfx942/gfx950), K-loop pipelined by
Triton, grouped tile order for L2 reuse. Partial tiles are masked, so any M, N, K work. One
program per output tile and a fixed K order: deterministic, so both of the plugin's detectors
apply.
"""

from __future__ import annotations

import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 128
GROUP_M = 8
NUM_WARPS, NUM_STAGES = 8, 3


@triton.jit
def _fp8_ptpc_gemm(
    a_ptr,
    b_ptr,
    a_scale_ptr,
    b_scale_ptr,
    out_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bn,
    stride_om,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # GROUP_M row-tiles share each column tile while it is hot in L2
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_m = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None].to(tl.int64) * stride_am + ks[None, :]
    b_ptrs = b_ptr + cols[None, :].to(tl.int64) * stride_bn + ks[:, None]  # B^T tile: [BLOCK_K, BLOCK_N]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + ks) < K
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=(cols[None, :] < N) & k_ok[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    a_scale = tl.load(a_scale_ptr + rows, mask=rows < M, other=0.0)
    b_scale = tl.load(b_scale_ptr + cols, mask=cols < N, other=0.0)
    result = acc * a_scale[:, None] * b_scale[None, :]
    out_ptrs = out_ptr + rows[:, None].to(tl.int64) * stride_om + cols[None, :]
    tl.store(out_ptrs, result.to(out_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


def fp8_ptpc_gemm(a, b, a_scale, b_scale, out) -> None:
    """``out`` = the ptpc GEMM of fp8 ``a`` [M, K], ``b`` [N, K] with fp32 scales [M], [N]."""
    m, k = a.shape
    n = b.shape[0]
    if b.shape[1] != k or tuple(out.shape) != (m, n):
        raise ValueError(
            f"expected a [M, K], b [N, K], out [M, N]; got {list(a.shape)}, {list(b.shape)}, {list(out.shape)}"
        )
    if a.stride(1) != 1 or b.stride(1) != 1 or out.stride(1) != 1:
        raise ValueError("a, b and out must have unit stride along their last dimension")
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
    _fp8_ptpc_gemm[grid](
        a,
        b,
        a_scale,
        b_scale,
        out,
        m,
        n,
        k,
        a.stride(0),
        b.stride(0),
        out.stride(0),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        num_warps=NUM_WARPS,
        num_stages=NUM_STAGES,
    )
