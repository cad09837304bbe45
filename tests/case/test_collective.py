"""A collective case without its ranks: the shard table, each rank's seeded shards, the reference
every rank computes from every rank's shards, a case's key, and the one-line refusals. The ranks
themselves run in tests/collective/."""

import pytest
import torch

from pytest_gemmcheck.case import collective as collective_module
from pytest_gemmcheck.case.case import Case, CaseContext
from pytest_gemmcheck.case.collective import (
    AllRanks,
    CollectiveCase,
    ShardInputs,
    check_divides,
    collective_reference,
    shard_seed,
    shard_shape,
)
from pytest_gemmcheck.case.quant import fp8_flavour, quant_mode
from pytest_gemmcheck.case.reference import compute_reference
from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import CaseError


def shards(quant, collective, m, n, k, world_size, seed=0):
    mode = quant_mode(quant)
    fp8 = fp8_flavour("e4m3fn") if mode.uses_fp8 else None
    shape = shard_shape(collective, m, n, k, world_size)
    return [
        mode.make_inputs(*shape, seed=shard_seed(seed, rank), device=torch.device("cpu"), fp8=fp8)
        for rank in range(world_size)
    ]


def fp32_product(inputs):
    return compute_reference(inputs, torch.float32)


def test_the_shard_table():
    assert [shard_shape(c, 256, 128, 512, 4) for c in ("all_reduce", "reduce_scatter", "all_gather")] == [
        (256, 128, 128),
        (256, 128, 128),
        (64, 32, 512),
    ]


def test_each_rank_has_its_own_seed_the_same_everywhere():
    seeds = [shard_seed(7, rank) for rank in range(8)]
    assert len(set(seeds)) == 8 and all(0 <= seed < 2**63 for seed in seeds)
    assert seeds == [shard_seed(7, rank) for rank in range(8)] and shard_seed(8, 0) != seeds[0]


@pytest.mark.parametrize("quant", ["bf16", "fp8", "ptpc", "blockscale", "mxfp8"])
@pytest.mark.parametrize("world_size", [2, 4])
def test_all_reduce_and_reduce_scatter_sum_the_ranks_products_in_rank_order(quant, world_size):
    parts = shards(quant, "all_reduce", 64, 96, 256, world_size)
    total = fp32_product(parts[0])
    for part in parts[1:]:
        total = total + fp32_product(part)
    expected = total.to(torch.bfloat16)
    for rank in range(world_size):
        assert torch.equal(collective_reference("all_reduce", parts, rank, torch.bfloat16), expected)
        rows = slice(rank * 64 // world_size, (rank + 1) * 64 // world_size)
        assert torch.equal(collective_reference("reduce_scatter", parts, rank, torch.bfloat16), expected[rows])


@pytest.mark.parametrize("quant", ["bf16", "ptpc", "blockscale", "mxfp8"])
def test_all_gather_is_the_gathered_a_times_the_ranks_b(quant):
    parts = shards(quant, "all_gather", 64, 64, 128, 4)
    for rank in range(4):
        expected = torch.cat(
            [
                compute_reference(
                    type(part)(**{**vars(part), "b": parts[rank].b, "b_scale": parts[rank].b_scale}), torch.bfloat16
                )
                for part in parts
            ]
        )
        assert torch.equal(collective_reference("all_gather", parts, rank, torch.bfloat16), expected)


@pytest.mark.parametrize(
    "collective,shape,message",
    [
        (
            "all_reduce",
            (64, 64, 100),
            "cuts K into 8 shards, one a rank, and K=100 is not a multiple of the world size 8",
        ),
        ("reduce_scatter", (60, 64, 128), "cuts M into 8 shards, one a rank, and M=60"),
        ("all_gather", (64, 60, 128), "cuts N into 8 shards, one a rank, and N=60"),
    ],
)
def test_a_shape_that_does_not_cut_into_equal_shards_is_one_line(collective, shape, message):
    with pytest.raises(CaseError, match=message):
        check_divides(collective, *shape, 8, quant_mode("bf16"))


def test_a_shard_the_quant_mode_cannot_hold_is_one_line():
    with pytest.raises(
        CaseError,
        match=r"a shard of collective='all_reduce' over 4 ranks is 64x64x48: "
        r"quant='mxfp8' needs K to be a multiple of 32",
    ):
        check_divides("all_reduce", 64, 64, 192, 4, quant_mode("mxfp8"))


@pytest.fixture
def as_rank(monkeypatch):
    """Cases made as rank ``rank`` of ``world_size``, with no group (the ranks' place is given)."""

    def make(rank, world_size, kernel="fused", settings=None, **kwargs):
        monkeypatch.setattr(collective_module, "current_ranks", lambda settings, collective: (rank, world_size))
        return CollectiveCase(CaseContext(settings or Settings()), kernel, **kwargs)

    return make


def test_a_collective_case_is_its_own_case(as_rank):
    plain = Case(CaseContext(Settings()), "fused", m=64, n=32, k=64)
    one = as_rank(0, 2, m=64, n=32, k=64, collective="all_reduce")
    assert one.key != plain.key and one.identity == {**plain.identity, "collective": "all_reduce", "world_size": 2}
    assert as_rank(1, 2, m=64, n=32, k=64, collective="all_reduce").key == one.key  # every rank: one case
    assert as_rank(0, 4, m=64, n=32, k=64, collective="all_reduce").key != one.key
    assert as_rank(0, 2, m=64, n=32, k=64, collective="reduce_scatter").key != one.key


def test_a_ranks_inputs_are_its_shards_and_its_reference_its_part(as_rank):
    case = as_rank(1, 2, m=64, n=32, k=64, collective="reduce_scatter", quant="ptpc")
    x = case.inputs()
    assert isinstance(x, ShardInputs) and (x.rank, x.world_size, x.collective) == (1, 2, "reduce_scatter")
    assert list(x.a.shape) == [64, 32] and list(x.b.shape) == [32, 32] and "rank 1 of 2" in repr(x)
    every = case.all_inputs()
    assert [shard.rank for shard in every] == [0, 1] and every[1].digest() == x.digest()
    assert torch.equal(case.reference(), collective_reference("reduce_scatter", every, 1, torch.bfloat16))
    assert case.reference().shape == (32, 32) == case.out_shape


def test_a_reference_function_is_given_every_rank_and_returns_the_whole_product(as_rank):
    given = []

    def whole(ranks):
        given.append(ranks)
        gathered_a = torch.cat([shard.a.float() for shard in ranks.ranks])
        gathered_b = torch.cat([shard.b.float() for shard in ranks.ranks])
        return gathered_a @ gathered_b.T

    case = as_rank(1, 2, m=64, n=32, k=64, collective="all_gather", reference=whole)
    ref = case.reference()
    (seen,) = given
    assert isinstance(seen, AllRanks) and (seen.rank, seen.world_size, seen.quant) == (1, 2, "bf16")
    assert ref.shape == (64, 16)
    expected = collective_reference("all_gather", list(seen.ranks), 1, torch.bfloat16)
    assert torch.equal(ref, expected)


def test_a_reference_function_of_the_wrong_shape_is_one_line(as_rank):
    case = as_rank(0, 2, m=64, n=32, k=64, collective="all_reduce", reference=lambda ranks: ranks.ranks[0].b.float())
    with pytest.raises(
        CaseError,
        match=r"must return the whole floating-point \[64, 32\] product of every rank's "
        r"shards \(each rank takes its part\), got shape \[32, 32\]",
    ):
        case.reference()


def test_no_group_no_collective_and_an_unknown_one_are_one_line(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    context = CaseContext(Settings())
    with pytest.raises(
        CaseError,
        match=r"collective='all_reduce' needs the ranks of a torch.distributed group: "
        r"run the test with @pytest.mark.gemmcheck\(world_size=W\)",
    ):
        CollectiveCase(context, "fused", m=64, n=32, k=64, collective="all_reduce")
    with pytest.raises(
        CaseError,
        match=r"collective='allreduce' is not a collective; choose one of all_reduce, "
        r"reduce_scatter, all_gather",
    ):
        CollectiveCase(context, "fused", m=64, n=32, k=64, collective="allreduce")


def test_a_world_size_asked_for_must_be_the_groups(monkeypatch):
    import torch.distributed as dist

    from pytest_gemmcheck.launch import rank_group

    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_rank", lambda: 0)
    monkeypatch.setattr(dist, "get_world_size", lambda: 4)
    with pytest.raises(CaseError, match=r"world_size=2, but this process's group has 4 ranks"):
        rank_group.current_ranks(Settings(world_size=2), "all_reduce")
    assert rank_group.current_ranks(Settings(), "all_reduce") == (0, 4)
