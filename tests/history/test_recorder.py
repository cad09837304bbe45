"""The recorder's writer thread: a test's results are written beside the next test, and the
session's end waits for them; a fault of ours in it loses nothing."""

import json
import threading

from sqlalchemy import create_engine, text

from pytest_gemmcheck.history.recorder import Recorder
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord


def a_result(seed: int = 0) -> CaseResult:
    return CaseResult(
        key="0123456789abcdef",
        kernel="kern",
        m=64,
        n=64,
        k=64,
        quant="bf16",
        tile=None,
        out_dtype="bfloat16",
        params={},
        fp8=None,
        seed=seed,
        device="cpu",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        verdict="pass",
        launches=[LaunchRecord(index=i + 1, pid=1, host="h", device="cpu") for i in range(12)],
    )


def a_recorder(tmp_path) -> Recorder:
    from pytest_gemmcheck.history.engine import resolve_url

    return Recorder(
        url=resolve_url(tmp_path / "history.db", tmp_path),
        rootdir=tmp_path,
        tag=None,
        command="pytest",
        options={},
        workers=0,
    )


def stored_results(tmp_path) -> int:
    engine = create_engine(f"sqlite:///{tmp_path / 'history.db'}")
    with engine.connect() as connection:
        count = connection.execute(text("SELECT count(*) FROM result")).scalar()
    engine.dispose()
    return count


def test_a_flush_returns_before_its_write_and_the_end_waits_for_it(tmp_path, monkeypatch):
    recorder = a_recorder(tmp_path)
    recorder.open()
    release, writing = threading.Event(), threading.Event()
    add_each = recorder.store.add_each

    def held(*args):
        writing.set()
        assert release.wait(60)
        return add_each(*args)

    monkeypatch.setattr(recorder.store, "add_each", held)
    recorder.add(a_result())
    recorder.flush()  # returns while its write waits
    assert writing.wait(60)
    assert stored_results(tmp_path) == 0
    threading.Timer(0.2, release.set).start()
    assert recorder.finish(0, interrupted=False) == 0  # waits for the write, then ends the run
    assert stored_results(tmp_path) == 1
    assert recorder.summary().startswith("gemmcheck: recorded run 1 (1 results)"), recorder.summary()


def test_results_are_written_in_the_order_they_came(tmp_path):
    recorder = a_recorder(tmp_path)
    for index in range(5):
        recorder.add(a_result(seed=index))
        recorder.flush()
    recorder.finish(0, interrupted=False)
    engine = create_engine(f"sqlite:///{tmp_path / 'history.db'}")
    with engine.connect() as connection:
        seeds = connection.execute(text("SELECT seed FROM result ORDER BY id")).scalars()
        assert list(seeds) == list(range(5))
    engine.dispose()


def test_a_fault_in_the_writer_keeps_the_results_in_the_fallback_file(tmp_path, monkeypatch):
    recorder = a_recorder(tmp_path)
    recorder.open()

    add_each, calls = recorder.store.add_each, []

    def broken_once(*args):
        calls.append(args)
        if len(calls) == 1:
            raise RuntimeError("a fault of the writer's own")
        return add_each(*args)

    monkeypatch.setattr(recorder.store, "add_each", broken_once)
    recorder.add(a_result(seed=1))
    recorder.flush()
    recorder.add(a_result(seed=2))  # the writer goes on with the next batch
    recorder.flush()
    recorder.finish(0, interrupted=False)
    assert recorder.failed and stored_results(tmp_path) == 1
    summary = recorder.summary()
    assert "NOT recorded" in summary and "1 of 2 results" in summary and "a fault of the writer's own" in summary
    lines = [json.loads(line) for line in recorder.saved_to.read_text().splitlines()]
    [kept] = [line for line in lines if "uid" in line]
    assert kept["reason"] == "not written: a fault of the writer's own" and kept["result"]["seed"] == 1
