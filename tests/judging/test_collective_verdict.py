"""A collective case's one result judged: every message blames (launch, rank), the rate is given
per rank and overall, ranks cluster like processes (and the verdict says so), and a launch whose
bits differ from the other ranks' is its own failure kind. A result outside a collective case
reads word for word as before."""

import json
import re

import pytest

from pytest_gemmcheck.errors import LaunchError
from pytest_gemmcheck.history.queries import CaseHistory, ProcessHistory
from pytest_gemmcheck.judging.baseline import Baseline, Evidence
from pytest_gemmcheck.judging.conclude import _launch_error
from pytest_gemmcheck.judging.message import failure_message
from pytest_gemmcheck.judging.verdict import PASS, REGRESSION, failing_launches, failing_words, judge
from pytest_gemmcheck.records.result import CaseResult, LaunchRecord
from pytest_gemmcheck.reporting.terminal import summary_lines


def collective(
    world_size: int, launches: int, bad=None, *, disagree=(), raised=(), name="all_reduce", tile=None
) -> CaseResult:
    """``launches`` launches on each of ``world_size`` ranks, a process and a GPU each. ``bad``:
    (launch, rank) -> wrong elements; ``disagree``, ``raised``: (launch, rank) pairs."""
    bad = bad or {}
    records = []
    for index in range(1, launches + 1):
        for rank in range(world_size):
            record = LaunchRecord(
                index=index, rank=rank, pid=100 + rank, host="h", device=f"cuda:{rank}", device_uuid=f"GPU-{rank}"
            )
            if (index, rank) in bad:
                record.add_kind("wrong")
                record.wrong, record.wrong_rows, record.wrong_row_ids = bad[(index, rank)], 2, [5, 9]
                record.max_rel_err, record.max_abs_err, record.rel_l2 = 0.12, 3.5, 2e-3
            if (index, rank) in disagree:
                record.add_kind("ranks_disagree")
            if (index, rank) in raised:
                record.add_kind("raised")
                record.error = "RuntimeError: NCCL error"
            records.append(record)
    return CaseResult(
        key="c0",
        kernel="gemm_ar",
        m=64,
        n=64,
        k=128,
        quant="bf16",
        tile=tile,
        out_dtype="bfloat16",
        params={"fuse": True},
        fp8=None,
        seed=0,
        device="cuda:0",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=records,
        collective=name,
        world_size=world_size,
        stack={"gpu_arch": "sm_90"},
    )


def message_of(result: CaseResult, baseline: Baseline | None = None):
    verdict = judge(result, baseline) if baseline else judge(result)
    result.verdict = verdict.kind
    return verdict, failure_message(result, verdict)


def test_every_bad_launch_is_blamed_on_its_launch_and_rank():
    result = collective(4, 200, {(7, 3): 512, (9, 3): 12, (9, 1): 3})
    verdict, message = message_of(result)
    assert verdict.kind == REGRESSION
    lines = message.splitlines()
    assert lines[0] == "gemmcheck: gemm_ar bf16 64x64x128 fuse=True all_reduce over 4 ranks: regression"
    assert (
        "  3/800 launches bad (launches 7 (rank 3), 9 (ranks 1, 3)); rate < 0.97% (95%), 4 ranks in 4 processes, "
        "4 GPUs" in lines
    )
    assert (
        "  launch 7, rank 3: 512 wrong elements in 2 rows (rows 5, 9); max rel err 0.12, max abs err 3.5, "
        "relL2 0.002" in lines
    )
    assert (
        "  launch 9, rank 1: 3 wrong elements in 2 rows (rows 5, 9); max rel err 0.12, max abs err 3.5, "
        "relL2 0.002" in lines
    )
    assert "  worst 512 wrong elements in 2 rows (launch 7, rank 3); max rel err 0.12" in lines
    # no launch line names a launch without its rank
    launch_lines = [line for line in lines if line.startswith("  launch ")]
    assert len(launch_lines) == 3 and all(re.match(r"  launch \d+, rank \d: ", line) for line in launch_lines)


def test_the_rate_is_given_per_rank_and_overall():
    result = collective(4, 200, {(7, 3): 512, (9, 3): 12, (9, 1): 3})
    _, message = message_of(result)
    assert (
        "  per rank: rank 0 0/200 (rate < 1.49%), rank 1 1/200 (rate < 2.35%), rank 2 0/200 (rate < 1.49%), "
        "rank 3 2/200 (rate < 3.11%)"
    ) in message.splitlines()
    summary = "\n".join(summary_lines(result, width=1000))
    assert "3/800 launches bad (ranks 1, 3 of 4), worst 512 wrong" in summary
    assert "per rank: rank 0 0/200 (rate < 1.49%), rank 1 1/200" in summary


def test_two_ranks():
    result = collective(2, 12, {(5, 0): 40})
    _, message = message_of(result)
    assert "  1/24 launches bad (launch 5 (rank 0)); rate < 18.3% (95%), 2 ranks in 2 processes, 2 GPUs" in message
    assert "  per rank: rank 0 1/12 (rate < 33.9%), rank 1 0/12 (rate < 22.1%)" in message
    assert "  launch 5, rank 0: 40 wrong elements in 2 rows" in message


def test_a_rank_whose_bits_differ_from_the_agreed_ones_is_its_own_failure_kind():
    result = collective(4, 12, disagree=[(6, 2)])
    verdict, message = message_of(result)
    assert verdict.kind == REGRESSION and result.kinds == ["ranks_disagree"]
    assert (
        "  launch 6, rank 2: ranks disagree: its output's bits differ from those of ranks 0, 1, 3, which agree "
        "(all_reduce gives every rank the same bits)"
    ) in message.splitlines()
    # no agreed output: every rank is flagged
    result = collective(2, 12, disagree=[(3, 0), (3, 1)])
    _, message = message_of(result)
    assert (
        "  launch 3, rank 0: ranks disagree: no output of launch 3 was agreed on by most ranks (all_reduce gives "
        "every rank the same bits)"
    ) in message.splitlines()
    # against a history with bad launches but none that disagreed, the new kind is a regression of its own
    history = Baseline(
        source="history", description="history: test", evidence=Evidence.of(collective(4, 12, {(2, 1): 5, (8, 3): 5}))
    )
    verdict = judge(collective(4, 12, {(2, 1): 5}, disagree=[(8, 3)]), history)
    assert (
        "ranks whose outputs disagree where the collective gives every rank the same bits where the baseline had none"
    ) in verdict.reasons


def test_ranks_cluster_like_processes_and_the_verdict_says_so():
    """A race decided per rank: rank 3 is bad on 150 of its 200 launches, the others never. Its
    800 launches are worth about 4 independent ones, and the rank level is stated."""
    result = collective(4, 200, {(index, 3): 7 for index in range(1, 151)})
    history = Baseline(
        source="history", description="history: 3 earlier runs", evidence=Evidence.of(collective(4, 200))
    )
    verdict, message = message_of(result, history)
    assert verdict.kind == REGRESSION
    lines = verdict.lines
    assert (
        lines[0] == "current: 150/800 (rate < 21.2%) launches of 4 ranks in 4 rank processes (1 with a bad "
        "launch) on 4 GPUs"
    )
    assert lines[1].startswith(
        "baseline: 0/800 (rate < 0.37%) launches of 4 ranks in 4 rank processes (0 with a bad launch) on 4 GPUs"
    )
    assert any(line.startswith("ranks cluster like processes: each rank is a process") for line in lines)
    clustered = next(line for line in lines if line.startswith("current launches cluster by rank"))
    assert re.fullmatch(
        r"current launches cluster by rank \(design effect 18\d\.\d over 4 rank processes\): "
        r"counted as 1/4 independent launches",
        clustered,
    ), clustered
    assert "rank level: 1/4 rank processes with a bad launch, baseline 0/4 (Fisher p = 0.5)" in lines
    assert "ranks cluster like processes" in message
    # a race on one rank lists its launches once, and the rank once
    assert (
        "  150/800 launches bad (launches 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ... (rank 3)); rate < 21.2% "
        "(95%), 4 ranks in 4 processes, 4 GPUs" in message.splitlines()
    )


def test_a_rank_that_raised_is_named_with_its_launch():
    result = collective(4, 12, raised=[(5, 1)])
    assert failing_words(failing_launches(result)) == "launch 5, rank 1 raised RuntimeError: NCCL error"
    result = collective(4, 12, raised=[(5, 1), (5, 2)])
    assert failing_words(failing_launches(result)) == (
        "2 launches raised; the first, launch 5, rank 1, raised RuntimeError: NCCL error"
    )
    error = _launch_error(RuntimeError("NCCL error"), 5, 12, "the message", rank=1)
    assert isinstance(error, LaunchError) and str(error).startswith("launch 5 of 12, rank 1, raised RuntimeError: ")
    assert str(_launch_error(RuntimeError("x"), 5, 12, "m")).startswith("launch 5 of 12 raised RuntimeError: x")


def test_each_ranks_output_is_its_part_in_what_a_message_counts():
    """reduce_scatter: rank r holds M/W rows; a launch that wrote nothing left all of them poisoned."""
    result = collective(4, 2, name="reduce_scatter")
    launch = result.launches[5]
    launch.add_kind("unwritten")
    launch.nonfinite = 16 * 64
    _, message = message_of(result)
    assert "  launch 2, rank 1: wrote nothing: all 1,024 elements still hold the NaN poison" in message.splitlines()


def test_a_history_of_ranks_is_a_baseline_of_ranks():
    bad = {(2, 3)}  # rank 3 of run 2 had the one bad launch
    processes = [
        ProcessHistory(run, "h", 100 + rank, 50, int((run, rank) in bad), 5 * int((run, rank) in bad), 0, rank)
        for run in (1, 2)
        for rank in range(4)
    ]
    history = CaseHistory(
        processes=processes, runs=2, gpus=4, kinds={"wrong"}, stacks=[("NVIDIA H200", "sm_90", "2.11")], ranks=4
    )
    evidence = Evidence.of_history(history)
    assert (evidence.ranks, evidence.processes, evidence.bad, evidence.launches) == (4, 8, 1, 400)
    assert evidence.describe() == (
        "1/400 (rate < 1.18%) launches of 4 ranks in 8 rank processes (1 with a bad launch) on 4 GPUs"
    )
    assert judge(collective(4, 50), Baseline(source="history", description="h", evidence=evidence)).kind == PASS


# The message, the terminal's lines, the markdown and the JUnit properties of a result outside a
# collective case, exactly as they were before collective cases existed.
PLAIN_MESSAGE = """\
gemmcheck: gemm ptpc 64x64x64 tile 32x32 fuse=False: regression
  launch 23 raised RuntimeError: boom
  bad-launch rate 5/24 is worse than the baseline's 1/48 (p = 0.0149 < 0.05)
  worst launch has 53 wrong elements, more than 2x the baseline's 10
  launches that differ from the consensus where the baseline had none
  5/24 launches bad (launches 3, 6, 14, 21, 23); rate < 38.9% (95%), 2 processes
  worst 53 wrong elements in 2 rows; max rel err 0.2; most differing from the consensus: 9 elements in 1 row (launch 21)
  launch 3: 42 wrong elements in 2 rows (rows 1, 3); max rel err 0.2, max abs err 0, relL2 0
  launch 6: 45 wrong elements in 2 rows (rows 1, 3); max rel err 0.2, max abs err 0, relL2 0
  launch 14: 53 wrong elements in 2 rows (rows 1, 3); max rel err 0.2, max abs err 0, relL2 0
  launch 21: differs from the consensus of 20 launches in 9 elements in 1 row (rows 4), up to 0% of the row's \
largest value
  launch 23: raised RuntimeError: boom
  current: 5/24 (rate < 38.9%) launches in 2 processes (2 with a bad launch) on 1 GPU
  baseline: 1/48 (rate < 9.51%) launches in 2 processes (1 with a bad launch) on 1 GPU, from history: test
  baseline launches cluster by process (design effect 1.0 over 2 processes): counted as 1/47 independent launches
  test: one-sided Fisher exact, p = 0.0149 that the bad-launch rate is not worse (alpha 0.05)
  process level: 2/2 processes with a bad launch, baseline 1/2 (Fisher p = 0.5)
  inputs: seed 0, e4m3fn, out bfloat16, on cuda:0; rule: off by > 0.05 x max(|ref|, 1 x row max)"""

PLAIN_SUMMARY = """\
REGRESSION gemm ptpc 64x64x64 tile 32x32 fuse=False: 5/24 launches bad,
           worst 53 wrong, 9 differing
    launches 3, 6, 14, 21, 23; rate < 38.9% (95%), 2 processes [raised, wrong,
      inconsistent]
    launch 23 raised RuntimeError: boom
    worst 53 wrong elements in 2 rows; max rel err 0.2; most differing from the
      consensus: 9 elements in 1 row (launch 21)"""


def plain() -> CaseResult:
    launches = []
    for i in range(24):
        record = LaunchRecord(index=i + 1, pid=100 + i // 12, host="h", device="cuda:0", device_uuid="GPU-1")
        if i in (2, 5, 13):
            record.add_kind("wrong")
            record.wrong, record.wrong_rows, record.wrong_row_ids, record.max_rel_err = 40 + i, 2, [1, 3], 0.2
        if i == 20:
            record.add_kind("inconsistent")
            record.differing, record.differing_rows, record.differing_row_ids = 9, 1, [4]
        if i == 22:
            record.add_kind("raised")
            record.error = "RuntimeError: boom"
        launches.append(record)
    return CaseResult(
        key="k",
        kernel="gemm",
        m=64,
        n=64,
        k=64,
        quant="ptpc",
        tile="32x32",
        out_dtype="bfloat16",
        params={"fuse": False},
        fp8="e4m3fn",
        seed=0,
        device="cuda:0",
        deterministic=True,
        rtol=0.05,
        floor=1.0,
        launches=launches,
        consensus_size=20,
        stack={"gpu_arch": "sm_90"},
    )


def test_a_result_outside_a_collective_case_reads_as_before():
    from pytest_gemmcheck.reporting.ci_output import case_properties

    result = plain()
    history = Baseline(
        source="history",
        description="history: test",
        evidence=Evidence(launches=48, bad=1, per_process=[(0, 24), (1, 24)], gpus=1, worst_wrong=10, kinds=["wrong"]),
    )
    _, message = message_of(result, history)
    assert message == PLAIN_MESSAGE
    assert "\n".join(summary_lines(result)) == PLAIN_SUMMARY
    assert [name for name, _ in case_properties(result)] == [
        "verdict",
        "key",
        "kernel",
        "quant",
        "shape",
        "tile",
        "params",
        "launches",
        "bad_launches",
        "rate_upper_95",
        "worst_wrong",
        "worst_differing",
        "kinds",
        "hazards",
        "sanitize",
        "baseline",
        "accepted",
        "summary",
    ]
    assert "rank" not in message and "rank" not in result.summary()


@pytest.mark.parametrize("world_size", [2, 4])
def test_a_clean_collective_result_passes_a_clean_baseline(world_size):
    result = collective(world_size, 200)
    verdict, _ = message_of(result)
    assert verdict.kind == PASS
    assert result.summary().endswith(f"0/{200 * world_size} launches bad ({world_size} ranks)")


def test_a_golden_of_a_collective_case_keeps_its_ranks(tmp_path):
    from pytest_gemmcheck.judging.goldens import GoldenStore

    store = GoldenStore(tmp_path)
    store.accept(collective(4, 12, {(3, 1): 5}), "arch", "accepted at abc")
    store.accept(plain(), "arch", "accepted at abc")
    data = {case["key"]: case for case in json.loads(store.write("gemm_ar").read_text())["cases"]}
    entry = data["c0"]
    assert entry["ranks"] == 4 and entry["per_process"] == ["0/12", "0/12", "0/12", "1/12"]
    assert (entry["case"]["collective"], entry["case"]["world_size"]) == ("all_reduce", 4)
    golden = GoldenStore(tmp_path).lookup(collective(4, 12))
    assert golden.evidence.ranks == 4
    assert golden.evidence.describe() == (
        "1/48 (rate < 9.51%) launches of 4 ranks in 4 rank processes (1 with a bad launch) on 4 GPUs"
    )
    plain_entry = json.loads(store.write("gemm").read_text())["cases"][0]
    assert "ranks" not in plain_entry and "collective" not in plain_entry["case"]


def test_ci_outputs_name_the_ranks():
    from pytest_gemmcheck.reporting.ci_output import case_properties, json_document, summary_row

    result = collective(4, 200, {(7, 3): 512, (9, 1): 3})
    message_of(result)
    properties = dict(case_properties(result))
    assert (properties["collective"], properties["world_size"]) == ("all_reduce", "4")
    assert properties["per_rank"] == "rank 0 0/200, rank 1 1/200, rank 2 0/200, rank 3 1/200"
    assert properties["summary"].endswith("2/800 launches bad (ranks 1, 3 of 4), worst 512 wrong")
    assert summary_row(result)[6] == "2/800 (ranks 1, 3 of 4)"
    document = json.loads(json_document([result], {}, "0"))
    launches = document["results"][0]["launches"]
    assert [(launch["index"], launch["rank"]) for launch in launches if launch["kinds"]] == [(7, 3), (9, 1)]
    assert CaseResult.from_dict(document["results"][0]).per_rank == result.per_rank
