"""The plugin in real pytest sessions (pytester): options, ini keys, the marker, fixtures,
messages, the summary, and the example suites."""

import shutil
import subprocess
import sys
import textwrap

import pytest

from pytest_gemmcheck.config.table import OPTIONS

KERNELS_IMPORT = "from kernels import tiled_gemm, bf16_matmul, FaultInjector\n"


@pytest.fixture
def suite(pytester, examples_dir):
    """A pytester directory holding the example kernels, to write test files against."""
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    return pytester


def test_example_suites_run_clean_and_show_the_faults(pytester, examples_dir):
    shutil.copytree(examples_dir / "cpu", pytester.path / "cpu")
    result = pytester.runpytest("cpu", "--gemmcheck-repeat=3", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=16, xfailed=4)
    result.stdout.fnmatch_lines(
        [
            "*- gemmcheck -*",
            "PASS * tiled_gemm ptpc 256x384x512 tile 64x64: 0/3 launches bad",
            "    rate < 63.2% (95%), 1 process",
            "REGRESSION fault_tile ptpc 256x256x512 tile 64x64: 1/3 launches bad,*",
            "    launch 2; rate < * [[]wrong, inconsistent[]]",
            "REGRESSION fault_subtle ptpc 256x256x512 tile 64x64: 1/3 launches bad,",
            "           worst 20 differing",
            "    vs clean: no bad launch expected",
            "    launch 2; rate < * [[]inconsistent[]]",
        ]
    )
    # a kernel's own output: said on its passing line
    result.stdout.fnmatch_lines(
        [
            "PASS * allocating_gemm fp8 128x96x256: 0/3 launches bad",
            "    rate < * 1 process",
            "    *launch*1* checked as returned, not poisoned*",
        ]
    )


def test_failure_message_reads_like_the_hand_made_tables(suite):
    suite.makepyfile(
        KERNELS_IMPORT
        + textwrap.dedent("""
        def test_flaky(gemmcheck):
            case = gemmcheck.case("fused_gemm", m=256, n=256, k=256, quant="ptpc", tile="64x64")
            x = case.inputs()
            case.run(FaultInjector(lambda out: tiled_gemm(x, out), "tile", {2, 5, 9}, tile=(16, 32), at=(64, 0)))
    """)
    )
    result = suite.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*gemmcheck: fused_gemm ptpc 256x256x256 tile 64x64: regression",
            "*3 bad launches against a clean baseline",
            "*3/12 launches bad (launches 2, 5, 9); rate < 52.7% (95%), 1 process",
            "*worst * wrong elements in 16 rows, 1 tile of 64x64; max rel err 0.*",
            "*launch 2: * wrong elements in 16 rows (rows 64, 65, 66, 67, 68, 69, 70, 71, ...), "
            "1 tile of 64x64 [[]tile (1,0)[]]*",
            "*differs from the consensus of 9 launches in * elements in 16 rows*",
        ]
    )


def test_repeat_option_sets_the_number_of_launches(suite):
    suite.makepyfile(
        KERNELS_IMPORT
        + textwrap.dedent("""
        def test_count(gemmcheck):
            case = gemmcheck.case("k", m=32, n=32, k=64)
            x = case.inputs()
            result = case.run(lambda out: bf16_matmul(x, out))
            assert len(result.launches) == 5
    """)
    )
    suite.runpytest("--gemmcheck-repeat=5").assert_outcomes(passed=1)


def test_ini_keys_are_defaults_and_the_command_line_wins(suite):
    suite.makeini("[pytest]\ngemmcheck_repeat = 4\ngemmcheck_seed = 7\n")
    suite.makepyfile(
        KERNELS_IMPORT
        + textwrap.dedent("""
        import os
        def test_count(gemmcheck):
            case = gemmcheck.case("k", m=16, n=16, k=32)
            x = case.inputs()
            result = case.run(lambda out: bf16_matmul(x, out))
            assert (len(result.launches), result.seed) == (int(os.environ["EXPECT_REPEAT"]), 7)
    """)
    )
    suite.monkeypatch = None
    import os

    os.environ["EXPECT_REPEAT"] = "4"
    try:
        suite.runpytest().assert_outcomes(passed=1)
        os.environ["EXPECT_REPEAT"] = "2"
        suite.runpytest("--gemmcheck-repeat=2").assert_outcomes(passed=1)
    finally:
        del os.environ["EXPECT_REPEAT"]


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--gemmcheck-repeat=0"],
            "argument --gemmcheck-repeat: expected a whole number of launches from 1 to 1,000,000 or 'auto', got '0'",
        ),
        (
            ["--gemmcheck-repeat=many"],
            "argument --gemmcheck-repeat: expected a whole number of launches "
            "from 1 to 1,000,000 or 'auto', got 'many'",
        ),
        (["--gemmcheck-rtol=-1"], "argument --gemmcheck-rtol: expected a relative tolerance > 0*"),
        (["--gemmcheck-rtol=nan"], "argument --gemmcheck-rtol: expected a relative tolerance > 0*"),
        (["--gemmcheck-seed=x"], "argument --gemmcheck-seed: expected a whole number >= 0 and < 2**63, got 'x'"),
        (["--gemmcheck-floor=-0.5"], "argument --gemmcheck-floor: expected a fraction*"),
    ],
)
def test_bad_option_values_are_usage_errors_naming_the_option(pytester, args, message):
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_bad_ini_value_is_a_usage_error_naming_the_key(pytester):
    pytester.makeini("[pytest]\ngemmcheck_rtol = five percent\n")
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option gemmcheck_rtol (the default of --gemmcheck-rtol): expected a relative tolerance*"]
    )


def test_marker_overrides_per_test(suite):
    suite.makepyfile(
        KERNELS_IMPORT
        + textwrap.dedent("""
        import pytest

        @pytest.mark.gemmcheck(repeat=3, rtol=0.1, seed=5)
        def test_marked(gemmcheck):
            case = gemmcheck.case("k", m=16, n=16, k=32)
            x = case.inputs()
            result = case.run(lambda out: bf16_matmul(x, out))
            assert (len(result.launches), result.rtol, result.seed) == (3, 0.1, 5)

    """)
    )
    suite.runpytest().assert_outcomes(passed=1)
    # a key it does not take is a usage error at collection, before any test runs
    suite.makepyfile(
        test_typo=textwrap.dedent("""
        import pytest

        @pytest.mark.gemmcheck(repeats=3)
        def test_typo(gemmcheck):
            pass
    """)
    )
    result = suite.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: test_typo.py::test_typo: @pytest.mark.gemmcheck got unknown argument(s) "
            "repeats; it takes repeat, processes, rtol*"
        ]
    )


def test_nondeterministic_option_turns_off_consistency_for_matching_kernels(suite):
    suite.makepyfile(
        KERNELS_IMPORT
        + textwrap.dedent("""
        def test_splitk(gemmcheck):
            case = gemmcheck.case("splitk_atomic", m=128, n=128, k=256, quant="ptpc")
            x = case.inputs()
            case.run(FaultInjector(lambda out: tiled_gemm(x, out), "subtle", {2}, count=20, fraction=0.02))
    """)
    )
    suite.runpytest().assert_outcomes(failed=1)
    suite.runpytest("--gemmcheck-nondeterministic=other,splitk_*").assert_outcomes(passed=1)


def test_kernel_that_raises_fails_with_launch_number_and_its_exception(suite):
    suite.makepyfile(
        KERNELS_IMPORT
        + textwrap.dedent("""
        def test_raises(gemmcheck):
            case = gemmcheck.case("k", m=16, n=16, k=32)
            x = case.inputs()
            calls = []
            def launch(out):
                calls.append(1)
                if len(calls) == 3:
                    raise RuntimeError("illegal memory access")
                bf16_matmul(x, out)
            case.run(launch)
    """)
    )
    result = suite.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*RuntimeError: illegal memory access",
            "*LaunchError: launch 3 of 12 raised RuntimeError: illegal memory access",
            "*launch 3: raised RuntimeError: illegal memory access",
        ]
    )
    result.stdout.fnmatch_lines(
        ["REGRESSION k bf16 16x16x32: 1/3 launches bad", "    vs clean: *", "    launch 3; rate < *[[]raised[]]"]
    )


@pytest.mark.parametrize(
    "body,message",
    [
        (
            "return torch.zeros(16, 8, dtype=torch.bfloat16)",
            "*bad output: returned a tensor of shape [[]16, 8[]], dtype bfloat16 on cpu; "
            "expected [[]16, 16[]], bfloat16 on cpu*",
        ),
        (
            "return torch.zeros(16, 16, dtype=torch.float32)",
            "*bad output: returned a tensor of shape [[]16, 16[]], dtype float32*",
        ),
        ("out.resize_(8, 32)", "*bad output: the kernel replaced or reshaped `out` (now shape [[]8, 32[]]*"),
        ("pass", "*wrote nothing: all 256 elements still hold the NaN poison*"),
        (
            "return out.float().numpy()",
            "*bad output: returned a numpy.ndarray of shape [[]16, 16[]]; "
            "a kernel writes into `out` or returns a torch tensor*",
        ),
        ("import sys; sys.exit(3)", "*launch 1: raised SystemExit: 3*"),
    ],
)
def test_bad_outputs_are_reported_as_such(suite, body, message):
    suite.makepyfile(
        "import torch\n"
        + textwrap.dedent(f"""
        def test_bad(gemmcheck):
            case = gemmcheck.case("k", m=16, n=16, k=32)
            def launch(out):
                {body}
            case.run(launch)
    """)
    )
    result = suite.runpytest("--gemmcheck-repeat=2")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([message])


def test_kernel_returning_its_own_output_is_checked_as_returned(suite):
    suite.makepyfile(
        KERNELS_IMPORT
        + textwrap.dedent("""
        import torch
        def test_own(gemmcheck):
            case = gemmcheck.case("scaled_mm_like", m=32, n=32, k=64, quant="fp8")
            x = case.inputs()
            def launch(out):
                mine = torch.empty_like(out)
                tiled_gemm(x, mine)
                mine[0, 0] = mine[0, 0] * 3 + 100  # wrong, to see the message
                return mine
            case.run(launch)
    """)
    )
    result = suite.runpytest("--gemmcheck-repeat=2")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*checked as returned: the kernel allocated its own output, so poisoning could not apply*"]
    )


def test_standalone_fixtures(suite):
    suite.makepyfile(
        KERNELS_IMPORT
        + textwrap.dedent("""
        import torch
        def test_pieces(poisoned_output, bf16_reference, gemmcheck):
            out = poisoned_output(8, 12)
            assert out.shape == (8, 12) and out.dtype == torch.bfloat16 and torch.isnan(out).all()
            x = gemmcheck.case("k", m=8, n=12, k=64, quant="ptpc").inputs()
            ref = bf16_reference(x)
            tiled_gemm(x, out)
            assert not torch.isnan(out).any()
            assert torch.allclose(out.float(), ref.float(), rtol=0.02, atol=0.02 * ref.float().abs().max())
            same = bf16_reference(x.a, x.b, a_scale=x.a_scale, b_scale=x.b_scale, quant="ptpc")
            assert torch.equal(same, ref)
            plain = bf16_reference(torch.ones(2, 3), torch.ones(4, 3), out_dtype=torch.float32)
            assert torch.equal(plain, torch.full((2, 4), 3.0))
            poisoned_output.poison(out)
            assert torch.isnan(out).all()
    """)
    )
    suite.runpytest().assert_outcomes(passed=1)


def test_results_reach_the_controller_under_xdist(pytester, examples_dir):
    pytest.importorskip("xdist")
    shutil.copytree(examples_dir / "cpu", pytester.path / "cpu")
    result = pytester.runpytest_subprocess(
        "cpu/test_cpu_kernels.py", "-n", "2", "--gemmcheck-repeat=2", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=15)
    summary = [line for line in result.stdout.lines if line.startswith("PASS ")]
    assert len(summary) == 15  # one line per case, all gathered by the controller


def test_loading_the_plugin_imports_no_torch():
    code = (
        "import sys, pytest_gemmcheck.plugin, pytest_gemmcheck; "
        "assert 'torch' not in sys.modules, 'torch imported at plugin load'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_help_lists_every_option(pytester):
    result = pytester.runpytest("--help")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*GEMM launch checking (pytest-gemmcheck)*"])
    text = result.stdout.str()
    assert all(option.flag in text for option in OPTIONS)
    assert "95% upper bound" in text


def test_readme_documents_every_option_and_ini_key(examples_dir):
    readme = (examples_dir.parent / "README.md").read_text()
    for option in OPTIONS:
        assert option.flag in readme, option.flag
        assert option.ini in readme, option.ini


def test_importing_the_package_installs_no_import_hook():
    """Importing the package (as pytest's start-up does) leaves the import system alone, and
    ``python -m`` runs the command line and the lint."""
    code = (
        "import sys; before = list(sys.meta_path); import pytest_gemmcheck; "
        "assert sys.meta_path == before, sys.meta_path"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    for module in ("pytest_gemmcheck.compiled.lint", "pytest_gemmcheck"):
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True)
        assert done.returncode == 0 and "usage:" in done.stdout, (module, done.stderr)
