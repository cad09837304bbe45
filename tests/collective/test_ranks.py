"""Collective cases on the CPU, as the plugin runs them: each test as the ranks of a gloo group in
fresh processes, every rank's launches one result. Correct GEMMs fused with each collective pass
with no bad launch at world sizes 2 and 4; a real race (an async all_reduce read before its
wait), a rank that sends a stale shard and ranks that reduce in their own order are caught, and
blamed on the right (launch, rank)."""

import textwrap

import pytest

CORRECT = textwrap.dedent("""
    import pytest
    import torch.distributed as dist
    from collective_kernels import CORRECT

    CASES = [pytest.param(collective, world_size, marks=pytest.mark.gemmcheck(world_size=world_size))
             for world_size in (2, 4) for collective in ("all_reduce", "reduce_scatter", "all_gather")]


    @pytest.mark.parametrize("collective,world_size", CASES)
    def test_correct(gemmcheck, collective, world_size):
        assert dist.get_world_size() == world_size  # the group is there before the test body
        case = gemmcheck.case("gemm_" + collective, m=64, n=64, k=128, quant="ptpc", collective=collective)
        case.run(CORRECT[collective](case.inputs()))
""")


def _clean_over_every_rank(entries, launches):
    for name, entry in entries.items():
        world_size = entry["world_size"]
        assert entry["verdict"] == "pass" and entry["collective"] == name.split("[")[1].split("-")[0], name
        assert len(entry["launches"]) == launches * world_size, name
        per_rank = {
            rank: [launch["index"] for launch in entry["launches"] if launch["rank"] == rank]
            for rank in range(world_size)
        }
        assert all(indices == list(range(1, launches + 1)) for indices in per_rank.values()), name
        assert not any(launch["kinds"] for launch in entry["launches"]), name
        assert len({launch["pid"] for launch in entry["launches"]}) == world_size, name


def test_correct_collective_gemms_pass_on_two_and_four_ranks(ranks):
    result, entries = ranks.run(CORRECT, "--gemmcheck-repeat=12")
    result.assert_outcomes(passed=6)
    assert len(entries) == 6
    _clean_over_every_rank(entries, 12)


@pytest.mark.slow
def test_two_hundred_launches_on_four_ranks_each_collective(ranks):
    result, entries = ranks.run(CORRECT, "--gemmcheck-repeat=200", "-k", "4")
    result.assert_outcomes(passed=3, deselected=3)
    _clean_over_every_rank(entries, 200)


CAUGHT = textwrap.dedent("""
    import pytest
    from collective_kernels import async_all_reduce_read_early, reduce_in_own_order, stale_workspace


    @pytest.mark.gemmcheck(world_size=2, repeat=50)
    def test_async_race(gemmcheck):
        case = gemmcheck.case("gemm_ar_async", m=64, n=64, k=128, collective="all_reduce")
        case.run(async_all_reduce_read_early(case.inputs(), rank=1, every=10, at=7))


    @pytest.mark.gemmcheck(world_size=2)
    def test_stale_shard(gemmcheck):
        case = gemmcheck.case("gemm_ar_workspace", m=64, n=64, k=128, collective="all_reduce")
        case.run(stale_workspace(case.inputs(), rank=1, launch_number=5))


    @pytest.mark.gemmcheck(world_size=4)
    def test_own_order(gemmcheck):
        case = gemmcheck.case("gemm_ar_own_order", m=64, n=64, k=128, collective="all_reduce")
        case.run(reduce_in_own_order(case.inputs(), reversed_on=3))
""")


def test_races_stale_shards_and_disagreeing_ranks_are_caught_and_blamed(ranks):
    result, entries = ranks.run(CAUGHT)
    result.assert_outcomes(failed=3)

    # the race: rank 1's launches 7, 17, ..., 47 read the buffer before its reduction was waited
    # for; each one that lost the race is wrong there, and off the other rank's bits
    race = entries["test_async_race"]
    caught = ranks.bad(race)
    assert caught, race["launches"]
    assert all(
        rank == 1 and index % 10 == 7 and {"wrong", "ranks_disagree"} <= set(kinds)
        for (index, rank), kinds in caught.items()
    ), caught
    assert race["verdict"] == "regression"

    # a stale shard poisons the sum every rank receives: launch 5 is wrong on both (and off each
    # rank's other launches), with equal bits
    stale = ranks.bad(entries["test_stale_shard"])
    assert stale == {(5, 0): ["wrong", "inconsistent"], (5, 1): ["wrong", "inconsistent"]}, stale

    # rank 3 sums the partials from the last rank down: accurate, and off the others' bits on
    # every launch, the only failure
    order = ranks.bad(entries["test_own_order"])
    assert order == {(index, 3): ["ranks_disagree"] for index in range(1, 13)}, order
    assert entries["test_own_order"]["verdict"] == "regression"


@pytest.mark.slow
def test_the_race_is_caught_in_every_run(ranks):
    """The race of the issue's target, five sessions over: each catches it on rank 1."""
    for _ in range(5):
        result, entries = ranks.run(CAUGHT, "-k", "async_race")
        result.assert_outcomes(failed=1, deselected=2)
        caught = ranks.bad(entries["test_async_race"])
        assert caught and {rank for _, rank in caught} == {1}, caught
