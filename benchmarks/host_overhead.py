"""Where the host's time goes in one checked launch, on a GPU: the pieces case.run calls, each
timed on the host alone (median microseconds of 200 calls, the GPU idle before each), then a
profile of case.run itself.

    python benchmarks/host_overhead.py [--profile-rows 30] [--shape 16384x7168x256] [--launches 50]

The GPU waits for the host between a launch's end and the check's first kernel (the check is
begun after the launch is waited for) and before each launch (the previous check's numbers
are read while the poison fill runs): these host times are what the harness adds on top of
the GPU's own work, and what two workers on two GPUs cannot overlap if the host is the
bottleneck.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "gpu"))

from pytest_gemmcheck.checking import rule, torch_backend as check  # noqa: E402
from pytest_gemmcheck.case.case import Case, CaseContext  # noqa: E402
from pytest_gemmcheck.config.table import Settings  # noqa: E402

CALLS = 200


def host_us(fn, calls: int = CALLS) -> float:
    """Median host microseconds of ``fn()``, with the GPU idle before each call."""
    samples = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(samples)


def triton_path(fn):
    """``fn()`` with gpu/launch.py's direct launches off."""
    from pytest_gemmcheck.checking.triton.runtime import RUNTIME

    RUNTIME.direct_launch = False
    try:
        return fn()
    finally:
        RUNTIME.direct_launch = True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile-rows", type=int, default=30)
    parser.add_argument("--shape", default="16384x7168x256", help="MxNxK of the bf16 case (default %(default)s)")
    parser.add_argument("--launches", type=int, default=50, help="launches of the profiled case.run")
    args = parser.parse_args(argv)
    m, n, k = (int(part) for part in args.shape.lower().split("x"))
    if not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return 0
    from pytest_gemmcheck.checking.triton import fused_check
    from pytest_gemmcheck.checking.triton.facts import reference_facts
    from pytest_gemmcheck.checking.graphs import capture
    from pytest_gemmcheck.checking.triton.run import Run

    case = Case(CaseContext(Settings(repeat=args.launches)), "matmul", m=m, n=n, k=k, quant="bf16")
    x = case.inputs()
    ref = case.judged_reference().tensor  # the harness's own: no copy to watch during case.run
    rowmax = check.row_max(ref)
    out = torch.empty((m, n), dtype=torch.bfloat16, device=ref.device)
    torch.matmul(x.a, x.b.t(), out=out)
    tol = rule.Tolerance()
    fused_check.start_check(out, ref, rowmax, tol, None, checksum=True).result()  # compiles

    run = Run(out, ref, rowmax, tol, None, [], fused_check.LaunchConfig(), checksum=True)
    run.enqueue(True)
    values = run.read(run.take_copy())
    event = torch.cuda.Event(enable_timing=True)
    rows = {
        "torch.cuda.synchronize (idle GPU)": host_us(torch.cuda.synchronize),
        "out.fill_(nan) enqueue": host_us(lambda: out.fill_(float("nan"))),
        "torch.matmul enqueue": host_us(lambda: torch.matmul(x.a, x.b.t(), out=out)),
        "cuda event record": host_us(event.record),
        "_Run(...) (plan, scratch)": host_us(
            lambda: Run(out, ref, rowmax, tol, None, [], fused_check.LaunchConfig(), checksum=True)),
        "_Run.enqueue (2 kernel launches)": host_us(lambda: run.enqueue(True)),
        "start_check (validate + _Run + enqueue)": host_us(
            lambda: fused_check.start_check(out, ref, rowmax, tol, None, checksum=True)),
        "start_check, Triton's own launch path": host_us(lambda: triton_path(
            lambda: fused_check.start_check(out, ref, rowmax, tol, None, checksum=True))),
        "start_check, replayed as a CUDA graph": host_us(
            lambda: fused_check.start_check(out, ref, rowmax, tol, None, checksum=True, replay=True)),
        "CUDA graph capture of a check (once per buffer)": host_us(
            lambda: capture(lambda: run.launch_kernels(True), out.device)),
        "reference facts, GPU time included (once per case)": host_us(
            lambda: (reference_facts(ref, rowmax.clone(), tol.floor), torch.cuda.synchronize())),
        "_Run.read (tolist, decode)": host_us(lambda: run.read(None)),
        "_Run.accuracy (numbers to stats)": host_us(lambda: run.accuracy(values)),
    }
    for name, value in rows.items():
        print(f"{name:<45} {value:8.1f} us")

    def launch(out_):
        torch.matmul(x.a, x.b.t(), out=out_)

    case.run(launch)  # warm
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    case.run(launch)
    profiler.disable()
    whole = (time.perf_counter() - started) * 1e3
    print(f"\ncase.run, {args.launches} launches of bf16 {m}x{n}x{k} under cProfile: {whole:.1f} ms "
          f"({whole / args.launches:.3f} ms per launch)")
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(args.profile_rows)
    pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(args.profile_rows)
    print(stream.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
