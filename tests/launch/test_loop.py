"""Each detector catches what it is for, and says where: the issue's detection scenarios."""

import pytest
import torch
from kernels import FaultInjector, bf16_matmul, tiled_gemm

from pytest_gemmcheck.errors import GemmcheckFailure


def run_faulty(
    make_case,
    fault,
    launches,
    *,
    quant="ptpc",
    m=256,
    n=256,
    k=256,
    tile="64x64",
    deterministic=None,
    repeat=12,
    **fault_kwargs,
):
    results = []
    case = make_case(
        f"fault_{fault}",
        m=m,
        n=n,
        k=k,
        quant=quant,
        tile=tile,
        deterministic=deterministic,
        repeat=repeat,
        record=results.append,
    )
    x = case.inputs()
    kernel = bf16_matmul if quant == "bf16" else tiled_gemm
    injector = FaultInjector(lambda out: kernel(x, out), fault, launches, **fault_kwargs)
    try:
        case.run(injector)
        failure = None
    except GemmcheckFailure as exc:
        failure = str(exc)
    return results[0], failure


def test_corrupted_16x16_tile_is_caught_and_located(make_case):
    result, failure = run_faulty(make_case, "tile", {4}, tile="16x16", at=(32, 48))
    (bad,) = result.bad_launches
    assert bad.index == 4
    assert "wrong" in bad.kinds and "inconsistent" in bad.kinds
    assert bad.wrong_tiles == 1 and bad.wrong_tile_ids == [[2, 3]]
    assert set(bad.wrong_row_ids) <= set(range(32, 48))
    assert "1/12 launches bad (launch 4)" in failure
    assert "1 tile of 16x16" in failure


def test_the_worst_launch_is_mapped_over_the_output_tiles(make_case):
    """The result keeps the worst launch's wrong elements per tile (the report's heatmap), in
    cells of whole tiles when the tiles are many."""
    result, _ = run_faulty(make_case, "tile", {3, 8}, tile="16x16", at=(32, 48))
    worst = max(result.bad_launches, key=lambda launch: launch.wrong)
    tiles = result.worst_tiles
    assert (tiles["launch"], tiles["wrong"]) == (worst.index, worst.wrong)
    assert (tiles["m"], tiles["n"], tiles["tile"], tiles["cell"]) == (256, 256, [16, 16], [1, 1])
    flagged = [(i, j, count) for i, row in enumerate(tiles["grid"]) for j, count in enumerate(row) if count]
    assert flagged == [(2, 3, worst.wrong)]
    clean, _ = run_faulty(make_case, "tile", set(), tile="16x16")
    assert clean.worst_tiles == {}


def test_a_tile_map_of_many_tiles_is_summed_into_at_most_max_cells_a_side():
    from pytest_gemmcheck.checking.rule import Tolerance
    from pytest_gemmcheck.checking.torch_backend import row_max, wrong_tile_map

    ref = torch.linspace(1, 2, 200 * 300).reshape(200, 300).to(torch.bfloat16)
    out = ref.clone()
    out[192:200, 288:300] = -out[192:200, 288:300]  # the last, partial tile of each dimension
    out[0, 0] = float("nan")
    tiles = wrong_tile_map(out, ref, row_max(ref), Tolerance(), (16, 16), max_cells=4)
    assert tiles["cell"] == [4, 5] and len(tiles["grid"]) == 4 and all(len(row) == 4 for row in tiles["grid"])
    assert tiles["grid"][0][0] == 1 and tiles["grid"][3][3] == 8 * 12
    assert sum(map(sum, tiles["grid"])) == 1 + 8 * 12


def test_corrupted_row_is_caught(make_case):
    result, failure = run_faulty(make_case, "row", {7}, at=(100, 0))
    (bad,) = result.bad_launches
    assert bad.index == 7 and bad.wrong_rows == 1 and bad.wrong_row_ids == [100]
    # negating a row moves each element by 2|ref|: wrong wherever |ref| > 2.5% of the row max
    assert bad.wrong > 128 and bad.differing > bad.wrong
    assert bad.differing_row_ids == [100]
    assert "in 1 row" in failure


def test_four_wrong_elements_in_2048x2048_with_small_rel_l2(make_case):
    result, failure = run_faulty(
        make_case, "elements", {2}, quant="bf16", m=2048, n=2048, k=256, tile=None, repeat=3, count=4, fraction=0.2
    )
    (bad,) = result.bad_launches
    assert bad.wrong == 4
    assert bad.rel_l2 < 3e-3, "the usual relL2 gate would pass this launch"
    assert "4 wrong elements in 4 rows" in failure


def test_unwritten_tile_is_caught_as_non_finite(make_case):
    result, failure = run_faulty(make_case, "unwritten", {1}, at=(0, 64))
    (bad,) = result.bad_launches
    assert bad.index == 1
    assert bad.nonfinite == 16 * 16 and "nonfinite" in bad.kinds
    assert "256 non-finite elements" in failure


def test_subtle_fault_under_the_5_percent_rule_is_caught_by_consistency(make_case):
    result, failure = run_faulty(make_case, "subtle", {6}, count=20, fraction=0.02)
    (bad,) = result.bad_launches
    assert bad.index == 6
    assert bad.kinds == ["inconsistent"], "accuracy alone must not see a 2%-of-row-max move"
    assert bad.wrong == 0
    assert bad.differing == 20
    assert 0.015 < bad.max_diff_rel < 0.03
    assert "differs from the consensus of 11 launches in 20 elements" in failure


def test_same_kernel_declared_nondeterministic_passes(make_case):
    result, failure = run_faulty(make_case, "subtle", {6}, count=20, fraction=0.02, deterministic=False)
    assert failure is None
    assert result.verdict == "pass" and not result.bad_launches


def test_bad_first_launch_is_reported_as_the_bad_one(make_case):
    result, failure = run_faulty(make_case, "subtle", {1}, count=20, fraction=0.02)
    assert [launch.index for launch in result.bad_launches] == [1]
    assert result.consensus_size == 11
    assert result.launches[0].differing == 20
    assert "1/12 launches bad (launch 1)" in failure
    assert "consensus of 11 launches in 20 elements" in failure


def run_tampered(make_case, tamper, *, m, n, k, repeat=12):
    """A correct bf16 kernel whose output ``tamper(launch_number, out)`` changes; the failing
    result."""
    case_results = []
    case = make_case("race", m=m, n=n, k=k, quant="bf16", repeat=repeat, record=case_results.append)
    x = case.inputs()
    count = [0]

    def launch(out):
        count[0] += 1
        bf16_matmul(x, out)
        tamper(count[0], out)

    with pytest.raises(GemmcheckFailure):
        case.run(launch)
    return case_results[0]


def test_bad_first_launch_with_bad_launches_after_it(make_case):
    # launches 1-3 each differ in their own way, 4-12 agree: copies kept as they come
    def tamper(number, out):
        if number <= 3:
            out[number, :number] += 1.0

    result = run_tampered(make_case, tamper, m=64, n=64, k=128)
    assert [b.index for b in result.bad_launches] == [1, 2, 3]
    assert [b.differing for b in result.bad_launches] == [1, 2, 3]
    assert result.consensus_size == 9


def test_consensus_beyond_kept_copies_is_reported_honestly(make_case):
    # five different outputs before the majority appears: more than the copies kept
    def tamper(number, out):
        if number <= 5:
            out[0, number] += 1.0

    result = run_tampered(make_case, tamper, m=32, n=32, k=64)
    assert [b.index for b in result.bad_launches] == [1, 2, 3, 4, 5]
    assert result.consensus_size == 7
    assert "not kept" in result.consensus_note
    # launch 5 came after the copies ran out: its count against the consensus is unknown
    assert result.launches[4].differing is None


def test_no_majority_is_noted(make_case):
    def tamper(number, out):
        if number % 2 == 0:
            out[0, 0] += 1.0

    assert "no majority" in run_tampered(make_case, tamper, m=16, n=16, k=32, repeat=4).consensus_note


def test_clean_kernel_over_many_launches_passes(make_case):
    case = make_case("clean", m=128, n=192, k=512, quant="blockscale", tile="128x64", repeat=20)
    x = case.inputs()
    result = case.run(lambda out: tiled_gemm(x, out))
    assert result.verdict == "pass"
    assert len(result.launches) == 20
    assert result.consensus_size == 20
    assert all(launch.wrong == 0 and launch.differing == 0 for launch in result.launches)


def test_fp32_and_fp16_outputs(make_case):
    for dtype in (torch.float32, torch.float16):
        case = make_case("mm", m=64, n=96, k=256, quant="ptpc", out_dtype=dtype, repeat=3)
        x = case.inputs()
        assert case.run(lambda out: tiled_gemm(x, out)).verdict == "pass"


def test_without_room_for_a_second_output_buffer_the_results_are_the_same(make_case, monkeypatch):
    """case.run lets a launch's check finish while the next launch writes a second buffer; when
    the device has no room for it, launches and checks take turns in one buffer instead."""
    from pytest_gemmcheck.launch.buffers import OutputBuffers

    def tamper(number, out):
        if number in (1, 4, 9):  # a bad first launch, and bad launches after the copies were kept
            out[number % 7, 3] += 0.5 * number

    two_buffers = run_tampered(make_case, tamper, m=32, n=48, k=64)
    monkeypatch.setattr(OutputBuffers, "spare", lambda self: None)
    one_buffer = run_tampered(make_case, tamper, m=32, n=48, k=64)
    summary = [
        [(launch.index, launch.kinds, launch.differing, launch.differing_row_ids) for launch in r.launches]
        + [r.consensus_size]
        for r in (two_buffers, one_buffer)
    ]
    assert summary[0] == summary[1]
    assert [b.index for b in one_buffer.bad_launches] == [1, 4, 9]
