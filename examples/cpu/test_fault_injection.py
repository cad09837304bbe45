"""What the detectors catch, shown on a TEST DOUBLE (FaultInjector) that corrupts a correct
kernel's output on chosen launches.

Each test states its verdict. Run from the repo root, the repo's goldens/ accept every fault
as a known bug (with a note saying why): known-bad, and the test passes. Without a golden for
it (a copy of this directory elsewhere, or on a GPU, whose arch the goldens do not cover) the
same evidence is a regression, and the test is an expected failure (xfailed). A fault that
goes unseen, or worse than its golden accepts, fails the test. The summary and the recorded
history show the evidence either way."""

import pytest
from kernels import FaultInjector, tiled_gemm

from pytest_gemmcheck import GemmcheckFailure, LaunchError


def _run(gemmcheck, fault, launches, m=256, n=256, k=512, kernel=None, **kwargs):
    case = gemmcheck.case(kernel or f"fault_{fault}", m=m, n=n, k=k, quant="ptpc", tile="64x64")
    x = case.inputs()
    return case.run(FaultInjector(lambda out: tiled_gemm(x, out), fault, launches, **kwargs))


def _caught(gemmcheck, fault, launches, **kwargs):
    """Known-bad against a golden that accepts the fault; a regression (xfail) where there is
    no golden; worse than its golden accepts, a failure."""
    try:
        _run(gemmcheck, fault, launches, **kwargs)
        failure = None
    except LaunchError:
        raise  # the double itself broke
    except GemmcheckFailure as exc:
        failure = exc
    result = gemmcheck.results[-1]
    if result.verdict == "regression" and result.baseline["source"] != "golden":
        pytest.xfail(
            f"fault injected on purpose: {result.label} is a regression where no golden accepts it "
            "(the repo's goldens/ accept it as known-bad)"
        )
    if failure is not None:
        raise failure  # worse than the bug its golden accepts
    if result.verdict != "regression":  # (a regression here is being accepted: --gemmcheck-accept)
        assert result.verdict == "known-bad", f"the injected fault went unseen: {result.label} judged {result.verdict}"


def test_corrupted_tile_on_launches_2_5_9(gemmcheck):
    _caught(gemmcheck, "tile", {2, 5, 9}, at=(64, 128))


def test_corrupted_row(gemmcheck):
    _caught(gemmcheck, "row", {3}, at=(17, 0))


def test_unwritten_tile(gemmcheck):
    _caught(gemmcheck, "unwritten", {1}, at=(192, 192))


def test_subtle_race_caught_by_consistency(gemmcheck):
    # 20 elements moved by 2% of their row's largest value: under the 5% rule
    _caught(gemmcheck, "subtle", {2}, count=20, fraction=0.02)


@pytest.mark.gemmcheck(deterministic=False)
def test_same_fault_passes_when_declared_nondeterministic(gemmcheck):
    # a split-K kernel with atomics legitimately differs in the last bits between launches.
    # A case of its own: declared determinism is no part of a case's key, and sharing
    # fault_subtle's would make the two tests' results one golden (the later one wins)
    result = _run(gemmcheck, "subtle", {2}, count=20, fraction=0.02, kernel="fault_subtle_nondeterministic")
    assert result.verdict == "pass" and not result.bad_launches
