"""The launch loop queued ahead (in_flight.py) gives the numbers of the loop that checks every
launch in full and reads each launch before the next one, launch by launch: every field of every
record, the verdict, the consensus and the message, on clean and racy kernels and on kernels
that change their inputs, write outside ``out``, leave it unwritten, return their own tensor,
write into a reference they were given, raise or hang. On the torch check (bit-for-bit
comparison with the outputs checked so far) and on the fused check under Triton's interpreter,
queued three launches ahead over a ring of four buffers."""

import dataclasses
import random
import sys
import time
from pathlib import Path

import pytest
import torch
from kernels import FaultInjector, tiled_gemm

from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import GemmcheckFailure, LaunchError
from pytest_gemmcheck.launch import in_flight

AHEAD = in_flight.Pipeline(ring=4, guard_depth=3, check_depth=3)
# launches 5 to 8 of 9 in two batches of two (launch 1 is checked in full first, and 9 ends the run)
BATCHED = in_flight.Pipeline(ring=4, guard_depth=3, check_depth=3, batch=2)


class Racy:
    """A kernel that goes wrong on some launches, by a seeded draw per call: a tile off, a few
    elements moved under the 5% rule, a row negated, a tile unwritten."""

    def __init__(self, x, seed):
        self.x, self.rng, self.calls = x, random.Random(seed), 0

    def __call__(self, out):
        self.calls += 1
        tiled_gemm(self.x, out)
        draw = self.rng.random()
        r, c = self.rng.randrange(0, 32, 16), self.rng.randrange(0, 32, 16)
        if draw < 0.15:
            out[r : r + 16, c : c + 16] *= 1.5
        elif draw < 0.3:
            out[r, c : c + 3] += out[r].abs().max() * 0.02
        elif draw < 0.4:
            out[r] = -out[r]
        elif draw < 0.5:
            out[r : r + 16, c : c + 16] = float("nan")


def stale_own_buffer(x):
    mine = torch.empty(40, 48, dtype=torch.bfloat16, device=x.a.device)
    tiled_gemm(x, mine)
    return lambda out: mine


def own_buffer(x):
    mine = torch.empty(40, 48, dtype=torch.bfloat16, device=x.a.device)
    return lambda out: tiled_gemm(x, mine) or mine


def on_calls(calls, act, kernel=tiled_gemm):
    """``kernel(x, out)``, then ``act(x, out, seen_outputs, case)`` on the calls numbered in ``calls``."""

    def make(x, case=None):
        seen, count = [], [0]

        def launch(out):
            count[0] += 1
            seen.append(out)
            result = kernel(x, out)
            if count[0] in calls:
                act(x, out, seen, case)
            return result

        return launch

    return make


def write_outside(x, out, seen, case):
    torch.as_strided(out, (3,), (1,), out.storage_offset() - 3).zero_()
    torch.as_strided(out, (out.numel() + 5,), (1,))[out.numel() :] = 0


def hang(x, out, seen, case):
    time.sleep(3)


def boom(x, out, seen, case):
    raise RuntimeError("illegal memory access")


def scribble_on_the_previous_output(x, out, seen, case):
    seen[-2].fill_(7.0)


def one_off_then_scribbled(x, out, seen, case):
    if len(seen) == 3:
        out[0, 0] += 1.0
    else:
        seen[2].fill_(7.0)


SCENARIOS = {
    "clean": lambda x, case: lambda out: tiled_gemm(x, out),
    "racy": lambda x, case: Racy(x, 7),
    "racy, another draw": lambda x, case: Racy(x, 12),
    "tile and subtle faults": lambda x, case: FaultInjector(
        lambda out: tiled_gemm(x, out), "subtle", {1, 6}, count=5, fraction=0.02
    ),
    "unwritten tile on 4": lambda x, case: FaultInjector(lambda out: tiled_gemm(x, out), "unwritten", {4}, at=(16, 16)),
    "changes input a on 3": on_calls({3}, lambda x, out, seen, case: x.a[3:6].view(torch.uint8).bitwise_xor_(1)),
    # on every call: a launch queued behind one that changed its input runs again, so a ring's
    # depth of calls per launch (a run on a GPU makes more calls than it has launches)
    "changes b_scale on every launch": on_calls(range(1, 1 << 30), lambda x, out, seen, case: x.b_scale.add_(1.0)),
    "writes outside out on 2 and 5": on_calls({2, 5}, write_outside),
    "returns its own tensor": lambda x, case: own_buffer(x),
    "returns a stale tensor of its own": lambda x, case: stale_own_buffer(x),
    "writes into a reference it was given on 4": lambda x, case: on_calls(
        {4}, lambda x, out, seen, case: case.given.__setitem__((slice(0, 2),), float("nan"))
    )(x, case),
    "scribbles on the previous output on 3": on_calls({3}, scribble_on_the_previous_output),
    "a new output scribbled on by the next launch": on_calls({3, 4}, one_off_then_scribbled),
    "raises on 4": on_calls({4}, boom),
    "raises on 6": on_calls({6}, boom),  # the second launch of a batch
    "hangs on 5": on_calls({5}, hang),
}


def run(make_case, backend, scenario, *, repeat_check, pipeline, monkeypatch, deterministic=None):
    monkeypatch.setattr(in_flight, "FORCED", pipeline)
    monkeypatch.setattr(in_flight, "GRAPHS_REPAID_AFTER", 0)  # on a GPU, graphs and batches in a run of 9 too
    results = []
    case = make_case(
        f"pipeline_{backend}",
        m=40,
        n=48,
        k=64,
        quant="ptpc",
        tile="16x16",
        deterministic=deterministic,
        settings=Settings(repeat=9, check_backend=backend, repeat_check=repeat_check, launch_timeout=0.5),
        record=results.append,
    )
    x = case.inputs()
    if pipeline is not BATCHED or "reference" in scenario:  # batches are for cases that hand out none
        case.given = case.reference()
    try:
        case.run(SCENARIOS[scenario](x, case))
    except (GemmcheckFailure, LaunchError):
        pass
    (result,) = results
    return result


def every_number(result):
    launches = [
        {name: value for name, value in dataclasses.asdict(launch).items() if name not in ("elapsed_s", "pid")}
        for launch in result.launches
    ]
    return launches, result.verdict, result.consensus_size, result.consensus_note, result.worst_tiles, result.message


@pytest.mark.parametrize("deterministic", [None, False], ids=["deterministic", "nondeterministic"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_torch_check_by_comparison_gives_the_full_checks_numbers(make_case, monkeypatch, scenario, deterministic):
    full = run(
        make_case,
        "torch",
        scenario,
        repeat_check="full",
        pipeline=None,
        monkeypatch=monkeypatch,
        deterministic=deterministic,
    )
    fast = run(
        make_case,
        "torch",
        scenario,
        repeat_check="checksum",
        pipeline=None,
        monkeypatch=monkeypatch,
        deterministic=deterministic,
    )
    assert every_number(fast) == every_number(full)


@pytest.mark.parametrize("pipeline", [AHEAD, BATCHED], ids=["ahead", "batched"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_fused_check_queued_ahead_gives_the_full_checks_numbers(
    make_case, fused_anywhere, monkeypatch, scenario, pipeline
):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checking" / "triton"))
    pytest.importorskip("test_fused_check")  # loads the fused check under the interpreter, off the GPU
    full = run(make_case, "triton", scenario, repeat_check="full", pipeline=None, monkeypatch=monkeypatch)
    ahead = run(make_case, "triton", scenario, repeat_check="checksum", pipeline=pipeline, monkeypatch=monkeypatch)
    assert ahead.check_backend == "triton"
    if scenario in UNKNOWN_AHEAD:
        unknown = UNKNOWN_AHEAD[scenario]
        assert_unknown_ahead(ahead, full, unknown)
        for result in (ahead, full):  # the rest as the full checks have it
            del result.launches[unknown - 1]
            result.launches[unknown - 1].wrote_outside = ""
            result.message = ""
    assert every_number(ahead) == every_number(full)


# Queued ahead, only a run's first launch is checked in full behind it; the others by their
# checksum, and in full when they are read if that is new. A new output that the next launch
# writes into before it is read cannot be checked then: its accuracy is not known, it is bad all
# the same (off the consensus), and the launch that wrote into it is blamed.
UNKNOWN_AHEAD = {"a new output scribbled on by the next launch": 3}


def assert_unknown_ahead(ahead, full, index):
    lost, checked = ahead.launches[index - 1], full.launches[index - 1]
    assert checked.kinds == ["wrong", "inconsistent"] and checked.error is None
    assert lost.kinds == ["inconsistent"] and lost.wrong == 0
    assert lost.error.startswith("its accuracy is not known: a later launch wrote into its output before its check")
    assert [launch.index for launch in ahead.bad_launches] == [launch.index for launch in full.bad_launches]
    assert ahead.verdict == full.verdict != "pass"
    blamed = f"wrote into the other output buffer, which held launch {index}'s output until its check"
    for result in (ahead, full):
        assert result.launches[index].wrote_outside.startswith(blamed)
        assert f"launch {index + 1}: {blamed}" in result.message


def test_the_scenarios_are_what_they_say(make_case, monkeypatch):
    """Each scenario's full-check result shows its fault, so that the comparisons above compare
    something."""
    kinds = {
        name: {
            kind
            for launch in run(
                make_case, "torch", name, repeat_check="full", pipeline=None, monkeypatch=monkeypatch
            ).launches
            for kind in launch.kinds
        }
        for name in SCENARIOS
    }
    assert kinds["clean"] == set() and kinds["returns its own tensor"] == set()
    assert {"wrong", "nonfinite"} <= kinds["racy"] | kinds["racy, another draw"]
    assert (
        "changed_input" in kinds["changes input a on 3"] and "changed_input" in kinds["changes b_scale on every launch"]
    )
    assert "changed_input" in kinds["writes into a reference it was given on 4"]
    assert kinds["writes outside out on 2 and 5"] == {"wrote_outside"}
    assert "unwritten" in kinds["returns a stale tensor of its own"] and "nonfinite" in kinds["unwritten tile on 4"]
    assert kinds["raises on 4"] == kinds["raises on 6"] == {"raised"} and kinds["hangs on 5"] == {"hung"}


def test_launches_queued_after_a_changed_input_run_again(make_case, fused_anywhere, monkeypatch):
    """Launches 4 to 6 were queued before launch 3's guards were read, on the input launch 3
    changed: they are called again after it is restored, and only launch 3 is blamed."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checking" / "triton"))
    pytest.importorskip("test_fused_check")
    calls = []

    def counting(x, case):
        launch = on_calls({3}, lambda x, out, seen, case: x.a[3:6].view(torch.uint8).bitwise_xor_(1))(x, case)
        return lambda out: calls.append(1) or launch(out)

    monkeypatch.setitem(SCENARIOS, "counted", counting)
    result = run(make_case, "triton", "counted", repeat_check="checksum", pipeline=AHEAD, monkeypatch=monkeypatch)
    assert [launch.index for launch in result.launches] == list(range(1, 10))
    assert [launch.index for launch in result.bad_launches] == [3]
    assert result.launches[2].changed_inputs == {"a": 3}
    assert len(calls) == 9 + 3


def queued_ahead_case(make_case, monkeypatch, results):
    """The case of :func:`run` on the fused check queued ahead, for several runs into ``results``."""
    monkeypatch.setattr(in_flight, "FORCED", AHEAD)
    monkeypatch.setattr(in_flight, "GRAPHS_REPAID_AFTER", 0)
    return make_case(
        "pipeline_triton",
        m=40,
        n=48,
        k=64,
        quant="ptpc",
        tile="16x16",
        settings=Settings(repeat=9, check_backend="triton", repeat_check="checksum", launch_timeout=0.5),
        record=results.append,
    )


@pytest.mark.parametrize("scenario", ["clean", "racy", "tile and subtle faults"])
def test_a_second_run_of_a_case_takes_the_numbers_of_outputs_the_first_checked_in_full(
    make_case, fused_anywhere, monkeypatch, scenario
):
    """The outputs a run checked in full stay known to its case's reference: a second run gives
    the numbers of a run that checks every launch in full, and checks in full only outputs the
    first did not see (none, for a clean kernel)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checking" / "triton"))
    pytest.importorskip("test_fused_check")
    from pytest_gemmcheck.checking.triton import fused_check

    full = run(make_case, "triton", scenario, repeat_check="full", pipeline=None, monkeypatch=monkeypatch)
    results = []
    case = queued_ahead_case(make_case, monkeypatch, results)
    x = case.inputs()
    case.given = case.reference()
    checked_in_full = []
    prepare = fused_check.prepare_check
    monkeypatch.setattr(fused_check, "prepare_check", lambda *a, **k: checked_in_full.append(1) or prepare(*a, **k))
    full_checks = []
    for _ in range(2):
        before = len(checked_in_full)
        try:
            case.run(SCENARIOS[scenario](x, case))
        except GemmcheckFailure:
            pass
        full_checks.append(len(checked_in_full) - before)
    first, second = results
    assert every_number(second) == every_number(full) == every_number(first)
    assert full_checks[0] >= 1
    if scenario == "clean":
        assert full_checks[1] == 0


def test_each_run_of_a_case_guards_its_inputs_as_they_are_when_it_begins(make_case, fused_anywhere, monkeypatch):
    """The inputs' checksums before a run's first launch are taken again by every run (on a GPU
    from a graph the case's kept ring replays): a run whose launch 3 changes input a blames
    launch 3 alone, and the runs before and after it, on inputs restored, blame none."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checking" / "triton"))
    pytest.importorskip("test_fused_check")
    results = []
    case = queued_ahead_case(make_case, monkeypatch, results)
    x = case.inputs()
    changing = on_calls({3}, lambda x, out, seen, case: x.a[3:6].view(torch.uint8).bitwise_xor_(1))
    for make in (SCENARIOS["clean"], SCENARIOS["clean"], changing, SCENARIOS["clean"]):
        try:
            case.run(make(x, case))
        except GemmcheckFailure:
            pass
    assert [[launch.index for launch in result.bad_launches] for result in results] == [[], [], [3], []]
    assert results[2].launches[2].changed_inputs == {"a": 3}
    assert all(len(result.launches) == 9 for result in results)
