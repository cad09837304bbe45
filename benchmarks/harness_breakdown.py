"""Where a launch's time goes inside case.run, phase by phase, on the GPU.

    python benchmarks/harness_breakdown.py

For two shapes (the two-GPU benchmark's bf16 8192x8192x4096 and the overhead target's fp8
16384x7168x2048 through torch._scaled_mm), times each phase of a launch on the GPU alone (50
back to back between CUDA events: poison fill, the kernel, the check as case.run begins it),
then a whole case.run of 50 launches (wall clock), and prints each phase as a share of it; what
is left is the GPU waiting for the host (synchronisations, Python, kernel launches). Last, the
GPU's own time per kernel and copy over a whole case.run (torch.profiler), per launch: what the
harness itself costs the GPU, apart from the kernel under test.
"""

from __future__ import annotations

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
from pytest_gemmcheck.case.guards import ROW_WIDTH, GuardedBuffer, InputGuard, LaunchWatch  # noqa: E402
from pytest_gemmcheck.checking.backends import select_checker  # noqa: E402
from pytest_gemmcheck.config.table import Settings  # noqa: E402
from gpu_timing import device_seconds  # noqa: E402

LAUNCHES = 50


def timed(fn, repeat=LAUNCHES) -> float:
    """Median milliseconds of ``fn`` with a synchronisation before and after."""
    samples = []
    for _ in range(repeat):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def device_ms(fn, repeat=LAUNCHES) -> float:
    """Mean GPU milliseconds of ``fn`` launched ``repeat`` times back to back (CUDA events)."""
    return device_seconds(fn, repeat) * 1e3


def shape(name, quant, m, n, k, kernel_of):
    case = Case(CaseContext(Settings(repeat=LAUNCHES)), name, m=m, n=n, k=k, quant=quant)
    x = case.inputs()
    ref = case.judged_reference().tensor  # the harness's own: no copy to watch during case.run
    rowmax = check.row_max(ref)
    out = torch.empty((m, n), dtype=torch.bfloat16, device=ref.device)
    kernel = kernel_of(x)
    checker = select_checker("auto", out)
    kernel(out)
    tol = rule.Tolerance()
    fill_ms = device_ms(lambda: out.fill_(float("nan")))
    kernel(out)
    kernel_ms = device_ms(lambda: kernel(out))
    check_ms = device_ms(lambda: checker.prepare(out, ref, rowmax, tol, None, [], True).start())
    buffer = GuardedBuffer(m, n, torch.bfloat16, ref.device)
    watch = LaunchWatch(InputGuard(x), ref.device, fused=checker.name == "triton")
    row = torch.zeros(ROW_WIDTH, dtype=torch.int64, device=ref.device)
    guards_ms = device_ms(lambda: watch.queue(buffer, row))
    check_wall_ms = timed(lambda: checker.prepare(out, ref, rowmax, tol, None, [], True).result())
    case.run(kernel)  # warm: compiles, caches
    start = time.perf_counter()
    result = case.run(kernel)
    whole_ms = (time.perf_counter() - start) * 1000 / LAUNCHES
    rest = whole_ms - fill_ms - kernel_ms - check_ms - guards_ms
    print(f"{name} {quant} {m}x{n}x{k} ({checker.name} check), per launch, GPU time of each phase:")
    for label, value in (("poison fill", fill_ms), ("kernel", kernel_ms), ("check", check_ms),
                         ("guards", guards_ms), ("GPU waiting for host", rest)):
        print(f"   {label:<22} {value:8.3f} ms  {100 * value / whole_ms:5.1f}%")
    print(f"   (one check called alone and waited for: {check_wall_ms:.3f} ms wall)")
    print(f"   {'case.run per launch':<22} {whole_ms:8.3f} ms = {whole_ms / kernel_ms:.2f}x the kernel; "
          f"{len(result.bad_launches)} bad launches")
    device_work(case, kernel)


def device_work(case, kernel) -> None:
    """The GPU's time per kernel and copy over one case.run, per launch, largest first."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as profiler:
        case.run(kernel)
        torch.cuda.synchronize()
    rows = [(event.device_time_total, event.count, event.key) for event in profiler.key_averages()
            if event.device_time_total > 0]
    total = sum(time_us for time_us, _, _ in rows)
    print(f"   GPU time over case.run by kernel, per launch ({total / LAUNCHES / 1000:.3f} ms in all):")
    for time_us, count, key in sorted(rows, reverse=True)[:12]:
        print(f"      {time_us / LAUNCHES / 1000:8.3f} ms  {count:5d} calls  {key[:90]}")


def main() -> int:
    if not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return 0
    import torch_gemms

    shape("matmul", "bf16", 8192, 8192, 4096, lambda x: (lambda out: torch.matmul(x.a, x.b.t(), out=out)))
    shape("scaled_mm", "ptpc", 16384, 7168, 2048,
          lambda x: (lambda out, s=torch_gemms.ptpc_scales(x): torch_gemms.scaled_mm(x, s, out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
