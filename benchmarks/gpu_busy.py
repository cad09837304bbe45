"""How busy a run keeps the GPU: a checked run of 100 launches beside 100 bare launches, on a GPU.

    python benchmarks/gpu_busy.py [SHAPE] [--graphs]

SHAPE is one of overhead_shapes.py's GPU shapes (ptpc, or 256 ... 8192 for bf16; ptpc by
default). Prints the minimum of 5 interleaved rounds of each, then, from torch.profiler over one
more of each, the GPU's time from its first op to its last, how much of it was busy, the idle
gaps (the largest, and the op each one came before), and where the first and last GEMM fell.
``--graphs`` has a launch's work graphed whatever the launch's length (case/runner.py's
GRAPHS_BELOW_S raised past it). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "gpu"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import pytest_gemmcheck as gc  # noqa: E402
from overhead_shapes import GPU_SHAPES, kernel_for  # noqa: E402


def timed(work) -> float:
    torch.cuda.synchronize()
    begun = time.perf_counter()
    work()
    torch.cuda.synchronize()
    return time.perf_counter() - begun


def gpu_timeline(work) -> None:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        wall = timed(work)
    spans = sorted((event.start_ns(), event.start_ns() + event.duration_ns(), event.name())
                   for event in prof.profiler.kineto_results.events()
                   if event.device_type() == torch.autograd.DeviceType.CUDA)
    busy, gaps, reached = 0, [], spans[0][0]
    for start, end, name in spans:
        if start > reached:
            gaps.append((start - reached, name))
        busy += max(0, end - max(start, reached))
        reached = max(reached, end)
    gaps.sort(reverse=True)
    largest = ", ".join(f"{gap / 1e3:.0f} us before {name[:30]}" for gap, name in gaps[:6])
    print(f"   wall {wall * 1e3:.2f} ms; GPU first op to last {(spans[-1][1] - spans[0][0]) / 1e6:.2f} ms, busy "
          f"{busy / 1e6:.2f} ms, idle {sum(gap for gap, _ in gaps) / 1e6:.2f} ms in {len(gaps)} gaps; largest: {largest}")
    gemms = [span for span in spans if span[2].startswith(("nvjet", "sm90", "cutlass")) or "gemm" in span[2].lower()]
    if gemms:
        print(f"   first GEMM {(gemms[0][0] - spans[0][0]) / 1e6:.2f} ms after the first op; the last ends "
              f"{(spans[-1][1] - gemms[-1][1]) / 1e6:.2f} ms before the last op's end")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", nargs="?", default="ptpc")
    parser.add_argument("--graphs", action="store_true")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return 0
    if args.graphs:
        from pytest_gemmcheck.case import runner

        runner.GRAPHS_BELOW_S = float("inf")
    quant, m, n, k = next(s for s in GPU_SHAPES if s[0] == args.shape or str(s[1]) == args.shape)
    with gc.session(db=None) as session:
        extra = {"fp8": __import__("torch_gemms").fp8_flavour()} if quant != "bf16" else {}
        case = session.case(f"busy_{quant}", m=m, n=n, k=k, quant=quant, device="cuda", **extra)
        launch = kernel_for(quant, case.inputs())
        out = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
        works = {"bare": lambda: [launch(out) for _ in range(100)], "checked": lambda: case.run(launch, repeat=100)}
        for _ in range(3):
            works["checked"]()
        best = {name: float("inf") for name in works}
        for _ in range(5):
            for name, work in works.items():
                best[name] = min(best[name], timed(work))
        print(f"{quant} {m}x{n}x{k}{' (graphs)' if args.graphs else ''}: 100 bare launches {best['bare'] * 1e3:.2f} ms, "
              f"a checked run of 100 {best['checked'] * 1e3:.2f} ms: {best['checked'] / best['bare']:.3f}x")
        for name, work in works.items():
            print(f" {name}, under torch.profiler:")
            gpu_timeline(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
