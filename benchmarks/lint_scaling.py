"""How the lint's time grows with loop trip count (a K-loop of a two-stage DMA pipeline).

    python benchmarks/lint_scaling.py

Prints seconds per kernel and the ratio to the previous row: the simulation is linear in the
trace length, the hazard search close to it (each read only scans the loads not yet ordered).
"""

import time
from pathlib import Path

from pytest_gemmcheck.compiled.lint import lint_text

DATA = Path(__file__).resolve().parents[1] / "tests" / "flydsl" / "data"

BODY = """\tv_lshrrev_b32_e32 v1, 6, v0
\tv_lshlrev_b32_e32 v2, 10, v1
\tv_readfirstlane_b32 s8, v2
\tv_and_b32_e32 v3, 63, v0
\tv_lshlrev_b32_e32 v4, 4, v3
\tv_add_u32_e32 v5, 1, v1
\tv_and_b32_e32 v5, 3, v5
\tv_lshlrev_b32_e32 v5, 10, v5
\tv_add_u32_e32 v5, v5, v4
\ts_mov_b32 s12, 0
\ts_mov_b32 m0, s8
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
.LBB0_1:
\ts_add_u32 s13, s8, 0x1000
\ts_mov_b32 m0, s13
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
\ts_waitcnt vmcnt(1)
\ts_barrier
\tds_read_b128 v[8:11], v5
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\ts_mov_b32 m0, s8
\tbuffer_load_dwordx4 v4, s[4:7], s12 offen lds
\ts_waitcnt vmcnt(1)
\ts_barrier
\tds_read_b128 v[12:15], v5 offset:4096
\ts_waitcnt lgkmcnt(0)
\ts_barrier
\ts_add_u32 s12, s12, 1
\ts_cmp_lt_u32 s12, {trips}
\ts_cbranch_scc1 .LBB0_1
\ts_endpgm
"""

TEMPLATE = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
\t.globl\tk
\t.type\tk,@function
k:
{body}.Lfunc_end0:
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .name:           k
    .reqd_workgroup_size:
      - 256
      - 1
      - 1
...
\t.end_amdgpu_metadata
"""


def timed(text):
    start = time.perf_counter()
    report = lint_text(text)
    return time.perf_counter() - start, report


def main():
    print("committed example assembly (gfx950, 4 waves)")
    for path in sorted(DATA.glob("*.s")):
        seconds, report = timed(path.read_text())
        print(f"  {path.stem:28s} {seconds:6.2f} s  {len(report.errors)} errors")
    print("K loop with a known trip count (4 waves, 2 loads and 2 reads per iteration)")
    previous = None
    for trips in (8, 16, 32, 64, 128):
        seconds, report = timed(TEMPLATE.format(body=BODY.format(trips=trips)))
        ratio = f"x{seconds / previous:.2f}" if previous else ""
        print(f"  {trips:4d} iterations {seconds:6.2f} s {ratio:>6s}  {len(report.errors)} errors, {len(report.warnings)} warnings")
        previous = seconds


if __name__ == "__main__":
    main()
