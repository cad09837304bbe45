"""The background's reproduction as a script, with the plain-Python API: the cp.async tail GEMM
of racy_gemm.cu (racy and fixed), 12 NaN-poisoned launches each, idle and under a copy load,
recorded into one history and printed as the table a PR gets.

    python examples/gpu/repro_tail_race.py [--db PATH] [--repeat 12]

Needs an NVIDIA GPU and CuPy (racy_gemm.py compiles the kernel at run time).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import racy_gemm  # noqa: E402

import pytest_gemmcheck as gc  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=".gemmcheck/history.db")
    parser.add_argument("--repeat", type=int, default=12)
    args = parser.parse_args(argv)
    reason = racy_gemm.unavailable_reason()
    if reason:
        print(f"repro_tail_race.py: {reason}")
        return 0
    rows = []
    for stress in ("none", "copy"):
        with gc.session(db=args.db, tag=f"repro stress={stress}", stress=stress) as s:
            for variant in ("racy", "fixed"):
                kernel = racy_gemm.TailGemm(variant, stages=2, block_k=32)
                case = s.case(
                    "cp_async_tail_gemm",
                    m=2048,
                    n=2048,
                    k=256,
                    quant="ptpc",
                    tile="64x64",
                    params={**kernel.params, "slack": 0},
                )
                x = case.inputs()
                result = case.run(lambda out: kernel(x.a, x.b, x.a_scale, x.b_scale, out, slack=0), repeat=args.repeat)
                print(result.summary())
                rows.append(result.markdown().splitlines()[2:])
    print()
    print("| verdict | case | bad launches | kinds | baseline |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("\n".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
