"""What a suite that has the plugin installed but runs no gemmcheck case pays: no import of
SQLAlchemy, Alembic, torch or Triton, and no database opened, created or changed (in the
style of Hypothesis's own plugin tests, which assert what is *not* imported)."""

import hashlib
import json
import sqlite3
import sys
import textwrap

import pytest

HEAVY = ("sqlalchemy", "alembic", "torch", "triton")

# Every process of the session (an xdist controller and its workers too) writes down, as it
# ends, which of the heavy modules it had imported: at session finish, first (a worker's ends
# with telling its controller, which may stop it soon after).
CONFTEST = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    import pytest

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(session):
        config = session.config
        heavy = sorted(name for name in {heavy!r} if name in sys.modules)
        where = Path(os.environ["GEMMCHECK_IMPORTS"]) / f"{{os.getpid()}}.json"
        where.write_text(json.dumps({{"worker": hasattr(config, "workerinput"), "heavy": heavy}}))
""").format(heavy=HEAVY)

PLAIN = textwrap.dedent("""
    import pytest

    @pytest.mark.parametrize("n", range(20))
    def test_plain(n):
        assert n >= 0
""")


@pytest.fixture
def plain_suite(pytester, tmp_path, monkeypatch):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain=PLAIN)
    imports = tmp_path / "imports"
    imports.mkdir()
    monkeypatch.setenv("GEMMCHECK_IMPORTS", str(imports))
    pytester.imports = imports
    return pytester


def imported(suite) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(suite.imports.glob("*.json"))]


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "args,processes",
    [
        ((), 1),
        (("--collect-only",), 1),
        (("-n", "2"), 3),
        (("--co", "-n", "2"), 1),  # xdist starts no workers to collect
        (("--gemmcheck-db=postgresql+psycopg://nobody@127.0.0.1:1/absent",), 1),
    ],
)
def test_a_session_without_cases_imports_nothing_heavy(plain_suite, args, processes):
    if "-n" in args:
        pytest.importorskip("xdist")
    result = plain_suite.runpytest_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    seen = imported(plain_suite)
    assert len(seen) == processes, seen
    assert all(entry["heavy"] == [] for entry in seen), seen
    assert not (plain_suite.path / ".gemmcheck").exists()


@pytest.mark.parametrize("args", [("--help",), ("--version",)])
def test_help_and_version_import_nothing_heavy(plain_suite, args):
    result = plain_suite.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.OK
    # --help and --version end before pytest_unconfigure in some pytest versions: ask directly
    code = (
        "import sys, pytest; rc = pytest.main([{args!r}]); "
        "print('HEAVY', sorted(m for m in {heavy!r} if m in sys.modules))"
    ).format(args=args[0], heavy=HEAVY)
    done = plain_suite.run(sys.executable, "-c", code)
    assert "HEAVY []" in done.stdout.str(), done.stdout.str()


def test_an_existing_history_is_left_byte_for_byte_as_it_was(plain_suite, examples_dir):
    """A history written by an earlier session (and an SQLite file that is not one yet) are
    neither opened nor migrated nor switched to WAL by a session that runs no case."""
    import shutil

    shutil.copy(examples_dir / "cpu" / "kernels.py", plain_suite.path / "kernels.py")
    plain_suite.makepyfile(
        test_case=textwrap.dedent("""
        from kernels import bf16_matmul

        def test_case(gemmcheck):
            case = gemmcheck.case("k", m=16, n=16, k=32)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
    """)
    )
    plain_suite.runpytest_subprocess("-p", "no:cacheprovider", "test_case.py", "--gemmcheck-repeat=2").assert_outcomes(
        passed=1
    )
    history = plain_suite.path / ".gemmcheck" / "history.db"
    foreign = plain_suite.path / "other.db"
    with sqlite3.connect(foreign) as connection:  # a database of someone else's, journal mode DELETE
        connection.execute("CREATE TABLE notes (text TEXT)")
    for path in plain_suite.imports.iterdir():  # only the sessions without a case are looked at
        path.unlink()
    before = {path: digest(path) for path in (history, foreign)}
    listing = sorted(p.name for p in history.parent.iterdir())
    for args in ((), ("--gemmcheck-db=other.db",), ("-n", "2")):
        for_each = plain_suite.runpytest_subprocess("-p", "no:cacheprovider", "test_plain.py", *args)
        for_each.assert_outcomes(passed=20)
        assert {path: digest(path) for path in (history, foreign)} == before, args
        assert sorted(p.name for p in history.parent.iterdir()) == listing  # no -wal, no -shm
    with sqlite3.connect(foreign) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    seen = imported(plain_suite)
    assert len(seen) == 5 and all(entry["heavy"] == [] for entry in seen), seen  # 1 + 1 + (1 + 2 workers)


def test_under_xdist_a_worker_judges_without_this_runs_own_results(pytester, examples_dir, tmp_path):
    """Two tests of one case in one ``-n 2`` run: the controller writes the first test's result
    while the worker still runs, and the second test must not take it for history (its
    baseline is clean: no earlier run)."""
    pytest.importorskip("xdist")
    import shutil

    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    db = tmp_path / "history.db"
    pytester.makepyfile(
        test_twice=textwrap.dedent(f"""
        import sqlite3, time
        from kernels import bf16_matmul

        def run(gemmcheck):
            case = gemmcheck.case("twice", m=16, n=16, k=32)
            x = case.inputs()
            return case.run(lambda out: bf16_matmul(x, out))

        def test_first(gemmcheck):
            run(gemmcheck)

        def test_between():
            pass  # its start has the controller write test_first's result

        def test_second(gemmcheck):
            deadline = time.monotonic() + 60
            while True:  # until the controller has written test_first's result
                try:
                    with sqlite3.connect({str(db)!r}) as connection:
                        if connection.execute("SELECT count(*) FROM result").fetchone()[0]:
                            break
                except sqlite3.OperationalError:
                    pass
                assert time.monotonic() < deadline, "the controller never wrote the first result"
                time.sleep(0.05)
            result = run(gemmcheck)
            assert result.baseline["source"] == "clean", result.baseline
    """)
    )
    result = pytester.runpytest_subprocess(
        "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider", "--gemmcheck-repeat=3", f"--gemmcheck-db={db}"
    )
    result.assert_outcomes(passed=3)
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM run").fetchone()[0] == 1
        baselines = connection.execute("SELECT baseline_source FROM result ORDER BY id").fetchall()
    assert baselines == [("clean",), ("clean",)]


def test_a_plain_case_imports_no_search_or_sanitizer_machinery(pytester):
    """A case that neither searches nor sanitizes loads none of their modules (tens of
    milliseconds of imports where bytecode is not kept)."""
    unused = (
        "pytest_gemmcheck.sanitize.tool_launch",
        "pytest_gemmcheck.searching.search",
        "pytest_gemmcheck.pytest_session.search_in_test",
    )
    pytester.makeconftest(
        textwrap.dedent(f"""
            import sys

            def pytest_sessionfinish(session):
                print("UNUSED", sorted(m for m in {unused!r} if m in sys.modules))
        """)
    )
    pytester.makepyfile(
        test_one=textwrap.dedent("""
            import torch

            def test_gemm(gemmcheck):
                case = gemmcheck.case("plain", m=32, n=32, k=32, device="cpu")
                x = case.inputs()
                case.run(lambda out: torch.matmul(x.a, x.b.t(), out=out), repeat=2)
        """)
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "--gemmcheck-no-record")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*UNUSED []*"])
