"""The ptpc fp8 GEMM in plain torch: dequantize, then one fp32 matmul. Runs on any device."""

from __future__ import annotations

import torch


def ptpc_gemm(
    a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor
) -> None:
    """``out = (a * a_scale[:, None]) @ (b * b_scale[:, None]).T``, rounded into ``out``.

    a: fp8 [M, K], b: fp8 [N, K] (B transposed, as GEMM kernels take it), a_scale: fp32 [M],
    b_scale: fp32 [N], out: [M, N] (bf16, or any float dtype).
    """
    a32 = a.to(torch.float32) * a_scale[:, None]
    b32 = b.to(torch.float32) * b_scale[:, None]
    out.copy_(a32 @ b32.t())
