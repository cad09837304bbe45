"""What the command tests share: the gemmcheck command run in this process, and histories to
run it on."""

import pytest

from pytest_gemmcheck.cli import main as gemmcheck


@pytest.fixture
def cli(capsys):
    """``cli(*ARGS)``: ``gemmcheck ARGS`` in this process, as (exit status, stdout, stderr);
    argparse's refusals as their status."""

    def run(*args) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            status = gemmcheck([str(a) for a in args])
        except SystemExit as exc:  # argparse's refusals
            status = exc.code
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture
def empty_db(tmp_path, cli):
    """A SQLite history at the current schema, with nothing recorded."""
    path = tmp_path / "h.db"
    assert cli("--db", path, "db", "upgrade")[0] == 0
    return path


@pytest.fixture
def recorded_db(tmp_path):
    """A SQLite history of one run with one result."""
    from pytest_gemmcheck.history.engine import open_database, resolve_url
    from pytest_gemmcheck.history.store import HistoryStore, RunInfo
    from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

    path = tmp_path / "recorded.db"
    store = HistoryStore(open_database(resolve_url(str(path), tmp_path), auto_upgrade=True))
    stack = {"gpu_arch": None, "fingerprint": "fcpu"}
    run_id = store.begin_run(RunInfo(tag="main"), stack)
    launches = [
        LaunchRecord(
            index=i,
            pid=1,
            host="h",
            device="cpu",
            kinds=["wrong"] if i == 2 else [],
            wrong=5 if i == 2 else 0,
            elapsed_s=0.001,
        )
        for i in (1, 2, 3)
    ]
    store.add_results(
        run_id,
        [
            CaseResult(
                key="0123456789abcdef",
                kernel="kern",
                m=16,
                n=16,
                k=32,
                quant="bf16",
                tile=None,
                out_dtype="bfloat16",
                params={},
                fp8=None,
                seed=0,
                device="cpu",
                deterministic=True,
                rtol=0.05,
                floor=1.0,
                launches=launches,
                stack=stack,
                verdict="regression",
            )
        ],
    )
    store.finish_run(run_id, "complete", 1)
    store.engine.dispose()
    return path
