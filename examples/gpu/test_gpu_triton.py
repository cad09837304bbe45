"""A Triton fp8 GEMM with ptpc scales in its epilogue, checked launch by launch on the GPU.
Correct by construction: every case must come out clean, idle or under stress."""

import pytest
import torch

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

triton = pytest.importorskip("triton")

import torch_gemms  # noqa: E402
import triton_fp8_gemm  # noqa: E402


@pytest.mark.parametrize("m,n,k", [(4096, 7168, 256), (2048, 2048, 1024), (1000, 1500, 776)], ids=lambda v: str(v))
def test_triton_fp8_ptpc(gemmcheck, m, n, k):
    tile = f"{triton_fp8_gemm.BLOCK_M}x{triton_fp8_gemm.BLOCK_N}"
    case = gemmcheck.case(
        "triton_fp8_ptpc_gemm",
        m=m,
        n=n,
        k=k,
        quant="ptpc",
        tile=tile,
        fp8=torch_gemms.fp8_flavour(),
        params={"block_k": triton_fp8_gemm.BLOCK_K, "stages": triton_fp8_gemm.NUM_STAGES},
    )
    x = case.inputs()
    case.run(lambda out: triton_fp8_gemm.fp8_ptpc_gemm(x.a, x.b, x.a_scale, x.b_scale, out))
