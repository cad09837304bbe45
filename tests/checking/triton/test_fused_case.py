"""case.run with the fused check gives the torch path's verdicts, launch by launch. On a
machine without a GPU the Triton interpreter runs the kernels."""

import dataclasses

import pytest
import torch
from kernels import FaultInjector, tiled_gemm

from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import GemmcheckFailure

fused_check = pytest.importorskip("test_fused_check").fused_check  # loads it under the interpreter

SCENARIOS = {
    "clean": dict(fault="tile", launches=set()),
    "tile on 2, 5, 9": dict(fault="tile", launches={2, 5, 9}, at=(16, 32)),
    "subtle on 6": dict(fault="subtle", launches={6}, count=20, fraction=0.02),
    "bad first launch": dict(fault="subtle", launches={1}, count=20, fraction=0.02),
    "unwritten tile": dict(fault="unwritten", launches={3}, at=(0, 16)),
}


def run(make_case, backend, scenario, deterministic=None, repeat_check="checksum"):
    results = []
    case = make_case(
        "fused_vs_torch",
        m=96,
        n=80,
        k=128,
        quant="ptpc",
        tile="16x16",
        deterministic=deterministic,
        settings=Settings(repeat=12, check_backend=backend, repeat_check=repeat_check),
        record=results.append,
    )
    x = case.inputs()
    try:
        case.run(FaultInjector(lambda out: tiled_gemm(x, out, tile=(32, 32)), **SCENARIOS[scenario]))
    except GemmcheckFailure:
        pass
    (result,) = results
    launches = [
        (
            launch.index,
            launch.kinds,
            launch.wrong,
            launch.nonfinite,
            launch.differing,
            launch.wrong_rows,
            launch.wrong_tiles,
            launch.differing_rows,
        )
        for launch in result.launches
    ]
    return result, launches


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_fused_and_torch_backends_agree(make_case, fused_anywhere, scenario):
    torch_result, torch_launches = run(make_case, "torch", scenario)
    fused_result, fused_launches = run(make_case, "triton", scenario)
    assert (torch_result.check_backend, fused_result.check_backend) == ("torch", "triton")
    assert fused_launches == torch_launches
    assert fused_result.consensus_size == torch_result.consensus_size
    assert fused_result.verdict == torch_result.verdict


def every_number(result):
    return [
        {name: value for name, value in dataclasses.asdict(launch).items() if name not in ("elapsed_s", "pid")}
        for launch in result.launches
    ]


@pytest.mark.parametrize("deterministic", [None, False], ids=["deterministic", "nondeterministic"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_repeats_by_checksum_give_the_full_checks_numbers(
    make_case, fused_anywhere, monkeypatch, scenario, deterministic
):
    """--gemmcheck-repeat-check=checksum against full: every number of every launch the same,
    and the same verdict, while the reference is read only for the outputs not seen before."""
    from pytest_gemmcheck.checking.triton import fused_check as api

    full_checks = []
    prepare = api.prepare_check
    monkeypatch.setattr(api, "prepare_check", lambda *a, **k: full_checks.append(1) or prepare(*a, **k))
    full, _ = run(make_case, "triton", scenario, deterministic, repeat_check="full")
    assert len(full_checks) == 12
    full_checks.clear()
    from pytest_gemmcheck.launch import in_flight

    pipelines = []
    pipeline_for = in_flight.pipeline_for
    monkeypatch.setattr(
        in_flight, "pipeline_for", lambda *a, **k: pipelines.append(pipeline_for(*a, **k)) or pipelines[-1]
    )
    repeated, _ = run(make_case, "triton", scenario, deterministic)
    assert every_number(repeated) == every_number(full)
    assert (repeated.verdict, repeated.consensus_size, repeated.message) == (
        full.verdict,
        full.consensus_size,
        full.message,
    )
    # launch 1 in full behind it (the launches queued behind it take the checksum pass, on a
    # GPU a ring's depth of them); then one full check per output not seen before: at least one
    # per set of numbers, at most one per launch the fault touched
    (pipeline,) = pipelines
    assert pipeline.ring <= len(full.launches) + 1  # no more outputs than the run has launches
    first = 1
    numbers = {
        repr({k: v for k, v in launch.items() if k not in ("index", "differing", "kinds")})
        for launch in every_number(full)
    }
    assert len(numbers) <= len(full_checks) <= first + len(SCENARIOS[scenario]["launches"])
    if scenario == "clean":
        assert len(full_checks) == first


def test_fused_backend_without_consistency(make_case, fused_anywhere):
    _, torch_launches = run(make_case, "torch", "subtle on 6", deterministic=False)
    _, fused_launches = run(make_case, "triton", "subtle on 6", deterministic=False)
    assert fused_launches == torch_launches


TAMPERINGS = {
    # launches 1-5 each differ in their own way, then the majority: more outputs than are kept
    "beyond the kept copies": lambda number, out: (
        out.__setitem__((0, number), out[0, number] + 1.0) if number <= 5 else None
    ),
    # launches 2 and 7 give the same wrong bits, 4 its own: groups of equal outputs
    "repeated bad output": lambda number, out: (
        out.__setitem__((3, 3), out[3, 3] * 1.01)
        if number in (2, 7)
        else (out.__setitem__((5, 1), -out[5, 1]) if number == 4 else None)
    ),
}


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_checksum_grouping_matches_bitwise_comparison(make_case, fused_anywhere, tampering):
    """The fused backend groups outputs by checksum and compares kept copies only at the end;
    the torch backend compares every output with the kept copies. Same launches flagged, same
    counts, same notes."""
    from kernels import bf16_matmul

    outcomes = {}
    for backend in ("torch", "triton"):
        results = []
        case = make_case(
            "race",
            m=32,
            n=48,
            k=64,
            quant="bf16",
            settings=Settings(repeat=12, check_backend=backend),
            record=results.append,
        )
        x = case.inputs()
        count = [0]

        def launch(out):
            count[0] += 1
            bf16_matmul(x, out)
            TAMPERINGS[tampering](count[0], out)

        with pytest.raises(GemmcheckFailure):
            case.run(launch)
        (result,) = results
        outcomes[backend] = (
            [
                (
                    launch.index,
                    launch.kinds,
                    launch.differing,
                    launch.differing_rows,
                    launch.differing_row_ids,
                    launch.max_diff_rel,
                )
                for launch in result.launches
            ],
            result.consensus_size,
            result.consensus_note,
        )
    assert outcomes["triton"] == outcomes["torch"]
    assert any(kinds for _, kinds, *rest in outcomes["torch"][0])


def guarded_on_both_backends(make_case, kernel, tamper, field):
    """For each backend (torch, triton): each of 5 launches of tiled_gemm as (index, kinds, the
    record's ``field``), ``tamper(number, x, out)`` called after each launch's GEMM."""
    seen = {}
    for backend in ("torch", "triton"):
        results = []
        case = make_case(
            kernel,
            m=40,
            n=24,
            k=64,
            quant="ptpc",
            settings=Settings(repeat=5, check_backend=backend),
            record=results.append,
        )
        x = case.inputs()
        calls = []

        def launch(out):
            calls.append(1)
            tiled_gemm(x, out)
            tamper(len(calls), x, out)

        try:
            case.run(launch)
        except GemmcheckFailure:
            pass
        (result,) = results
        seen[backend] = [(launch.index, launch.kinds, getattr(launch, field)) for launch in result.launches]
    return seen


@pytest.mark.parametrize("name,rows", [("a", 3), ("b", 1), ("a_scale", 2), ("b_scale", 1)])
def test_fused_and_torch_backends_see_the_same_changed_inputs(make_case, fused_anywhere, name, rows):
    """The guard kernel (checking/triton/guard_pass.py) against its torch ops: one byte of each
    changed row, on launch 3 only; the launch is blamed, the input put back."""

    def tamper(number, x, out):
        if number == 3:
            tensor = getattr(x, name)
            for row in range(rows):  # the last byte of a row: the end of a 64-bit word
                tensor[row * 7].view(-1).view(torch.uint8)[-1] ^= 1

    seen = guarded_on_both_backends(make_case, f"changes_{name}", tamper, "changed_inputs")
    assert seen["triton"] == seen["torch"]
    assert [changed for _, _, changed in seen["torch"]] == [{}, {}, {name: rows}, {}, {}]


def test_fused_and_torch_backends_see_the_same_writes_around_out(make_case, fused_anywhere):
    """The guard kernel's canary count against torch's: 3 elements before out on launch 2, 10
    past its end and the last element of the region after it on launch 4."""

    def tamper(number, x, out):
        if number == 2:
            torch.as_strided(out, (3,), (1,), out.storage_offset() - 3).zero_()
        if number == 4:
            past = torch.as_strided(out, (out.numel() + 4096,), (1,))
            past[out.numel() : out.numel() + 10] = 0
            past[-1] = 1.0

    seen = guarded_on_both_backends(make_case, "writes_around_out", tamper, "wrote_outside")
    assert seen["triton"] == seen["torch"]
    assert [words for _, _, words in seen["torch"]] == [
        "",
        "wrote 3 elements before the start of out",
        "",
        "wrote 11 elements past the end of out",
        "",
    ]
