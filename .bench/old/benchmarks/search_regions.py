"""gemmcheck.search's cost on the CPU kernels of its tests (gemmcheck_dev/search_region_kernels.py),
each wrong on one region: probes and seconds to the first failing probe (found), and in all
(shrunk, with the boundary walked), over a few seeds.

    python -m benchmarks.search_regions [--seeds N]

Single-threaded torch (the probes are small GEMMs); nothing recorded (db=None).
"""

from __future__ import annotations

import argparse
import sys

import torch

import pytest_gemmcheck as gc
from gemmcheck_dev import search_region_kernels as regions
from gemmcheck_dev.results import print_header

REGIONS = [  # (region, kernel name, make_launch, axes)
    (
        "m % 128 == 64",
        "tail",
        regions.tail_of_half_a_tile,
        dict(m=(128, 1024, 64), n=(64, 256, 64), k=(128, 512, 128), tile="128x128", repeat=4),
    ),
    (
        "K < 3 blocks, 1 launch in 3",
        "short_k",
        regions.short_k,
        dict(m=(64, 256, 64), n=(64, 256, 64), k=(64, 1024, 64), repeat=4),
    ),
    (
        "split=4",
        "split",
        regions.split_four,
        dict(
            m=(64, 512, 64),
            n=(64, 256, 64),
            k=(128, 512, 128),
            params={"split": [1, 2, 4], "swizzle": [False, True]},
            repeat=2,
        ),
    ),
    ("always right", "clean", regions.correct, dict(m=(64, 512, 64), n=(64, 512, 64), k=(128, 512, 128), repeat=2)),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    print_header("benchmarks.search_regions", argv)
    torch.set_num_threads(1)
    print(f"{'region':<30} {'seed':>4} {'found at':>9} {'s':>6} {'probes':>7} {'launches':>8} {'s':>6}  smallest")
    for name, kernel, make_launch, axes in REGIONS:
        for seed in range(args.seeds):
            found = gc.search(kernel, make_launch, db=None, seed=seed, **axes)
            elapsed, first = 0.0, None
            for index, probe in enumerate(found.probes, 1):
                elapsed += probe.seconds
                if probe.failing:
                    first = (index, elapsed)
                    break
            where = f"#{first[0]:<3} {first[1]:>6.2f}" if first else f"{'-':>4} {'-':>6}"
            print(
                f"{name:<30} {seed:>4} {where:>16} {len(found.probes):>7} {found.launch_count:>8} "
                f"{found.seconds:>6.2f}  {found.case_line() or 'none'}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
