"""GEMMs fused with a collective, checked on every rank of a gloo group on the CPU: each test runs
as the ranks its marker's world_size names (the plugin starts them), each case's launches on
every rank one result.

The last test is the background's missing one ("Not covered: fuse=True"): the tail-race test of
compile_fused_gemm_scatter with the collective fused, here with a CPU stand-in for the kernel and
a smaller shape. On the GPUs it is the same test with the real kernel, the shapes of the report
and world_size=8 (docs/collective.md)."""

import pytest
import torch.distributed as dist
from collective_kernels import CORRECT, fused_gemm_scatter

COLLECTIVES = ["all_reduce", "reduce_scatter", "all_gather"]


@pytest.mark.gemmcheck(world_size=2)
@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("quant", ["bf16", "ptpc"])
def test_collective_gemm(gemmcheck, collective, quant):
    case = gemmcheck.case(f"gemm_{collective}", m=128, n=256, k=512, quant=quant, collective=collective)
    x = case.inputs()  # this rank's shards
    case.run(CORRECT[collective](x))


@pytest.mark.gemmcheck(world_size=4)
def test_all_reduce_over_four_ranks(gemmcheck):
    case = gemmcheck.case("gemm_all_reduce", m=128, n=128, k=512, quant="ptpc", collective="all_reduce")
    assert (case.rank, case.world_size) == (dist.get_rank(), 4)
    case.run(CORRECT["all_reduce"](case.inputs()))


@pytest.mark.gemmcheck(world_size=2)
@pytest.mark.parametrize("m,n,k", [(512, 1024, 256)], ids=lambda v: str(v))  # GPU: 4096x7168x256, 16384x7168x512
def test_ptpc_tail_reads_complete_lds_fused(gemmcheck, m, n, k):
    case = gemmcheck.case(
        "fused_gemm_scatter",
        m=m,
        n=n,
        k=k,
        quant="ptpc",
        tile="256x256",
        params={"fuse": True},
        collective="all_reduce",
    )
    x = case.inputs()
    kern = fused_gemm_scatter(x, fuse=True)  # compile_fused_gemm_scatter(..., fuse=True) on the GPUs
    case.run(kern)
