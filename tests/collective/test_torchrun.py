"""A test that already runs as a rank (torchrun) spawns nothing: its collective cases use the
launcher's group, rank 0 judges and records each one once with every rank's launches, every
rank's test passes or fails as that verdict says, and the other ranks' sessions record nothing."""

import json
import socket
import sqlite3
import sys
import textwrap

CONFTEST = textwrap.dedent("""
    import pytest
    import torch.distributed as dist


    @pytest.fixture(scope="session", autouse=True)
    def group():
        dist.init_process_group("gloo")
        yield
        dist.destroy_process_group()
""")

SUITE = textwrap.dedent("""
    import os

    from collective_kernels import CORRECT, async_all_reduce_read_early


    def test_correct(gemmcheck):
        case = gemmcheck.case("gemm_all_reduce", m=64, n=64, k=128, collective="all_reduce")
        case.run(CORRECT["all_reduce"](case.inputs()))


    def test_race(gemmcheck):
        if not os.environ.get("WITH_RACE"):
            return
        case = gemmcheck.case("gemm_ar_async", m=64, n=64, k=128, collective="all_reduce")
        case.run(async_all_reduce_read_early(case.inputs(), rank=1, every=10, at=7))
""")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _torchrun(ranks, *args):
    ranks.pytester.makeconftest(CONFTEST)
    ranks.pytester.makepyfile(test_suite=SUITE)
    return ranks.pytester.run(
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node=2",
        f"--master-port={_free_port()}",
        "-m",
        "pytest",
        "test_suite.py",
        "-p",
        "no:cacheprovider",
        "--gemmcheck-db=history.db",
        "--gemmcheck-repeat=50",
        *args,
        timeout=600,
    )


def test_under_torchrun_rank_zero_records_one_result_of_every_rank(ranks):
    done = _torchrun(ranks, "--gemmcheck-json=results.json")
    assert done.ret == 0, done.stdout.str()
    (result,) = json.loads((ranks.pytester.path / "results.json").read_text())["results"]
    assert result["collective"] == "all_reduce" and result["world_size"] == 2 and result["verdict"] == "pass"
    assert sorted((launch["index"], launch["rank"]) for launch in result["launches"]) == [
        (index, rank) for index in range(1, 51) for rank in (0, 1)
    ]
    with sqlite3.connect(ranks.pytester.path / "history.db") as db:
        assert db.execute("select count(*) from run").fetchone() == (1,)  # rank 1's session wrote no run
        assert db.execute("select count(*) from result").fetchone() == (1,)
        assert db.execute("select count(*) from launch").fetchone() == (100,)


def test_under_torchrun_every_rank_fails_as_rank_zeros_verdict_says(ranks, monkeypatch):
    monkeypatch.setenv("WITH_RACE", "1")
    done = _torchrun(ranks, "--gemmcheck-no-record")
    assert done.ret != 0
    assert done.stdout.str().count("1 failed, 1 passed") == 2, done.stdout.str()  # both ranks' sessions
