"""GEMMs that ship with torch, as the example suites launch them: cuBLAS bf16 through
``torch.matmul`` and fp8 through ``torch._scaled_mm`` (row-wise ptpc scales, and 1x128 /
128x128 block scales where the installed torch and GPU support them).

``torch._scaled_mm(input, mat2, scale_a, scale_b, bias=None, scale_result=None,
out_dtype=None, use_fast_accum=False, *, out=None)`` (its form in torch 2.11 and later) takes
``input`` [M, K] row-major and ``mat2`` [K, N] column-major, i.e. ``B.t()`` of a case's [N, K]
B. Its scale layouts pick the recipe:

* row-wise: ``scale_a`` [M, 1] and ``scale_b`` [1, N], fp32, contiguous;
* block-wise: ``scale_a`` [M, K/128] (1x128 blocks) stored outer-dim-major (stride (1, M)), and
  ``scale_b`` [K/128, N/128] (128x128 blocks) that is the transpose of a row-major
  [N/128, K/128] tensor, i.e. exactly ``b_scale.t()`` of a case's blockscale inputs.
"""

from __future__ import annotations

import functools

import torch


def fp8_flavour() -> str:
    """The fp8 flavour this GPU's fp8 GEMMs take: fnuz on AMD gfx942 (MI300), fn elsewhere."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    arch = getattr(props, "gcnArchName", "") or ""
    return "e4m3fnuz" if arch.startswith("gfx942") else "e4m3fn"


def matmul_bf16(x, out: torch.Tensor) -> None:
    """cuBLAS (or hipBLASLt) bf16 GEMM: out = A @ B.T."""
    torch.matmul(x.a, x.b.t(), out=out)


def ptpc_scales(x) -> tuple[torch.Tensor, torch.Tensor]:
    """Row-wise scales as _scaled_mm takes them: [M, 1] and [1, N]."""
    return x.a_scale.reshape(-1, 1).contiguous(), x.b_scale.reshape(1, -1).contiguous()


def scaled_mm(x, scales, out: torch.Tensor) -> torch.Tensor:
    """fp8 GEMM into ``out``, with the recipe ``scales`` select (from ptpc_scales or
    blockscale_scales)."""
    scale_a, scale_b = scales
    return torch._scaled_mm(x.a, x.b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=out.dtype, out=out)


def scaled_mm_allocating(x, scales, out_dtype=torch.bfloat16) -> torch.Tensor:
    """The same GEMM into an output _scaled_mm allocates itself (returned, not poisoned)."""
    scale_a, scale_b = scales
    return torch._scaled_mm(x.a, x.b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype)


def blockscale_scales(x) -> tuple[torch.Tensor, torch.Tensor]:
    """Block scales in the layouts _scaled_mm requires (see the module docstring)."""
    return x.a_scale.t().contiguous().t(), x.b_scale.t()


@functools.lru_cache(maxsize=None)
def scaled_mm_unavailable(quant: str) -> str | None:
    """Why ``torch._scaled_mm`` cannot run ``quant`` here (the first line of its error on a small
    probe), or None when it can. Support depends on the torch build, its cuBLAS and the GPU."""
    from pytest_gemmcheck.case.quant import fp8_flavour as flavour
    from pytest_gemmcheck.case.quant import quant_mode

    if not hasattr(torch, "_scaled_mm"):
        return f"torch {torch.__version__} has no torch._scaled_mm"
    scales_of = {"ptpc": ptpc_scales, "blockscale": blockscale_scales}[quant]
    device = torch.device("cuda", torch.cuda.current_device())
    x = quant_mode(quant).make_inputs(256, 256, 256, seed=0, device=device, fp8=flavour(fp8_flavour()))
    out = torch.empty((256, 256), dtype=torch.bfloat16, device=device)
    try:
        scaled_mm(x, scales_of(x), out)
        torch.cuda.synchronize(device)
    except (RuntimeError, NotImplementedError, ValueError, TypeError) as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"torch {torch.__version__} cannot run {quant} through torch._scaled_mm here: {first_line}"
    return None
