"""The search itself, over probes that only say whether a configuration fails: what it tries,
how it shrinks, its boundary walk, its budget and its errors (no kernel runs here)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.searching import search as search_module
from pytest_gemmcheck.searching.search import Outcome, Search
from pytest_gemmcheck.searching.space import parse_space

REPEAT = 4


def result(config, *, bad: bool, verdict: str | None = None, launches: int = REPEAT) -> CaseResult:
    """A probe's result: every launch bad when ``bad`` (stopped at the first one)."""
    records = [LaunchRecord(index + 1, kinds=["wrong"] if bad else []) for index in range(launches)]
    return CaseResult(
        key="k",
        kernel="kern",
        m=config.m,
        n=config.n,
        k=config.k,
        quant="bf16",
        tile=None,
        out_dtype="bfloat16",
        params={},
        fp8=None,
        seed=0,
        device="cpu",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=records,
        verdict=verdict or ("regression" if bad else "pass"),
    )


def searching(fails, *, examples=100, budget=None, seed=0, verdict=None, skips=lambda config: False, **axes):
    """A search over probes that fail where ``fails`` says, on every launch, and are skipped
    where ``skips`` says; the configurations probed first, in order."""
    space = parse_space(
        **{
            "m": (64, 8192, 64),
            "n": (64, 4096, 64),
            "k": (128, 4096, 128),
            "quant": ["bf16"],
            "params": None,
            "tile": None,
            **axes,
        }
    )
    probed = []

    def probe(config, launches=None, stop_on_bad=True):
        if skips(config):
            return Outcome(None, skipped=f"no kernel for m={config.m}")
        if launches is None:
            probed.append(config)
        bad = fails(config)
        count = 1 if bad and stop_on_bad else launches or REPEAT
        return Outcome(result(config, bad=bad, verdict=verdict, launches=count))

    search = Search(
        kernel="kern",
        space=space,
        probe=probe,
        operand_bytes=lambda quant: 2,
        examples=examples,
        seed=seed,
        budget=budget,
        repeat=REPEAT,
    )
    return search.run(), probed


def edge(boundary: dict) -> dict:
    """A numeric axis's boundary without its evidence."""
    return {key: value for key, value in boundary.items() if key != "evidence"}


def test_a_region_away_from_the_corner_is_shrunk_to_its_smallest_configuration():
    found, probed = searching(lambda c: c.m >= 1000 and c.k % 256 == 0 and c.n >= 512)
    assert found.minimal == {"m": 1024, "n": 512, "k": 256, "quant": "bf16", "params": {}}
    assert len(probed) == len(set(probed))  # no configuration probed twice
    # more launches only of the smallest failing configuration: its probe stopped at its first bad launch
    assert [probe.config for probe in found.probes if probe.phase == "evidence"] == [found.minimal]
    assert edge(found.boundary["m"]) == {"fails": 1024, "passes": 960, "below": 960, "above": None, "fails_up_to": 8192}
    # equally near on either side: the one above
    assert edge(found.boundary["k"]) == {"fails": 256, "passes": 384, "below": 128, "above": 384, "fails_up_to": 256}
    # its first launch, and 12 more to the end, all bad against 0/4 clean: p = 1/C(17, 4), far under 0.05
    # shared among the six sides (3 clean launches would do: 1/C(16, 3) = 1/560)
    assert found.boundary["k"]["evidence"]["fails"] == [13, 13]
    above = found.boundary["k"]["evidence"]["above"]
    assert above["p"] == pytest.approx(1 / 2380) and above["alpha"] == pytest.approx(0.05 / 6)
    assert (above["bad"], above["launches"], above["established"], above["needs"]) == (0, 4, True, 3)


def test_the_first_probe_is_every_axis_at_its_first_preferred_value():
    _, probed = searching(lambda c: False, examples=5)
    assert (probed[0].m, probed[0].n, probed[0].k) == (64, 64, 128)


def test_the_boundary_walk_doubles_then_bisects_to_the_edge_of_the_run():
    found, probed = searching(lambda c: c.k <= 1536, m=64, n=64, k=(64, 4096, 64))
    assert edge(found.boundary["k"]) == {"fails": 64, "passes": 1600, "below": None, "above": 1600, "fails_up_to": 1536}
    walked = [probe for probe in found.probes if probe.phase == "neighbours"]
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
    monkeypatch.setattr(search_module.time, "monotonic", lambda: clock[0])

    def fails(config):
        clock[0] += 1.0  # each probe takes a second
        return config.m % 128 == 64

    found, probed = searching(fails, budget=5.5)
    assert len(found.probes) == 6 and found.stopped == "stopped when the budget of 5.5 s ran out"
    assert found.minimal == {"m": 64, "n": 64, "k": 128, "quant": "bf16", "params": {}}
    # the boundary walk was cut short: what the probes seen say, m=128 passing, n and k none yet
    assert found.boundary["m"]["below"] is None and found.boundary["m"]["above"] == 128
    assert found.boundary["n"]["above"] is None


def test_a_skipped_configuration_is_left_out_and_the_walk_passes_over_it():
    # make_launch skips m=64 (the corner every search tries first) and m=576, just past the failing run
    found, probed = searching(
        lambda c: 128 <= c.m <= 512, skips=lambda c: c.m in (64, 576), m=(64, 1024, 64), n=64, k=128
    )
    assert found.minimal == {"m": 128, "n": 64, "k": 128, "quant": "bf16", "params": {}}
    assert edge(found.boundary["m"]) == {"fails": 128, "passes": 640, "below": None, "above": 640, "fails_up_to": 512}
    assert {entry["config"]["m"] for entry in found.skipped} == {64, 576}
    assert all(entry["reason"] == f"no kernel for m={entry['config']['m']}" for entry in found.skipped)
    assert not any(probe.config["m"] in (64, 576) for probe in found.probes)  # no result for them


def test_a_search_whose_every_configuration_is_skipped_finds_nothing():
    found, probed = searching(lambda c: True, skips=lambda c: True, m=(64, 1024, 64), n=64, k=128, examples=20)
    assert found.minimal is None and found.probes == [] and probed == []
    assert len(found.skipped) == 16  # every configuration of the space, each once


def test_an_axis_of_two_hundred_million_values_takes_no_memory_for_its_values(tmp_path):
    """Run where the address space is capped at 1 GiB: listing m (2*10^8 values) would need gigabytes."""
    script = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        import test_search
        found, probed = test_search.searching(lambda c: c.m >= 1000 and c.k >= 512, m=(1, 2 * 10 ** 8, 1),
                                              n=(1, 2 * 10 ** 8, 1), k=(1, 2 * 10 ** 8, 1), tile=(128, 128),
                                              examples=30)
        print(found.minimal, found.boundary["m"]["below"], found.boundary["k"]["below"])
    """)
    package_root = Path(search_module.__file__).parents[2]  # the package under test, wherever it is imported from
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package_root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    minimal, below_m, below_k = done.stdout.strip().rsplit(" ", 2)
    assert minimal == "{'m': 1000, 'n': 1, 'k': 512, 'quant': 'bf16', 'params': {}}"
    assert (below_m, below_k) == ("999", "511")
