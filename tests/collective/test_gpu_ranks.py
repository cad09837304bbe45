"""Two ranks sharing one GPU over gloo (CUDA tensors), through the whole path: the plugin starts
them on the GPU, an all_reduce GEMM on CUDA tensors passes with no bad launch, and an async
all_reduce read before its wait on one rank is caught there. Skipped without a GPU; the
evidence of a run is its --gemmcheck-json file (see docs/collective.md, "On a GPU")."""

import json
import os
import textwrap

import pytest
import torch

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA or ROCm GPU")]

SUITE = textwrap.dedent("""
    import pytest
    import torch.distributed as dist
    from collective_kernels import async_all_reduce_read_early, gemm_all_reduce


    @pytest.mark.gemmcheck(world_size=2)
    def test_gpu_all_reduce(gemmcheck):
        assert dist.get_backend() == "gloo"  # two ranks, one GPU
        case = gemmcheck.case("gemm_all_reduce_gpu", m=1024, n=2048, k=1024, quant="ptpc", collective="all_reduce")
        assert case.device.type == "cuda"
        case.run(gemm_all_reduce(case.inputs()))


    @pytest.mark.gemmcheck(world_size=2)
    def test_gpu_async_race(gemmcheck):
        case = gemmcheck.case("gemm_all_reduce_async_gpu", m=1024, n=2048, k=1024, quant="ptpc",
                              collective="all_reduce")
        case.run(async_all_reduce_read_early(case.inputs(), rank=1, every=10, at=7))
""")


def test_two_ranks_share_a_gpu_over_gloo(ranks):
    evidence = os.environ.get("GEMMCHECK_GPU_EVIDENCE")  # where to keep the run's JSON, if anywhere
    result, entries = ranks.run(SUITE, "--gemmcheck-repeat=50", "--gemmcheck-devices=0")
    if evidence:
        with open(evidence, "w") as file:
            json.dump(entries, file, indent=1)
    result.assert_outcomes(passed=1, failed=1)
    clean = entries["test_gpu_all_reduce"]
    assert clean["verdict"] == "pass" and len(clean["launches"]) == 100
    assert {launch["device"] for launch in clean["launches"]} == {"cuda:0"}
    caught = ranks.bad(entries["test_gpu_async_race"])
    assert caught and all(rank == 1 and index % 10 == 7 for index, rank in caught), caught
