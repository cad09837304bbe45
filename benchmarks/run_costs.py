"""A checked run's cost split into what it pays once and what it pays per launch, on a GPU.

    python benchmarks/run_costs.py [--shapes 1024,ptpc] [--repeat 100] [--rounds 3] [--profile-rows 0]
        [--profile-runs 10] [--kernel-profile]

For each shape, ``case.run(launch, repeat=R)`` and ``case.run(launch, repeat=3R)`` through the
plain API, timed in turn in each round (min of the rounds), and R bare launches beside them.
From the two runs: per launch ``(T(3R) - T(R)) / 2R`` and once per run ``T(R) - R x that``,
each against the bare launch. With ``--profile-rows N`` the last shape's ``case.run`` of R
launches is profiled ``--profile-runs`` times (cProfile; the top N functions by internal then
cumulative time, microseconds per run); with ``--kernel-profile`` one such run's GPU time per
kernel and copy (torch.profiler), with the host's time from the run's start to its first launch
and from its last launch to its end. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "gpu"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import pytest_gemmcheck as gc  # noqa: E402
from overhead_shapes import GPU_SHAPES, kernel_for, timed  # noqa: E402


def print_profile(stats: pstats.Stats, rows: int, runs: int) -> None:
    """The top ``rows`` functions by internal and by cumulative time, in microseconds per run
    (pstats prints milliseconds to three places: zeros for most of a short run's calls)."""
    entries = [(f"{Path(file).name}:{line}({name})", calls / runs, own / runs * 1e6, total / runs * 1e6)
               for (file, line, name), (_, calls, own, total, _) in stats.stats.items()]
    for title, column in (("internal", 2), ("cumulative", 3)):
        print(f"by {title} time: {'calls':>8} {'own us':>9} {'total us':>9}  function (per run)")
        for where, calls, own, total in sorted(entries, key=lambda entry: -entry[column])[:rows]:
            print(f"{'':<18}{calls:8.1f} {own:9.1f} {total:9.1f}  {where}")


def print_kernel_profile(case, launch, repeat: int, device: torch.device) -> None:
    """One ``case.run`` of ``repeat`` launches under torch.profiler: the GPU's time per kernel and
    copy, and the host's before the first launch's call and after the last one's."""
    from torch.profiler import ProfilerActivity, profile

    calls = []

    def stamped(out):
        calls.append(time.perf_counter())
        return launch(out)

    torch.cuda.synchronize(device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        begun = time.perf_counter()
        case.run(stamped, repeat=repeat)
        torch.cuda.synchronize(device)
        ended = time.perf_counter()
    print(f"\ncase.run of {repeat} launches under torch.profiler: {(ended - begun) * 1e3:.2f} ms, "
          f"{(calls[0] - begun) * 1e3:.2f} ms before the first launch's call, "
          f"{(ended - calls[-1]) * 1e3:.2f} ms after the last one's")
    print(prof.key_averages().table(sort_by="self_device_time_total", row_limit=25, max_name_column_width=55))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="1024,ptpc")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile-rows", type=int, default=0)
    parser.add_argument("--profile-runs", type=int, default=10)
    parser.add_argument("--kernel-profile", action="store_true")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return 0
    device = torch.device("cuda")
    wanted = args.shapes.split(",")
    shapes = [s for s in GPU_SHAPES if str(s[1]) in wanted or s[0] in wanted]
    repeat = args.repeat
    print(f"cuda (torch {torch.__version__}), R={repeat}, min of {args.rounds} interleaved rounds")
    print(f"{'shape':<24} {'bare us':>8} {'per launch us':>14} {'ratio':>7} {'once per run ms':>16} "
          f"{'= launches':>11}")
    with gc.session(db=None) as session:
        for quant, m, n, k in shapes:
            extra = {"fp8": __import__("torch_gemms").fp8_flavour()} if quant != "bf16" else {}
            case = session.case(f"costs_{quant}", m=m, n=n, k=k, quant=quant, device="cuda", **extra)
            launch = kernel_for(quant, case.inputs())
            out = torch.empty((m, n), dtype=torch.bfloat16, device=device)
            case.run(launch, repeat=3)

            def bare():
                for _ in range(repeat):
                    launch(out)

            best = {"bare": float("inf"), "short": float("inf"), "long": float("inf")}
            for _ in range(args.rounds):
                best["bare"] = min(best["bare"], timed(bare, device)[0])
                best["short"] = min(best["short"], timed(lambda: case.run(launch, repeat=repeat), device)[0])
                best["long"] = min(best["long"], timed(lambda: case.run(launch, repeat=3 * repeat), device)[0])
            bare_us = best["bare"] / repeat * 1e6
            per_launch = (best["long"] - best["short"]) / (2 * repeat) * 1e6
            once_ms = (best["short"] * 1e6 - repeat * per_launch) / 1e3
            print(f"{quant + ' ' + f'{m}x{n}x{k}':<24} {bare_us:8.1f} {per_launch:14.1f} {per_launch / bare_us:6.2f}x "
                  f"{once_ms:16.2f} {once_ms * 1e3 / bare_us:11.1f}", flush=True)
        if args.profile_rows:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.profile_runs):
                case.run(launch, repeat=repeat)
            profiler.disable()
            print(f"\ncase.run of {repeat} launches of {quant} {m}x{n}x{k} under cProfile, {args.profile_runs} runs:")
            print_profile(pstats.Stats(profiler), args.profile_rows, args.profile_runs)
        if args.kernel_profile:
            print_kernel_profile(case, launch, repeat, device)
    print("= launches: the once-per-run cost as that many bare launches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
