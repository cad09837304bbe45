"""The history read back: ``gemmcheck history``, ``compare``, ``coverage``, ``runs`` and
``goldens export`` over databases written by real sessions, their formats and filters."""

import json
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from pytest_gemmcheck.cli import main as gemmcheck

# A kernel whose tail is wrong on every launch (VARIANT=before), on launches 2, 5 and 9 (middle)
# or never (after): the background's "main today fails 12/12 / 2A+B fails / this PR passes",
# three shapes.
AB_SUITE = textwrap.dedent("""
    import os
    import pytest
    from kernels import FaultInjector, tiled_gemm

    @pytest.mark.parametrize("m,n,k", [(64, 64, 128), (128, 64, 256), (96, 128, 128)])
    def test_tail(gemmcheck, m, n, k):
        case = gemmcheck.case("tail_gemm", m=m, n=n, k=k, quant="ptpc", tile="32x32", params={"fuse": False})
        x = case.inputs()
        bad = {"before": set(range(1, 13)), "middle": {2, 5, 9}, "after": set()}[os.environ["VARIANT"]]
        case.run(FaultInjector(lambda out: tiled_gemm(x, out, tile=(32, 32)), "tile", bad, tile=(32, 32)))
""")


@pytest.fixture
def ab_history(pytester, examples_dir, tmp_path, monkeypatch):
    """A database with a 'before' run (tag main), a 'middle' one (2A+B) and an 'after' one (pr-7)."""
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(test_ab=AB_SUITE)
    db = tmp_path / "ab.db"
    for variant, tag in (("before", "main"), ("middle", "2A+B"), ("after", "pr-7")):
        monkeypatch.setenv("VARIANT", variant)
        pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}", f"--gemmcheck-tag={tag}")
    return db


def run(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    status = gemmcheck([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_compare_gives_the_pr_table_in_markdown(ab_history, capsys):
    status, out, _ = run(capsys, "compare", "--db", ab_history, "--side", "main", "--side", "pr-7", "--format", "markdown")
    assert status == 0, out
    lines = out.splitlines()
    assert lines[0] == "| kernel | quant | shape | tile | params | main | pr-7 | pr-7 vs main |"
    rows = [line for line in lines if line.startswith("| tail_gemm")]
    assert len(rows) == 3
    for row in rows:
        assert re.search(r"\| fails 12/12 \(worst \d{3}\) \| passes 0/12 \| fixed \(p = \d\.\de-0\d\) \|", row), row
    assert "fuse=False" in rows[0]
    assert any(line.startswith("p: one-sided Fisher exact test") for line in lines)


def test_compare_takes_sides_by_kind_and_more_than_two(ab_history, capsys):
    status, out, _ = run(capsys, "compare", "--db", ab_history, "--side", "tag:pr-7", "--side", "run:1", "--side",
                         "tag:main", "--format", "json")
    assert status == 0
    rows = json.loads(out)
    assert len(rows) == 3
    sides = rows[0]["sides"]
    assert list(sides) == ["pr-7", "run 1", "main"]
    assert sides["run 1"]["change"] == "broken" and sides["main"]["bad_launches"] == 12
    status, _, err = run(capsys, "compare", "--db", ab_history, "--side", "main", "--side", "nowhere")
    assert status == 2 and "--side 'nowhere' is no run id, tag or revision in the history" in err


def test_compare_timing_leaves_out_results_not_known_to_be_uncontended(ab_history, capsys):
    """On the CPU nothing tells whether the machine was quiet: no time is shown as if it were."""
    status, out, _ = run(capsys, "compare", "--db", ab_history, "--side", "main", "--side", "pr-7", "--timing")
    assert status == 0
    assert "time main" in out and "6 results that ran on a contended GPU" in out
    row = next(line for line in out.splitlines() if line.startswith("tail_gemm"))
    assert re.search(r"—\s+—\s+—$", row.rstrip()), row


def test_compare_timing_of_quiet_runs(tmp_path, capsys):
    """Times from uncontended results only: the min over runs, the change in %, and ± where the
    spread of a side is wider than the change."""
    from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
    from pytest_gemmcheck.history.engine import open_database, resolve_url
    from pytest_gemmcheck.history.store import HistoryStore, RunInfo

    url = resolve_url(str(tmp_path / "t.db"), tmp_path)
    store = HistoryStore(open_database(url, auto_upgrade=True))

    def record(tag, kernel, times, contended):
        run_id = store.begin_run(RunInfo(tag=tag))
        launches = [LaunchRecord(index=i + 1, elapsed_s=t) for i, t in enumerate(times)]
        result = CaseResult(key=f"key-{kernel}", kernel=kernel, m=8, n=8, k=8, quant="bf16", tile=None,
                            out_dtype="bfloat16", params={}, fp8=None, seed=0, device="cuda:0", deterministic=True,
                            rtol=0.05, floor=1.0, launches=launches, verdict="pass",
                            contention={"contended": contended})
        store.add_results(run_id, [result])
        store.finish_run(run_id, "complete", 0)

    for before in ([1.00e-3, 1.01e-3], [1.02e-3, 1.03e-3]):  # two quiet passes of "a"
        record("a", "steady", before, False)
        record("a", "noisy", [1.0e-3, 1.3e-3], False)
    record("a", "steady", [0.5e-3], True)  # contended: faster, and left out
    record("b", "steady", [0.90e-3, 0.905e-3], False)
    record("b", "noisy", [0.99e-3, 1.4e-3], False)
    store.engine.dispose()
    status, out, _ = run(capsys, "compare", "--db", tmp_path / "t.db", "--side", "a", "--side", "b", "--timing",
                         "--format", "json")
    assert status == 0
    rows = {row["kernel"]: row["sides"] for row in json.loads(out)}
    steady, noisy = rows["steady"], rows["noisy"]
    assert steady["a"]["time_s"] == pytest.approx(1.00e-3) and steady["b"]["time_s"] == pytest.approx(0.90e-3)
    assert steady["b"]["time_change"] == pytest.approx(-0.10) and not steady["b"]["within_noise"]
    assert noisy["b"]["time_change"] == pytest.approx(-0.01) and noisy["b"]["within_noise"]
    status, out, _ = run(capsys, "compare", "--db", tmp_path / "t.db", "--side", "a", "--side", "b", "--timing")
    assert "-10.0%" in out and "-1.0% ±" in out and "1 result that ran on a contended GPU" in out


def test_history_formats_interval_and_db_after_the_command(ab_history, capsys):
    status, out, _ = run(capsys, "history", "--db", ab_history)
    assert status == 0
    row = next(line for line in out.splitlines() if "64x64x128" in line)
    assert "15/36" in row and "26–59%" in row and "pass" in row and "█▃▁" in row  # 12/12, 3/12, then 0/12
    assert "mixed checks" not in out  # no case mixes them: the note does not speak of them
    status, out, _ = run(capsys, "--db", ab_history, "history", "--format", "csv")
    assert status == 0 and out.splitlines()[0].startswith("case,kernel,quant,shape,tile,params,runs,bad,")
    assert len(out.splitlines()) == 4
    status, out, _ = run(capsys, "history", "--db", ab_history, "--json", "--shape", "*x64x*")
    records = json.loads(out)
    assert sorted(r["shape"] for r in records) == ["128x64x256", "64x64x128"]
    assert records[0]["trend"] == [[12, 12], [3, 12], [0, 12]]
    assert (records[0]["rate_low"], records[0]["rate_high"]) == pytest.approx((0.2551, 0.5924), abs=1e-3)
    status, out, _ = run(capsys, "history", "--db", ab_history, "--format", "markdown", "--tag", "pr-7")
    assert status == 0 and out.startswith("| case | kernel |") and "0/12" in out


def test_a_regression_is_never_hidden_behind_another_test_of_the_same_case(pytester, examples_dir, tmp_path, capsys):
    """Two tests of one case key in one run, one declared nondeterministic (it passes with the
    subtle fault), one not (a regression): the row shows the regression."""
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(test_twice=textwrap.dedent("""
        import pytest
        from kernels import FaultInjector, tiled_gemm

        def run(gemmcheck):
            case = gemmcheck.case("twice", m=64, n=64, k=128, quant="ptpc", tile="32x32")
            x = case.inputs()
            case.run(FaultInjector(lambda out: tiled_gemm(x, out), "subtle", {2}, count=20, fraction=0.02))

        @pytest.mark.gemmcheck(deterministic=False)
        def test_declared_nondeterministic(gemmcheck):
            run(gemmcheck)

        def test_deterministic(gemmcheck):
            run(gemmcheck)
    """))
    db = tmp_path / "twice.db"
    pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}").assert_outcomes(passed=1, failed=1)
    status, out, _ = run(capsys, "history", "--db", db, "--json")
    (row,) = json.loads(out)
    assert row["bad_launches"] == 1 and row["launches"] == 24
    assert row["verdict"] == "regression" and row["mixed_checks"]
    status, out, _ = run(capsys, "history", "--db", db)
    assert "regression (mixed checks)" in out and "(mixed checks: one of its tests checked consistency" in out


@pytest.mark.parametrize("nasty", ["'", '"', "%", "_", "' OR 1=1 --", "x'; DROP TABLE run; --", "ünïcødé ✓", "\\",
                                   "%%", "a_b%c", "*", "[", ""])
def test_filters_are_values_never_sql(ab_history, capsys, nasty):
    for option in ("--kernel", "--quant", "--shape", "--tile", "--param", "--arch", "--stack", "--tag", "--revision",
                   "--since", "--case"):
        value = nasty
        if option == "--param":
            value = f"k={nasty}"
        elif option == "--stack":
            value = f"torch={nasty}"
        elif option == "--shape":
            value = f"{nasty}x1x1"
        status, out, err = run(capsys, "history", "--db", ab_history, option, value, "--json")
        if status == 2:  # a value that is not a shape, a date...: a usage error naming the option
            assert err.startswith("gemmcheck history: ") and option in err, (option, err)
            continue
        assert status == 0, (option, value, err)
        matched = json.loads(out)
        # only a * glob, or an empty --since/--case... can match every case; none of these names one
        assert matched == [] or nasty == "*" or (option == "--case" and nasty == ""), (option, value, matched)
    status, out, _ = run(capsys, "runs", "--db", ab_history)
    assert status == 0 and "pr-7" in out  # the tables are all still there


def test_a_glob_filter_matches_names_with_sql_wildcards_literally(pytester, examples_dir, tmp_path, capsys):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(test_names=textwrap.dedent("""
        import pytest
        from kernels import bf16_matmul

        @pytest.mark.parametrize("name", ["a_b%c", "aXbYc", "ab"])
        def test_name(gemmcheck, name):
            case = gemmcheck.case(name, m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
    """))
    db = tmp_path / "names.db"
    pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}", "--gemmcheck-repeat=2").assert_outcomes(passed=3)
    for pattern, expected in (("a_b%c", ["a_b%c"]), ("a?b?c", ["aXbYc", "a_b%c"]), ("a*", ["aXbYc", "a_b%c", "ab"])):
        status, out, _ = run(capsys, "history", "--db", db, "--kernel", pattern, "--json")
        assert sorted(r["kernel"] for r in json.loads(out)) == sorted(expected), pattern


def test_output_into_a_closed_pipe_ends_quietly(ab_history):
    command = f"{sys.executable} -m pytest_gemmcheck --db {ab_history} history | head -n 1"
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith("case")


def test_runs_filters(ab_history, capsys):
    status, out, _ = run(capsys, "runs", "--db", ab_history, "--tag", "main")
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["1"]
    status, out, _ = run(capsys, "runs", "--db", ab_history, "--since", "1h", "--format", "json")
    assert len(json.loads(out)) == 3


COVERAGE_SUITE = textwrap.dedent("""
    import pytest
    from kernels import tiled_gemm

    # ptpc ran with both tiles and both fuse values; mxfp8 only with 32x32 and fuse=False
    @pytest.mark.parametrize("quant,tile,fuse", [("ptpc", "32x32", False), ("ptpc", "16x16", False),
                                                 ("ptpc", "32x32", True), ("mxfp8", "32x32", False)])
    def test_cover(gemmcheck, quant, tile, fuse):
        case = gemmcheck.case("cover", m=64, n=64, k=128, quant=quant, tile=tile, params={"fuse": fuse})
        x = case.inputs()
        case.run(lambda out: tiled_gemm(x, out))
""")


def test_coverage_shows_cells_and_the_gaps_next_to_what_ran(pytester, examples_dir, tmp_path, capsys):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(test_cover=COVERAGE_SUITE)
    db = tmp_path / "cover.db"
    pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}", "--gemmcheck-repeat=2").assert_outcomes(passed=4)
    status, out, _ = run(capsys, "coverage", "--db", db, "--format", "json")
    assert status == 0
    report = json.loads(out)
    matrix, gaps = report.values()
    assert len(matrix) == 4
    assert all(list(cell["stacks"].values())[0]["launches"] == 2 for cell in matrix)
    never = sorted(gap["configuration"] for gap in gaps)
    assert never == ["cover mxfp8 64x64x128 tile 16x16 fuse=False", "cover mxfp8 64x64x128 tile 32x32 fuse=True",
                     "cover ptpc 64x64x128 tile 16x16 fuse=True"]
    status, out, _ = run(capsys, "coverage", "--db", db)
    assert "gaps:" in out and "cover mxfp8 64x64x128 tile 16x16 fuse=False" in out


def test_goldens_export_says_what_it_left_out(ab_history, tmp_path, capsys):
    status, out, _ = run(capsys, "goldens", "export", "--db", ab_history, "--dir", tmp_path / "goldens", "--tag", "main")
    assert status == 0
    assert "left out 3 cases:" in out and "every recorded result was a regression; --include-bad" in out
    assert not (tmp_path / "goldens").exists()
    status, out, _ = run(capsys, "goldens", "export", "--db", ab_history, "--dir", tmp_path / "goldens", "--tag", "main",
                         "--include-bad")
    assert status == 0 and "wrote" in out and "left out" not in out
    golden = json.loads((tmp_path / "goldens" / "tail_gemm.json").read_text())
    assert len(golden["cases"]) == 3
    assert all(entry["bad_launches"] == 12 and entry["note"].startswith("known-bad") for entry in golden["cases"])
