"""The plain-Python API (pytest_gemmcheck.api): a script's session records and judges as a
pytest session does, and raises only when asked."""

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest
import torch
from kernels import FaultInjector, tiled_gemm

from pytest_gemmcheck import api
from pytest_gemmcheck.errors import GemmcheckError, GemmcheckFailure
from pytest_gemmcheck.records.result import CaseResult


def run_once(s, bad=frozenset(), repeat=6, **case):
    case = s.case("fused", m=64, n=64, k=128, quant="ptpc", tile="32x32", device="cpu", **case)
    x = case.inputs()
    return case.run(
        FaultInjector(lambda out: tiled_gemm(x, out), "tile", set(bad), tile=(16, 16), at=(16, 16)), repeat=repeat
    )


def test_a_second_session_is_judged_against_the_first_and_nothing_raises(tmp_path):
    db = tmp_path / "history.db"
    with api.session(db=db, tag="repro", rootdir=tmp_path) as first:
        clean = run_once(first)
    with api.session(db=db, tag="repro", rootdir=tmp_path) as second:
        flaky = run_once(second, bad={3})
    assert (clean.verdict, clean.baseline["source"]) == ("pass", "clean")
    assert (flaky.verdict, flaky.baseline["source"]) == ("regression", "history")
    assert [launch.index for launch in flaky.bad_launches] == [3]
    with sqlite3.connect(db) as connection:
        runs = connection.execute("SELECT status, tag FROM run ORDER BY id").fetchall()
        launches = connection.execute("SELECT count(*) FROM launch").fetchone()[0]
    assert runs == [("complete", "repro"), ("complete", "repro")] and launches == 12


def test_check_true_raises_as_under_pytest(tmp_path):
    with api.session(db=None, rootdir=tmp_path) as s:
        with pytest.raises(GemmcheckFailure, match="1/6 launches bad"):
            case = s.case("fused", m=64, n=64, k=128, quant="ptpc", tile="32x32", device="cpu")
            x = case.inputs()
            case.run(
                FaultInjector(lambda out: tiled_gemm(x, out), "tile", {3}, tile=(16, 16), at=(16, 16)),
                repeat=6,
                check=True,
            )


def test_db_none_writes_nothing_and_judges_against_clean(tmp_path):
    with api.session(db=None, rootdir=tmp_path) as s:
        result = run_once(s, bad={2})
    assert result.verdict == "regression" and result.baseline["source"] == "clean"
    assert list(tmp_path.iterdir()) == []


def test_a_result_renders_as_a_line_the_evidence_a_dict_and_markdown(tmp_path):
    with api.session(db=None, rootdir=tmp_path) as s:
        result = run_once(s, bad={4})
    assert str(result) == result.summary()
    assert result.summary().startswith("REGRESSION fused ptpc 64x64x128 tile 32x32: 1/6 launches bad, worst ")
    assert "launch 4: " in result.evidence() and "baseline: clean" in result.evidence()
    assert CaseResult.from_dict(json.loads(json.dumps(result.to_dict()))).to_dict() == result.to_dict()
    lines = result.markdown().splitlines()
    assert lines[0] == "| verdict | case | bad launches | kinds | baseline |"
    assert lines[2].startswith("| regression | fused ptpc 64x64x128 tile 32x32 | 1/6 | wrong, inconsistent |")
    assert not result.passed


def test_a_script_and_a_pytest_session_share_one_history(pytester, examples_dir, tmp_path):
    """The same case from a pytest session and from a script: one key, and the script's run is
    judged against the pytest session's."""
    (pytester.path / "kernels.py").write_text((examples_dir / "cpu" / "kernels.py").read_text())
    pytester.makepyfile(
        test_fused=textwrap.dedent("""
        from kernels import tiled_gemm

        def test_fused(gemmcheck):
            case = gemmcheck.case("fused", m=64, n=64, k=128, quant="ptpc", tile="32x32", device="cpu")
            x = case.inputs()
            case.run(lambda out: tiled_gemm(x, out), repeat=6)
    """)
    )
    db = tmp_path / "shared.db"
    pytester.runpytest(f"--gemmcheck-db={db}", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    with api.session(db=db, rootdir=pytester.path) as s:
        result = run_once(s)
    assert result.baseline["source"] == "history" and result.baseline["launches"] == 6
    with sqlite3.connect(db) as connection:
        assert connection.execute('SELECT count(DISTINCT key) FROM "case"').fetchone()[0] == 1


@pytest.mark.parametrize(
    "options,words",
    [
        (
            dict(repeat=0),
            "gemmcheck.session(repeat=0): expected a whole number of launches from 1 to 1,000,000 "
            "or 'auto', got 0 (the option --gemmcheck-repeat)",
        ),
        (dict(rtol="5%"), "gemmcheck.session(rtol='5%'): expected a relative tolerance"),
        (dict(repet=3), "gemmcheck.session() has no option 'repet'"),
        (dict(processes=4), "gemmcheck.session() has no option 'processes'"),
        (
            dict(tag="x" * 100_000),
            "gemmcheck.session(tag=...): expected a label of at most 512 characters, got 100,000",
        ),
        (
            dict(tag="repro\x00"),
            "gemmcheck.session(tag=...): expected a label of printable characters, got 'repro\\x00': "
            "U+0000 is a control",
        ),
    ],
)
def test_a_bad_option_names_itself(options, words):
    with pytest.raises(GemmcheckError) as raised:
        api.session(**options)
    assert str(raised.value).startswith(words)


def test_an_unusable_database_is_one_line_before_any_launch(tmp_path):
    bad = tmp_path / "not-a-db"
    bad.write_text("this is no database")
    launched = []
    with pytest.raises(GemmcheckError) as raised:
        with api.session(db=bad, rootdir=tmp_path) as s:
            s.case("k", m=16, n=16, k=32, device="cpu").run(launched.append)
    assert "\n" not in str(raised.value) and str(bad) in str(raised.value)
    assert launched == []


def test_on_result_sees_each_result_before_it_is_recorded(tmp_path):
    seen = []
    with api.session(db=None, rootdir=tmp_path, on_result=lambda result: seen.append(result.verdict)) as s:
        run_once(s)
        run_once(s, bad={1})
    assert seen == ["pass", "regression"]


def test_the_readme_example_runs_as_a_script(tmp_path, examples_dir):
    script = tmp_path / "repro.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(examples_dir / "cpu")!r})
        import pytest_gemmcheck as gc
        from kernels import tiled_gemm

        with gc.session(db=".gemmcheck/history.db", tag="repro") as s:
            case = s.case("fused_gemm_scatter", m=128, n=96, k=256, quant="ptpc", tile="32x32", device="cpu")
            x = case.inputs()
            result = case.run(lambda out: tiled_gemm(x, out), repeat=4)
            print(result.verdict, result.summary())
    """)
    )
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pass PASS       fused_gemm_scatter ptpc 128x96x256 tile 32x32: 0/4 launches bad")
    assert "gemmcheck: recorded run 1 (1 results)" in done.stderr
    assert (tmp_path / ".gemmcheck" / "history.db").exists()


def test_a_case_with_its_own_reference_judges_by_it(tmp_path):
    """An epilogue the built-in modes do not describe (a ReLU): right against its own reference,
    wrong against the plain GEMM's."""

    def relu_reference(x):
        return (x.a.float() @ x.b.float().t()).relu()

    def kernel(x):
        return lambda out: out.copy_((x.a.float() @ x.b.float().t()).relu())

    with api.session(db=None, rootdir=tmp_path, repeat=3) as s:
        own = s.case("relu_gemm", m=32, n=32, k=64, device="cpu", reference=relu_reference)
        plain = s.case("relu_gemm", m=32, n=32, k=64, device="cpu")
        assert own.key != plain.key  # a case of its own
        right = own.run(kernel(own.inputs()))
        wrong = plain.run(kernel(plain.inputs()))
        assert torch.equal(own.reference(), relu_reference(own.inputs()).to(torch.bfloat16))
    assert right.verdict == "pass" and wrong.verdict == "regression"


def test_the_function_is_the_package_attribute_with_the_plugin_loaded():
    import pytest_gemmcheck
    import pytest_gemmcheck.pytest_session.state  # noqa: F401  (what a pytest session imports)

    assert pytest_gemmcheck.session is api.session
