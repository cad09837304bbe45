"""On a GPU: a repeated launch checked by its checksum alone gets the numbers a full check of
the same bits gives, launch by launch, on the racy cp.async GEMM and on its fixed twin
(examples/gpu/racy_gemm.cu). Each launch's output is kept, then checked in full on its own."""

import sys
from pathlib import Path

import pytest
import torch

from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import GemmcheckFailure

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "gpu"))

if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)
racy_gemm = pytest.importorskip("racy_gemm")
if racy_gemm.unavailable_reason():
    pytest.skip(racy_gemm.unavailable_reason(), allow_module_level=True)

from pytest_gemmcheck.checking.torch_backend import row_max  # noqa: E402
from pytest_gemmcheck.checking.triton import fused_check as api  # noqa: E402

FIELDS = (
    "wrong",
    "nonfinite",
    "max_abs_err",
    "max_rel_err",
    "rel_l2",
    "wrong_rows",
    "wrong_tiles",
    "worst_tile_wrong",
    "wrong_row_ids",
    "wrong_tile_ids",
)


@pytest.mark.parametrize("variant", ["racy", "fixed"])
@pytest.mark.parametrize("how", ["checksum", "full"])
def test_each_launch_has_the_numbers_of_a_full_check_of_its_bits(make_case, variant, how):
    kernel = racy_gemm.TailGemm(variant, stages=2, block_k=32)
    results = []
    case = make_case(
        "cp_async_tail_gemm",
        m=2048,
        n=2048,
        k=256,
        quant="ptpc",
        tile="64x64",
        device="cuda",
        params=dict(kernel.params),
        settings=Settings(repeat=48, repeat_check=how),
        record=results.append,
    )
    x = case.inputs()
    outputs = []

    def launch(out):
        kernel(x.a, x.b, x.a_scale, x.b_scale, out, slack=0)
        outputs.append(out.clone())  # the bits this launch's check saw, for a full check of their own

    try:
        case.run(launch)
    except GemmcheckFailure:
        pass
    (result,) = results
    assert result.check_backend == "triton" and len(result.launches) == len(outputs) == 48
    ref = case.reference()
    rowmax = row_max(ref)
    for record, output in zip(result.launches, outputs):
        accuracy, _ = api.check_launch(output, ref, rowmax, case.tolerance, case.tile)
        expected = {
            "wrong": accuracy.wrong.elements,
            "nonfinite": accuracy.nonfinite,
            "max_abs_err": accuracy.max_abs_err,
            "max_rel_err": accuracy.max_rel_err,
            "rel_l2": accuracy.rel_l2,
            "wrong_rows": accuracy.wrong.rows,
            "wrong_tiles": accuracy.wrong.tiles,
            "worst_tile_wrong": accuracy.wrong.worst_tile_elements,
            "wrong_row_ids": accuracy.wrong.row_ids,
            "wrong_tile_ids": [list(t) for t in accuracy.wrong.tile_ids],
        }
        assert {name: getattr(record, name) for name in FIELDS} == expected, record.index
    # the bad launches are those outside the largest group of equal outputs that checked accurate
    groups: dict[bytes, list[int]] = {}
    for record, output in zip(result.launches, outputs):
        groups.setdefault(output.view(torch.int16).cpu().numpy().tobytes(), []).append(record.index)
    # (the largest group that checked accurate, else the largest: a racy kernel may be wrong on every launch)
    accurate = [g for g in groups.values() if not result.launches[g[0] - 1].wrong] or list(groups.values())
    consensus = set(max(accurate, key=lambda g: (len(g), -g[0])))
    wrong = {launch.index for launch in result.launches if launch.wrong or launch.nonfinite}
    assert {launch.index for launch in result.bad_launches} == (set(range(1, 49)) - consensus) | wrong
    if variant == "fixed":
        assert not result.bad_launches and len(groups) == 1
