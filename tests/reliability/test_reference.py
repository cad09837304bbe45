"""The reference is the harness's own: ``case.reference()`` gives copies, a launch that writes
into a copy it was given is blamed for it (a changed input named ``reference``, put right
before the next launch), and nothing a test or a kernel writes there, a NaN included, reaches
what launches are judged against, in that case or any later one."""

import pytest
import torch
from kernels import bf16_matmul

from pytest_gemmcheck.case.case import Case, CaseContext
from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import CaseError, GemmcheckFailure


def shared_context(repeat=6):
    return CaseContext(Settings(repeat=repeat))


def run(context, launch_of, *, kernel="kern", m=32, n=48, k=64):
    """(result, failure text or None, case) of a case of ``context`` running ``launch_of(case, x)``."""
    results = []
    context.record = results.append
    case = Case(context, kernel, m=m, n=n, k=k)
    x = case.inputs()
    try:
        case.run(launch_of(case, x))
        failure = None
    except GemmcheckFailure as exc:
        failure = str(exc)
    return results[-1], failure, case


def correct(case, x):
    return lambda out: bf16_matmul(x, out)


def off_by_ten_percent(case, x):
    return lambda out: bf16_matmul(x, out) or out.mul_(1.1)


def test_a_kernel_that_writes_nan_into_its_reference_is_blamed_and_later_cases_are_judged_right():
    context = shared_context()

    def launch_of(case, x):
        ref = case.reference()
        calls = []

        def launch(out):
            calls.append(1)
            bf16_matmul(x, out)
            if len(calls) == 2:
                ref[2:5] = float("nan")

        return launch

    result, failure, case = run(context, launch_of)
    assert [(launch.index, launch.kinds, launch.changed_inputs) for launch in result.launches if launch.kinds] == [
        (2, ["changed_input"], {"reference": 3})
    ]
    assert "launch 2: changed its input reference in 3 rows" in failure
    assert torch.isfinite(case.reference()).all()
    # the next cases of the same inputs, in the same session, are judged against the right values
    right, failure, _ = run(context, correct, kernel="next")
    assert failure is None and right.bad_launches == []
    wrong, failure, _ = run(context, off_by_ten_percent, kernel="wrong")
    assert len(wrong.bad_launches) == 6 and all("wrong" in launch.kinds for launch in wrong.bad_launches)


def test_a_test_that_fills_its_copy_with_nan_changes_nothing():
    context = shared_context()

    def nan_then(launch_of):
        def make(case, x):
            case.reference().fill_(float("nan"))
            kept = case.reference()
            kept.fill_(float("nan"))  # before the launches: the test's own business, nobody blamed
            return launch_of(case, x)

        return make

    wrong, failure, _ = run(context, nan_then(off_by_ten_percent), kernel="wrong")
    assert len(wrong.bad_launches) == 6 and all(launch.kinds == ["wrong"] for launch in wrong.bad_launches)
    right, failure, _ = run(context, nan_then(correct), kernel="right")
    assert failure is None and right.bad_launches == []


def test_a_kernel_that_writes_its_result_into_a_reference_it_asks_for():
    """It asks for the reference in each launch and keeps it (a copy dropped at once can change
    nothing, and is not watched)."""
    context = shared_context(repeat=3)

    def launch_of(case, x):
        kept = []

        def launch(out):
            kept.append(case.reference())
            kept[-1].zero_()

        return launch

    result, failure, _ = run(context, launch_of)
    assert all(launch.changed_inputs == {"reference": 32} for launch in result.launches)
    assert all({"changed_input", "unwritten"} <= set(launch.kinds) for launch in result.launches)


def test_the_harness_reference_changed_between_runs_is_made_again():
    context = shared_context(repeat=3)
    first, failure, case = run(context, correct)
    assert failure is None
    case.judged_reference().tensor.fill_(float("nan"))  # past the API: the harness's own copy
    again, failure, _ = run(context, correct, kernel="again")
    assert failure is None and again.bad_launches == []
    wrong, failure, _ = run(context, off_by_ten_percent, kernel="wrong")
    assert len(wrong.bad_launches) == 3


def test_a_change_to_the_harness_reference_during_the_launches_is_a_case_error():
    context = shared_context(repeat=4)

    def launch_of(case, x):
        calls = []

        def launch(out):
            calls.append(1)
            bf16_matmul(x, out)
            if len(calls) == 3:
                case.judged_reference().tensor.add_(1)  # past the API: the harness's own copy

        return launch

    with pytest.raises(CaseError, match="changed after the launches: memory no launch was given was written"):
        run(context, launch_of)
    right, failure, _ = run(context, correct, kernel="after")
    assert failure is None and right.bad_launches == []


# --- a case's own reference: identified by what it computes -------------------------------------

EPILOGUE_SUITE = """
    import functools

    import pytest
    import torch

    def ref(x, act):
        y = x.a.float() @ x.b.float().t()
        return torch.relu(y) if act == "relu" else torch.abs(y)

    @pytest.mark.parametrize("act", {order!r})
    def test_epilogue(gemmcheck, act):
        case = gemmcheck.case("fused_epi", m=128, n=128, k=256, reference={reference})
        x = case.inputs()
        case.run(lambda out: out.copy_(torch.relu(x.a.float() @ x.b.float().t()).to(out.dtype)))
"""


@pytest.mark.parametrize("reference", ["lambda x: ref(x, act)", "functools.partial(ref, act=act)"])
@pytest.mark.parametrize("order", [["abs", "relu"], ["relu", "abs"]])
def test_parametrized_references_of_one_session_are_cases_of_their_own(pytester, order, reference):
    """The relu kernel passes against the relu reference and fails against the abs one, in
    either order, each recorded under a key of its own (before: the first reference judged
    both, and both results shared one key)."""
    import textwrap

    pytester.makepyfile(test_epilogue=textwrap.dedent(EPILOGUE_SUITE).format(order=order, reference=reference))
    pytester.makeconftest("""
        def pytest_gemmcheck_result(result):
            with open("keys.txt", "a") as keys:
                keys.write(result.key + "\\n")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--gemmcheck-repeat=12", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["PASSED test_epilogue.py::test_epilogue[[]relu[]]*", "FAILED test_epilogue.py::test_epilogue[[]abs[]]*"],
        consecutive=False,
    )
    keys = (pytester.path / "keys.txt").read_text().split()
    assert len(keys) == 2 and len(set(keys)) == 2
