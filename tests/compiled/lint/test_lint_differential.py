"""The dataflow engine against the path-enumerating one on small random kernels.

The path engine (``engine="paths"``) runs every wave along every branch scenario and, with known
trip counts, every iteration: on kernels this small it enumerates all paths, so it is the
brute-force reference. Each kernel is four waves of loads into a two-stage LDS ring, waits,
barriers, reads of the next wave's slot, lgkmcnt drains, a barrier taken by waves 2-3 only, a
branch on a kernel argument and a loop with a known trip count. The two engines must report the
same reads with the same weight (the dataflow engine's ``latent`` is an ``error`` to the path
engine, which has no such class).
"""

import random

import pytest

from pytest_gemmcheck.compiled.lint import Options, lint_text

OPS = ("load", "load", "wait", "wait", "barrier", "barrier", "read", "read", "drain", "lead-lag", "branch")


def _op(kind: str, rng: random.Random, labels: list[int], stage: str) -> str:
    if kind == "load":
        return f"\ts_add_u32 s22, s8, {stage}\n\ts_mov_b32 m0, s22\n\tbuffer_load_dwordx4 v4, s[4:7], 0 offen lds\n"
    if kind == "wait":
        return f"\ts_waitcnt vmcnt({rng.choice((0, 1, 2))})\n"
    if kind == "barrier":
        return "\ts_barrier\n"
    if kind == "read":
        return f"\tv_add_u32_e32 v6, {stage}, v5\n\tds_read_b128 v[8:11], v6\n"
    if kind == "drain":
        return "\ts_waitcnt lgkmcnt(0)\n"
    labels[0] += 1
    label = f".LBB9_{labels[0]}"
    if kind == "lead-lag":
        return f"\ts_cmp_lt_u32 s10, 2\n\ts_cbranch_scc1 {label}\n\ts_barrier\n{label}:\n"
    inner = _op(rng.choice(("load", "wait", "barrier", "read", "drain")), rng, labels, stage)
    return f"\ts_cmp_eq_u32 s16, 0\n\ts_cbranch_scc1 {label}\n{inner}{label}:\n"


def random_kernel(seed: int, asm_kernel) -> str:
    rng = random.Random(seed)
    pick = rng.choice

    labels = [0]
    body = "\ts_load_dword s16, s[0:1], 0x10\n\ts_waitcnt lgkmcnt(0)\n"
    body += "".join(_op(pick(OPS), rng, labels, rng.choice(("0", "0x1000"))) for _ in range(rng.randint(3, 8)))
    if rng.random() < 0.6:
        trips = rng.randint(1, 3)
        loop = "".join(_op(pick(OPS[:-2]), rng, labels, "s20") for _ in range(rng.randint(2, 6)))
        body += (
            "\ts_mov_b32 s12, 0\n.LBB9_loop:\n\ts_and_b32 s20, s12, 1\n\ts_lshl_b32 s20, s20, 12\n"
            + loop
            + f"\ts_add_u32 s12, s12, 1\n\ts_cmp_lt_u32 s12, {trips}\n\ts_cbranch_scc1 .LBB9_loop\n"
        )
    body += "".join(_op(pick(OPS[:-2]), rng, labels, rng.choice(("0", "0x1000"))) for _ in range(rng.randint(1, 4)))
    return asm_kernel(body)


def weights(report) -> set[tuple[int, str]]:
    return {
        (f.line, "error" if f.severity == "latent" else f.severity)
        for f in report.findings
        if f.severity in ("error", "latent", "warning")
    }


@pytest.mark.parametrize("seed", range(120))
def test_dataflow_agrees_with_path_enumeration(seed, asm_kernel):
    text = random_kernel(seed, asm_kernel)
    paths = lint_text(text, options=Options(engine="paths", max_scenarios=64))
    dataflow = lint_text(text)
    assert not any("unexplored" in note for note in paths.notes), paths.notes
    assert dataflow.unchecked == [] and paths.unchecked == []
    assert weights(dataflow) == weights(paths), text


@pytest.mark.parametrize("seed", range(40))
def test_dataflow_covers_every_unrolled_path_of_a_runtime_loop(seed, asm_kernel):
    # the loop bound is a kernel argument: the path engine follows 1..3 iterations per scenario,
    # the dataflow engine every trip count, so it reports at least what the path engine does
    text = random_kernel(seed, asm_kernel).replace("s_cmp_lt_u32 s12, 1\n", "s_cmp_lt_u32 s12, s16\n")
    text = text.replace("s_cmp_lt_u32 s12, 2\n", "s_cmp_lt_u32 s12, s16\n").replace(
        "s_cmp_lt_u32 s12, 3\n", "s_cmp_lt_u32 s12, s16\n"
    )
    paths = lint_text(text, options=Options(engine="paths", max_scenarios=8))
    dataflow = lint_text(text)
    assert dataflow.unchecked == []
    assert weights(paths) <= weights(dataflow), text
