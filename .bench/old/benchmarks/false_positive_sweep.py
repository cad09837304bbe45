"""How far inside the accuracy rule correct kernels stay, per quant mode and implementation.

Runs the example's independent CPU kernels (tiled, quantized operands, scales where real
kernels apply them; fp32 forward-K and fp64 reverse-K) over the shapes of
gemmcheck_dev/correct_kernel_sweep.py, those tests/checking/test_rule.py asserts, and prints, per
mode:

  worst |err| / rowmax      largest error of any element as a fraction of its row's largest |ref|
  margin                    rtol / that, i.e. how many times the error could grow before the
                            default rule (5% of the row max) flags a correct element
  floor needed              the smallest --gemmcheck-floor that still gives 0 wrong elements
                            with rtol=0.05 (how much stricter the rule could be on this evidence)

    python -m benchmarks.false_positive_sweep
"""

from __future__ import annotations

import torch

from examples.cpu.kernels import tiled_gemm
from gemmcheck_dev.correct_kernel_sweep import IMPLEMENTATIONS, MODES, SHAPES
from gemmcheck_dev.results import print_header
from pytest_gemmcheck.case.case import Case, CaseContext
from pytest_gemmcheck.checking.torch_backend import row_max
from pytest_gemmcheck.config.table import Settings


def main() -> None:
    print_header("benchmarks.false_positive_sweep")
    rtol = 0.05
    print(f"{'quant':<11}{'impl':<14}{'shapes':>7}{'worst |err|/rowmax':>20}{'margin':>9}{'floor needed':>14}")
    for quant in MODES:
        for impl, kwargs in IMPLEMENTATIONS.items():
            worst_of_rowmax = 0.0
            floor_needed = 0.0
            shapes = 0
            for m, n, k in SHAPES:
                case = Case(CaseContext(Settings()), "sweep", m=m, n=n, k=k, quant=quant, seed=m * 7 + n * 3 + k)
                x = case.inputs()
                ref = case.reference().float()
                out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
                tiled_gemm(x, out, tile=(128, 128), **kwargs)
                err = (out.float() - ref).abs()
                rowmax = row_max(case.reference())[:, None]
                worst_of_rowmax = max(worst_of_rowmax, float((err / rowmax).max()))
                # an element stays right under floor f iff err <= rtol * max(|ref|, f * rowmax)
                needs = torch.where(err > rtol * ref.abs(), err / (rtol * rowmax), torch.zeros(()))
                floor_needed = max(floor_needed, float(needs.max()))
                shapes += 1
            margin = rtol / worst_of_rowmax if worst_of_rowmax else float("inf")
            print(f"{quant:<11}{impl:<14}{shapes:>7}{worst_of_rowmax:>20.5f}{margin:>9.1f}{floor_needed:>14.4f}")


if __name__ == "__main__":
    main()
