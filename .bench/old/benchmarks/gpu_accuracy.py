"""How far correct GPU GEMMs stray from the reference: the evidence for the accuracy rule's floor.

For real kernels on the GPU (cuBLAS bf16; fp8 through torch._scaled_mm with and without fast
accumulation, row-wise and block-wise; a Triton fp8 GEMM) over shapes up to K=16384, prints:

  wrong         elements the default rule flags (must be 0: these kernels are correct)
  |err|/rowmax  the worst error as a fraction of its row's largest |ref|
  margin        rtol / that: how far inside the default rule the worst element stays
  plain-|ref|   elements a plain 5%-of-|ref| rule would flag (why the floor exists)
  floor needed  the smallest --gemmcheck-floor with 0 wrong elements at rtol=0.05

    python -m benchmarks.gpu_accuracy [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from gemmcheck_dev.results import print_header
from pytest_gemmcheck.case.case import Case, CaseContext
from pytest_gemmcheck.checking.torch_backend import Tolerance, check_launch, row_max
from pytest_gemmcheck.config.table import Settings

SHAPES = [
    (4096, 7168, 256),
    (4096, 7168, 1024),
    (2048, 4096, 4096),
    (1024, 2048, 8192),
    (512, 1024, 16384),
    (777, 1000, 2048),
]
RTOL = 0.05


def kernels():
    from examples.gpu import torch_gemms

    def scaled(fast, scales_of):
        def run(x, out):
            a, b = scales_of(x)
            torch._scaled_mm(x.a, x.b.t(), scale_a=a, scale_b=b, out_dtype=out.dtype, use_fast_accum=fast, out=out)

        return run

    found = [("cublas bf16", "bf16", torch_gemms.matmul_bf16)]
    if torch_gemms.scaled_mm_unavailable("ptpc") is None:
        found += [
            ("scaled_mm ptpc", "ptpc", scaled(False, torch_gemms.ptpc_scales)),
            ("scaled_mm ptpc fast-accum", "ptpc", scaled(True, torch_gemms.ptpc_scales)),
        ]
    if torch_gemms.scaled_mm_unavailable("blockscale") is None:
        found += [("scaled_mm blockscale", "blockscale", scaled(False, torch_gemms.blockscale_scales))]
    try:
        from examples.gpu.triton_fp8_gemm import fp8_ptpc_gemm

        found.append(("triton fp8 ptpc", "ptpc", lambda x, out: fp8_ptpc_gemm(x.a, x.b, x.a_scale, x.b_scale, out)))
    except Exception as exc:  # noqa: BLE001 - reported, not fatal
        print(f"triton fp8 GEMM unavailable: {exc}")
    return found


def measure(name, quant, kernel, m, n, k):
    case = Case(CaseContext(Settings()), name, m=m, n=n, k=k, quant=quant, seed=m + n + k)
    x = case.inputs()
    ref = case.reference()
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device=ref.device)
    kernel(x, out)
    torch.cuda.synchronize()
    rowmax = row_max(ref)
    accuracy, _ = check_launch(out, ref, rowmax, Tolerance(rtol=RTOL, floor=1.0))
    err = (out.float() - ref.float()).abs()
    ref_abs = ref.float().abs()
    plain = int((err > RTOL * ref_abs).sum())
    needs = torch.where(err > RTOL * ref_abs, err / (RTOL * rowmax[:, None]), torch.zeros((), device=err.device))
    return {
        "kernel": name,
        "quant": quant,
        "shape": f"{m}x{n}x{k}",
        "wrong": accuracy.wrong.elements,
        "nonfinite": accuracy.nonfinite,
        "worst_of_rowmax": float((err / rowmax[:, None]).max()),
        "plain_ref_flags": plain,
        "floor_needed": float(needs.max()),
        "rel_l2": accuracy.rel_l2,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    print_header("benchmarks.gpu_accuracy", argv)
    if not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return 0
    rows = []
    print(
        f"{'kernel':<28}{'shape':<18}{'wrong':>7}{'|err|/rowmax':>14}{'margin':>8}{'plain-|ref|':>13}"
        f"{'floor needed':>14}"
    )
    for name, quant, kernel in kernels():
        for m, n, k in SHAPES:
            try:
                row = measure(name, quant, kernel, m, n, k)
            except Exception as exc:  # noqa: BLE001 - one kernel's failure is a line, not the end
                print(f"{name:<28}{m}x{n}x{k}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                continue
            rows.append(row)
            margin = RTOL / row["worst_of_rowmax"] if row["worst_of_rowmax"] else float("inf")
            print(
                f"{name:<28}{row['shape']:<18}{row['wrong']:>7}{row['worst_of_rowmax']:>14.5f}{margin:>8.1f}"
                f"{row['plain_ref_flags']:>13}{row['floor_needed']:>14.4f}"
            )
    worst = max((r["worst_of_rowmax"] for r in rows), default=0.0)
    print(
        f"\nall kernels: {sum(r['wrong'] for r in rows)} wrong elements; worst |err|/rowmax {worst:.5f} "
        f"(margin {RTOL / worst if worst else float('inf'):.1f}x); largest floor needed "
        f"{max((r['floor_needed'] for r in rows), default=0.0):.4f}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
