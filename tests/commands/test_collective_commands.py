"""The history of a collective case read back, on SQLite and on a real PostgreSQL server:
``gemmcheck history`` (and ``--case``), ``compare``, ``explain`` and ``report --html`` show its
ranks and each rank's GPU; a history without a collective case reads as it always did. The
results are written through the real store, built directly (no ranks run here)."""

import csv
import io
import json

import pytest
from sqlalchemy.engine import make_url

from pytest_gemmcheck.environment.stack import fingerprint
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

STACK = {"host": "h1", "torch": "2.11", "cuda": "12.8", "gpu_name": "NVIDIA H200", "gpu_arch": "sm_90"}
STACK["fingerprint"] = fingerprint(STACK)
KEY = "c011ec71000000000000000000000001"
PLAIN_KEY = "f1a70000000000000000000000000001"


class History:
    """Writes results through HistoryStore, one run per call of ``run``; a fresh pid per rank and run."""

    def __init__(self, url):
        from pytest_gemmcheck.history.engine import open_database
        from pytest_gemmcheck.history.store import HistoryStore

        self.store = HistoryStore(open_database(make_url(url), auto_upgrade=True, for_writing=True))
        self.pid = 1000

    def collective(
        self, world_size: int, launches: int, bad: dict[int, int], *, disagree=(), gpu_of=lambda rank: f"GPU-{rank:04d}"
    ) -> CaseResult:
        """``bad``: rank -> its first launches that are bad; ``disagree``: (launch, rank) pairs."""
        records = []
        pids = {rank: self.pid + rank for rank in range(world_size)}
        self.pid += world_size
        for index in range(1, launches + 1):
            for rank in range(world_size):
                record = LaunchRecord(
                    index=index, rank=rank, pid=pids[rank], host="h1", device=f"cuda:{rank}", device_uuid=gpu_of(rank)
                )
                if index <= bad.get(rank, 0):
                    record.add_kind("wrong")
                    record.wrong = 64
                if (index, rank) in disagree:
                    record.add_kind("ranks_disagree")
                records.append(record)
        verdict = "regression" if bad or disagree else "pass"
        return CaseResult(
            key=KEY,
            kernel="gemm_ar",
            m=64,
            n=64,
            k=128,
            quant="bf16",
            tile="32x32",
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
            verdict=verdict,
        )

    def plain(self, launches: int = 12) -> CaseResult:
        self.pid += 1
        records = [
            LaunchRecord(index=i + 1, pid=self.pid, host="h1", device="cuda:0", device_uuid="GPU-0000")
            for i in range(launches)
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

    def run(self, *results: CaseResult, tag=None) -> None:
        from pytest_gemmcheck.history.store import RunInfo

        run_id = self.store.begin_run(RunInfo(tag=tag), STACK)
        self.store.add_results(run_id, list(results))
        self.store.finish_run(run_id, "complete", 0)

    def close(self):
        self.store.engine.dispose()


@pytest.fixture
def ranks_history(db_url):
    """Run 1 (main): the collective case clean on 4 ranks, 50 launches each, and a plain case;
    runs 2-3 (pr): rank 3 (always on GPU-0003) bad on 20 of its 50 launches, rank 1 disagreeing
    once in run 3."""
    history = History(db_url)
    history.run(history.collective(4, 50, {}), history.plain(), tag="main")
    history.run(history.collective(4, 50, {3: 20}), history.plain(), tag="pr")
    history.run(history.collective(4, 50, {3: 20}, disagree=[(30, 1)]), history.plain(), tag="pr")
    history.close()
    return db_url


def test_history_shows_the_ranks_of_a_collective_case(ranks_history, cli):
    status, out, _ = cli("--db", ranks_history, "history")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:8] == ["case", "kernel", "quant", "shape", "tile", "params", "ranks", "runs"]
    row = next(line for line in lines if line.startswith("c011ec7100"))
    assert "all_reduce x4: rank 3 40/150, rank 1 1/150" in row and "41/600" in row
    plain = next(line for line in lines if line.startswith("f1a7000000"))
    assert "  -  " in plain and "0/36" in plain
    assert any(line.startswith("ranks: a collective case's collective and world size") for line in lines)

    status, out, _ = cli("--db", ranks_history, "history", "--format", "json")
    records = {record["key"]: record for record in json.loads(out)}
    assert records[KEY]["collective"] == "all_reduce" and records[KEY]["world_size"] == 4
    assert records[KEY]["ranks"] == {
        "0": {"launches": 150, "bad_launches": 0},
        "1": {"launches": 150, "bad_launches": 1},
        "2": {"launches": 150, "bad_launches": 0},
        "3": {"launches": 150, "bad_launches": 40},
    }
    assert records[PLAIN_KEY]["collective"] is None and records[PLAIN_KEY]["ranks"] is None

    status, out, _ = cli("--db", ranks_history, "history", "--format", "csv")
    table = {row["key"]: row for row in csv.DictReader(io.StringIO(out))}
    assert table[KEY]["ranks.3.bad_launches"] == "40" and table[KEY]["world_size"] == "4"


def test_history_of_a_case_names_each_runs_bad_ranks_and_their_gpus(ranks_history, cli):
    status, out, _ = cli("--db", ranks_history, "history", "--case", KEY[:8])
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[6:9] == ["arch", "bad", "ranks"]
    newest, middle, oldest = [line for line in lines if line.startswith("c011ec7100")]
    assert "rank 1 1/50 on GPU-0001, rank 3 20/50 on GPU-0003" in newest and "wrong,ranks_disagree" in newest
    assert "rank 3 20/50 on GPU-0003" in middle
    assert "4 ranks, none bad" in oldest
    status, out, _ = cli("--db", ranks_history, "history", "--case", KEY[:8], "--format", "json")
    ranks = json.loads(out)[0]["ranks"]
    assert ranks[3] == {"rank": 3, "launches": 50, "bad_launches": 20, "device": "cuda:3", "device_uuid": "GPU-0003"}


def test_compare_names_the_bad_ranks_and_clusters_by_rank(ranks_history, cli):
    status, out, _ = cli("--db", ranks_history, "compare", "--side", "main", "--side", "pr")
    assert status == 0
    row = next(line for line in out.splitlines() if line.startswith("gemm_ar"))
    assert "passes 0/200" in row and "fails 41/400 (worst 64 wrong; rank 3 40/100, rank 1 1/100)" in row
    assert "design effect of their results (a collective case's: of its ranks)" in out
    status, out, _ = cli("--db", ranks_history, "compare", "--side", "main", "--side", "pr", "--format", "json")
    rows = {row["kernel"]: row for row in json.loads(out)}
    assert rows["gemm_ar"]["sides"]["pr"]["ranks"]["3"] == {"launches": 100, "bad_launches": 40}
    assert rows["gemm_ar"]["collective"] == "all_reduce" and rows["gemm"]["sides"]["pr"]["ranks"] is None


def test_explain_names_a_rank_and_its_gpu(ranks_history, cli):
    status, out, err = cli("--db", ranks_history, "explain", KEY[:8], "--format", "json")
    assert status == 0, err
    found = json.loads(out)
    assert found["case"]["collective"] == "all_reduce" and found["case"]["world_size"] == 4
    assert found["explained_by"]["factors"] == ["rank", "gpu_uuid"], found["verdict"]
    assert found["verdict"][0].startswith(
        "one rank: rank 3 on GPU-0003 40/150, other ranks 1/450 (its GPU always "
        "with it, so either may be the cause; p = "
    )
    status, out, _ = cli("--db", ranks_history, "explain", KEY[:8])
    assert out.splitlines()[0].startswith(
        "c011ec7100 gemm_ar bf16 64x64x128 tile 32x32 fuse=True all_reduce over 4 "
        "ranks: 41/600 bad launches over 3 runs"
    )
    assert "design effect of its results (of its ranks)" in out


def test_explain_names_a_gpu_that_fails_whichever_rank_runs_on_it(db_url, cli):
    history = History(db_url)
    for run in range(6):  # the ranks move round the GPUs; GPU-0002 is bad whichever rank has it
        rank_on_bad_gpu = (2 - run) % 4
        history.run(history.collective(4, 20, {rank_on_bad_gpu: 10}, gpu_of=lambda rank: f"GPU-{(rank + run) % 4:04d}"))
    history.close()
    status, out, err = cli("--db", db_url, "explain", KEY[:8], "--format", "json")
    assert status == 0, err
    found = json.loads(out)
    assert found["explained_by"]["factors"] == ["gpu_uuid"], found["verdict"]
    assert found["verdict"][0].startswith("one physical GPU: GPU-0002 60/120, all other GPUs 0/360 (suspect hardware")


def test_the_report_page_shows_ranks(ranks_history, cli, tmp_path):
    page_path = tmp_path / "report.html"
    status, out, err = cli("--db", ranks_history, "report", "--html", page_path)
    assert status == 0, err
    page = page_path.read_text()
    assert "gemm_ar bf16 64x64x128 tile 32x32 fuse=True all_reduce over 4 ranks" in page
    assert '<th scope="col">ranks</th>' in page and "all_reduce x4: rank 3 40/150, rank 1 1/150" in page
    assert "Ranks of run 3 (pr, " in page
    assert '<table class="ranks">' in page and "GPU-0003" in page and "ranks_disagree" in page
    # a bar per launch and rank (200 of them, drawn in pairs), each tooltip naming both
    assert "launch 30, rank 0 – launch 30, rank 1: 1 of 2 bad" in page


def test_a_history_without_a_collective_case_reads_as_before(tmp_path, cli):
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    history = History(url)
    history.run(history.plain(), tag="main")
    history.run(history.plain(), tag="pr")
    history.close()
    status, out, _ = cli("--db", url, "history")
    assert out.splitlines()[0].split()[:7] == ["case", "kernel", "quant", "shape", "tile", "params", "runs"]
    assert "rank" not in out
    status, out, _ = cli("--db", url, "history", "--format", "json")
    assert not {"collective", "world_size", "ranks"} & set(json.loads(out)[0])
    status, out, _ = cli("--db", url, "history", "--case", PLAIN_KEY[:8])
    assert "rank" not in out
    status, out, _ = cli("--db", url, "compare", "--side", "main", "--side", "pr", "--format", "json")
    assert "rank" not in out and "collective" not in out
    page_path = tmp_path / "plain.html"
    assert cli("--db", url, "report", "--html", page_path)[0] == 0
    body = page_path.read_text().split("</style>")[1]  # the style sheet has the rank table's rules
    assert "rank" not in body.lower()


def test_goldens_export_keeps_a_collective_cases_ranks(ranks_history, cli, tmp_path):
    status, out, err = cli("--db", ranks_history, "goldens", "export", "--dir", tmp_path / "goldens", "--include-bad")
    assert status == 0, err
    entry = json.loads((tmp_path / "goldens" / "gemm_ar.json").read_text())["cases"][0]
    assert (entry["case"]["collective"], entry["case"]["world_size"], entry["ranks"]) == ("all_reduce", 4, 4)
    assert (entry["bad_launches"], entry["launches"]) == (0, 200)  # regressions never count
    plain = json.loads((tmp_path / "goldens" / "gemm.json").read_text())["cases"][0]
    assert "ranks" not in plain and "collective" not in plain["case"]
