"""CPU kernels, torch.matmul on the dequantized operands, each wrong on one region of the
search space: what the search must find and shrink (tests/searching, benchmarks.search_regions).
A wrong launch doubles row 0 of its output (every element of that row off by 100%: wrong by any
tolerance)."""

import torch

from pytest_gemmcheck.case.quant import quant_mode


def gemm(x, out) -> None:
    mode = quant_mode(x.quant)
    a = mode.dequantize_a(x, slice(None))
    out.copy_(torch.matmul(a, mode.dequantize_b(x).t()))


def spoil(out) -> None:
    out[0] = out[0] * 2 + 1


def correct(case, x):
    return lambda out: gemm(x, out)


def tail_of_half_a_tile(case, x):
    """Wrong when m % 128 == 64: a last row tile half full."""

    def launch(out):
        gemm(x, out)
        if case.m % 128 == 64:
            spoil(out)

    return launch


def short_k(case, x):
    """Wrong on every third launch when K spans fewer than three 128-wide steps (a pipeline
    of three stages never filled): intermittent, as races are."""
    launches = []

    def launch(out):
        launches.append(1)
        gemm(x, out)
        if -(-case.k // 128) < 3 and len(launches) % 3 == 0:
            spoil(out)

    return launch


def split_four(case, x):
    """Wrong for one params value: split=4."""

    def launch(out):
        gemm(x, out)
        if case.params["split"] == 4:
            spoil(out)

    return launch
