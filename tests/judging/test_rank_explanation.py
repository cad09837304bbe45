"""judging/explanation.py over a collective case's launch groups, in memory: a rank that
explains the bad launches is named as one rank, with its GPU where the two always went
together; a GPU that explains them whichever rank ran on it is named as the GPU. Through the
database and the command: tests/commands/test_collective_commands.py."""

from pytest_gemmcheck.judging.explanation import GPU_UUID, PROCESS, RANK, Group, explain


def rank_groups(runs: int, world_size: int, bad: dict, *, gpu_of) -> list[Group]:
    """A group per (run, rank), 20 launches each; ``bad``: (run, rank) -> bad launches;
    ``gpu_of(run, rank)``: the GPU the rank ran on."""
    groups = []
    for run in range(runs):
        for rank in range(world_size):
            facts = {
                RANK: str(rank),
                GPU_UUID: gpu_of(run, rank),
                PROCESS: f"h:{100 * run + rank} (run {run})",
                "host": "h",
            }
            groups.append(Group(bad.get((run, rank), 0), 20, facts, cluster=(run, rank), host="h"))
    return groups


def test_a_rank_that_fails_on_whichever_gpu_is_named_as_the_rank():
    groups = rank_groups(6, 4, {(run, 3): 15 for run in range(6)}, gpu_of=lambda run, rank: f"GPU-{(run + rank) % 4}")
    explanation = explain(groups)
    assert explanation.names == (RANK,)
    assert explanation.verdict[0].startswith("one rank: rank 3 90/120, all other ranks 0/360 (p = ")


def test_a_rank_pinned_to_its_gpu_is_named_with_it():
    groups = rank_groups(6, 4, {(run, 3): 15 for run in range(6)}, gpu_of=lambda run, rank: f"GPU-{rank}")
    explanation = explain(groups)
    assert explanation.names == (RANK, GPU_UUID)
    assert explanation.verdict[0].startswith(
        "one rank: rank 3 on GPU-3 90/120, all other ranks 0/360 (its GPU "
        "always with it, so either may be the cause; p = "
    )


def test_a_gpu_that_fails_whichever_rank_runs_on_it_is_named_as_the_gpu():
    bad = {(run, (1 - run) % 4): 12 for run in range(8)}  # GPU-1, whichever rank had it
    groups = rank_groups(8, 4, bad, gpu_of=lambda run, rank: f"GPU-{(run + rank) % 4}")
    explanation = explain(groups)
    assert explanation.names == (GPU_UUID,)
    assert explanation.verdict[0].startswith("one physical GPU: GPU-1 96/160, all other GPUs 0/480 (suspect hardware")


def test_one_run_of_ranks_names_the_rank_not_its_process():
    """In one run a rank and its process are the same partition: merged, and named as the rank."""
    groups = rank_groups(1, 8, {(0, 5): 20}, gpu_of=lambda run, rank: f"GPU-{rank}")
    explanation = explain(groups)
    assert explanation.names == (RANK, GPU_UUID, PROCESS) and not explanation.per_process
    assert explanation.verdict[0].startswith(
        "one rank: rank 5 on GPU-5 20/20, all other ranks 0/140 (its GPU "
        "always with it, so either may be the cause; p = "
    )
