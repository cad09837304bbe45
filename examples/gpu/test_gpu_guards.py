"""Kernels that touch what they may not, on a real GPU: the cp.async GEMM of racy_gemm.cu
writing one row past ``out``, one that scribbles on its operand ``b``, and one that never ends.

The first two are expected failures (strict): the check must catch them as what they did. The
third takes the GPU with it (a CUDA kernel cannot be stopped), so it runs only when asked:
``GEMMCHECK_EXAMPLE_HANG=1 pytest examples/gpu/test_gpu_guards.py -k spin
--gemmcheck-launch-timeout=5`` fails it as hung after 5 s, skips the GPU's later cases and
ends the process.
"""

import os

import pytest
import racy_gemm
import torch

from pytest_gemmcheck import GemmcheckFailure

pytestmark = [pytest.mark.gpu]
REASON = racy_gemm.unavailable_reason()
if REASON:
    pytestmark.append(pytest.mark.skip(reason=REASON))

M, N, K = 2048, 2048, 256
CAUGHT = pytest.mark.xfail(raises=GemmcheckFailure, strict=True, reason="touches what it may not, on purpose")


def fixed_gemm():
    return racy_gemm.TailGemm("fixed", stages=2, block_k=32)


@CAUGHT
def test_a_gemm_writing_one_row_past_out(gemmcheck):
    kernel = fixed_gemm()
    case = gemmcheck.case("cp_async_row_past", m=M, n=N, k=K, quant="ptpc", tile="64x64", params=kernel.params)
    x = case.inputs()

    def launch(out):  # its output pointer one row too far: row 0 stays unwritten, row M lands past the end
        shifted = torch.as_strided(out, out.shape, out.stride(), out.storage_offset() + N)
        kernel(x.a, x.b, x.a_scale, x.b_scale, shifted)

    case.run(launch)


@CAUGHT
def test_a_gemm_scribbling_on_its_operand(gemmcheck):
    kernel = fixed_gemm()
    case = gemmcheck.case("cp_async_scribbles_b", m=M, n=N, k=K, quant="ptpc", tile="64x64", params=kernel.params)
    x = case.inputs()

    def launch(out):
        kernel(x.a, x.b, x.a_scale, x.b_scale, out)
        x.b[5:9].zero_()  # four rows of its weights gone, after the GEMM read them

    case.run(launch)


@pytest.mark.skipif(
    not os.environ.get("GEMMCHECK_EXAMPLE_HANG"), reason="takes the GPU with it: GEMMCHECK_EXAMPLE_HANG=1"
)
def test_a_spinning_kernel(gemmcheck):
    import cupy

    spin = cupy.RawKernel(
        r"""
    extern "C" __global__ void spin(int *never) { while (*(volatile int *)never == 0) { __nanosleep(1000); } }
    """,
        "spin",
    )
    case = gemmcheck.case("spin", m=M, n=N, k=K, quant="ptpc")
    never = torch.zeros(1, dtype=torch.int32, device=case.device)

    def launch(out):
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        spin((1,), (1,), (never.data_ptr(),), stream=stream)

    case.run(launch)


@pytest.mark.skipif(not os.environ.get("GEMMCHECK_EXAMPLE_HANG"), reason="runs after the spinning kernel")
def test_then_a_case_on_the_lost_gpu(gemmcheck):
    case = gemmcheck.case("after_spin", m=M, n=N, k=K, quant="ptpc")  # skipped: the GPU is lost
    x = case.inputs()
    case.run(lambda out: fixed_gemm()(x.a, x.b, x.a_scale, x.b_scale, out))
