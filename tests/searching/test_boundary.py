"""The boundary around the smallest failing configuration, weighed: a passing neighbour tells a
region from a flaky kernel's luck only when its launches say so (one-sided Fisher), and the
search spends a few more launches where they would. The kernels are seeded: the same launches
go wrong in every run of the same search, so no test here is flaky itself."""

import random

import pytest

import pytest_gemmcheck as gc
from gemmcheck_dev import search_region_kernels as regions
from pytest_gemmcheck.judging.stats import fisher_greater
from pytest_gemmcheck.searching.boundary import launches_to_establish

AXES = dict(m=(64, 512, 64), n=(64, 256, 64), k=(128, 512, 128))


def flaky(rate: float, seed: int, where=lambda case: True):
    """make_launch of a kernel that corrupts a row on ``rate`` of its launches where ``where``
    says, each launch's luck drawn from a generator seeded with ``seed``."""
    draws = random.Random(seed)

    def make_launch(case, x):
        def launch(out):
            regions.gemm(x, out)
            if where(case) and draws.random() < rate:
                regions.spoil(out)

        return launch

    return make_launch


@pytest.mark.parametrize("bad,launches,alpha", [(13, 13, 0.05 / 6), (1, 1, 0.05), (5, 15, 0.05 / 6), (1, 16, 0.01)])
def test_the_launches_that_establish_a_side_are_the_fewest_that_pass_the_test(bad, launches, alpha):
    needs = launches_to_establish(bad, launches, alpha)
    assert fisher_greater(bad, launches, 0, needs) < alpha <= fisher_greater(bad, launches, 0, needs - 1)


def test_no_count_of_launches_establishes_a_side_against_no_bad_launch():
    assert launches_to_establish(0, 12, 0.05) is None


@pytest.mark.parametrize("seed", range(5))
def test_a_kernel_flaky_everywhere_shows_no_region(seed):
    """Wrong on 15% of launches at every shape: whatever passed 4 launches beside the smallest
    failing configuration passed by luck, and the answer says so instead of drawing a region."""
    found = gc.search("flaky", flaky(0.15, seed), repeat=4, seed=seed, db=None, **AXES)
    assert found.minimal is not None
    edges = [found.boundary[name] for name in ("m", "n", "k") if name in found.boundary]
    assert all(edge["passes"] is None for edge in edges)
    summary = found.summary()
    assert " passes (" not in summary and " pass (" not in summary
    neighbours = [side for edge in edges for side in (edge["evidence"]["below"], edge["evidence"]["above"]) if side]
    for side in neighbours:  # said, with what would make it a boundary
        assert not side["established"] and side["p"] >= side["alpha"]
        assert f"passed 0/{side['launches']} launches, too few to tell it from" in summary


@pytest.mark.parametrize("seed", range(3))
def test_a_flaky_region_is_established_with_a_few_more_launches(seed):
    """Wrong on 30% of launches where K < 3 blocks of 128, never elsewhere: the boundary at
    K=384 is real, and the launches spent on it show it."""
    found = gc.search(
        "flaky_k", flaky(0.3, seed, where=lambda case: case.k <= 256), repeat=4, seed=seed, db=None, **AXES
    )
    assert found.minimal["k"] <= 256
    k = found.boundary["k"]
    assert k["passes"] == 384 and k["evidence"]["above"]["established"]
    assert k["evidence"]["above"]["launches"] == k["evidence"]["above"]["needs"] > 4  # more than a probe's 4
    bad, launches = k["evidence"]["fails"]
    assert launches >= 12 and bad >= 1
    assert f"k: k={found.minimal['k']}" in found.summary() and "k=384 passes" in found.summary()
    evidence = [probe for probe in found.probes if probe.phase == "evidence"]
    assert {probe.config["k"] for probe in evidence} >= {found.minimal["k"], 384}
    assert not any(probe.failing for probe in evidence if probe.config["k"] == 384)
