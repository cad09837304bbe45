"""Reports on the harness's own kernels: which names match."""

import pytest

from pytest_gemmcheck.records.sanitize import API, RACE_HAZARD, UNINITIALIZED, SanitizerFinding
from pytest_gemmcheck.sanitize.harness import is_harness
from pytest_gemmcheck.sanitize.text import text_records


def on(kernel, kind=RACE_HAZARD):
    return SanitizerFinding(tool="initcheck", kind=kind, severity="Error", text="t", kernel=kernel)


def torch_reduce_kernel(recording) -> str:
    """The kernel initcheck blamed in torch's own ``.sum()`` (data/initcheck__matmul.out)."""
    header = text_records(recording("initcheck__matmul")["stdout"])[0]
    return header.lines[0].removeprefix("at ").rsplit("+", 1)[0]


def test_torch_s_reduction_is_the_harness_s_by_pattern(recording):
    kernel = torch_reduce_kernel(recording)
    assert kernel.startswith("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<c10::BFloat16")
    assert is_harness(on(kernel, UNINITIALIZED), ["*at::native::*"])
    assert not is_harness(on(kernel, UNINITIALIZED), ["at::native::"])  # a name matches itself only


@pytest.mark.parametrize(
    "kernel, patterns, harness",
    [
        ("tail_gemm", ["_gemmcheck_*", "*at::native::*"], False),
        ("_gemmcheck_fused_check", ["_gemmcheck_*"], True),
        ("_gemmcheck_fused_check", [], False),
        ("fill_kernel", ["fill_kernel"], True),
        ("Fill_kernel", ["fill_kernel"], False),  # case counts, as in the names the compiler gave
    ],
)
def test_names_and_patterns(kernel, patterns, harness):
    assert is_harness(on(kernel), patterns) is harness


def test_a_report_on_no_kernel_is_never_the_harness_s():
    assert not is_harness(on(None, API), ["*"])
