"""The search itself, over probes that only say whether a configuration fails: what it tries,
how it shrinks, its boundary walk, its budget and its errors (no kernel runs here)."""

import pytest

from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.searching import engine
from pytest_gemmcheck.searching.engine import Outcome, Search
from pytest_gemmcheck.searching.space import parse_space


def result(config, *, bad: bool, verdict: str | None = None) -> CaseResult:
    launch = LaunchRecord(1, kinds=["wrong"] if bad else [])
    return CaseResult(key="k", kernel="kern", m=config.m, n=config.n, k=config.k, quant="bf16", tile=None,
                      out_dtype="bfloat16", params={}, fp8=None, seed=0, device="cpu", deterministic=True, rtol=0.05,
                      floor=1.0, launches=[launch], verdict=verdict or ("regression" if bad else "pass"))


def searching(fails, *, examples=100, budget=None, seed=0, verdict=None, **axes):
    space = parse_space(**{"m": (64, 8192, 64), "n": (64, 4096, 64), "k": (128, 4096, 128), "quant": ["bf16"],
                           "params": None, "tile": None, **axes})
    probed = []

    def probe(config):
        probed.append(config)
        return Outcome(result(config, bad=fails(config), verdict=verdict))

    search = Search(kernel="kern", space=space, probe=probe, operand_bytes=lambda quant: 2, examples=examples,
                    seed=seed, budget=budget)
    return search.run(), probed


def test_a_region_away_from_the_corner_is_shrunk_to_its_smallest_configuration():
    found, probed = searching(lambda c: c.m >= 1000 and c.k % 256 == 0 and c.n >= 512)
    assert found.minimal == {"m": 1024, "n": 512, "k": 256, "quant": "bf16", "params": {}}
    assert len(probed) == len(set(probed)) == len(found.probes)  # no configuration probed twice
    assert found.boundary["m"] == {"fails": 1024, "passes": 960, "below": 960, "above": None, "fails_up_to": 8192}
    # equally near on either side: the one above
    assert found.boundary["k"] == {"fails": 256, "passes": 384, "below": 128, "above": 384, "fails_up_to": 256}


def test_the_first_probe_is_every_axis_at_its_first_preferred_value():
    _, probed = searching(lambda c: False, examples=5)
    assert (probed[0].m, probed[0].n, probed[0].k) == (64, 64, 128)


def test_the_boundary_walk_doubles_then_bisects_to_the_edge_of_the_run():
    found, probed = searching(lambda c: c.k <= 1536, m=64, n=64, k=(64, 4096, 64))
    assert found.boundary["k"] == {"fails": 64, "passes": 1600, "below": None, "above": 1600, "fails_up_to": 1536}
    walked = [c.k for c in probed if found.probes[probed.index(c)].phase == "neighbours"]
    assert len(walked) <= 12  # doubling and bisecting across 64 values, not one by one


def test_a_bad_launch_fails_a_probe_whatever_its_verdict():
    # a known-bad verdict (a golden accepts the bad rate) passes the test, not the search
    found, _ = searching(lambda c: c.m >= 512, verdict="known-bad", m=(64, 1024, 64), n=64, k=128)
    assert found.minimal["m"] == 512


def test_a_failing_verdict_without_a_bad_launch_fails_a_probe():
    found, _ = searching(lambda c: False, verdict="regression", m=(64, 256, 64), n=64, k=128)
    assert found.minimal["m"] == 64


def test_an_error_of_the_search_itself_stops_it_at_once():
    calls = []

    def probe(config):
        calls.append(config)
        raise TypeError("a bug in the probe, not the kernel")

    space = parse_space(m=(64, 1024, 64), n=64, k=128, quant=["bf16"], params=None, tile=None)
    search = Search(kernel="kern", space=space, probe=probe, operand_bytes=lambda quant: 2, examples=50, seed=0)
    with pytest.raises(TypeError, match="a bug in the probe"):
        search.run()
    assert len(calls) == 1  # not shrunk as a failure


def test_the_budget_bounds_the_whole_search(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(engine.time, "monotonic", lambda: clock[0])

    def fails(config):
        clock[0] += 1.0  # each probe takes a second
        return config.m % 128 == 64

    found, probed = searching(fails, budget=5.5)
    assert len(probed) == 6 and found.stopped == "stopped when the budget of 5.5 s ran out"
    assert found.minimal == {"m": 64, "n": 64, "k": 128, "quant": "bf16", "params": {}}
    # the boundary walk was cut short: what the probes seen say, m=128 passing, n and k none yet
    assert found.boundary["m"]["passes"] == 128 and found.boundary["n"]["passes"] is None
