"""Cases for the launches-per-second measurement of benchmarks/gpu_run.sh (part two-gpus): run under
pytest-xdist with ``-n 1`` and ``-n 2``; each test appends (worker, device, start, end, launches)
as one JSON line to the file named by GEMMCHECK_THROUGHPUT_LOG (and when the test began, before
its inputs and reference). ``python -m benchmarks.gpu_measure throughput-summary`` turns the
lines into launches per second. GPU-bound on purpose (a large bf16 GEMM and the
check of its 64M-element output), so that a second GPU can double the rate."""

import json
import os
import time

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(scope="module", autouse=True)
def compiled_check(request):
    """Each worker compiles the check's kernels before it is timed: a one-time cost that one
    worker would pay alone and two would pay at once, which is not the launch rate."""
    if torch.cuda.is_available():
        from pytest_gemmcheck.case.case import Case, CaseContext
        from pytest_gemmcheck.config.table import Settings

        case = Case(CaseContext(Settings(repeat=2)), "warm_up", m=8192, n=8192, k=64, quant="bf16")
        x = case.inputs()
        case.run(lambda out: torch.matmul(x.a, x.b.t(), out=out))


@pytest.mark.parametrize("index", range(16))
def test_bf16_launches(gemmcheck, index):
    began = time.time()
    case = gemmcheck.case("throughput_matmul", m=8192, n=8192, k=4096, quant="bf16", seed=index)
    x = case.inputs()
    case.reference()
    torch.cuda.synchronize()
    start = time.time()
    result = case.run(lambda out: torch.matmul(x.a, x.b.t(), out=out))
    end = time.time()
    with open(os.environ["GEMMCHECK_THROUGHPUT_LOG"], "a") as log:
        log.write(
            json.dumps(
                {
                    "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                    "device": str(case.device),
                    "began": began,
                    "start": start,
                    "end": end,
                    "launches": len(result.launches),
                    "kernel_s": sum(launch.elapsed_s for launch in result.launches),
                }
            )
            + "\n"
        )
