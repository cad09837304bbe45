"""``gemmcheck lint`` and ``python -m pytest_gemmcheck.compiled.lint``: exit statuses, text and
JSON, usage errors, its registration as a subcommand; nothing checked is never a pass. The
lint's own options on kernels built here: tests/compiled/lint/test_dataflow.py."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_gemmcheck.commands.lint import add_parser, main, run

ASSEMBLY = Path(__file__).resolve().parents[1] / "compiled" / "data"  # examples/flydsl/fp8_tail_gemm.py's, committed


@pytest.fixture
def files():
    """The committed gfx950 assembly files: {name: path}."""
    return {path.stem: str(path) for path in ASSEMBLY.glob("fp8_tail_gemm_*.s")}


def test_exit_status_and_text(files, capsys):
    assert main([files["fp8_tail_gemm_fixed_k512"]]) == 0
    assert capsys.readouterr().out.strip().endswith("0 error(s), 0 warning(s) in 1 kernel(s)")
    assert main([files["fp8_tail_gemm_racy_k512"], files["fp8_tail_gemm_fixed_k512"]]) == 1
    out = capsys.readouterr().out
    assert out.count(": error: read-before-load-retires: ds_read_b128") == 16
    assert out.strip().endswith("16 error(s), 0 warning(s) in 2 kernel(s)")


def test_json_output(files, capsys):
    assert main(["--format", "json", files["fp8_tail_gemm_racy_k256"]]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["errors"] == 16 and data["warnings"] == 0
    finding = data["files"][0]["findings"][0]
    assert set(finding) >= {"severity", "kind", "kernel", "line", "instruction", "lds", "loads", "why", "reader_waves"}
    assert finding["loads"][0]["instruction"].startswith("buffer_load_dwordx4") and finding["loads"][0]["line"] > 0
    assert all(r["start"] < r["end"] for r in finding["lds"])


def test_usage_errors(tmp_path, capsys):
    assert main([str(tmp_path / "missing.s")]) == 2
    assert "missing.s" in capsys.readouterr().err
    assert main(["--format", "xml", "x.s"]) == 2
    assert main([]) == 2
    capsys.readouterr()
    assert main(["--loop-unroll", "0", str(tmp_path)]) == 2
    assert "--loop-unroll must be at least 1, got 0" in capsys.readouterr().err
    for limit in ("0", "-1", "nan", "inf"):  # each a usage error naming the option, not a run without a limit
        assert main(["--time-limit", limit, str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert "--time-limit must be a number of seconds above 0" in err and "--loop-unroll" not in err


def test_sub_parser_registration(files, capsys):
    parser = argparse.ArgumentParser(prog="gemmcheck")
    sub = parser.add_subparsers(dest="command")
    add_parser(sub)
    args = parser.parse_args(["lint", "--format", "json", files["fp8_tail_gemm_fixed_k512"]])
    assert args.func is run
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["errors"] == 0


def test_python_dash_m(files):
    done = subprocess.run(
        [sys.executable, "-m", "pytest_gemmcheck.compiled.lint", files["fp8_tail_gemm_racy_k512"]],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "16 error(s)" in done.stdout


def test_a_file_with_no_kernel_is_unchecked_never_passed(tmp_path, cli):
    empty = tmp_path / "notes.s"
    empty.write_text("; a comment, no kernel code\n")
    status, out, _ = cli("lint", empty)
    assert status == 3, out
    assert "0 kernel(s)" in out
