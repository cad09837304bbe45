"""Kernels that could fool the check, or hang it: each is caught as what it did, on the launch
that did it, and recorded; nothing it did spills onto another launch or another test."""

import shutil
import textwrap
import time

import pytest
import torch
from kernels import bf16_matmul, tiled_gemm

from pytest_gemmcheck.case.quant import Bf16, register_quant_mode
from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.errors import CaseError, GemmcheckFailure, LaunchError


def run(make_case, launch_of, *, repeat=6, settings=None, **case):
    """(result, failure text or None) of ``case.run(launch_of(x))``."""
    results = []
    case = make_case(
        case.pop("kernel", "kern"),
        repeat=repeat,
        settings=settings,
        record=results.append,
        **{"m": 32, "n": 48, "k": 64, **case},
    )
    x = case.inputs()
    try:
        case.run(launch_of(x))
        failure = None
    except GemmcheckFailure as exc:
        failure = str(exc)
    return results[0], failure


# --- inputs -----------------------------------------------------------------------------------


def test_a_kernel_that_changes_its_input_is_blamed_for_it_and_the_input_put_back(make_case):
    def launch_of(x):
        calls = []

        def launch(out):
            calls.append(1)
            bf16_matmul(x, out)
            if len(calls) == 2:
                x.a[3:6] *= 2  # after using it: launch 2's output is right, its inputs are not

        return launch

    result, failure = run(make_case, launch_of)
    bad = result.bad_launches
    assert [launch.index for launch in bad] == [2] and bad[0].kinds == ["changed_input"]
    assert bad[0].changed_inputs == {"a": 3}
    assert "launch 2: changed its input a in 3 rows" in failure
    # put back before launch 3: nothing after it differs, and the next test sees the inputs it should
    again, failure = run(make_case, lambda x: lambda out: bf16_matmul(x, out))
    assert failure is None and again.bad_launches == []


def test_scales_are_guarded_too(make_case):
    def launch_of(x):
        def launch(out):
            tiled_gemm(x, out)
            x.b_scale.add_(1.0)

        return launch

    result, failure = run(make_case, launch_of, quant="ptpc", repeat=3)
    assert [launch.changed_inputs for launch in result.launches] == [{"b_scale": 48}] * 3
    assert all(launch.kinds == ["changed_input"] for launch in result.launches)  # each on its own, all consistent


# --- the output's surroundings -----------------------------------------------------------------


def test_writing_past_the_end_of_out_is_caught_and_located(make_case):
    def launch_of(x):
        calls = []

        def launch(out):
            calls.append(1)
            bf16_matmul(x, out)
            if len(calls) == 4:
                past = torch.as_strided(out, (out.numel() + 10,), (1,))
                past[out.numel() :] = 0
                before = torch.as_strided(out, (3,), (1,), out.storage_offset() - 3)
                before.zero_()

        return launch

    result, failure = run(make_case, launch_of)
    (bad,) = result.bad_launches
    assert bad.index == 4 and bad.kinds == ["wrote_outside"]
    assert bad.wrote_outside == "wrote 3 elements before the start of out and 10 elements past the end of out"
    assert "launch 4: wrote 3 elements before the start of out" in failure


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_a_scribble_on_the_other_buffer_is_never_blamed_on_the_launch_it_spoiled(make_case, request, backend):
    """Launch 2 writes its (right) result into launch 1's buffer as well as its own, after launch
    1's check read it. Launch 1 was right and is never blamed; with the fused check, which uses
    launch 1's output after launch 2 ran, launch 2 is blamed for the scribble."""
    if backend == "triton":
        pytest.importorskip("test_fused_check")  # the fused check under the interpreter, off the GPU
        request.getfixturevalue("fused_anywhere")

    def launch_of(x):
        seen = []

        def launch(out):
            seen.append(out)
            bf16_matmul(x, out)
            if len(seen) == 2:
                seen[0].fill_(7.0)

        return launch

    result, failure = run(make_case, launch_of, settings=Settings(repeat=6, check_backend=backend))
    kinds = {launch.index: launch.kinds for launch in result.launches if launch.kinds}
    if backend == "torch":
        assert kinds == {}  # its numbers were all taken before launch 2 ran: nothing was spoiled
    else:
        assert kinds == {2: ["wrote_outside"]}
        assert "launch 2: wrote into the other output buffer, which held launch 1's output" in failure


# --- a kernel's own output ---------------------------------------------------------------------


def test_a_stale_returned_buffer_shows_as_unwritten(make_case):
    """A wrapper that wrote its own buffer once and returns it on every launch: poisoned after
    each check, the buffer returned again unwritten is caught."""

    def launch_of(x):
        mine = torch.empty(32, 48, dtype=torch.bfloat16, device=x.a.device)
        bf16_matmul(x, mine)
        return lambda out: mine

    result, failure = run(make_case, launch_of, repeat=4)
    assert [launch.kinds for launch in result.launches] == [[]] + [["unwritten", "inconsistent"]] * 3
    assert [launch.poisoned for launch in result.launches] == [False, True, True, True]


def test_a_kernel_writing_its_own_buffer_every_launch_passes(make_case):
    def launch_of(x):
        mine = torch.empty(32, 48, dtype=torch.bfloat16, device=x.a.device)
        return lambda out: bf16_matmul(x, mine) or mine

    result, failure = run(make_case, launch_of, repeat=4)
    assert failure is None and result.bad_launches == []


# --- the reference and the tolerance ---------------------------------------------------------


class Huge(Bf16):
    """bf16 operands ~256x larger than the built-in mode's: their products overflow float16."""

    name = "huge_bf16"

    def make_inputs(self, m, n, k, *, seed, device, fp8):
        inputs = super().make_inputs(m, n, k, seed=seed, device=device, fp8=fp8)
        inputs.quant = self.name
        inputs.a, inputs.b = inputs.a * 256, inputs.b * 256
        return inputs


def test_a_reference_that_overflows_the_output_dtype_is_a_case_error(make_case):
    register_quant_mode(Huge(), replace=True)
    case = make_case("k", m=16, n=16, k=256, quant="huge_bf16", out_dtype=torch.float16)
    with pytest.raises(CaseError, match=r"does not fit float16: [\d,]+ of its 256 elements overflow"):
        case.run(lambda out: out.zero_())
    fine = make_case("k", m=16, n=16, k=256, quant="huge_bf16", out_dtype=torch.float32)
    assert torch.isfinite(fine.reference()).all()


@pytest.mark.parametrize("field", ["rtol", "floor"])
def test_an_infinite_tolerance_is_refused_as_the_option_refuses_it(make_case, field):
    with pytest.raises(CaseError, match=f"{field}=inf: expected"):
        make_case("k", m=8, n=8, k=8, **{field: float("inf")})


def test_a_name_of_5000_characters_is_a_case_error(make_case):
    with pytest.raises(CaseError, match="at most 255 characters, got 5,000"):
        make_case("k" * 5000, m=8, n=8, k=8)


# --- launches that do not end -------------------------------------------------------------------


def test_a_launch_that_does_not_end_fails_as_hung_and_the_session_goes_on(pytester, examples_dir):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        test_hang=textwrap.dedent("""
        import time
        from kernels import bf16_matmul

        def test_a_spinning_kernel(gemmcheck):
            case = gemmcheck.case("spin", m=16, n=16, k=32)
            x = case.inputs()
            calls = []
            def launch(out):
                calls.append(1)
                if len(calls) == 2:
                    time.sleep(30)
                bf16_matmul(x, out)
            case.run(launch)

        def test_then_a_good_one(gemmcheck):
            case = gemmcheck.case("good", m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
    """)
    )
    started = time.monotonic()
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--gemmcheck-launch-timeout=0.5", "--gemmcheck-repeat=3", "--gemmcheck-no-record"
    )
    assert time.monotonic() - started < 20
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*launch 2 of 3 hung",
            "*launch 2 hung: did not finish within 0.5 s on the host*",
            "REGRESSION spin bf16 16x16x32: 1/2 launches bad",
            "    vs clean: *",
            "    launch 2; rate < *[[]hung[]]",
        ]
    )


# --- --gemmcheck-repeat=auto -------------------------------------------------------------------


def test_auto_stops_on_the_final_count_and_says_why(make_case):
    """The running count sees the consistency of every launch so far; the words say why it
    stopped, with the final numbers."""
    settings = Settings(repeat="auto", target_rate=0.2, budget=30)

    def launch_of(x):
        calls = []

        def launch(out):
            calls.append(1)
            bf16_matmul(x, out)
            if len(calls) == 3:
                out[0, 0] = out[0, 0] + out[0, 0].abs() * 0.01 + 1e-3  # a bit off: only consistency sees it

        return launch

    result, failure = run(make_case, launch_of, settings=settings, repeat="auto")
    assert [launch.index for launch in result.bad_launches] == [3]
    launches = len(result.launches)
    assert result.stopped.startswith(f"stopped after {launches:,} launches: rate < ")
    assert "reached the target 20.0%" in result.stopped


def test_auto_says_a_raising_kernel_stopped_it(make_case):
    def launch_of(x):
        calls = []

        def launch(out):
            calls.append(1)
            if len(calls) == 5:
                raise RuntimeError("illegal memory access")
            bf16_matmul(x, out)

        return launch

    results = []
    case = make_case("k", m=16, n=16, k=32, settings=Settings(repeat="auto"), record=results.append)
    x = case.inputs()
    with pytest.raises(LaunchError):
        case.run(launch_of(x))
    assert results[0].stopped == "stopped at launch 5: it raised"


@pytest.mark.parametrize(
    "target, launches, words",
    [
        (0.01, 1, "1 launch: rate > 5.00%, above the target 1.00%"),
        (0.2, 2, "2 launches: rate > 22.4%, above the target 20.0%"),
    ],
)
def test_auto_stops_a_kernel_bad_on_every_launch_once_its_rate_is_shown_above_the_target(
    make_case, target, launches, words
):
    """1/1 bad shows the rate above 5%, 2/2 above 22% (95%): more launches cannot bring it below
    the target (before: it launched until the budget ran out, 4,895 of 4,895 bad)."""
    settings = Settings(repeat="auto", target_rate=target, budget=20)
    result, failure = run(
        make_case, lambda x: lambda out: bf16_matmul(x, out) or out.mul_(1.1), settings=settings, repeat="auto"
    )
    assert len(result.launches) == len(result.bad_launches) == launches
    assert result.stopped == f"stopped after {words}" and result.stopped in failure


def test_inputs_print_as_shapes_not_values(make_case):
    """A traceback with locals (-l) shows a case's inputs as what they are, not 10^6 numbers."""
    text = repr(make_case("k", m=4096, n=64, k=64, quant="ptpc", device="cpu").inputs())
    assert text == (
        "<Inputs ptpc seed 0 on cpu: a=[4096, 64] float8_e4m3fn, b=[64, 64] float8_e4m3fn, "
        "a_scale=[4096] float32, b_scale=[64] float32>"
    )


def test_a_scribble_on_an_output_its_repeat_pass_has_not_seen_before_blames_the_scribbler(make_case, request):
    """With repeats checked by checksum, launch 3's output is new (one element off): it is
    checked in full only after launch 4 ran, and launch 4 wrote into it. The full check sees
    the output is not the one the pass read: launch 4 is blamed, and launch 3's accuracy is
    said to be unknown rather than taken from the spoiled output."""
    pytest.importorskip("test_fused_check")
    request.getfixturevalue("fused_anywhere")

    def launch_of(x):
        seen = []

        def launch(out):
            seen.append(out)
            bf16_matmul(x, out)
            if len(seen) == 3:
                out[0, 0] += 1.0
            if len(seen) == 4:
                seen[2].fill_(7.0)

        return launch

    result, failure = run(make_case, launch_of, settings=Settings(repeat=6, check_backend="triton"))
    kinds = {launch.index: launch.kinds for launch in result.launches if launch.kinds}
    assert kinds == {3: ["inconsistent"], 4: ["wrote_outside"]}
    assert "its accuracy is not known: a later launch wrote into its output" in result.launches[2].error
    assert "launch 4: wrote into the other output buffer, which held launch 3's output until its check" in failure
