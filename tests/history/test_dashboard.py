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
    status, out, _ = run(
        capsys, "compare", "--db", ab_history, "--side", "main", "--side", "pr-7", "--format", "markdown"
    )
    assert status == 0, out
    lines = out.splitlines()
    assert lines[0] == "| kernel | quant | shape | tile | params | main | pr-7 | pr-7 vs main |"
    rows = [line for line in lines if line.startswith("| tail_gemm")]
    assert len(rows) == 3
    for row in rows:
        assert re.search(
            r"\| fails 12/12 \(worst \d{3} wrong\) \| passes 0/12 "
            r"\| fixed \(p = \d\.\de-0\d\) \|",
            row,
        ), row
    assert "fuse=False" in rows[0]
    assert any(line.startswith("p: one-sided Fisher exact test") for line in lines)


def test_compare_takes_sides_by_kind_and_more_than_two(ab_history, capsys):
    status, out, _ = run(
        capsys,
        "compare",
        "--db",
        ab_history,
        "--side",
        "tag:pr-7",
        "--side",
        "run:1",
        "--side",
        "tag:main",
        "--format",
        "json",
    )
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
    from pytest_gemmcheck.history.engine import open_database, resolve_url
    from pytest_gemmcheck.history.store import HistoryStore, RunInfo
    from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

    url = resolve_url(str(tmp_path / "t.db"), tmp_path)
    store = HistoryStore(open_database(url, auto_upgrade=True))

    def record(tag, kernel, times, contended):
        run_id = store.begin_run(RunInfo(tag=tag))
        launches = [LaunchRecord(index=i + 1, elapsed_s=t) for i, t in enumerate(times)]
        result = CaseResult(
            key=f"key-{kernel}",
            kernel=kernel,
            m=8,
            n=8,
            k=8,
            quant="bf16",
            tile=None,
            out_dtype="bfloat16",
            params={},
            fp8=None,
            seed=0,
            device="cuda:0",
            deterministic=True,
            rtol=0.05,
            floor=1.0,
            launches=launches,
            verdict="pass",
            contention={"contended": contended},
        )
        store.add_results(run_id, [result])
        store.finish_run(run_id, "complete", 0)

    for before in ([1.00e-3, 1.01e-3], [1.02e-3, 1.03e-3]):  # two quiet passes of "a"
        record("a", "steady", before, False)
        record("a", "noisy", [1.0e-3, 1.3e-3], False)
    record("a", "steady", [0.5e-3], True)  # contended: faster, and left out
    record("b", "steady", [0.90e-3, 0.905e-3], False)
    record("b", "noisy", [0.99e-3, 1.4e-3], False)
    store.engine.dispose()
    status, out, _ = run(
        capsys, "compare", "--db", tmp_path / "t.db", "--side", "a", "--side", "b", "--timing", "--format", "json"
    )
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
    assert status == 0 and out.splitlines()[0].startswith(
        "key,kernel,quant,m,n,k,shape,tile,out_dtype,fp8,params,runs,"
    )
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
    pytester.makepyfile(
        test_twice=textwrap.dedent("""
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
    """)
    )
    db = tmp_path / "twice.db"
    pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}").assert_outcomes(passed=1, failed=1)
    status, out, _ = run(capsys, "history", "--db", db, "--json")
    (row,) = json.loads(out)
    assert row["bad_launches"] == 1 and row["launches"] == 24
    assert row["verdict"] == "regression" and row["mixed_checks"]
    status, out, _ = run(capsys, "history", "--db", db)
    assert "regression (mixed checks)" in out and "(mixed checks: one of its tests checked consistency" in out


@pytest.mark.parametrize(
    "nasty",
    ["'", '"', "%", "_", "' OR 1=1 --", "x'; DROP TABLE run; --", "ünïcødé ✓", "\\", "%%", "a_b%c", "*", "[", ""],
)
def test_filters_are_values_never_sql(ab_history, capsys, nasty):
    for option in (
        "--kernel",
        "--quant",
        "--shape",
        "--tile",
        "--param",
        "--arch",
        "--stack",
        "--tag",
        "--revision",
        "--since",
        "--case",
    ):
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
    pytester.makepyfile(
        test_names=textwrap.dedent("""
        import pytest
        from kernels import bf16_matmul

        @pytest.mark.parametrize("name", ["a_b%c", "aXbYc", "ab"])
        def test_name(gemmcheck, name):
            case = gemmcheck.case(name, m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
    """)
    )
    db = tmp_path / "names.db"
    pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}", "--gemmcheck-repeat=2").assert_outcomes(
        passed=3
    )
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
    pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}", "--gemmcheck-repeat=2").assert_outcomes(
        passed=4
    )
    status, out, _ = run(capsys, "coverage", "--db", db, "--format", "json")
    assert status == 0
    report = json.loads(out)
    assert list(report) == ["matrix", "gaps"]  # fixed names, not the tables' titles
    matrix, gaps = report["matrix"], report["gaps"]
    assert len(matrix) == 4  # a record per configuration and stack, both given as values
    assert all(
        cell["launches"] == 2 and cell["stack"]["gpu_arch"] == "cpu" and cell["stack"]["runtime"] == "cpu"
        for cell in matrix
    )
    never = sorted((gap["quant"], gap["tile"], gap["params"]["fuse"]) for gap in gaps)
    assert never == [("mxfp8", "16x16", False), ("mxfp8", "32x32", True), ("ptpc", "16x16", True)]
    assert all(gap["neighbours_ran"] and gap["stack"] == matrix[0]["stack"] for gap in gaps)
    status, out, _ = run(capsys, "coverage", "--db", db)
    assert "gaps:" in out and "cover mxfp8 64x64x128 tile 16x16 fuse=False" in out


def test_goldens_export_says_what_it_left_out(ab_history, tmp_path, capsys):
    status, out, _ = run(
        capsys, "goldens", "export", "--db", ab_history, "--dir", tmp_path / "goldens", "--tag", "main"
    )
    assert status == 0
    assert "left out 3 cases:" in out and "every recorded result was a regression; --include-bad" in out
    assert not (tmp_path / "goldens").exists()
    status, out, _ = run(
        capsys, "goldens", "export", "--db", ab_history, "--dir", tmp_path / "goldens", "--tag", "main", "--include-bad"
    )
    assert status == 0 and "wrote" in out and "left out" not in out
    golden = json.loads((tmp_path / "goldens" / "tail_gemm.json").read_text())
    assert len(golden["cases"]) == 3
    assert all(entry["bad_launches"] == 12 and entry["note"].startswith("known-bad") for entry in golden["cases"])


# --- what a script and a person can trust --------------------------------------------------------

GLYPHS = re.compile("[–—·▁▂▃▄▅▆▇█±]")


def test_a_side_or_filter_must_name_a_known_stack_field_and_cpu_means_no_gpu_arch(ab_history, capsys):
    for side, words in (
        ("stack:nosuchfield=x", "no stack field 'nosuchfield' in the history (the fields: cuda, "),
        ("stack:arch=cpu", "; the GPU arch is gpu_arch, or --arch"),
        ("stack:gpu_arch=sm_90", "selects no recorded result"),
        ("tag:nosuch", "selects no recorded result"),
    ):
        status, out, err = run(capsys, "compare", "--db", ab_history, "--side", "main", "--side", side)
        assert (status, out) == (2, ""), side
        assert err.startswith(f"gemmcheck compare: --side '{side}'") and words in err, err
    status, _, err = run(capsys, "history", "--db", ab_history, "--stack", "arch=cpu")
    assert status == 2 and err.startswith("gemmcheck history: --stack: no stack field 'arch'")
    # a stack without a GPU has the arch "cpu" in every filter
    status, out, _ = run(
        capsys, "compare", "--db", ab_history, "--side", "main", "--side", "stack:gpu_arch=cpu", "--json"
    )
    assert status == 0 and [row["sides"]["gpu_arch=cpu"]["launches"] for row in json.loads(out)] == [36, 36, 36]
    for filters in (["--arch", "cpu"], ["--stack", "gpu_arch=cpu"], ["--stack", "gpu_arch=c?u"]):
        status, out, _ = run(capsys, "history", "--db", ab_history, "--json", *filters)
        assert status == 0 and len(json.loads(out)) == 3, filters


def test_runs_keep_the_runs_that_hold_a_matching_result(ab_history, capsys):
    status, out, _ = run(capsys, "runs", "--db", ab_history, "--kernel", "nothing")
    assert status == 0 and out.strip() == "no recorded runs match"
    for filters, results in (
        (["--shape", "64x64x128"], 1),
        (["--shape", "*x64x*", "--quant", "ptpc"], 2),
        (["--tile", "32x32", "--param", "fuse=False"], 3),
        (["--stack", "torch=*"], 3),
        (["--arch", "cpu", "--kernel", "tail_*"], 3),
    ):
        status, out, _ = run(capsys, "runs", "--db", ab_history, "--json", *filters)
        found = json.loads(out)
        assert status == 0 and [r["results"] for r in found] == [results] * 3, (filters, found)
        assert [r["launches"] for r in found] == [12 * results] * 3
    for filters in (["--arch", "sm_90"], ["--stack", "torch=0.0*"], ["--param", "fuse=True"], ["--tile", "16x16"]):
        assert run(capsys, "runs", "--db", ab_history, *filters)[1].strip() == "no recorded runs match", filters


def test_machine_formats_are_data(ab_history, capsys):
    """JSON: typed values under fixed names; CSV: one table, plain numbers, no glyph."""
    status, out, _ = run(capsys, "runs", "--db", ab_history, "--json")
    newest = json.loads(out)[0]
    assert (newest["id"], newest["results"], newest["launches"], newest["bad_launches"]) == (3, 3, 36, 0)
    assert newest["tag"] == "pr-7" and newest["status"] == "complete" and newest["started_at"].endswith("+00:00")
    status, out, _ = run(capsys, "history", "--db", ab_history, "--format", "csv")
    header, *rows = [line.split(",") for line in out.splitlines()]
    row = dict(zip(header, rows[0]))
    assert (row["m"], row["runs"], row["launches"], row["bad_launches"]) == ("64", "3", "36", "15")
    assert 0.25 < float(row["rate_low"]) < float(row["rate_high"]) < 0.6 and row["worst_wrong"].isdigit()
    for command in (
        ["history"],
        ["runs"],
        ["coverage", "--table", "matrix"],
        ["coverage", "--table", "gaps"],
        ["compare", "--side", "main", "--side", "pr-7"],
        ["compare", "--side", "main", "--side", "pr-7", "--timing"],
    ):
        status, out, _ = run(capsys, *command, "--db", ab_history, "--format", "csv")
        assert status == 0 and not GLYPHS.search(out), (command, GLYPHS.search(out))
    status, out, _ = run(capsys, "compare", "--db", ab_history, "--side", "main", "--side", "pr-7", "--format", "csv")
    header = out.splitlines()[0].split(",")
    assert {"sides.main.launches", "sides.main.bad_launches", "sides.pr-7.change", "sides.pr-7.p_value"} <= set(header)
    # coverage has two tables: one per file, named
    status, _, err = run(capsys, "coverage", "--db", ab_history, "--format", "csv")
    assert status == 2 and "choose it with --table matrix or --table gaps" in err
    status, out, _ = run(capsys, "coverage", "--db", ab_history, "--table", "matrix", "--json")
    cell = json.loads(out)[0]
    assert (cell["stack"]["gpu_arch"], cell["launches"], cell["params"]) == ("cpu", 36, {"fuse": False})
    # the terminal's stack label says each fact once
    status, out, _ = run(capsys, "coverage", "--db", ab_history)
    assert re.search(r"configuration +cpu, torch \S+\n", out), out


def test_worst_counts_the_elements_off_the_consensus_too(pytester, examples_dir, tmp_path, capsys):
    """A launch bad by consistency alone: its differing elements are the worst figure in
    history, compare and the report page, with their heatmap."""
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        test_subtle=textwrap.dedent("""
        from kernels import FaultInjector, tiled_gemm

        def test_subtle(gemmcheck):
            case = gemmcheck.case("subtle", m=64, n=64, k=128, quant="ptpc", tile="32x32")
            x = case.inputs()
            case.run(FaultInjector(lambda out: tiled_gemm(x, out), "subtle", {2}, count=20, fraction=0.02))
    """)
    )
    db = tmp_path / "subtle.db"
    for _ in range(2):
        pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}").assert_outcomes(failed=1)
    status, out, _ = run(capsys, "history", "--db", db, "--json")
    (row,) = json.loads(out)
    assert (row["worst_wrong"], row["worst_differing"], row["bad_launches"]) == (0, 20, 2)
    status, out, _ = run(capsys, "compare", "--db", db, "--side", "run:1", "--side", "run:2")
    assert "fails 1/12 (worst 20 differing)" in out
    status, out, _ = run(capsys, "compare", "--db", db, "--side", "run:1", "--side", "run:2", "--json")
    assert json.loads(out)[0]["sides"]["run 1"]["worst_differing"] == 20
    assert run(capsys, "report", "--db", db, "--html", tmp_path / "r.html")[0] == 0
    page = (tmp_path / "r.html").read_text()
    assert "worst launch 0 wrong, most differing 20 off the consensus" in page
    assert "Launch 2: 20 elements differing from the consensus over the output" in page
    assert page.count('<svg class="chart heatmap"') == 1 and "No launch had" not in page


def test_control_and_bidi_characters_of_a_tag_are_escaped_in_text_and_kept_in_data(
    pytester, examples_dir, tmp_path, capsys
):
    """A tag as a history may hold it (written before tags were checked, or by a script of its
    own): the terminal and markdown forms show its ANSI escape and its U+202E as escapes, so
    they can neither recolour the terminal nor reorder the line; JSON and CSV are data and keep
    them (CSV in a quoted field, read back whole by a CSV reader)."""
    import csv
    import io
    import sqlite3

    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        test_one=textwrap.dedent("""
        from kernels import bf16_matmul

        def test_one(gemmcheck):
            case = gemmcheck.case("small", m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
    """)
    )
    db = tmp_path / "tags.db"
    pytester.runpytest("-p", "no:cacheprovider", f"--gemmcheck-db={db}", "--gemmcheck-repeat=2").assert_outcomes(
        passed=1
    )
    tag = "\x1b[31mred\x1b[0m,\r\n\u202egnp.exe"
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE run SET tag = ?", (tag,))
    connection.close()
    shown = "\\x1b[31mred\\x1b[0m,\\x0d\\x0a\\u202egnp.exe"
    for form in ("table", "markdown"):
        status, out, _ = run(capsys, "runs", "--db", db, "--format", form)
        assert status == 0 and shown in out and not any(char in out for char in "\x1b\r\u202e"), (form, out)
    status, out, _ = run(capsys, "runs", "--db", db, "--format", "json")
    assert status == 0 and json.loads(out)[0]["tag"] == tag
    status, out, _ = run(capsys, "runs", "--db", db, "--format", "csv")
    header, row = list(csv.reader(io.StringIO(out, newline="")))
    assert status == 0 and dict(zip(header, row))["tag"] == tag, out
    key = json.loads(run(capsys, "history", "--db", db, "--json")[1])[0]["key"]
    status, out, _ = run(capsys, "history", "--db", db, "--case", key)  # a case's runs show their tags
    assert status == 0 and shown in out and "\u202e" not in out


def test_goldens_export_keeps_a_reviewers_note_and_says_when_its_evidence_changed(ab_history, tmp_path, capsys):
    goldens = tmp_path / "goldens"
    status, out, _ = run(
        capsys, "goldens", "export", "--db", ab_history, "--dir", goldens, "--tag", "main", "--include-bad"
    )
    assert status == 0
    path = goldens / "tail_gemm.json"
    data = json.loads(path.read_text())
    reviewed = data["cases"][0]
    reviewed["note"] = "known-bad on purpose: the tail tile, tracked in the kernel's own tests"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    status, out, _ = run(capsys, "goldens", "export", "--db", ab_history, "--dir", goldens, "--tag", "pr-7")
    assert status == 0
    assert "kept the reviewer's note of 1 entry whose evidence changed; read each again:" in out
    assert (
        '[arch:cpu]: "known-bad on purpose: the tail tile, tracked in the kernel\'s own tests" (was 12/12, now 0/12)'
    ) in out
    notes = {entry["key"]: entry["note"] for entry in json.loads(path.read_text())["cases"]}
    assert notes[reviewed["key"]] == reviewed["note"]
    # the notes the export wrote itself are its own to replace
    assert sorted(note for key, note in notes.items() if key != reviewed["key"]) == ["exported from 1 recorded run"] * 2
    status, out, _ = run(capsys, "goldens", "export", "--db", ab_history, "--dir", goldens, "--tag", "pr-7")
    assert "kept the reviewer's note" not in out  # the same evidence again: nothing to read again
    assert {e["key"]: e["note"] for e in json.loads(path.read_text())["cases"]} == notes
