"""The tail race's regression test, as a kernel repository writes it with pytest-gemmcheck.

The bug (a peeled K tail that pre-read the final LDS tile after a bare ``s_barrier``, before the
wait covering the loads that write it) returned a few wrong rows on some launches, without NaN.
Its hand-written test NaN-poisoned the output, launched 12 times per shape and counted elements
off by more than 5% against a bf16-rounded fp32 reference; here ``case.run`` does all of that,
adds a bitwise comparison between launches, records every launch in ``.gemmcheck/history.db`` and
judges the result against the case's history.
"""

import pytest
import torch
from fp8_kernels import tail_gemm, torch_gemm

# K=256: the main loop runs zero times and only the peeled tail reads LDS (the bug report's
# failing case); K=512: one main-loop step before the tail. The bug report's shapes on a GPU,
# smaller ones where the stand-in runs on the CPU.
if torch.cuda.is_available():
    SHAPES = [(4096, 7168, 256), (16384, 7168, 512)]
else:
    SHAPES = [(256, 512, 256), (512, 256, 512)]


def pick_kernel(k):
    """The FlyDSL kernel where it runs (a gfx950 GPU), else the torch stand-in: (name, kern)."""
    if tail_gemm.cannot_run_here() is None:
        return "fp8_tail_gemm", tail_gemm.compile_tail_gemm(k=k)
    return "torch_ptpc_gemm", torch_gemm.ptpc_gemm


@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_ptpc_tail_reads_complete_lds(gemmcheck, m, n, k):
    name, kern = pick_kernel(k)
    case = gemmcheck.case(name, m=m, n=n, k=k, quant="ptpc", tile="128x128")
    x = case.inputs()  # seeded operands: x.a, x.b (fp8), x.a_scale [M], x.b_scale [N] (fp32)
    case.run(lambda out: kern(x.a, x.b, out, x.a_scale, x.b_scale))


def test_tail_waits_before_it_reads(gemmcheck):
    # The same kernel compiled for gfx950 without a GPU: its static metrics are recorded and
    # compared with the last run (a new spill, a changed LDS size), and the LDS-race lint proves
    # that every read of the final K tile comes after the wait for its loads.
    from pytest_gemmcheck.compiled.flydsl.compile import find_linker, flydsl_installed

    if not flydsl_installed() or find_linker() is None:
        pytest.skip(
            "compiling FlyDSL for gfx950 needs flydsl and an ld.lld 18+ (pip install flydsl; apt-get install lld-19)"
        )
    case = gemmcheck.case(
        "fp8_tail_gemm", m=256, n=256, k=256, quant="ptpc", tile="128x128", params={"arch": tail_gemm.ARCH}
    )
    result = case.compile_flydsl(f"{tail_gemm.__file__}:compile_spec", params={"K": 256}, arch=tail_gemm.ARCH)
    assert result.static["lint"]["errors"] == 0, result.static["lint"]
