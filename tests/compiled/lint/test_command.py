import argparse
import json
import subprocess
import sys

import pytest

from pytest_gemmcheck.compiled.lint.command import add_lint_parser, main, run_lint


@pytest.fixture
def files(tmp_path, example_asm):
    paths = {}
    for name, text in example_asm.items():
        path = tmp_path / f"{name}.s"
        path.write_text(text)
        paths[name] = str(path)
    return paths


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
    add_lint_parser(sub)
    args = parser.parse_args(["lint", "--format", "json", files["fp8_tail_gemm_fixed_k512"]])
    assert args.func is run_lint
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["errors"] == 0


def test_python_dash_m(files):
    done = subprocess.run(
        [sys.executable, "-m", "pytest_gemmcheck.compiled.lint", files["fp8_tail_gemm_racy_k512"]], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "16 error(s)" in done.stdout


def test_kernel_filter_and_workgroup_override(tmp_path, asm_kernel, snippets, capsys):
    text = asm_kernel(snippets["load_a"] + "\ts_barrier\n" + snippets["read_next_a"])
    text = text.replace("    .reqd_workgroup_size:\n      - 256\n      - 1\n      - 1\n", "")
    path = tmp_path / "k.s"
    path.write_text(text)
    # a filter that matches nothing checks nothing: never a pass
    assert main(["--kernel", "other", str(path)]) == 3
    assert "no kernel named other (here: " in capsys.readouterr().out
    # one wave only: no other wave's slice is written, nothing to race with
    assert main(["--workgroup-size", "64", str(path)]) == 0
    assert main(["--workgroup-size", "128", str(path)]) == 1
