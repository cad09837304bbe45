"""One sanitized launch catches what repeated launches miss (docs/sanitize.md): the cp.async tail
GEMM with a window wide enough that its 12 launches pass on an idle GPU still fails, by
racecheck's RAW hazard on its pre-read; its fixed twin passes under every tool; a GEMM that
writes one element past ``out`` fails by memcheck, and by its launches' guard regions too (its
output itself is right).

The cases run at 2048x2048x256; their sanitized launch at 512x512x256 (``sanitize_shape``): the
same K loop, the same pipeline, over 64 tiles instead of 1,024, which keeps each tool's run to
seconds. A failure here is the verdict's: an expected failure, strict, so that a hazard the
sanitizer missed fails the suite.
"""

import pytest
import sanitize_kernels

from pytest_gemmcheck.errors import GemmcheckFailure

pytestmark = [pytest.mark.gpu]

REASON = sanitize_kernels.unavailable_reason()
if REASON:
    pytestmark.append(pytest.mark.skip(reason=REASON))

M, N, K = 2048, 2048, 256
SMALL = (512, 512, 256)


def run(gemmcheck, name: str):
    kernel = sanitize_kernels.KERNELS[name][0]()
    case = gemmcheck.case(
        "sanitize_" + name.replace("-", "_"),
        m=M,
        n=N,
        k=K,
        quant="ptpc",
        tile="64x64",
        params=dict(kernel.params),
        sanitize_shape=SMALL,
    )
    x = case.inputs()
    case.run(lambda out: kernel(x.a, x.b, x.a_scale, x.b_scale, out))


@pytest.mark.gemmcheck(sanitize="racecheck", repeat=12)
@pytest.mark.xfail(strict=True, raises=GemmcheckFailure, reason="racecheck: a RAW hazard (cp.async synchronization)")
def test_the_racy_tail_fails_by_racecheck(gemmcheck):
    run(gemmcheck, "tail-racy")


@pytest.mark.gemmcheck(sanitize="racecheck,memcheck,synccheck", repeat=12)
def test_the_fixed_twin_passes_every_tool(gemmcheck):
    run(gemmcheck, "tail-fixed")


@pytest.mark.gemmcheck(sanitize="memcheck", repeat=12)
@pytest.mark.xfail(strict=True, raises=GemmcheckFailure, reason="memcheck: a write one element past out")
def test_a_write_past_out_fails_by_memcheck(gemmcheck):
    run(gemmcheck, "past-end")
