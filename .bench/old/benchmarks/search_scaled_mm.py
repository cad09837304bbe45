"""Where block-wise ``torch._scaled_mm`` is wrong: gemmcheck.search over its shapes on the GPU.

On an H200 (torch 2.11, CUDA 13) block-wise ``torch._scaled_mm`` at 4096x7168 was wrong at K=256
and K=384 and clean at K=512 and K=1024 (examples/gpu/test_gpu_torch.py keeps K=256 as a known
failure). Two searches, each a gemmcheck.search with its own time budget, nothing recorded:

  k at 4096x7168   every K from 128 to 4096 in steps of 128 at the background's shape: the K region
  m, n, k          m and n from 128 to 8192, K from 128 to 4096, all in steps of 128: the smallest
                   failing configuration, and the passing values around it

and, to check the first search against, every K at 4096x7168 probed in turn (a sweep, not a
search: a search stops at the first failing configuration and walks only its boundary, so a
second failing run of K further up would show only here).

For each: the region found, the probes, their launches and seconds, the probe that first failed
(probes and seconds to find), and the smallest failing configuration with its boundary (probes
and seconds to shrink). ``--emulate`` runs the same searches on the CPU over a kernel that is
wrong where the H200 one was (K of two or three 128-blocks), with m and n scaled down by 8:
the script's own check where there is no GPU.

    python -m benchmarks.search_scaled_mm [--json FILE] [--budget SECONDS] [--examples N]
                                          [--repeat N] [--seed N] [--emulate]

Needs torch, hypothesis and (on the GPU) triton; no SQLAlchemy (db=None).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

import pytest_gemmcheck as gc
from gemmcheck_dev.results import print_header

KERNEL = "torch_scaled_mm_blockwise"
STEP = 128  # block-wise scales are per 128 elements of K (and 128 rows of B): shapes in whole blocks


def scaled_mm_launch(case, x):
    from examples.gpu import torch_gemms

    scales = torch_gemms.blockscale_scales(x)  # in the layouts _scaled_mm takes, made once per probe
    return lambda out: torch_gemms.scaled_mm(x, scales, out)


def emulated_launch(case, x):
    """The dequantized GEMM, wrong (row 0 doubled) where K spans two or three 128-blocks."""
    from pytest_gemmcheck.case.quant import quant_mode

    mode = quant_mode(x.quant)

    def launch(out):
        out.copy_(torch.matmul(mode.dequantize_a(x, slice(None)), mode.dequantize_b(x).t()))
        if -(-case.k // STEP) in (2, 3):
            out[0] = out[0] * 2 + 1

    return launch


def searches(emulate: bool) -> list[tuple[str, dict]]:
    scale = 8 if emulate else 1
    return [
        ("k at 4096x7168", dict(m=4096 // scale, n=7168 // scale, k=(STEP, 4096, STEP))),
        ("m, n, k", dict(m=(STEP, 8192 // scale, STEP), n=(STEP, 8192 // scale, STEP), k=(STEP, 4096, STEP))),
    ]


def sweep(make_launch, axes: dict, *, fp8: str, device, repeat: int) -> dict:
    """Every K of ``axes`` at its fixed m and n, each a probe as the search runs it."""
    failing, passing = [], []
    started = time.monotonic()
    with gc.session(db=None, stop_on_bad=True) as session:
        lo, hi, step = axes["k"]
        for k in range(lo, hi + 1, step):
            case = session.case(KERNEL, m=axes["m"], n=axes["n"], k=k, quant="blockscale", fp8=fp8, device=device)
            try:
                launch = make_launch(case, case.inputs())
            except Exception as exc:  # noqa: BLE001 - a failing K, as in the search
                failing.append(k)
                print(f"k={k}: make_launch raised {type(exc).__name__}: {exc}")
                continue
            result = case.run(launch, repeat=repeat)
            (failing if result.bad_launches else passing).append(k)
    seconds = time.monotonic() - started
    print(
        f"\n=== sweep of every K at {axes['m']}x{axes['n']}: failing {failing or 'none'}, {len(passing)} passing, "
        f"{seconds:.1f} s"
    )
    return {
        "name": f"sweep k at {axes['m']}x{axes['n']}",
        "failing_k": failing,
        "passing_k": passing,
        "seconds": seconds,
    }


def first_failing(found) -> dict | None:
    """The probe that first failed: how many probes, and seconds of probing, it took to find."""
    seconds = 0.0
    for index, probe in enumerate(found.probes, 1):
        seconds += probe.seconds
        if probe.failing:
            return {"probe": index, "seconds": seconds, "config": probe.config}
    return None


def report(name: str, found) -> dict:
    print(f"\n=== {name}")
    print(found.summary())
    print(f"{'m':>6} {'n':>6} {'k':>6} {'phase':<10} {'verdict':<11} {'bad/launches':>12} {'seconds':>8}")
    for probe in found.probes:
        c = probe.config
        print(
            f"{c['m']:>6} {c['n']:>6} {c['k']:>6} {probe.phase:<10} {probe.verdict:<11} "
            f"{f'{probe.bad_launch_count}/{probe.launch_count}':>12} {probe.seconds:>8.3f}"
        )
    failing_k = sorted({c["k"] for c in found.failing})
    passing_k = sorted({p.config["k"] for p in found.probes if not p.failing})
    first = first_failing(found)
    if first:
        print(
            f"first failing probe: #{first['probe']} after {first['seconds']:.1f} s of probing; smallest after "
            f"{len(found.probes)} probes, {found.seconds:.1f} s in all"
        )
    print(f"K failing: {failing_k or 'none'}; K passing: {passing_k or 'none'}")
    return {
        "name": name,
        "probes": len(found.probes),
        "seconds": found.seconds,
        "first_failing": first,
        "minimal": found.minimal,
        "case": str(found),
        "boundary": found.boundary,
        "failing_k": failing_k,
        "passing_k": passing_k,
        "result": found.to_dict(),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures and every probe's result here")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds per search (default 120)")
    parser.add_argument("--examples", type=int, default=100, help="configurations each search draws at most")
    parser.add_argument("--repeat", type=int, default=4, help="launches per probe (it stops at its first bad one)")
    parser.add_argument("--seed", type=int, default=0, help="the searches' seed")
    parser.add_argument("--emulate", action="store_true", help="a CPU kernel wrong where the H200's was")
    args = parser.parse_args(argv)
    print_header("benchmarks.search_scaled_mm", argv)

    if args.emulate:
        make_launch, device, fp8 = emulated_launch, "cpu", "e4m3fn"
        stack = {"device": "cpu (emulated kernel)", "torch": torch.__version__}
    else:
        if not torch.cuda.is_available():
            print("needs a CUDA GPU (or --emulate)", file=sys.stderr)
            return 2
        from examples.gpu import torch_gemms

        unavailable = torch_gemms.scaled_mm_unavailable("blockscale")
        if unavailable:
            print(unavailable, file=sys.stderr)
            return 2
        make_launch, device, fp8 = scaled_mm_launch, None, torch_gemms.fp8_flavour()
        stack = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda}
    print(
        f"gemmcheck.search over block-wise torch._scaled_mm on {stack}: budget {args.budget:g} s per search, "
        f"{args.examples} examples, {args.repeat} launches per probe, seed {args.seed}"
    )
    figures = []
    started = time.monotonic()
    for name, axes in searches(args.emulate):
        found = gc.search(
            KERNEL,
            make_launch,
            **axes,
            quant="blockscale",
            fp8=fp8,
            device=device,
            db=None,
            repeat=args.repeat,
            examples=args.examples,
            budget=args.budget,
            seed=args.seed,
        )
        figures.append(report(name, found))
    fixed = searches(args.emulate)[0][1]
    figures.append(sweep(make_launch, fixed, fp8=fp8, device=device, repeat=args.repeat))
    print(f"\ndone in {time.monotonic() - started:.1f} s")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "stack": stack,
                    "budget": args.budget,
                    "examples": args.examples,
                    "repeat": args.repeat,
                    "seed": args.seed,
                    "searches": figures,
                },
                indent=1,
                default=str,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
