"""``gemmcheck explain CASE``: which recorded fact explains a case's bad launches. Synthetic
histories written through the real store, each with one planted factor (a torch version, a
physical GPU, a tile among sibling cases, a confounded pair, a stress setting) or none. The
statistics alone, in memory: tests/judging/test_explanation.py."""

import json

from pytest_gemmcheck.cli import main as gemmcheck
from pytest_gemmcheck.environment.stack import fingerprint
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

KEY = "ca5e0000000000000000000000000001"


def a_stack(**fields) -> dict:
    info = {
        "host": "h1",
        "torch": "2.11",
        "cuda": "12.8",
        "triton": "3.3",
        "gpu_name": "NVIDIA H200",
        "gpu_arch": "sm_90",
        "driver": "570.1",
        **fields,
    }
    info["fingerprint"] = fingerprint(info)
    return info


class History:
    """Writes results through HistoryStore: one run per call of ``run``."""

    def __init__(self, url):
        from sqlalchemy.engine import make_url

        from pytest_gemmcheck.history.engine import open_database
        from pytest_gemmcheck.history.store import HistoryStore

        self.store = HistoryStore(open_database(make_url(url), auto_upgrade=True, for_writing=True))
        self.pid = 1000

    def result(
        self,
        *,
        bad: int,
        launches: int,
        stack: dict,
        key=KEY,
        tile="256x128",
        quant="bf16",
        params=None,
        uuid="GPU-0000",
        stress=None,
        pid=None,
    ) -> CaseResult:
        if pid is None:
            self.pid += 1
            pid = self.pid
        host = stack["host"]
        records = [
            LaunchRecord(
                index=i + 1,
                kinds=["wrong"] if i < bad else [],
                wrong=5 if i < bad else 0,
                pid=pid,
                host=host,
                device="cuda:0",
                device_uuid=uuid,
            )
            for i in range(launches)
        ]
        return CaseResult(
            key=key,
            kernel="gemm",
            m=256,
            n=256,
            k=128,
            quant=quant,
            tile=tile,
            out_dtype="bfloat16",
            params=params or {},
            fp8=None,
            seed=0,
            device="cuda:0",
            deterministic=True,
            rtol=0.05,
            floor=1.0,
            launches=records,
            verdict="regression" if bad else "pass",
            stack=stack,
            stress=stress or {},
        )

    def run(self, *results: CaseResult, tag=None) -> None:
        from pytest_gemmcheck.history.store import RunInfo

        run_id = self.store.begin_run(RunInfo(tag=tag))
        self.store.add_results(run_id, list(results))
        self.store.finish_run(run_id, "complete", 0)

    def close(self):
        self.store.engine.dispose()


def cli(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    status = gemmcheck([str(arg) for arg in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def explained(capsys, url, key=KEY[:8]) -> dict:
    status, out, err = cli(capsys, "--db", url, "explain", key, "--format", "json")
    assert status == 0, err
    return json.loads(out)


def test_a_planted_torch_version_is_named_with_its_hosts(db_url, capsys):
    history = History(db_url)
    for torch in ("2.11", "2.12"):
        for triton in ("3.3", "3.4"):
            for host in ("h1", "h2"):
                stack = a_stack(torch=torch, triton=triton, host=host)
                for _ in range(2):
                    history.run(history.result(bad=6 if torch == "2.12" else 0, launches=6, stack=stack))
    history.close()
    found = explained(capsys, db_url)
    assert found["explained_by"]["factors"] == ["torch"] and found["explained_by"]["value"] == "2.12"
    assert found["verdict"][0].startswith(
        "fails only with torch=2.12: 48/48 launches on 2 hosts vs 0/48 elsewhere (p = "
    )
    assert not found["per_process"]
    status, out, _ = cli(capsys, "explain", KEY[:8], "--db", db_url)  # the table, --db after the command
    assert status == 0 and "fails only with torch=2.12" in out and "Holm-corrected" in out
    status, out, _ = cli(capsys, "--db", db_url, "explain", KEY[:8], "--format", "markdown")
    assert status == 0 and "| factor | value |" in out and "| torch | 2.12 | 48/48 | 0/48 |" in out


def test_one_physical_gpu_is_named_as_suspect_hardware(db_url, capsys):
    history = History(db_url)
    bad_gpu = "GPU-1eff2c9a-77b0-4f3e-9d51-0c2a6b8e4f10"
    for bad in (2, 3, 2, 2):  # 9/40 on one GPU of host h1
        history.run(history.result(bad=bad, launches=10, stack=a_stack(host="h1"), uuid=bad_gpu))
    for i in range(40):  # 0/400 on seven others, over both hosts
        history.run(history.result(bad=0, launches=10, stack=a_stack(host=f"h{1 + i % 2}"), uuid=f"GPU-other-{i % 7}"))
    history.close()
    found = explained(capsys, db_url)
    assert found["explained_by"]["factors"] == ["gpu_uuid"] and found["explained_by"]["value"] == bad_gpu
    assert found["verdict"][0].startswith(
        "one physical GPU: GPU-1eff2c9a… 9/40, all other GPUs 0/400 (suspect hardware; p = "
    )


def test_a_planted_tile_is_named_across_sibling_cases(db_url, capsys):
    history = History(db_url)
    cases = [
        ("256x128", "bf16", True),
        ("256x128", "fp8", True),
        ("128x128", "bf16", False),
        ("256x256", "bf16", False),
        ("128x128", "fp8", False),
    ]
    for run in range(3):
        stack = a_stack(torch=("2.11", "2.12")[run % 2])
        results = []
        for index, (tile, quant, bad) in enumerate(cases):
            key = KEY if index == 0 else f"51b{index:029d}"
            results.append(
                history.result(bad=8 if bad else 0, launches=8, stack=stack, key=key, tile=tile, quant=quant)
            )
        history.run(*results)
    history.close()
    found = explained(capsys, db_url)
    assert found["explained_by"]["factors"] == ["tile"] and found["explained_by"]["value"] == "256x128"
    assert found["verdict"][0].startswith(
        "fails only with tile=256x128: 48/48 launches over 2 cases vs 0/72 in 3 sibling cases"
    )
    assert found["sibling_cases"] == 4 and "shape" in found["constant"]


def test_a_confounded_pair_is_named_together(db_url, capsys):
    history = History(db_url)
    for torch, triton in (("2.11", "3.3"), ("2.12", "3.4")):
        for host in ("h1", "h2", "h3"):
            for _ in range(2):
                history.run(
                    history.result(
                        bad=5 if torch == "2.12" else 0,
                        launches=5,
                        stack=a_stack(torch=torch, triton=triton, host=host),
                    )
                )
    history.close()
    found = explained(capsys, db_url)
    assert found["explained_by"]["factors"] == ["torch", "triton"] and found["explained_by"]["confounded"]
    assert found["verdict"][0].startswith(
        "fails only with torch=2.12 and triton=3.4 (always together): 30/30 launches on 3 hosts vs 0/30 elsewhere"
    )
    assert not any(t["factor"] in ("torch", "triton") for t in found["tests"])  # never split


def test_bad_launches_spread_evenly_are_explained_by_nothing(db_url, capsys):
    history = History(db_url)
    for torch in ("2.11", "2.12"):
        for host in ("h1", "h2"):
            for gpu in ("GPU-a", "GPU-b"):
                for stress in (None, {"kind": "copy", "active": True}):
                    history.run(
                        history.result(
                            bad=1, launches=12, stack=a_stack(torch=torch, host=host), uuid=gpu, stress=stress
                        )
                    )
    history.close()
    found = explained(capsys, db_url)
    assert found["explained_by"] is None and not found["per_process"]
    assert found["verdict"][0].startswith("no factor explains it (bad on every stack seen")
    assert {t["factor"] for t in found["tests"]} >= {"torch", "host", "gpu_uuid", "stress", "process"}


def test_a_case_prefix_must_name_one_case(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    history = History(url)
    history.run(
        history.result(bad=0, launches=2, stack=a_stack(), key="abc1" + "0" * 28),
        history.result(bad=0, launches=2, stack=a_stack(), key="abc2" + "0" * 28, tile="128x128"),
    )
    history.close()
    status, _, err = cli(capsys, "--db", url, "explain", "abc")
    assert status == 2 and "matches 2 cases" in err and "give more of the key" in err
    status, _, err = cli(capsys, "--db", url, "explain", "fff")
    assert status == 2 and "no recorded case" in err
    status, out, _ = cli(capsys, "--db", url, "explain", "abc1")
    assert status == 0 and "no bad launches recorded (2 launches)" in out


def test_a_race_under_load_is_not_also_blamed_on_its_variant_through_its_own_stressed_launches(db_url, capsys):
    """As recorded on the H200: the racy variant fails under copy stress only (47/48 vs 0/48), its
    fixed sibling never. Once the stressed launches explain it, they leave the sibling comparison
    too: the racy variant's unstressed launches are as clean as the fixed ones."""
    history, stack = History(db_url), a_stack()
    for stress in ({}, {"kind": "copy"}, {}, {"kind": "copy"}):
        bad = 24 if stress and not history.pid % 4 else (23 if stress else 0)
        history.run(
            history.result(bad=bad, launches=24, stack=stack, params={"variant": "racy"}, stress=stress),
            history.result(bad=0, launches=24, stack=stack, key="f1xed000", params={"variant": "fixed"}, stress=stress),
        )
    history.close()
    found = explained(capsys, db_url)
    assert found["explained_by"]["factors"] == ["stress"], found
    assert len(found["verdict"]) == 1, found["verdict"]
