"""gemmcheck bisect's search against plain bisection, on simulated histories.

64 commits, the first bad one commit 37; each trial seeded. Three scenarios: a race at 10% per
launch, one at 2% per launch, and one decided per process (each probe process races, at 60%
per launch, or is clean throughout, with probability 1/2). The Bayesian search runs at
--confidence 0.95 with its defaults (the per-process scenario counted per process, as
``--unit process``). Plain bisection is the seed's protocol: each probe launches until a bad
launch or 12 clean launches, then moves on as git bisect does; and, to show what accuracy
costs it, the same with more clean launches (24 ... 600) until it is as accurate as the search.

For the per-launch scenarios it also prints what any method could do (an information bound):
a launch at a revision that is bad with probability q tells at most H(p q) - q H(p) bits about
the culprit (p the bad rate, the good side clean), at most I* bits at the best q; by Fano's
inequality, finding one of M candidates with accuracy a needs I >= a log2(M) - 1 - ... bits,
precisely P(wrong) >= (log2 M - 1 - I) / log2(M - 1). So n launches reach an accuracy of at
most 1 - (log2 M - 1 - n I*) / log2(M - 1), whatever the method.

    .venv/bin/python -m benchmarks.bisect_accuracy [--trials 20]
"""

from __future__ import annotations

import argparse
import math
import time

from gemmcheck_dev.bisect_simulation import Scenario, bayes, commit_of, plain

SCENARIOS = [
    ("10% per launch", Scenario(commits=64, culprit=37, rate=0.10), "launch"),
    ("2% per launch", Scenario(commits=64, culprit=37, rate=0.02), "launch"),
    (
        "per process: 60%, half the processes",
        Scenario(commits=64, culprit=37, rate=0.60, mode="per_process", racing=0.5),
        "process",
    ),
]
LADDER = (24, 36, 48, 72, 100, 150, 200, 300, 600)


def _bits(p: float) -> float:
    return 0.0 if p <= 0 or p >= 1 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def bits_per_launch(rate: float) -> float:
    """I*: the most a launch can tell about the culprit, over the probability q that its
    revision is bad."""
    return max(_bits(rate * q / 1000) - q / 1000 * _bits(rate) for q in range(1, 1000))


def best_accuracy(launches: float, rate: float, candidates: int) -> float:
    """Fano: the highest accuracy any search can have after ``launches`` launches."""
    wrong = (math.log2(candidates) - 1 - launches * bits_per_launch(rate)) / math.log2(candidates - 1)
    return min(1.0, 1 - max(0.0, wrong))


def least_launches(accuracy: float, rate: float, candidates: int) -> float:
    """Fano: the fewest launches with which any search can reach ``accuracy``."""
    return max(0.0, (math.log2(candidates) - 1 - (1 - accuracy) * math.log2(candidates - 1)) / bits_per_launch(rate))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    seeds = range(args.trials)
    print(f"{args.trials} seeded trials each; 64 commits, culprit commit 37; confidence 0.95")
    print(
        f"{'scenario':38} {'method':26} {'found 37':>9} {'launches/trial':>15} {'probes/trial':>13} "
        f"{'launches vs plain-12':>21}"
    )
    for name, scenario, unit in SCENARIOS:
        started = time.perf_counter()
        outcomes = [bayes(scenario, seed, unit=unit) for seed in seeds]
        seconds = time.perf_counter() - started
        ours_ok = sum(o.position is not None and commit_of(o.position) == scenario.culprit for o in outcomes)
        ours_launches = sum(o.launches for o in outcomes) / len(outcomes)
        ours_probes = sum(len(o.observations) for o in outcomes) / len(outcomes)
        seed_runs = [plain(scenario, seed, clean=12) for seed in seeds]
        plain_ok = sum(found == scenario.culprit for found, _ in seed_runs)
        plain_launches = sum(spent for _, spent in seed_runs) / len(seed_runs)
        print(
            f"{name:38} {'bayes (gemmcheck bisect)':26} {ours_ok:>5}/{args.trials:<3} {ours_launches:>15.0f} "
            f"{ours_probes:>13.1f} {ours_launches / plain_launches:>20.2f}x"
        )
        print(
            f"{'':38} {'plain, 12 clean (seed)':26} {plain_ok:>5}/{args.trials:<3} {plain_launches:>15.0f} "
            f"{'':>13} {1.0:>20.2f}x"
        )
        for clean in LADDER:  # plain bisection made as accurate as the search, if it can be
            runs = [plain(scenario, seed, clean=clean) for seed in seeds]
            ok = sum(found == scenario.culprit for found, _ in runs)
            if ok >= ours_ok or clean == LADDER[-1]:
                spent = sum(s for _, s in runs) / len(runs)
                print(
                    f"{'':38} {f'plain, {clean} clean':26} {ok:>5}/{args.trials:<3} {spent:>15.0f} {'':>13} "
                    f"{spent / plain_launches:>20.2f}x   <- the least clean launches matching the search's accuracy"
                    if ok >= ours_ok
                    else f"{'':38} {f'plain, {clean} clean':26} {ok:>5}/{args.trials:<3} {spent:>15.0f} {'':>13} "
                    f"{spent / plain_launches:>20.2f}x   <- never as accurate as the search on this ladder"
                )
                if ok >= ours_ok:
                    print(f"{'':38} {'':26} search/plain-{clean} launches: {ours_launches / spent:.2f}x")
                break
        if unit == "launch":
            candidates = scenario.commits - 1
            half = plain_launches / 2
            print(
                f"{'':38} bound: a launch tells at most {bits_per_launch(scenario.rate):.4f} bits; any search needs "
                f">= {least_launches(ours_ok / args.trials, scenario.rate, candidates):.0f} launches for "
                f"{ours_ok}/{args.trials}, and with {half:.0f} (half plain-12's) finds it at most "
                f"{best_accuracy(half, scenario.rate, candidates):.0%} of the time (plain-12: "
                f"{plain_ok / args.trials:.0%})"
            )
        print(f"{'':38} (search: {seconds:.2f} s of model time for {args.trials} trials)")


if __name__ == "__main__":
    main()
