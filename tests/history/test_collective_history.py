"""A collective case's one result in the history, on SQLite and on a real PostgreSQL server: the
case with its collective and world size, the result with each rank's counts and GPU, a launch
row per (launch, rank) with the rank and the rank's GPU; a database at the previous revision
(0007) migrated with its rows kept; the baseline a history of ranks gives. A result outside a
collective case is stored as it was, NULL in every new column."""

import json

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from pytest_gemmcheck.cli import main as gemmcheck_cli
from pytest_gemmcheck.environment.stack import fingerprint
from pytest_gemmcheck.history.engine import head_revision, open_database
from pytest_gemmcheck.history.queries import case_history
from pytest_gemmcheck.history.store import HistoryStore, RunInfo
from pytest_gemmcheck.judging.baseline import from_history
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

STACK = {"host": "h1", "torch": "2.11", "gpu_name": "NVIDIA H200", "gpu_arch": "sm_90"}
STACK["fingerprint"] = fingerprint(STACK)
COLLECTIVE_KEY = "c011ec71ve000000000000000000000a"
PLAIN_KEY = "f1a70000000000000000000000000000"


def collective(world_size: int, launches: int, bad=(), disagree=(), *, gpus=None) -> CaseResult:
    """Every rank's launches; ``bad``, ``disagree``: (launch, rank) pairs; ``gpus``: rank -> its GPU's UUID."""
    gpus = gpus or {rank: f"GPU-{rank:04d}" for rank in range(world_size)}
    records = []
    for index in range(1, launches + 1):
        for rank in range(world_size):
            record = LaunchRecord(
                index=index, rank=rank, pid=200 + rank, host="h1", device=f"cuda:{rank}", device_uuid=gpus[rank]
            )
            if (index, rank) in bad:
                record.add_kind("wrong")
                record.wrong = 64
            if (index, rank) in disagree:
                record.add_kind("ranks_disagree")
            records.append(record)
    return CaseResult(
        key=COLLECTIVE_KEY,
        kernel="gemm_ar",
        m=64,
        n=64,
        k=128,
        quant="bf16",
        tile=None,
        out_dtype="bfloat16",
        params={"fuse": True},
        fp8=None,
        seed=0,
        device="cuda:0",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=records,
        collective="all_reduce",
        world_size=world_size,
        stack=STACK,
        verdict="regression" if bad or disagree else "pass",
    )


def plain(launches: int = 3) -> CaseResult:
    records = [
        LaunchRecord(index=i + 1, pid=7, host="h1", device="cuda:0", device_uuid="GPU-0000") for i in range(launches)
    ]
    return CaseResult(
        key=PLAIN_KEY,
        kernel="gemm",
        m=64,
        n=64,
        k=128,
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
        launches=records,
        stack=STACK,
        verdict="pass",
    )


def record(url: str, *results: CaseResult, tag: str | None = None) -> int:
    store = HistoryStore(open_database(make_url(url), auto_upgrade=True, for_writing=True))
    try:
        run_id = store.begin_run(RunInfo(tag=tag), STACK)
        store.add_results(run_id, list(results))
        store.finish_run(run_id, "complete", 0)
        return run_id
    finally:
        store.engine.dispose()


def rows(url: str, sql: str) -> list[tuple]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql))]
    finally:
        engine.dispose()


def test_one_record_per_case_with_a_rank_and_its_gpu_on_each_launch_row(db_url):
    record(db_url, collective(4, 3, bad=[(2, 3)], disagree=[(3, 1)]), plain())
    cases = rows(db_url, 'SELECT key, collective, world_size FROM "case" ORDER BY key')
    assert cases == [(COLLECTIVE_KEY, "all_reduce", 4), (PLAIN_KEY, None, None)]
    results = rows(
        db_url,
        "SELECT c.key, r.launches, r.bad_launches, r.kinds, r.per_rank FROM result r "
        'JOIN "case" c ON c.id = r.case_id ORDER BY c.key',
    )
    assert results[0][:4] == (COLLECTIVE_KEY, 12, 2, "wrong,ranks_disagree")
    per_rank = results[0][4] if isinstance(results[0][4], list) else json.loads(results[0][4])  # SQLite: its text
    assert per_rank == [
        {
            "rank": rank,
            "launches": 3,
            "bad_launches": int(rank in (1, 3)),
            "device": f"cuda:{rank}",
            "device_uuid": f"GPU-{rank:04d}",
        }
        for rank in range(4)
    ]
    assert results[1] == (PLAIN_KEY, 3, 0, "", None)
    launches = rows(
        db_url,
        'SELECT l.launch_index, l."rank", l.device, l.device_uuid, l.kinds, l.pid FROM launch l '
        'JOIN result r ON r.id = l.result_id JOIN "case" c ON c.id = r.case_id '
        f"WHERE c.key = '{COLLECTIVE_KEY}' ORDER BY l.launch_index, l.\"rank\"",
    )
    assert len(launches) == 12
    assert launches[7] == (2, 3, "cuda:3", "GPU-0003", "wrong", 203)
    assert launches[9] == (3, 1, "cuda:1", "GPU-0001", "ranks_disagree", 201)
    assert rows(
        db_url,
        f'SELECT DISTINCT l."rank" FROM launch l JOIN result r ON r.id = l.result_id '
        f"JOIN \"case\" c ON c.id = r.case_id WHERE c.key = '{PLAIN_KEY}'",
    ) == [(None,)]


def test_a_history_of_ranks_is_judged_as_ranks(db_url):
    """Each rank of each run is one cluster of the baseline, and the baseline says ranks."""
    record(db_url, collective(4, 50))
    record(db_url, collective(4, 50, bad=[(9, 2)]))
    engine = open_database(make_url(db_url), auto_upgrade=False)
    try:
        history = case_history(
            engine, COLLECTIVE_KEY, scope="arch", gpu_arch="sm_90", fingerprint=None, regressions=True
        )
    finally:
        engine.dispose()
    assert history.ranks == 4 and history.runs == 2 and history.gpus == 4
    assert sorted((p.run_id, p.rank, p.launches, p.bad_launches) for p in history.processes)[4:] == [
        (2, 0, 50, 0),
        (2, 1, 50, 0),
        (2, 2, 50, 1),
        (2, 3, 50, 0),
    ]
    baseline = from_history(history, "arch", "sm_90")
    assert baseline.evidence.describe() == (
        "1/400 (rate < 1.18%) launches of 4 ranks in 8 rank processes (1 with a bad launch) on 4 GPUs"
    )


def _at_revision(url: str, revision: str) -> None:
    from alembic import command

    from pytest_gemmcheck.history.engine import _alembic_config

    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            command.upgrade(_alembic_config(connection), revision)
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def blank_url(request, tmp_path):
    """A database URL on each backend with no schema yet."""
    if request.param == "sqlite":
        return f"sqlite+pysqlite:///{tmp_path / 'old.db'}"
    return request.getfixturevalue("postgres_url")


def test_a_database_at_the_previous_revision_is_migrated_keeping_its_rows(blank_url, capsys):
    _at_revision(blank_url, "0007")
    engine = create_engine(blank_url)
    with engine.begin() as connection:  # a result recorded before collective cases, as 0007 stored it
        connection.execute(
            text(
                "INSERT INTO run (status, started_at, options, workers) "
                "VALUES ('complete', '2026-12-01 00:00:00', '{}', 0)"
            )
        )
        connection.execute(
            text(
                'INSERT INTO "case" (key, kernel, m, n, k, quant, out_dtype, params) '
                "VALUES ('01d0000000000000', 'gemm', 8, 8, 8, 'bf16', 'bfloat16', '{}')"
            )
        )
        connection.execute(
            text(
                "INSERT INTO result (run_id, case_id, seed, deterministic, rtol, floor, launches, "
                "bad_launches, worst_wrong, total_wrong, kinds, consensus_size, verdict, recorded_at) "
                "SELECT run.id, c.id, 0, true, 0.05, 1.0, 2, 1, 5, 5, 'wrong', 1, 'regression', "
                "'2026-12-01 00:00:01' FROM run, \"case\" c"
            )
        )
        connection.execute(
            text(
                "INSERT INTO launch (result_id, launch_index, kinds, wrong, nonfinite, wrong_rows, "
                "differing_rows, poisoned, pid) SELECT id, i, k, w, 0, 0, 0, true, 1 FROM result, "
                "(SELECT 1 AS i, '' AS k, 0 AS w UNION ALL SELECT 2, 'wrong', 5) AS l"
            )
        )
    engine.dispose()
    assert gemmcheck_cli(["--db", blank_url, "db", "upgrade"]) == 0
    assert rows(blank_url, "SELECT version_num FROM alembic_version") == [(head_revision(),)] == [("0008",)]
    assert rows(blank_url, 'SELECT collective, world_size FROM "case"') == [(None, None)]
    assert rows(blank_url, "SELECT per_rank FROM result") == [(None,)]
    assert rows(blank_url, 'SELECT launch_index, kinds, "rank" FROM launch ORDER BY launch_index') == [
        (1, "", None),
        (2, "wrong", None),
    ]
    record(blank_url, collective(2, 4, bad=[(3, 1)]), tag="after")
    assert rows(blank_url, 'SELECT count(*) FROM launch WHERE "rank" IS NOT NULL') == [(8,)]
    capsys.readouterr()
    assert gemmcheck_cli(["--db", blank_url, "history"]) == 0
    out = capsys.readouterr().out
    old = next(line for line in out.splitlines() if line.startswith("01d0000000"))
    new = next(line for line in out.splitlines() if line.startswith("c011ec71ve"))
    assert " - " in old and "1/2" in old  # the old case is no collective one
    assert "all_reduce x2: rank 1 1/4" in new and "1/8" in new


def test_the_migration_goes_down_too(blank_url):
    from alembic import command

    from pytest_gemmcheck.history.engine import _alembic_config

    _at_revision(blank_url, "0008")
    engine = create_engine(blank_url)
    try:
        with engine.begin() as connection:
            command.downgrade(_alembic_config(connection), "0007")
        with engine.connect() as connection:
            launch_columns = {
                row[0]
                for row in connection.execute(
                    text(
                        "SELECT name FROM pragma_table_info('launch')"
                        if blank_url.startswith("sqlite")
                        else "SELECT column_name FROM information_schema.columns WHERE table_name = 'launch'"
                    )
                )
            }
    finally:
        engine.dispose()
    assert "rank" not in launch_columns and "device_uuid" in launch_columns
