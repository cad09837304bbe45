"""judging/explanation.py: which factor explains a case's bad launches, over launch groups in
memory: Holm's correction, a failure decided per process, the stress setting, two independent
causes, a param across sibling cases, and 100 random histories without a planted factor, of
which at most 5 may name one at the default significance. Through the database and the
command: tests/commands/test_explain.py."""

import random

import pytest

from pytest_gemmcheck.judging.explanation import Group, explain, holm


def test_holm_adjusts_step_down():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([]) == []


def test_a_failure_decided_per_process_is_said_so():
    rng = random.Random(7)
    groups, bad_processes = [], set(rng.sample(range(40), 4))
    for process in range(40):
        facts = {"torch": ("2.11", "2.12")[process % 2], "host": f"h{process % 3}", "process": f"p{process}"}
        groups.append(Group(12 if process in bad_processes else 0, 12, facts, cluster=process, host=facts["host"]))
    explanation = explain(groups)
    assert explanation.per_process and explanation.names == ("process",)
    assert explanation.verdict[0].startswith("decided per process: 48 of the 48 bad launches in 4 of 40 processes")


def test_the_stress_setting_is_named_for_a_race_under_load():
    groups = []
    for run in range(8):
        for stress in ("none", "copy"):
            bad = 3 if stress == "copy" else 0
            groups.append(
                Group(
                    bad,
                    12,
                    {"stress": stress, "host": f"h{run % 2}", "process": f"{run}{stress}"},
                    cluster=(run, stress),
                    host=f"h{run % 2}",
                )
            )
    explanation = explain(groups)
    assert explanation.names == ("stress",)
    assert explanation.verdict[0].startswith(
        "fails only under stress=copy: 24/96 launches on 2 hosts vs 0/96 elsewhere"
    )


def random_history(rng: random.Random) -> tuple[list[Group], list[Group]]:
    """A history with no planted factor: every launch bad at one rate, whatever its facts."""
    rate = rng.choice([0.01, 0.03, 0.1, 0.3])
    torches = [f"2.{i}" for i in range(rng.randint(1, 4))]
    hosts = [f"h{i}" for i in range(rng.randint(1, 4))]
    tritons = [f"3.{i}" for i in range(rng.randint(1, 3))]
    own, kernel = [], []
    tiles = ["256x128", "128x128", "256x256"][: rng.randint(1, 3)]
    quants = ["bf16", "fp8"][: rng.randint(1, 2)]
    for cluster in range(rng.randint(10, 60)):
        launches = rng.choice([4, 12, 24])
        bad = sum(rng.random() < rate for _ in range(launches))
        host = rng.choice(hosts)
        facts = {
            "torch": rng.choice(torches),
            "triton": rng.choice(tritons),
            "host": host,
            "gpu_uuid": f"{host}-GPU-{rng.randint(0, 3)}",
            "stress": rng.choice(["none", "copy"]),
            "process": f"p{cluster}",
        }
        own.append(Group(bad, launches, facts, cluster=cluster, host=host, stack=(facts["torch"], host)))
        kernel.append(Group(bad, launches, {"tile": tiles[0], "quant": quants[0]}, cluster=cluster, case="own"))
    for sibling in range(rng.randint(0, 5)):
        tile, quant = rng.choice(tiles), rng.choice(quants)
        for cluster in range(rng.randint(2, 10)):
            launches = rng.choice([4, 12, 24])
            kernel.append(
                Group(
                    sum(rng.random() < rate for _ in range(launches)),
                    launches,
                    {"tile": tile, "quant": quant},
                    cluster=("sibling", sibling, cluster),
                    case=f"s{sibling}",
                )
            )
    return own, kernel


def test_nothing_is_named_where_nothing_is_planted_in_95_of_100_histories():
    rng = random.Random(2026)
    named = [explain(*random_history(rng)).verdict[0] for _ in range(100)]
    false = [line for line in named if not line.startswith(("no factor", "no bad launches"))]
    assert len(false) <= 5, false


def test_the_design_effect_from_sums_is_the_verdicts_own():
    from pytest_gemmcheck.judging.explanation import _Clusters, _deff
    from pytest_gemmcheck.judging.stats import design_effect

    rng = random.Random(3)
    for _ in range(50):
        groups = [Group(rng.randint(0, 12), 12, {}, cluster=rng.randint(0, 8)) for _ in range(rng.randint(1, 30))]
        groups = [Group(min(g.bad, g.launches), g.launches, {}, cluster=g.cluster) for g in groups]
        clusters = _Clusters(groups)
        expected = design_effect([tuple(entry) for entry in clusters.sums.values()])
        assert _deff(clusters.square, clusters.bad, clusters.launches, clusters.count) == pytest.approx(expected)
        part = _Clusters(groups, range(len(groups) // 2))
        rest = _Clusters(groups, range(len(groups) // 2, len(groups)))
        assert _deff(*clusters.without(part)) == pytest.approx(_deff(rest.square, rest.bad, rest.launches, rest.count))


def test_thousands_of_processes_are_explained():
    # its cost at this size is a benchmark's business; here it must answer
    rng = random.Random(5)
    groups = [
        Group(
            int(rng.random() < 0.05),
            12,
            {"process": f"p{i}", "host": f"h{i % 9}", "torch": f"2.{i % 3}"},
            cluster=i,
            host=f"h{i % 9}",
        )
        for i in range(5000)
    ]
    assert explain(groups) is not None


def test_two_independent_causes_are_both_named_and_a_param_across_siblings():
    groups = []
    for i in range(24):
        torch, uuid = ("2.11", "2.12")[i % 2], f"GPU-{i % 6}"
        bad = 12 if torch == "2.12" else (4 if uuid == "GPU-2" else 0)  # 2.12 always; one GPU under 2.11 too
        groups.append(Group(bad, 12, {"torch": torch, "gpu_uuid": uuid, "process": f"p{i}"}, cluster=i, host="h"))
    explanation = explain(groups)
    assert explanation.names == ("torch",)
    assert len(explanation.verdict) == 2
    assert explanation.verdict[1].startswith("also one physical GPU: GPU-2 16/48, all other GPUs 0/96")
    assert explanation.verdict[1].endswith("among the launches without torch=2.12")

    kernel = [
        Group(
            6 if fuse else 0,
            6,
            {"param:fuse": str(fuse), "tile": tile},
            cluster=(fuse, tile, run),
            case=f"{fuse}{tile}",
        )
        for fuse in (True, False)
        for tile in ("a", "b", "c")
        for run in range(3)
    ]
    explanation = explain([], kernel)
    assert explanation.names == ("param:fuse",)
    assert explanation.verdict[0].startswith(
        "fails only with param:fuse=True: 54/54 launches over 3 cases vs 0/54 in 3 sibling cases"
    )
