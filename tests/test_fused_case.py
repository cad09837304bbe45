"""case.run with the fused check gives the torch path's verdicts, launch by launch. On a
machine without a GPU the Triton interpreter runs the kernels."""

import pytest

from kernels import FaultInjector, tiled_gemm
from pytest_gemmcheck.errors import GemmcheckFailure
from pytest_gemmcheck.config.options import Settings

fused_check = pytest.importorskip("test_fused_check").fused_check  # loads it under the interpreter

SCENARIOS = {
    "clean": dict(fault="tile", launches=set()),
    "tile on 2, 5, 9": dict(fault="tile", launches={2, 5, 9}, at=(16, 32)),
    "subtle on 6": dict(fault="subtle", launches={6}, count=20, fraction=0.02),
    "bad first launch": dict(fault="subtle", launches={1}, count=20, fraction=0.02),
    "unwritten tile": dict(fault="unwritten", launches={3}, at=(0, 16)),
}


def run(make_case, backend, scenario, deterministic=None):
    results = []
    case = make_case("fused_vs_torch", m=96, n=80, k=128, quant="ptpc", tile="16x16", deterministic=deterministic,
                     settings=Settings(repeat=12, check_backend=backend), record=results.append)
    x = case.inputs()
    try:
        case.run(FaultInjector(lambda out: tiled_gemm(x, out, tile=(32, 32)), **SCENARIOS[scenario]))
    except GemmcheckFailure:
        pass
    (result,) = results
    launches = [(l.index, l.kinds, l.wrong, l.nonfinite, l.differing, l.wrong_rows, l.wrong_tiles, l.differing_rows)
                for l in result.launches]
    return result, launches


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_fused_and_torch_backends_agree(make_case, monkeypatch, scenario):
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # off the GPU, the interpreter stands in
    torch_result, torch_launches = run(make_case, "torch", scenario)
    fused_result, fused_launches = run(make_case, "triton", scenario)
    assert (torch_result.check_backend, fused_result.check_backend) == ("torch", "triton")
    assert fused_launches == torch_launches
    assert fused_result.consensus_size == torch_result.consensus_size
    assert fused_result.verdict == torch_result.verdict


def test_fused_backend_without_consistency(make_case, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    _, torch_launches = run(make_case, "torch", "subtle on 6", deterministic=False)
    _, fused_launches = run(make_case, "triton", "subtle on 6", deterministic=False)
    assert fused_launches == torch_launches


TAMPERINGS = {
    # launches 1-5 each differ in their own way, then the majority: more outputs than are kept
    "beyond the kept copies": lambda number, out: out.__setitem__((0, number), out[0, number] + 1.0)
    if number <= 5 else None,
    # launches 2 and 7 give the same wrong bits, 4 its own: groups of equal outputs
    "repeated bad output": lambda number, out: out.__setitem__((3, 3), out[3, 3] * 1.01)
    if number in (2, 7) else (out.__setitem__((5, 1), -out[5, 1]) if number == 4 else None),
}


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_checksum_grouping_matches_bitwise_comparison(make_case, monkeypatch, tampering):
    """The fused backend groups outputs by checksum and compares kept copies only at the end;
    the torch backend compares every output with the kept copies. Same launches flagged, same
    counts, same notes."""
    from kernels import bf16_matmul

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    outcomes = {}
    for backend in ("torch", "triton"):
        results = []
        case = make_case("race", m=32, n=48, k=64, quant="bf16", settings=Settings(repeat=12, check_backend=backend),
                         record=results.append)
        x = case.inputs()
        count = [0]

        def launch(out):
            count[0] += 1
            bf16_matmul(x, out)
            TAMPERINGS[tampering](count[0], out)

        with pytest.raises(GemmcheckFailure):
            case.run(launch)
        (result,) = results
        outcomes[backend] = ([(l.index, l.kinds, l.differing, l.differing_rows, l.differing_row_ids, l.max_diff_rel)
                              for l in result.launches], result.consensus_size, result.consensus_note)
    assert outcomes["triton"] == outcomes["torch"]
    assert any(kinds for _, kinds, *rest in outcomes["torch"][0])
