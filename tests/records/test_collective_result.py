"""A collective case's one result: every rank's launches, each named by its launch and its rank,
counted per rank and overall; its text. A result outside a collective case reads as before."""

from pytest_gemmcheck.records.result import CaseResult, LaunchRecord


def collective(
    world_size: int, launches: int, bad: dict[tuple[int, int], int], *, name="all_reduce", m=64, n=64
) -> CaseResult:
    """``launches`` launches on each of ``world_size`` ranks; ``bad``: (launch, rank) -> wrong elements."""
    records = []
    for index in range(1, launches + 1):
        for rank in range(world_size):
            record = LaunchRecord(
                index=index, rank=rank, pid=100 + rank, host="h", device=f"cuda:{rank}", device_uuid=f"GPU-{rank}"
            )
            if (index, rank) in bad:
                record.add_kind("wrong")
                record.wrong = bad[(index, rank)]
            records.append(record)
    return CaseResult(
        key="c0",
        kernel="gemm_ar",
        m=m,
        n=n,
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
        collective=name,
        world_size=world_size,
        verdict="regression",
    )


def test_a_launch_is_named_with_its_rank_only_in_a_collective_case():
    assert LaunchRecord(index=7, rank=3).label == "launch 7, rank 3"
    assert LaunchRecord(index=7, rank=0).label == "launch 7, rank 0"
    assert LaunchRecord(index=7).label == "launch 7"


def test_ranks_are_counted_each_and_overall():
    result = collective(4, 200, {(7, 3): 512, (9, 3): 12, (9, 1): 3})
    assert result.ranks == [0, 1, 2, 3]
    assert result.per_rank == {0: (0, 200), 1: (1, 200), 2: (0, 200), 3: (2, 200)}
    assert (len(result.bad_launches), len(result.launches)) == (3, 800)
    assert result.processes == 4 and result.gpus == 4
    assert result.label == "gemm_ar bf16 64x64x128 all_reduce over 4 ranks"


def test_the_summary_line_names_the_ranks_with_bad_launches():
    assert collective(4, 200, {(7, 3): 512, (9, 1): 3}).summary() == (
        "REGRESSION gemm_ar bf16 64x64x128 all_reduce over 4 ranks: 2/800 launches bad (ranks 1, 3 of 4), "
        "worst 512 wrong"
    )
    clean = collective(2, 12, {})
    clean.verdict = "pass"
    assert clean.summary() == "PASS       gemm_ar bf16 64x64x128 all_reduce over 2 ranks: 0/24 launches bad (2 ranks)"


def test_the_markdown_gives_each_ranks_count_beside_the_overall_one():
    lines = collective(2, 3, {(2, 1): 5}).markdown().splitlines()
    assert lines[0] == "| verdict | case | bad launches | per rank | kinds | baseline |"
    assert lines[1] == "|---|---|---|---|---|---|"
    assert lines[2] == (
        "| regression | gemm_ar bf16 64x64x128 all_reduce over 2 ranks | 1/6 | rank 0 0/3, rank 1 1/3 | wrong |  |"
    )


def test_each_rank_holds_its_part_of_the_output():
    assert collective(4, 1, {}, name="all_reduce", m=64, n=32).output_shape == (64, 32)
    assert collective(4, 1, {}, name="reduce_scatter", m=64, n=32).output_shape == (16, 32)
    assert collective(4, 1, {}, name="all_gather", m=64, n=32).output_shape == (64, 8)


def test_a_collective_result_travels_with_its_ranks():
    result = collective(2, 3, {(2, 1): 5})
    again = CaseResult.from_dict(result.to_dict())
    assert again == result
    assert [(launch.index, launch.rank) for launch in again.bad_launches] == [(2, 1)]
    assert (again.collective, again.world_size) == ("all_reduce", 2)


def test_a_result_outside_a_collective_case_has_no_ranks():
    result = CaseResult(
        key="k",
        kernel="gemm",
        m=8,
        n=8,
        k=8,
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
        launches=[LaunchRecord(index=1), LaunchRecord(index=2, kinds=["wrong"])],
        verdict="regression",
    )
    assert result.ranks == [] and result.per_rank == {} and result.output_shape == (8, 8)
    assert result.label == "gemm bf16 8x8x8"
    assert result.summary() == "REGRESSION gemm bf16 8x8x8: 1/2 launches bad"
    assert result.markdown().splitlines()[0] == "| verdict | case | bad launches | kinds | baseline |"
    # an older record (JSON, a fallback file) without the fields reads as one outside a collective case
    data = result.to_dict()
    data.pop("collective"), data.pop("world_size")
    for launch in data["launches"]:
        launch.pop("rank")
    assert CaseResult.from_dict(data) == result
