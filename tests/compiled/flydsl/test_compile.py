"""Compile the example for gfx950 without a GPU and lint it. Needs FlyDSL and ld.lld 18+."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_gemmcheck.compiled.flydsl.compile import compile_spec, find_linker, flydsl_installed
from pytest_gemmcheck.compiled.flydsl.metrics import metrics_from_asm
from pytest_gemmcheck.compiled.lint import lint_text

EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "flydsl" / "fp8_tail_gemm.py")
SPEC = f"{EXAMPLE}:compile_spec"

pytestmark = [
    pytest.mark.skipif(not flydsl_installed(), reason="FlyDSL is not installed (ci/install-flydsl.sh installs it)"),
    pytest.mark.skipif(find_linker() is None, reason="no ld.lld 18+ for FlyDSL's code objects (ci/install-flydsl.sh)"),
]


@pytest.fixture(scope="module")
def compiled():
    results = {}
    for variant in ("racy", "fixed"):
        for k in (256, 512, 1024):
            result = compile_spec(SPEC, {"K": k, "variant": variant})
            assert result.ok, result.error + "\n" + result.output[-2000:]
            results[variant, k] = result
    return results


@pytest.mark.parametrize("k", [256, 512, 1024])
def test_lint_flags_the_racy_tail_and_not_the_fixed_one(compiled, k):
    [racy] = compiled["racy", k].assembly
    [fixed] = compiled["fixed", k].assembly
    racy_report = lint_text(racy.text, racy.path)
    fixed_report = lint_text(fixed.text, fixed.path)
    assert len(racy_report.errors) == 16  # every read of the final tile's A and B fragments
    assert fixed_report.findings == [] and fixed_report.notes == []


def test_compile_environment(compiled):
    env = compiled["racy", 256].env
    assert env["COMPILE_ONLY"] == "1" and env["ARCH"] == env["FLYDSL_GPU_ARCH"] == "gfx950"
    assert env["FLYDSL_DEBUG_DUMP_ASM"] == "1"
    assert Path(env["ROCM_PATH"], "llvm", "bin", "ld.lld").exists() or "ROCM_PATH" in os.environ


def test_assembly_targets_gfx950(compiled):
    [asm] = compiled["fixed", 512].assembly
    assert asm.kernel == "fp8_tail_gemm_0"
    assert '.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx950"' in asm.text


def test_committed_assembly_lints_like_a_fresh_compile(compiled, example_asm):
    # the mutation tests run on data/ without FlyDSL; it must still say what a compile says
    for variant in ("racy", "fixed"):
        [fresh] = compiled[variant, 512].assembly
        committed = example_asm[f"fp8_tail_gemm_{variant}_k512"]
        assert len(lint_text(fresh.text).errors) == len(lint_text(committed).errors)


def test_metrics_of_compiled_kernels(compiled):
    for (variant, k), result in compiled.items():
        [metrics] = metrics_from_asm(result.assembly[0].text).values()
        assert metrics["lds_bytes"] == 65536
        assert metrics["vgpr_spill_count"] == 0 and metrics["sgpr_spill_count"] == 0
        assert metrics["mfma_count"] == 16 * (k // 128)
        assert metrics["lds_dma_count"] == 8 * (k // 128)


def test_a_failing_compile_is_reported_not_raised(tmp_path):
    result = compile_spec(SPEC, {"K": 100, "variant": "racy"}, keep_dir=str(tmp_path))
    assert not result.ok and result.returncode != 0
    assert "K must be a multiple of 128" in result.error


def test_cli_compiles_and_lints_a_spec():
    done = subprocess.run(
        [sys.executable, "-m", "pytest_gemmcheck.compiled.lint", SPEC, "-D", "K=256", "-D", "variant=racy"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.strip().endswith("16 error(s), 0 warning(s) in 1 kernel(s)")
    bad = subprocess.run(
        [sys.executable, "-m", "pytest_gemmcheck.compiled.lint", SPEC, "-D", "K=100"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "K must be a multiple" in bad.stderr


def test_capture_assembly_in_process(tmp_path):
    script = f"""
import importlib.util
from pytest_gemmcheck.compiled.flydsl.adapter import capture_assembly
spec = importlib.util.spec_from_file_location("example", {EXAMPLE!r})
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
with capture_assembly({str(tmp_path)!r}) as captured:
    launcher, args = module.compile_spec(K=512, variant="fixed")
    launcher(*args)
print(len(captured.files), [len(r.errors) for r in captured.lint()])
"""
    env = dict(os.environ)
    probe = compile_spec(SPEC, {"K": 256, "variant": "fixed"})
    env.update({k: v for k, v in probe.env.items() if not k.startswith("FLYDSL_DUMP") and k != "FLYDSL_DEBUG_DUMP_ASM"})
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "1 [0]"


RING = str(Path(__file__).resolve().parents[3] / "examples" / "flydsl" / "lint_corpus" / "ring_loop.py")


@pytest.mark.parametrize("variant", ["fixed", "racy"])
def test_compiled_runtime_loop_matches_the_committed_assembly_and_its_lint(variant, example_asm):
    result = compile_spec(f"{RING}:compile_spec", {"variant": variant})
    assert result.ok, result.error
    [assembly] = result.assembly
    report = lint_text(assembly.text, assembly.path)
    committed = lint_text(example_asm[f"ring_loop_{variant}"])
    assert [(f.severity, f.instruction) for f in report.findings] == [
        (f.severity, f.instruction) for f in committed.findings
    ]
    assert (report.errors == []) == (variant == "fixed")
