"""Compiled kernels recorded with a case: lint findings and static metrics against history."""

import json
import shutil
import textwrap
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"

SUITE = textwrap.dedent("""
    import os
    from pathlib import Path

    def test_compiled(gemmcheck):
        case = gemmcheck.case("fp8_tail_gemm", m=256, n=256, k=512, quant="fp8", tile="128x128")
        text = Path(os.environ["ASM"]).read_text()
        if os.environ.get("MORE_VGPRS"):  # the same kernel, built to need more registers
            text = text.replace(".vgpr_count:     206", ".vgpr_count:     230")
        case.check_assembly([("tail", text)], source="fp8_tail_gemm K=512 for gfx950")
""")


@pytest.fixture
def suite(pytester, monkeypatch):
    pytester.makepyfile(test_static_suite=SUITE)
    monkeypatch.delenv("MORE_VGPRS", raising=False)
    return pytester


def joined(result) -> str:
    """The terminal's lines as one text, its wrapping undone."""
    return " ".join(line.strip() for line in result.stdout.lines)


def test_racy_assembly_is_reported_and_fails_on_request(suite, monkeypatch):
    monkeypatch.setenv("ASM", str(DATA / "fp8_tail_gemm_racy_k512.s"))
    reported = suite.runpytest("--gemmcheck-no-record")
    reported.assert_outcomes(passed=1)
    reported.stdout.fnmatch_lines(
        [
            "PASS * fp8_tail_gemm fp8 256x256x512 tile 128x128: 1 kernel, lint 16 errors,",
            "           0 warnings",
            "    compiled (fp8_tail_gemm K=512 for gfx950)",
        ]
    )
    failed = suite.runpytest("--gemmcheck-no-record", "--gemmcheck-static=fail")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        [
            "*gemmcheck: fp8_tail_gemm fp8 256x256x512 tile 128x128: regression",
            "*the LDS-race lint found 16 read(s) of LDS that a DMA load may not have finished writing",
            "*lint: 16 error(s), 0 warning(s)",
            "*error: read-before-load-retires: ds_read*",
        ]
    )


def test_fixed_assembly_passes_and_metrics_are_compared_with_the_last_record(suite, monkeypatch):
    monkeypatch.setenv("ASM", str(DATA / "fp8_tail_gemm_fixed_k512.s"))
    first = suite.runpytest("--gemmcheck-static=fail")
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["PASS *", "    compiled (*)"])
    assert ": 1 kernel, lint 0 errors, 0 warnings compiled (" in joined(first)
    monkeypatch.setenv("MORE_VGPRS", "1")
    changed = suite.runpytest("--gemmcheck-static=fail")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*static metrics changed: *VGPRs: 206 -> 230 (+24)*"])
    # reported, not failed, by default
    suite.runpytest().assert_outcomes(passed=1)
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{suite.path / '.gemmcheck' / 'history.db'}")
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT launches, static FROM result ORDER BY id")).all()
    engine.dispose()
    assert [row[0] for row in rows] == [0, 0, 0]
    (metrics,) = json.loads(rows[-1][1])["metrics"].values()
    assert (metrics["vgpr_count"], metrics["lds_bytes"]) == (230, 65536)


def test_compile_flydsl_records_the_example(pytester, examples_dir):
    from pytest_gemmcheck.compiled.flydsl.compile import find_linker, flydsl_installed

    if not flydsl_installed() or find_linker() is None:
        pytest.skip("FlyDSL or an ld.lld 18+ is not installed (bash ci/install-flydsl.sh)")
    shutil.copy(examples_dir / "flydsl" / "fp8_tail_gemm.py", pytester.path / "fp8_tail_gemm.py")
    pytester.makepyfile(
        test_compile=textwrap.dedent("""
        import pytest

        @pytest.mark.parametrize("variant", ["racy", "fixed"])
        def test_tail(gemmcheck, variant):
            case = gemmcheck.case("fp8_tail_gemm", m=256, n=256, k=256, quant="fp8", params={"variant": variant})
            result = case.compile_flydsl("fp8_tail_gemm.py:compile_spec", params={"K": 256, "variant": variant})
            assert (result.static["lint"]["errors"] > 0) == (variant == "racy")
    """)
    )
    result = pytester.runpytest_subprocess("--gemmcheck-no-record", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def _corpus_kernel(examples_dir, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location("lint_corpus", examples_dir / "flydsl" / "lint_corpus" / "kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.corpus()[name]


def test_latent_findings_fail_only_under_the_latent_policy(suite, monkeypatch, examples_dir, tmp_path):
    path = tmp_path / "latent.s"
    path.write_text(_corpus_kernel(examples_dir, "phase_offset_seed"))
    monkeypatch.setenv("ASM", str(path))
    reported = suite.runpytest("--gemmcheck-no-record", "--gemmcheck-static=fail")
    reported.assert_outcomes(passed=1)
    assert ": 1 kernel, lint 0 errors, 0 warnings, 1 latent compiled (" in joined(reported)
    failed = suite.runpytest("--gemmcheck-no-record", "--gemmcheck-static=latent")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        ["*ordered only by elapsed time across a barrier-phase offset*", "*latent: read-across-phase-offset: ds_read*"]
    )


def test_unchecked_reads_fail_under_the_fail_policy(suite, monkeypatch, tmp_path):
    text = (DATA / "fp8_tail_gemm_fixed_k512.s").read_text()
    # an instruction the lint does not model now computes M0 for every load: nothing is checked
    text = text.replace("\ts_mov_b32 m0, ", "\ts_quadmask_b32 m0, ")
    path = tmp_path / "unmodelled.s"
    path.write_text(text)
    monkeypatch.setenv("ASM", str(path))
    suite.runpytest("--gemmcheck-no-record").assert_outcomes(passed=1)
    failed = suite.runpytest("--gemmcheck-no-record", "--gemmcheck-static=fail")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*the LDS-race lint could not check * access(es) or kernel(s)*"])
