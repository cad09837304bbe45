"""Correct CPU kernels for every quant mode: each case runs --gemmcheck-repeat poisoned
launches and must come out clean."""

import pytest
import torch
from kernels import allocating_gemm, bf16_matmul, tiled_gemm

MODES = ["bf16", "fp8", "ptpc", "blockscale", "mxfp8"]
SHAPES = [(256, 384, 512), (200, 130, 384)]  # the second is no multiple of any tile


@pytest.mark.parametrize("quant", MODES)
@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_tiled_gemm(gemmcheck, quant, m, n, k):
    case = gemmcheck.case("tiled_gemm", m=m, n=n, k=k, quant=quant, tile="64x64")
    x = case.inputs()
    case.run(lambda out: tiled_gemm(x, out, tile=(64, 64)))


@pytest.mark.parametrize("quant", ["ptpc", "blockscale"])
def test_fp64_reverse_k(gemmcheck, quant):
    case = gemmcheck.case(
        "tiled_gemm_fp64",
        m=192,
        n=256,
        k=1024,
        quant=quant,
        tile="64x128",
        params={"acc": "fp64", "k_order": "reverse"},
    )
    x = case.inputs()
    case.run(lambda out: tiled_gemm(x, out, tile=(64, 128), acc=torch.float64, reverse_k=True))


def test_torch_bf16_matmul(gemmcheck):
    case = gemmcheck.case("torch_matmul", m=512, n=256, k=1024, quant="bf16")
    x = case.inputs()
    case.run(lambda out: bf16_matmul(x, out))


def test_fp32_output(gemmcheck):
    case = gemmcheck.case("tiled_gemm", m=128, n=128, k=256, quant="ptpc", out_dtype=torch.float32, tile="64x64")
    x = case.inputs()
    case.run(lambda out: tiled_gemm(x, out))


def test_kernel_that_allocates_its_output(gemmcheck):
    # checked as returned: the first launch's output could not be poisoned (the summary says so);
    # a returned output is poisoned after its check, so memory it returns again was poisoned
    case = gemmcheck.case("allocating_gemm", m=128, n=96, k=256, quant="fp8")
    x = case.inputs()
    result = case.run(lambda out: allocating_gemm(x, out))
    assert not result.launches[0].poisoned and not result.bad_launches
