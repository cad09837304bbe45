"""Zero false positives: correct kernels computed independently of the reference (quantized
operands, tiled, K in blocks, scales where real kernels apply them) with two accumulators and
two K orders, over 20+ shapes per mode including non-tile multiples and K up to 8192."""

import pytest
import torch
from kernels import tiled_gemm

from gemmcheck_dev.correct_kernel_sweep import IMPLEMENTATIONS, MODES, SHAPES
from pytest_gemmcheck.case.case import Case, CaseContext
from pytest_gemmcheck.checking import rule
from pytest_gemmcheck.checking import torch_backend as check
from pytest_gemmcheck.config.table import Settings


def _worst_over_shapes(quant, impl):
    worst_rel = 0.0
    checked = 0
    for m, n, k in SHAPES:
        if quant == "mxfp8" and k % 32:
            continue
        case = Case(CaseContext(Settings()), "sweep", m=m, n=n, k=k, quant=quant, seed=m * 7 + n * 3 + k)
        x = case.inputs()
        ref = case.reference()
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
        tiled_gemm(x, out, tile=(128, 128), **IMPLEMENTATIONS[impl])
        accuracy, _ = check.check_launch(out, ref, check.row_max(ref), rule.Tolerance())
        assert accuracy.wrong.elements == 0, f"{quant} {impl} {m}x{n}x{k}: {accuracy}"
        assert accuracy.nonfinite == 0
        worst_rel = max(worst_rel, accuracy.max_rel_err)
        checked += 1
    return worst_rel, checked


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("quant", MODES)
def test_correct_kernels_have_zero_wrong_elements(quant, impl):
    worst_rel, checked = _worst_over_shapes(quant, impl)
    assert checked >= 20
    # and not by a whisker: the worst correct element is far inside the 5% rule
    assert worst_rel < 0.05 / 3, f"worst relative error {worst_rel:.4f} is within 3x of the tolerance"
