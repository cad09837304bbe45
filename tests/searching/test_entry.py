"""gemmcheck.search outside pytest: each region found and shrunk to its smallest failing
configuration, the example database, what is recorded, and arguments refused before anything
runs."""

import json
import sqlite3
import unittest

import pytest

import pytest_gemmcheck as gc
from gemmcheck_dev import search_region_kernels as regions
from pytest_gemmcheck.errors import CaseError, GemmcheckFailure

SMALL = dict(n=(64, 256, 64), k=(128, 512, 128))


def config(m, n, k, quant="bf16", params=None):
    return {"m": m, "n": n, "k": k, "quant": quant, "params": params or {}}


def edge(boundary: dict) -> dict:
    """An axis's boundary without its evidence."""
    return {key: value for key, value in boundary.items() if key != "evidence"}


def test_wrong_when_m_is_half_a_tile_past_an_edge(tmp_path):
    found = gc.search(
        "tail", regions.tail_of_half_a_tile, m=(128, 1024, 64), tile="128x128", repeat=4, db=None, **SMALL
    )
    assert found.minimal == config(192, 64, 128)
    assert str(found) == 'gemmcheck.case("tail", m=192, n=64, k=128, quant="bf16", tile="128x128")'
    assert edge(found.boundary["m"]) == {"fails": 192, "passes": 256, "below": 128, "above": 256, "fails_up_to": 192}
    assert all(probe.failing == (probe.config["m"] % 128 == 64) for probe in found.probes)
    assert found.failing and all(c["m"] % 128 == 64 for c in found.failing)
    first = next(index for index, probe in enumerate(found.probes, 1) if probe.failing)
    assert found.stopped == f"shrunk from the first failing probe, #{first}"
    smallest = found.minimal_probe
    assert smallest.launch_count == 1 and smallest.result.stopped  # stopped at its first bad launch
    assert "m: m=192 fails; m=128 and m=256 pass" in found.summary()


def test_wrong_when_k_spans_fewer_than_three_steps_on_some_launches():
    found = gc.search("short_k", regions.short_k, m=(64, 256, 64), n=(64, 256, 64), k=(64, 1024, 64), repeat=4, db=None)
    assert found.minimal == config(64, 64, 64)
    assert edge(found.boundary["k"]) == {"fails": 64, "passes": 320, "below": None, "above": 320, "fails_up_to": 256}
    for probe in found.probes:
        # wrong only on the third launch: a probe that fails has three launches, the last one bad
        assert probe.failing == (probe.config["k"] <= 256)
        if probe.phase != "evidence":
            assert probe.launch_count == (3 if probe.failing else 4)
            assert [launch.index for launch in probe.result.bad_launches] == ([3] if probe.failing else [])
    # 1 launch in 3 is told from k=320's clean launches by 12 more launches of k=64 (5/15 bad) and 17 more
    # of k=320 (0/21): one-sided Fisher p = C(15, 5)/C(36, 5) = 0.008, under 0.05 shared among six sides
    evidence = found.boundary["k"]["evidence"]
    assert evidence["fails"] == [5, 15] and (evidence["above"]["bad"], evidence["above"]["launches"]) == (0, 21)
    assert [(p.config["k"], p.launch_count) for p in found.probes if p.phase == "evidence"] == [(64, 12), (320, 17)]
    assert "k: fails at every" not in found.summary() and "k: k=64 up to k=256 fails; k=320 passes" in found.summary()
    assert "    5/15 of its launches bad, over 2 probes" in found.summary().splitlines()


def test_wrong_for_one_params_value():
    found = gc.search(
        "split",
        regions.split_four,
        m=(64, 512, 64),
        n=(64, 256, 64),
        k=(128, 512, 128),
        params={"split": [1, 2, 4], "swizzle": [False, True]},
        repeat=2,
        db=None,
    )
    assert found.minimal == config(64, 64, 128, params={"split": 4, "swizzle": False})
    assert edge(found.boundary["params"]["split"]) == {"fails": 4, "passes": 1, "other": 1}
    # fails either way
    assert edge(found.boundary["params"]["swizzle"]) == {"fails": False, "passes": None, "other": None}
    assert all(probe.failing == (probe.config["params"]["split"] == 4) for probe in found.probes)
    assert str(found).endswith('params={"split": 4, "swizzle": False})')


def test_ties_of_shape_go_to_the_smaller_operands():
    # wrong in every quant mode at m % 128 == 64: ptpc's fp8 operands take half bf16's memory
    found = gc.search(
        "tie", regions.tail_of_half_a_tile, m=(128, 512, 64), n=64, k=128, quant=["bf16", "ptpc"], repeat=2, db=None
    )
    assert found.minimal == config(192, 64, 128, quant="ptpc")


def test_a_correct_kernel_gives_none(tmp_path):
    found = gc.search(
        "clean", regions.correct, m=(64, 512, 64), n=(64, 512, 64), k=(128, 512, 128), repeat=2, examples=12, db=None
    )
    assert found.minimal is None and found.failing == [] and found.boundary == {}
    assert len(found.probes) == 12 and all(probe.verdict == "pass" for probe in found.probes)
    assert len({json.dumps(probe.config) for probe in found.probes}) == 12  # none probed twice
    assert str(found) == "# gemmcheck.search clean: no failing configuration in 12 probes"
    assert found.stopped == "12 examples drawn, none failing"


def test_a_space_smaller_than_the_examples_is_tried_whole():
    found = gc.search("clean", regions.correct, m=(64, 128, 64), n=64, k=(128, 256, 128), repeat=1, db=None)
    assert sorted((p.config["m"], p.config["k"]) for p in found.probes) == [
        (64, 128),
        (64, 256),
        (128, 128),
        (128, 256),
    ]
    assert found.stopped == "every one of the 4 configurations tried"


def test_the_same_seed_tries_the_same_configurations():
    def tried(seed):
        found = gc.search(
            "clean",
            regions.correct,
            m=(64, 1024, 64),
            n=(64, 1024, 64),
            k=(128, 1024, 128),
            repeat=1,
            examples=8,
            seed=seed,
            db=None,
        )
        return [probe.config for probe in found.probes]

    assert tried(3) == tried(3)
    assert tried(3) != tried(4)


def test_make_launch_that_raises_is_a_failing_probe_with_its_evidence():
    def make_launch(case, x):
        if case.m > 128:
            raise ValueError(f"no kernel for m={case.m}")
        return regions.correct(case, x)

    found = gc.search("compile", make_launch, m=(64, 512, 64), n=64, k=128, repeat=2, db=None)
    assert found.minimal == config(192, 64, 128)
    probe = found.minimal_probe
    assert probe.note == "make_launch raised ValueError" and probe.result.kinds == ["raised"]
    assert "no kernel for m=192" in probe.result.message and "no kernel for m=192" in found.summary()


def test_a_kernel_that_raises_is_a_failing_probe():
    def make_launch(case, x):
        def launch(out):
            if case.k >= 384:
                raise RuntimeError("illegal memory access")
            regions.gemm(x, out)

        return launch

    found = gc.search("raises", make_launch, m=64, n=64, k=(128, 1024, 128), repeat=2, db=None)
    assert found.minimal == config(64, 64, 384)
    assert found.minimal_probe.result.kinds == ["raised"] and found.minimal_probe.note == ""
    assert found.boundary["k"]["below"] == 256


def test_a_spent_budget_starts_no_probe():
    found = gc.search("clean", regions.correct, m=(64, 512, 64), n=64, k=128, budget=1e-6, db=None)
    assert found.probes == [] and found.minimal is None
    assert found.stopped == "stopped when the budget of 1e-06 s ran out"


def test_a_failure_found_once_replays_first(tmp_path):
    def search():
        return gc.search("tail", regions.tail_of_half_a_tile, m=(128, 1024, 64), repeat=2, rootdir=tmp_path, **SMALL)

    first = search()
    assert first.replayed == 0 and first.minimal == config(192, 64, 128)
    assert list((tmp_path / ".gemmcheck" / "search").iterdir())
    second = search()
    assert second.replayed == 1 and second.probes[0].config == first.minimal
    assert second.minimal == first.minimal and len(second.probes) < len(first.probes)


def test_db_none_writes_nothing(tmp_path):
    found = gc.search(
        "tail", regions.tail_of_half_a_tile, m=(128, 512, 64), repeat=2, rootdir=tmp_path, db=None, **SMALL
    )
    assert found.minimal is not None
    assert not (tmp_path / ".gemmcheck").exists()


def test_probes_are_recorded_under_the_searchs_tag_and_coverage_shows_them(tmp_path, capsys):
    from pytest_gemmcheck.cli import main

    found = gc.search("tail", regions.tail_of_half_a_tile, m=(128, 512, 64), repeat=2, rootdir=tmp_path, **SMALL)
    database = tmp_path / ".gemmcheck" / "history.db"
    with sqlite3.connect(database) as connection:
        ((tag,),) = connection.execute("select tag from run").fetchall()
        results = connection.execute("select count(*) from result").fetchone()[0]
    assert tag == "search:tail" and results == len(found.probes)
    capsys.readouterr()
    assert main(["--db", str(database), "coverage", "--tag", "search:tail", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    configurations = {(row["kernel"], row["quant"], row["shape"]) for row in shown["matrix"]}
    assert configurations == {
        ("tail", "bf16", f"{p.config['m']}x{p.config['n']}x{p.config['k']}") for p in found.probes
    }


def test_a_sessions_search_records_in_its_run(tmp_path):
    with gc.session(db=tmp_path / "h.db", tag="nightly", rootdir=tmp_path) as session:
        found = session.search("tail", regions.tail_of_half_a_tile, m=(128, 256, 64), n=64, k=128, repeat=2)
    assert [result.key for result in session.results] == [probe.result.key for probe in found.probes]
    with sqlite3.connect(tmp_path / "h.db") as connection:
        assert connection.execute("select tag from run").fetchall() == [("nightly",)]


def test_the_result_travels_as_a_dict():
    found = gc.search(
        "split", regions.split_four, m=(64, 128, 64), n=64, k=128, params={"split": [1, 4]}, repeat=2, db=None
    )
    again = gc.SearchResult.from_dict(json.loads(json.dumps(found.to_dict())))
    assert again.to_dict() == found.to_dict()
    assert str(again) == str(found) and again.summary() == found.summary()
    assert again.probes[0].result.launches[0].index == 1


@pytest.mark.parametrize(
    "arguments,message",
    [
        (dict(m=(256, 128, 64)), "m=(256, 128, 64): lo 256 is above hi 128"),
        (dict(m=(60, 1024, 64)), "m=(60, 1024, 64): lo and hi must be multiples of the step 64"),
        (dict(k=(128, 1000, 128)), "k=(128, 1000, 128): lo and hi must be multiples of the step 128"),
        (dict(n=(64, 1024)), "n=(64, 1024): expected (lo, hi, step)"),
        (dict(m=[64, 128.5]), "m: 128.5 is not a whole number >= 1"),
        (dict(n=(0, 64, 64)), "lo and step must be >= 1"),
        (dict(m="64"), "m='64': expected (lo, hi, step)"),
        (dict(quant=["bf16", "nope"]), "quant='nope' is not a known quant mode"),
        (dict(quant=[]), "quant=[]: expected a non-empty list"),
        (dict(quant=["ptpc", "ptpc"]), "quant lists 'ptpc' twice"),
        (dict(params=[("split", [1])]), "params=[('split', [1])]: expected a dict"),
        (dict(params={"split": []}), "params['split']=[]: expected a non-empty list"),
        (dict(params={"split": 4}), "params['split']=4: expected a non-empty list"),
        (dict(params={"split": [float("nan")]}), "params['split']: nan is not a JSON value"),
        (dict(quant="mxfp8", k=(16, 256, 16)), "quant='mxfp8' needs K to be a multiple of 32"),
        (dict(tile="12"), "tile='12' is not of the form 'MxN'"),
        (dict(examples=0), "examples must be a whole number >= 1, got 0"),
        (dict(budget=-1), "budget: expected a number of seconds > 0, got -1"),
        (dict(repeat=0), "repeat: expected a whole number of launches from 1 to 1,000,000 or 'auto', got 0"),
        (dict(seed=-1), "seed must be a whole number >= 0, got -1"),
        (dict(stages=3), "gemmcheck.search got unknown argument(s) stages"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(tmp_path, arguments, message):
    made = []
    axes = {"m": (64, 256, 64), "n": 64, "k": (128, 256, 128), **arguments}
    with pytest.raises(CaseError) as raised:
        gc.search("kern", lambda case, x: made.append(case), db=None, rootdir=tmp_path, **axes)
    assert message in str(raised.value)
    assert made == []


def test_make_launch_must_be_callable_and_give_a_launch():
    with pytest.raises(CaseError, match="make_launch must be a callable"):
        gc.search("kern", None, m=64, n=64, k=128, db=None)
    with pytest.raises(CaseError, match=r"make_launch\(case, inputs\) must return the launch.*m=64, n=64, k=128"):
        gc.search("kern", lambda case, x: None, m=64, n=64, k=128, db=None)


@pytest.mark.parametrize(
    "skip",
    [pytest.skip, lambda reason: (_ for _ in ()).throw(unittest.SkipTest(reason))],
    ids=["pytest.skip", "unittest.SkipTest"],
)
def test_make_launch_that_skips_leaves_the_configuration_out(skip):
    def make_launch(case, x):
        if case.m == 192:
            skip("no kernel for m=192")
        return regions.tail_of_half_a_tile(case, x)

    try:
        found = gc.search("tail", make_launch, m=(128, 1024, 64), tile="128x128", repeat=2, db=None, **SMALL)
    except pytest.skip.Exception as exc:
        pytest.fail(f"the whole search was skipped: {exc}")
    assert found.minimal == config(320, 64, 128)  # the bug at the next configuration is still found
    assert edge(found.boundary["m"]) == {"fails": 320, "passes": 384, "below": 256, "above": 384, "fails_up_to": 320}
    assert {entry["reason"] for entry in found.skipped} == {"no kernel for m=192"}
    assert {entry["config"]["m"] for entry in found.skipped} == {192}
    assert not any(probe.config["m"] == 192 for probe in found.probes)  # no case ran for it, nothing recorded
    assert "skipped by make_launch, left out of the search:" in found.summary()
    assert 'm=192, n=64, k=128, quant="bf16": no kernel for m=192' in found.summary()


def test_a_list_of_values_is_searched_as_those_values():
    found = gc.search("tail", regions.tail_of_half_a_tile, m=[128, 256, 64], n=64, k=128, repeat=2, db=None)
    assert {probe.config["m"] for probe in found.probes} <= {64, 128, 256}  # never 192, as (128, 256, 64) would be
    assert found.minimal == config(64, 64, 128) and found.space["m"] == {"values": [64, 128, 256]}
    assert edge(found.boundary["m"]) == {"fails": 64, "passes": 128, "below": None, "above": 128, "fails_up_to": 64}


def test_a_required_sanitizer_that_cannot_run_stops_the_search_as_that():
    """On the CPU no compute-sanitizer can run: no configuration fails for it, the search stops
    with the requirement's failure, and every probe's verdict is what its launches say."""
    results = []
    with gc.session(db=None, sanitize="racecheck", require_sanitize=True, on_result=results.append) as session:
        with pytest.raises(GemmcheckFailure) as raised:
            session.search("clean", regions.correct, m=(64, 256, 64), n=64, k=128, repeat=2)
    message = str(raised.value)
    assert message.startswith(
        'gemmcheck.search clean: stopped at its probe of m=64, n=64, k=128, quant="bf16": '
        "compute-sanitizer racecheck: skipped: "
    )
    assert "(--gemmcheck-require-sanitize: the launch must be sanitized)" in message
    assert "no shape is reported" in message and "smallest failing" not in message
    assert [result.verdict for result in results] == ["pass"]
