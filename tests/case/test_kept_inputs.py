"""Inputs are the harness's: what a test does to the tensors ``case.inputs()`` handed it, before
its launches or after them, never reaches what a later case is given or judged against. Each
hand-out proves the session's cached inputs as they were made, and puts them back when not."""

import sys
import textwrap
from functools import partial
from pathlib import Path

import pytest
import torch
from kernels import bf16_matmul, tiled_gemm

from pytest_gemmcheck.case.case import Case, CaseContext
from pytest_gemmcheck.case.kept_inputs import KeptInputs, input_checksums
from pytest_gemmcheck.case.quant import fp8_flavour, quant_mode
from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import CaseError, GemmcheckFailure


def run(context, launch_of, *, kernel="kern", quant="bf16", **case):
    """(bad launches, the inputs) of a case of ``context`` (a session's caches) running
    ``launch_of(x)``."""
    results = []
    context.record = results.append
    case = Case(context, kernel, quant=quant, **{"m": 32, "n": 48, "k": 64, **case})
    x = case.inputs()
    try:
        case.run(launch_of(x))
    except GemmcheckFailure:
        pass
    return len(results[-1].bad_launches), x


def correct(x):
    return lambda out: bf16_matmul(x, out) if x.quant == "bf16" else tiled_gemm(x, out)


def zeros(x):
    return lambda out: out.zero_()


@pytest.fixture
def context():
    return CaseContext(Settings(repeat=12))


@pytest.mark.parametrize("quant", ["bf16", "ptpc"])
def test_a_test_that_scales_its_inputs_after_its_launches_changes_nothing_for_the_next(context, quant):
    bad, x = run(context, correct, quant=quant)
    assert bad == 0
    if quant == "bf16":
        x.a.mul_(0.5)
    else:  # fp8 has no arithmetic: its bits, and a scale
        x.a.view(torch.uint8).bitwise_xor_(0x11)
        x.a_scale.mul_(0.5)
    bad, given = run(context, correct, kernel="next", quant=quant)
    assert bad == 0 and given is x  # the same tensors, as they were made


def test_a_test_that_zeroes_its_inputs_makes_no_kernel_writing_zeros_pass(context):
    """Zeroed before any reference of theirs was made (before: the next case's reference was
    made from them, all zeros)."""
    x = Case(context, "first", m=32, n=48, k=64).inputs()
    x.a.zero_()
    assert run(context, zeros, kernel="writes zeros")[0] == 12


def test_a_test_that_changes_its_inputs_before_its_launches_runs_them_on_the_inputs_as_made(context):
    """Its reference is made from the inputs as they were made, and so are its launches'
    inputs: the case is judged on what it is."""
    results = []
    context.record = results.append
    case = Case(context, "kern", m=32, n=48, k=64)
    x = case.inputs()
    x.a.zero_()
    case.run(correct(x))
    assert results[0].bad_launches == [] and bool(x.a.any())


def test_inputs_rebound_or_reshaped_are_put_back(context):
    _, x = run(context, correct)
    made = x.a
    x.a = torch.zeros_like(made)
    x.seed = 7
    _, again = run(context, correct, kernel="next")
    assert again.a is made and again.seed == 0
    made.resize_(3)  # in place, past its bits: new inputs are made
    bad, fresh = run(context, correct, kernel="last")
    assert bad == 0 and tuple(fresh.a.shape) == (32, 64)


def test_a_reference_that_changes_its_inputs_is_a_case_error(context):
    def scaling(x):
        x.a.mul_(2)
        return x.a.float() @ x.b.float().t()

    case = Case(context, "kern", m=32, n=48, k=64, reference=scaling)
    with pytest.raises(CaseError, match=r"reference .*scaling of .* changed the inputs it was given"):
        case.run(correct(case.inputs()))
    assert run(context, correct, kernel="next")[0] == 0


@pytest.mark.parametrize("fused", [False, True], ids=["torch", "fused"])
def test_a_gpus_proof_by_checksums_sees_one_flipped_bit(request, fused):
    """The GPU's way (on the CPU without one): checksums taken when made, taken again at each
    hand-out (by the fused check's guard kernel: compiled on a GPU, else under Triton's
    interpreter), and the bits made again."""
    if fused:
        request.getfixturevalue("fused_anywhere")
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checking" / "triton"))
        pytest.importorskip("test_fused_check")  # loads the fused check under the interpreter, off the GPU
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    make = partial(quant_mode("ptpc").make_inputs, 32, 48, 64, seed=0, device=device, fp8=fp8_flavour("e4m3fn"))
    kept = KeptInputs(make(), checksums=partial(input_checksums, fused=fused))
    assert not kept.changed()
    before = kept.inputs.b_scale.clone()
    kept.inputs.b_scale.view(torch.int32)[5] ^= 1
    assert kept.changed()
    assert kept.restore(make) and not kept.changed() and torch.equal(kept.inputs.b_scale, before)


def test_leaked_changes_between_tests_of_a_session(pytester, examples_dir):
    """The report's two sessions: a test that zeroes its inputs, then one whose kernel writes
    zeros (it passed); a test that halves its inputs after its launches, then a correct kernel
    (it failed 12/12). Each later test now gets the verdict it gets alone."""
    import shutil

    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        test_leak=textwrap.dedent("""
        from kernels import bf16_matmul

        def case(gemmcheck, name):
            return gemmcheck.case(name, m=32, n=48, k=64)

        def test_1_zeroes_its_inputs(gemmcheck):
            x = case(gemmcheck, "first").inputs()
            x.a.zero_()

        def test_2_kernel_writing_zeros(gemmcheck):
            c = case(gemmcheck, "zeros")
            c.inputs()
            c.run(lambda out: out.zero_())

        def test_3_halves_its_inputs_after_its_launches(gemmcheck):
            c = case(gemmcheck, "third")
            x = c.inputs()
            c.run(lambda out: bf16_matmul(x, out))
            x.a.mul_(0.5)

        def test_4_correct_kernel(gemmcheck):
            c = case(gemmcheck, "correct")
            x = c.inputs()
            c.run(lambda out: bf16_matmul(x, out))
    """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--gemmcheck-no-record", "--gemmcheck-repeat=12")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_leak.py::test_2_kernel_writing_zeros*"])


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_on_a_gpu_inputs_changed_after_the_launches_are_put_back(backend):
    context = CaseContext(Settings(repeat=12, check_backend=backend))
    shape = dict(m=256, n=512, k=256, device="cuda")
    bad, x = run(context, correct, quant="ptpc", **shape)
    assert bad == 0
    x.a_scale.mul_(0.5)
    x.b.view(torch.uint8)[-1, -1] ^= 1
    bad, given = run(context, correct, kernel="next", quant="ptpc", **shape)
    assert bad == 0 and given is x


def test_inputs_too_large_for_the_cache_are_still_one_set_per_case():
    """The test's kernel, the guards and the reference read the same tensors: a kernel that
    writes into the inputs it was given is caught (before: the guards watched another set)."""
    from pytest_gemmcheck.case.cache import LruCache

    context = CaseContext(Settings(repeat=4), inputs_cache=LruCache(budget_bytes=1))
    case = Case(context, "kern", m=32, n=48, k=64)
    assert case.inputs() is case.inputs()
    bad, _ = run(context, lambda x: lambda out: bf16_matmul(x, out) or x.a[3:6].mul_(2))
    assert bad == 4
