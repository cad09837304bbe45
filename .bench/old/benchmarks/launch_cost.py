"""What a checked launch costs against a bare one, seen eight ways.

    python -m benchmarks.launch_cost VIEW [options]        (VIEW --help lists its options)

Views:

  shapes      case.run(launch, repeat=R) against R bare launches, shape by shape: wall time, ratio,
              and the host's CPU time per launch (on the CPU too: --device cpu)
  ratio       --gemmcheck-repeat=100 on ptpc 16384x7168x2048 against 100 bare launches plus one
              reference, repeats checked by checksum (the default) and every launch in full
  breakdown   a launch's phases on the GPU (fill, kernel, check, guards) against case.run's time,
              and the GPU's time per kernel over a whole case.run
  host        the host's time in each piece case.run calls, and a profile of case.run
  floor       the fewest host calls a checked launch could make, against a bare launch
  loop        case.run's launch loop on the host, step by step, and what each run pays once
  run-costs   a run's cost split into once per run and per launch (with cProfile or
              torch.profiler on request)
  gpu-busy    how busy a checked run keeps the GPU against bare launches (torch.profiler)

Every view but shapes needs a GPU; without one it says so and ends with status 0. Benchmarks,
not tests: nothing is asserted about time. benchmarks/README.md gives each view's latest log.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

import pytest_gemmcheck as gc
from gemmcheck_dev.cuda_timing import device_seconds
from gemmcheck_dev.results import merge_json, print_header

GPU_SHAPES = [("bf16", s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192)] + [("ptpc", 16384, 7168, 2048)]
CPU_SHAPES = [("bf16", 64, 64, 64), ("bf16", 256, 256, 256)]


# --- shared: shapes, kernels and timers ----------------------------------------------------


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def torch_gemms():
    from examples.gpu import torch_gemms as module

    return module


def kernel_for(quant: str, x):
    """The bare launch: torch.matmul for bf16, torch._scaled_mm for ptpc."""
    if quant == "bf16":
        a, bt = x.a, x.b.t()
        return lambda out: torch.matmul(a, bt, out=out)
    gemms = torch_gemms()
    scales = gemms.ptpc_scales(x)
    return lambda out: gemms.scaled_mm(x, scales, out)


def shape_case(session, name: str, quant: str, m: int, n: int, k: int, **kwargs):
    """A case of the session at one of GPU_SHAPES or CPU_SHAPES, in this GPU's fp8 flavour."""
    extra = {"fp8": torch_gemms().fp8_flavour()} if quant != "bf16" else {}
    return session.case(name, m=m, n=n, k=k, quant=quant, **kwargs, **extra)


def pick_shapes(shapes: list[tuple], wanted: str) -> list[tuple]:
    """The shapes named by ``wanted``, e.g. '256,1024' or 'ptpc' (a size or a quant mode each)."""
    words = wanted.split(",")
    return [shape for shape in shapes if str(shape[1]) in words or shape[0] in words]


def timed(fn, device) -> tuple[float, float]:
    """(wall seconds, this thread's CPU seconds) of fn(), the device idle before and after."""
    synchronize(device)
    wall, cpu = time.perf_counter(), time.thread_time()
    fn()
    synchronize(device)
    return time.perf_counter() - wall, time.thread_time() - cpu


def median_seconds(fn, calls: int, *, with_wait: bool) -> float:
    """Median seconds of ``fn()`` over ``calls`` calls, the GPU idle before each; ``with_wait``
    counts the wait for the work it queued too, else the host's time alone."""
    samples = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if with_wait:
            torch.cuda.synchronize()
        samples.append(time.perf_counter() - start)
    torch.cuda.synchronize()
    return statistics.median(samples)


# --- shapes ---------------------------------------------------------------------------------


def shapes_arguments(parser) -> None:
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=None, help="default 3 on a GPU, 7 on the CPU")
    parser.add_argument("--shapes", default="", help="e.g. 256,1024 or ptpc: only these")


def shapes_view(args) -> int:
    """For each shape, ``case.run(launch, repeat=R)`` through the plain API (``gc.session(db=None)``:
    nothing recorded) against R bare launches of the same kernel into one output, the two timed in
    turn in each round (a shared machine drifts), the minimum of the rounds taken for each. The
    case's inputs and reference are made before the clock starts (a warm-up run), as a test's are
    by its first case. Per launch: bare, checked, their ratio, and the host's CPU time of each
    (the thread's CPU clock: on a GPU, what the host spends queueing, polling included; on the
    CPU, everything), with the spread of the rounds. GPU: torch.matmul bf16 at 256^3 ... 8192^3
    and ptpc torch._scaled_mm at 16384x7168x2048. CPU (one thread): torch.matmul bf16 at 64^3
    and 256^3."""
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
    rounds = args.rounds or (3 if device.type == "cuda" else 7)
    shapes = GPU_SHAPES if device.type == "cuda" else CPU_SHAPES
    if args.shapes:
        shapes = pick_shapes(shapes, args.shapes)
    print(
        f"{device} (torch {torch.__version__}, {torch.get_num_threads()} threads), repeat={args.repeat}, "
        f"min of {rounds} interleaved rounds; per launch:"
    )
    print(
        f"{'shape':<24} {'bare us':>9} {'checked us':>11} {'ratio':>7} {'host us bare':>13} {'host us checked':>16}"
        f" {'spread':>12}"
    )
    with gc.session(db=None) as session:
        for quant, m, n, k in shapes:
            row = one_shape(session, quant, m, n, k, device, args.repeat, rounds)
            print(
                f"{quant + ' ' + f'{m}x{n}x{k}':<24} {row['bare_us']:9.1f} {row['checked_us']:11.1f} "
                f"{row['ratio']:6.2f}x {row['bare_host_us']:13.1f} {row['checked_host_us']:16.1f} "
                f"{row['spread_bare']:5.2f}/{row['spread_checked']:4.2f}",
                flush=True,
            )
    print("spread: slowest / fastest round, bare / checked")
    return 0


def one_shape(session, quant, m, n, k, device, repeat, rounds) -> dict:
    case = shape_case(session, f"overhead_{quant}", quant, m, n, k, device=str(device))
    x = case.inputs()
    launch = kernel_for(quant, x)
    out = torch.empty((m, n), dtype=torch.bfloat16, device=device)
    case.run(launch, repeat=3)  # compiles, caches the reference, keeps the ring
    for _ in range(3):
        launch(out)

    def bare():
        for _ in range(repeat):
            launch(out)

    samples = {"bare": [], "checked": []}
    for _ in range(rounds):
        samples["bare"].append(timed(bare, device))
        samples["checked"].append(timed(lambda: case.run(launch, repeat=repeat), device))
    best = {
        side: (min(w for w, _ in values) / repeat, min(c for _, c in values) / repeat)
        for side, values in samples.items()
    }
    spread = {side: max(w for w, _ in values) / min(w for w, _ in values) for side, values in samples.items()}
    return {
        "quant": quant,
        "shape": [m, n, k],
        "repeat": repeat,
        "rounds": rounds,
        "bare_us": best["bare"][0] * 1e6,
        "checked_us": best["checked"][0] * 1e6,
        "ratio": best["checked"][0] / best["bare"][0],
        "bare_host_us": best["bare"][1] * 1e6,
        "checked_host_us": best["checked"][1] * 1e6,
        "spread_bare": spread["bare"],
        "spread_checked": spread["checked"],
    }


# --- ratio ----------------------------------------------------------------------------------


def ratio_arguments(parser) -> None:
    parser.add_argument("--json", type=Path, help="merge the numbers into this JSON file, under 'overhead'")


def ratio_view(args) -> int:
    """Harness time for 100 checked launches against 100 bare launches plus one reference:
    torch._scaled_mm ptpc at 16384x7168x2048 (a Triton fp8 GEMM where _scaled_mm cannot), the
    repeats checked by checksum and every launch in full, interleaved round by round."""
    started = time.perf_counter()
    report = harness_ratio()
    if args.json:
        report["part_seconds"] = round(time.perf_counter() - started, 2)
        merge_json(args.json, "overhead", report)
    return 0


def ratio_launch():
    """(kernel name, make_launch(x)) of the ptpc GEMM this GPU has."""
    gemms = torch_gemms()
    if gemms.scaled_mm_unavailable("ptpc") is None:

        def make_launch(x):
            scales = gemms.ptpc_scales(x)
            return lambda out: gemms.scaled_mm(x, scales, out)

        return "torch_scaled_mm", make_launch
    from examples.gpu import triton_fp8_gemm

    def make_triton_launch(x):
        return lambda out: triton_fp8_gemm.fp8_ptpc_gemm(x.a, x.b, x.a_scale, x.b_scale, out)

    return "triton_fp8_ptpc_gemm", make_triton_launch


def harness_ratio() -> dict:
    from pytest_gemmcheck.case.case import Case, CaseContext
    from pytest_gemmcheck.case.reference import compute_reference
    from pytest_gemmcheck.config.table import Settings

    device = torch.device("cuda", torch.cuda.current_device())
    m, n, k, repeat = 16384, 7168, 2048, 100
    kernel_name, make_launch = ratio_launch()

    def new_case(repeat_count, record, repeat_check="checksum"):
        return Case(
            CaseContext(Settings(repeat=repeat_count, repeat_check=repeat_check), record=record),
            kernel_name,
            m=m,
            n=n,
            k=k,
            quant="ptpc",
            fp8=torch_gemms().fp8_flavour(),
            device=device,
        )

    warm = new_case(3, lambda result: None)  # compiles whatever the check and kernel compile
    x = warm.inputs()
    launch = make_launch(x)
    warm.run(launch)
    new_case(3, lambda result: None, "full").run(launch)

    out = torch.empty((m, n), dtype=torch.bfloat16, device=device)
    for _ in range(5):
        launch(out)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        launch(out)
    torch.cuda.synchronize()
    bare_s = time.perf_counter() - start

    start = time.perf_counter()
    for _ in range(repeat):
        launch(out)
        torch.cuda.synchronize()
    bare_synced_s = time.perf_counter() - start

    start = time.perf_counter()
    compute_reference(x)
    torch.cuda.synchronize()
    reference_s = time.perf_counter() - start

    # both ways of checking a repeated launch, interleaved round by round (a shared GPU drifts)
    times: dict[str, list[float]] = {"checksum": [], "full": []}
    records: dict[str, list[dict]] = {"checksum": [], "full": []}
    for _ in range(3):
        for how in ("checksum", "full"):
            checked = new_case(repeat, lambda result, how=how: records[how].append(result.to_dict()), how)
            x2 = checked.inputs()  # made before the clock starts, as in a test
            launch2 = make_launch(x2)
            torch.cuda.synchronize()
            start = time.perf_counter()
            checked.run(launch2)
            torch.cuda.synchronize()
            times[how].append(time.perf_counter() - start)
    harness = {how: statistics.median(seconds) for how, seconds in times.items()}
    ratios = {how: seconds / (bare_s + reference_s) for how, seconds in harness.items()}

    def numbers(result):
        return [
            {key: value for key, value in launch.items() if key not in ("elapsed_s", "pid", "index")}
            for launch in result["launches"]
        ]

    same_numbers = all(numbers(a) == numbers(b) for a, b in zip(records["checksum"], records["full"]))
    element = 2  # bf16 out
    repeat_bytes = 2 * m * n * element  # the repeat pass: one read of out, one write of the next buffer
    full_bytes = 3 * m * n * element  # the full check's read of out and the bf16 reference, and the fill
    report = {
        "kernel": kernel_name,
        "shape": [m, n, k],
        "repeat": repeat,
        "bare_s": round(bare_s, 4),
        "bare_synced_s": round(bare_synced_s, 4),
        "reference_s": round(reference_s, 4),
        "harness_s": round(harness["checksum"], 4),
        "ratio": round(ratios["checksum"], 3),
        "harness_full_s": round(harness["full"], 4),
        "ratio_full": round(ratios["full"], 3),
        "ms_per_launch_bare": round(1000 * bare_s / repeat, 4),
        "ms_per_launch_harness": round(1000 * (harness["checksum"] - reference_s) / repeat, 4),
        "ms_per_launch_harness_full": round(1000 * (harness["full"] - reference_s) / repeat, 4),
        "bytes_per_launch_checked": repeat_bytes,
        "bytes_per_launch_full": full_bytes,
        "bad_launches": sum(1 for launch in records["checksum"][-1]["launches"] if launch["kinds"]),
        "same_numbers_both_ways": same_numbers,
        "target_ratio": 1.35,
    }
    print(
        f"{kernel_name} ptpc {m}x{n}x{k}: bare {repeat} launches {bare_s * 1000:.1f} ms "
        f"({report['ms_per_launch_bare']} ms each; {bare_synced_s * 1000:.1f} ms synchronising each), "
        f"reference {reference_s * 1000:.1f} ms; medians of 3 interleaved rounds"
    )
    for how, words in (("checksum", "repeats by checksum (default)"), ("full", "every launch in full")):
        moved = repeat_bytes if how == "checksum" else full_bytes
        print(
            f"  harness --gemmcheck-repeat={repeat}, {words:30}: {harness[how] * 1000:.1f} ms -> ratio "
            f"{ratios[how]:.2f}; the check and fill move {moved / 1e6:.0f} MB per launch"
        )
    print(
        f"  checksum / full harness: {harness['checksum'] / harness['full']:.2f}; target ratio <= 1.35 for the "
        f"default; {report['bad_launches']} bad launches; the same numbers both ways, launch by launch: "
        f"{same_numbers}"
    )
    return report


# --- breakdown ------------------------------------------------------------------------------

BREAKDOWN_LAUNCHES = 50


def breakdown_view(args) -> int:
    """For two shapes (the two-GPU benchmark's bf16 8192x8192x4096 and the overhead target's fp8
    16384x7168x2048 through torch._scaled_mm), each phase of a launch timed on the GPU alone (50
    back to back between CUDA events: poison fill, the kernel, the check as case.run begins it,
    the guards), then a whole case.run of 50 launches (wall clock), each phase as a share of it;
    what is left is the GPU waiting for the host (synchronisations, Python, kernel launches).
    Last, the GPU's own time per kernel and copy over a whole case.run (torch.profiler), per
    launch: what the harness itself costs the GPU, apart from the kernel under test."""
    gemms = torch_gemms()
    breakdown_shape("matmul", "bf16", 8192, 8192, 4096, lambda x: lambda out: torch.matmul(x.a, x.b.t(), out=out))
    breakdown_shape(
        "scaled_mm", "ptpc", 16384, 7168, 2048, lambda x: lambda out, s=gemms.ptpc_scales(x): gemms.scaled_mm(x, s, out)
    )
    return 0


def device_ms(fn, repeat=BREAKDOWN_LAUNCHES) -> float:
    """Mean GPU milliseconds of ``fn`` launched ``repeat`` times back to back (CUDA events)."""
    return device_seconds(fn, repeat) * 1e3


def breakdown_shape(name, quant, m, n, k, kernel_of) -> None:
    from pytest_gemmcheck.case.case import Case, CaseContext
    from pytest_gemmcheck.checking import rule
    from pytest_gemmcheck.checking import torch_backend as check
    from pytest_gemmcheck.checking.backends import select_checker
    from pytest_gemmcheck.config.table import Settings
    from pytest_gemmcheck.launch.guards import ROW_WIDTH, GuardedBuffer, InputGuard, LaunchWatch

    case = Case(CaseContext(Settings(repeat=BREAKDOWN_LAUNCHES)), name, m=m, n=n, k=k, quant=quant)
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
    check_wall_ms = 1e3 * median_seconds(
        lambda: checker.prepare(out, ref, rowmax, tol, None, [], True).result(), BREAKDOWN_LAUNCHES, with_wait=True
    )
    case.run(kernel)  # warm: compiles, caches
    start = time.perf_counter()
    result = case.run(kernel)
    whole_ms = (time.perf_counter() - start) * 1000 / BREAKDOWN_LAUNCHES
    rest = whole_ms - fill_ms - kernel_ms - check_ms - guards_ms
    print(f"{name} {quant} {m}x{n}x{k} ({checker.name} check), per launch, GPU time of each phase:")
    for label, value in (
        ("poison fill", fill_ms),
        ("kernel", kernel_ms),
        ("check", check_ms),
        ("guards", guards_ms),
        ("GPU waiting for host", rest),
    ):
        print(f"   {label:<22} {value:8.3f} ms  {100 * value / whole_ms:5.1f}%")
    print(f"   (one check called alone and waited for: {check_wall_ms:.3f} ms wall)")
    print(
        f"   {'case.run per launch':<22} {whole_ms:8.3f} ms = {whole_ms / kernel_ms:.2f}x the kernel; "
        f"{len(result.bad_launches)} bad launches"
    )
    device_work(case, kernel)


def device_work(case, kernel) -> None:
    """The GPU's time per kernel and copy over one case.run, per launch, largest first."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as profiler:
        case.run(kernel)
        torch.cuda.synchronize()
    rows = [
        (event.device_time_total, event.count, event.key)
        for event in profiler.key_averages()
        if event.device_time_total > 0
    ]
    total = sum(time_us for time_us, _, _ in rows)
    print(f"   GPU time over case.run by kernel, per launch ({total / BREAKDOWN_LAUNCHES / 1000:.3f} ms in all):")
    for time_us, count, key in sorted(rows, reverse=True)[:12]:
        print(f"      {time_us / BREAKDOWN_LAUNCHES / 1000:8.3f} ms  {count:5d} calls  {key[:90]}")


# --- host -----------------------------------------------------------------------------------

HOST_CALLS = 200


def host_arguments(parser) -> None:
    parser.add_argument("--profile-rows", type=int, default=30)
    parser.add_argument("--shape", default="16384x7168x256", help="MxNxK of the bf16 case (default %(default)s)")
    parser.add_argument("--launches", type=int, default=50, help="launches of the profiled case.run")


def host_us(fn) -> float:
    """Median host microseconds of ``fn()`` over 200 calls, with the GPU idle before each."""
    return 1e6 * median_seconds(fn, HOST_CALLS, with_wait=False)


def triton_path(fn):
    """``fn()`` with the check's direct launches off (Triton's own launch path)."""
    from pytest_gemmcheck.checking.triton.runtime import RUNTIME

    RUNTIME.direct_launch = False
    try:
        return fn()
    finally:
        RUNTIME.direct_launch = True


def host_view(args) -> int:
    """The pieces case.run calls, each timed on the host alone (median microseconds of 200 calls,
    the GPU idle before each), then a profile of case.run itself. The GPU waits for the host
    between a launch's end and the check's first kernel and before each launch: these host times
    are what the harness adds on top of the GPU's own work, and what two workers on two GPUs
    cannot overlap if the host is the bottleneck."""
    from pytest_gemmcheck.case.case import Case, CaseContext
    from pytest_gemmcheck.checking import rule
    from pytest_gemmcheck.checking import torch_backend as check
    from pytest_gemmcheck.checking.graphs import capture
    from pytest_gemmcheck.checking.triton import fused_check
    from pytest_gemmcheck.checking.triton.facts import reference_facts
    from pytest_gemmcheck.checking.triton.output_check import OutputCheck
    from pytest_gemmcheck.config.table import Settings

    m, n, k = (int(part) for part in args.shape.lower().split("x"))
    case = Case(CaseContext(Settings(repeat=args.launches)), "matmul", m=m, n=n, k=k, quant="bf16")
    x = case.inputs()
    ref = case.judged_reference().tensor  # the harness's own: no copy to watch during case.run
    rowmax = check.row_max(ref)
    out = torch.empty((m, n), dtype=torch.bfloat16, device=ref.device)
    torch.matmul(x.a, x.b.t(), out=out)
    tol = rule.Tolerance()
    fused_check.start_check(out, ref, rowmax, tol, None, checksum=True).result()  # compiles

    run = OutputCheck(out, ref, rowmax, tol, None, [], fused_check.LaunchConfig(), checksum=True)
    run.enqueue(True)
    values = run.read(run.take_copy())
    event = torch.cuda.Event(enable_timing=True)
    rows = {
        "torch.cuda.synchronize (idle GPU)": host_us(torch.cuda.synchronize),
        "out.fill_(nan) enqueue": host_us(lambda: out.fill_(float("nan"))),
        "torch.matmul enqueue": host_us(lambda: torch.matmul(x.a, x.b.t(), out=out)),
        "cuda event record": host_us(event.record),
        "OutputCheck(...) (plan, scratch)": host_us(
            lambda: OutputCheck(out, ref, rowmax, tol, None, [], fused_check.LaunchConfig(), checksum=True)
        ),
        "OutputCheck.enqueue (2 kernel launches)": host_us(lambda: run.enqueue(True)),
        "start_check (validate + OutputCheck + enqueue)": host_us(
            lambda: fused_check.start_check(out, ref, rowmax, tol, None, checksum=True)
        ),
        "start_check, Triton's own launch path": host_us(
            lambda: triton_path(lambda: fused_check.start_check(out, ref, rowmax, tol, None, checksum=True))
        ),
        "start_check, replayed as a CUDA graph": host_us(
            lambda: fused_check.start_check(out, ref, rowmax, tol, None, checksum=True, replay=True)
        ),
        "CUDA graph capture of a check (once per buffer)": host_us(
            lambda: capture(lambda: run.launch_kernels(True), out.device)
        ),
        "reference facts, GPU time included (once per case)": host_us(
            lambda: (reference_facts(ref, rowmax.clone(), tol.floor), torch.cuda.synchronize())
        ),
        "OutputCheck.read (tolist, decode)": host_us(lambda: run.read(None)),
        "OutputCheck.accuracy (numbers to stats)": host_us(lambda: run.accuracy(values)),
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
    print(
        f"\ncase.run, {args.launches} launches of bf16 {m}x{n}x{k} under cProfile: {whole:.1f} ms "
        f"({whole / args.launches:.3f} ms per launch)"
    )
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(args.profile_rows)
    pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(args.profile_rows)
    print(stream.getvalue())
    return 0


# --- floor ----------------------------------------------------------------------------------


def floor_arguments(parser) -> None:
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)


def guard_kernel(a, b, outs, rows):
    """The harness's guard kernel (checking/triton/guard_pass.py: both inputs' checksums, the
    canary count) over the ring, launched as the harness launches it: one compiled Triton
    kernel per call, without Triton's own launch path."""
    from pytest_gemmcheck.checking.checksum import word_view
    from pytest_gemmcheck.checking.triton.guard_pass import RESULT_WIDTH, queue_guards

    words = [word_view(a), word_view(b)]
    blocks = [out.view(-1).view(torch.int16) for out in outs]

    def guards(i: int) -> None:
        queue_guards(
            words, blocks[i % len(blocks)], 1024, blocks[0].numel() - 1024, 0, rows[i % len(rows), :RESULT_WIDTH]
        )

    for i in range(len(outs)):
        guards(i)  # compiled
    return guards


def capture_graph(fn, stream) -> torch.cuda.CUDAGraph:
    """``fn``'s work as one CUDA graph, captured on a side stream after a warm call."""
    fn()  # compiled and warm outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(stream)
    with torch.cuda.stream(side):
        graph.capture_begin()
        fn()
        graph.capture_end()
    stream.wait_stream(side)
    torch.cuda.synchronize()
    return graph


def floor_view(args) -> int:
    """Each arm queues ``--launches`` bf16 torch.matmul launches of size^3 into a ring of 8
    outputs and waits once at the end; per launch it adds, in turn: one CUDA event record; the
    harness's own work (the next output's NaN fill, a checksum of this one into a device row) op
    by op; that work replayed as one CUDA graph; the graph and an event; and last the launch and
    the work captured together in one graph per ring position (what a kernel that can be
    captured would cost); then a launch with the two timing events around it that the harness
    records; and the harness's guard kernel alone after the launch, launched directly or as a
    one-kernel graph (replayed through torch's wrapper or without it); the two timing events
    recorded without torch's wrapper; and the shape of case.run's batches: the launch between its
    two timing events, the guard kernel's graph, and once per batch of 8 a graph that poisons the
    next batch's outputs, zeroes their rows and copies this batch's rows to pinned memory. Host
    microseconds per launch (the thread's CPU clock, min of the rounds) and the ratio to the bare
    arm."""
    arms = floor_arms(args.size)
    best = {name: float("inf") for name in arms}
    for _ in range(args.rounds):
        for name, arm in arms.items():
            torch.cuda.synchronize()
            began = time.thread_time()
            for i in range(args.launches):
                arm(i)
            spent = time.thread_time() - began
            torch.cuda.synchronize()
            best[name] = min(best[name], spent / args.launches * 1e6)
    torch.cuda.synchronize()
    print(f"bf16 {args.size}^3, {args.launches} launches, ring of 8, min of {args.rounds} rounds; host us per launch:")
    for name, us in best.items():
        print(f"{name:<40} {us:7.1f} us  {us / best['bare launch']:5.2f}x")
    return 0


def floor_arms(size: int) -> dict:
    """The floor view's arms by name: each queues launch ``i`` and what goes with it."""
    from pytest_gemmcheck.checking.graphs import _REPLAY

    ring = 8
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    outs = [torch.empty(size, size, device="cuda", dtype=torch.bfloat16) for _ in range(ring)]
    rows = torch.zeros(ring, 8, dtype=torch.int64, device="cuda")
    host_rows = torch.zeros(ring, 8, dtype=torch.int64, pin_memory=True)
    events = [torch.cuda.Event() for _ in range(ring)]
    stream = torch.cuda.current_stream()

    def work(i: int) -> None:
        outs[(i + 1) % ring].fill_(float("nan"))
        rows[i % ring, 0] = outs[i % ring].view(torch.int16).sum(dtype=torch.int64)
        host_rows[i % ring].copy_(rows[i % ring], non_blocking=True)

    work_graphs = [capture_graph(lambda i=i: work(i), stream) for i in range(ring)]
    whole_graphs = [capture_graph(lambda i=i: (torch.matmul(a, b, out=outs[i]), work(i)), stream) for i in range(ring)]

    def bare(i):
        torch.matmul(a, b, out=outs[i % ring])

    def with_event(i):
        torch.matmul(a, b, out=outs[i % ring])
        events[i % ring].record(stream)

    def op_by_op(i):
        torch.matmul(a, b, out=outs[i % ring])
        work(i)
        events[i % ring].record(stream)

    def graph_only(i):
        torch.matmul(a, b, out=outs[i % ring])
        work_graphs[i % ring].replay()

    def graph_and_event(i):
        torch.matmul(a, b, out=outs[i % ring])
        work_graphs[i % ring].replay()
        events[i % ring].record(stream)

    def one_graph(i):
        whole_graphs[i % ring].replay()
        events[i % ring].record(stream)

    timers = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(ring)]

    def timed_events(i):
        timers[i % ring][0].record(stream)
        torch.matmul(a, b, out=outs[i % ring])
        timers[i % ring][1].record(stream)
        events[i % ring].record(stream)

    guards = guard_kernel(a, b, outs, rows)
    guard_graphs = [capture_graph(lambda i=i: guards(i), stream) for i in range(ring)]

    def one_kernel(i):
        torch.matmul(a, b, out=outs[i % ring])
        guards(i)
        events[i % ring].record(stream)

    def one_kernel_graph(i):
        torch.matmul(a, b, out=outs[i % ring])
        guard_graphs[i % ring].replay()
        events[i % ring].record(stream)

    # The watched loop's shape: the launch between its two timing events, then one graph of the
    # guard kernel alone, and once per batch of 8 a graph that poisons the next batch's 8 outputs
    # as one strided view, zeroes their rows and copies this batch's rows to pinned memory, then
    # one event.
    batch = 8
    arena = torch.empty(2 * batch, size * size + 4096, device="cuda", dtype=torch.bfloat16)
    arena_outs = [arena[i, : size * size].view(size, size) for i in range(2 * batch)]
    wide_rows = torch.zeros(2 * batch, 8, dtype=torch.int64, device="cuda")
    wide_host = torch.zeros(2 * batch, 8, dtype=torch.int64, pin_memory=True)
    arena_guards = guard_kernel(a, b, arena_outs, wide_rows)

    def batch_work(half: int) -> None:
        other = 1 - half
        arena[other * batch : (other + 1) * batch, : size * size].fill_(float("nan"))
        wide_rows[other * batch : (other + 1) * batch].zero_()
        wide_host[half * batch : (half + 1) * batch].copy_(
            wide_rows[half * batch : (half + 1) * batch], non_blocking=True
        )

    watch_graphs = [capture_graph(lambda i=i: arena_guards(i), stream) for i in range(2 * batch)]
    batch_graphs = [capture_graph(lambda h=h: batch_work(h), stream) for h in range(2)]
    record = torch._C._CudaEventBase.record
    wide_timers = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(2 * batch)
    ]

    def watched_batches(i):
        start, stop = wide_timers[i % (2 * batch)]
        record(start, stream)
        torch.matmul(a, b, out=arena_outs[i % (2 * batch)])
        record(stop, stream)
        _REPLAY(watch_graphs[i % (2 * batch)])
        if i % batch == batch - 1:
            _REPLAY(batch_graphs[(i // batch) % 2])
            record(events[0], stream)

    def c_timing_events(i):
        record(timers[i % ring][0], stream)
        torch.matmul(a, b, out=outs[i % ring])
        record(timers[i % ring][1], stream)

    def raw_guard_graph(i):
        torch.matmul(a, b, out=outs[i % ring])
        _REPLAY(guard_graphs[i % ring])

    return {
        "bare launch": bare,
        "launch + event": with_event,
        "launch + work op by op + event": op_by_op,
        "launch + work graph": graph_only,
        "launch + work graph + event": graph_and_event,
        "launch and work in one graph + event": one_graph,
        "launch + 2 timing events + event": timed_events,
        "launch + guard kernel, direct + event": one_kernel,
        "launch + guard kernel graph + event": one_kernel_graph,
        "launch + 2 timing events (C record)": c_timing_events,
        "launch + guard kernel graph, raw replay": raw_guard_graph,
        "launch, 2 C events, guard graph, batch graph per 8": watched_batches,
    }


# --- loop -----------------------------------------------------------------------------------

LOOP_STEPS = (
    "_launch_batch",
    "_read_until",
    "_read",
    "_clean_repeat",
    "_wait_until",
    "_batch_begins",
    "_launch_once",
    "_drain",
)
BATCH_STEPS = (("_work", "_batch_work"), ("close", "_close_batch"))  # BatchWork's, under the names they had


def wrap(owner, name, label, spent, calls) -> None:
    """``owner.name`` replaced by a timer around it: its seconds and calls summed under ``label``."""
    label = label or name
    original = getattr(owner, name)
    is_classmethod = isinstance(owner, type) and isinstance(owner.__dict__.get(name), classmethod)
    if is_classmethod:
        raw = owner.__dict__[name].__func__
        original = lambda *a, **k: raw(owner, *a, **k)  # noqa: E731

    def wrapped(*a, **k):
        t = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            spent[label] += time.perf_counter() - t
            calls[label] += 1

    setattr(owner, name, staticmethod(wrapped) if is_classmethod else wrapped)


def wrap_loop_steps(spent, calls) -> None:
    """Each named step of the launch loop, timed per call (the steps nest)."""
    from pytest_gemmcheck.checking import consensus
    from pytest_gemmcheck.launch import batch_work, guards
    from pytest_gemmcheck.launch import loop as launch_loop

    for name in LOOP_STEPS:
        wrap(launch_loop.LaunchLoop, name, None, spent, calls)
    for name, label in BATCH_STEPS:
        wrap(batch_work.BatchWork, name, label, spent, calls)
    wrap(batch_work, "replay", None, spent, calls)
    wrap(launch_loop.LaunchRecord, "numbered", None, spent, calls)
    wrap(guards, "layout", None, spent, calls)
    wrap(launch_loop.launch_records, "fill_accuracy", None, spent, calls)
    wrap(consensus.Consensus, "observe_checksum", None, spent, calls)
    wrap(launch_loop.in_flight.LaunchTimer, "seconds", None, spent, calls)


def wrap_once_per_run(spent, calls) -> None:
    """What a run does once: the loop's making, its start and end, the judging and the record."""
    from pytest_gemmcheck.case import case as case_module
    from pytest_gemmcheck.case import reference
    from pytest_gemmcheck.environment import contention
    from pytest_gemmcheck.launch import in_flight
    from pytest_gemmcheck.launch import loop as launch_loop
    from pytest_gemmcheck.launch.guards import InputGuard, LaunchWatch
    from pytest_gemmcheck.launch.launch_numbers import LaunchNumbers

    once = [
        (launch_loop.LaunchLoop, "__init__", "LaunchLoop()"),
        (case_module.Case, "judged_reference", None),
        (InputGuard, "__init__", "InputGuard()"),
        (LaunchWatch, "__init__", "LaunchWatch()"),
        (in_flight, "pipeline_for", None),
        (in_flight, "ring_for", None),
        (launch_loop, "select_checker", None),
        (launch_loop.contention, "start", "contention.start"),
        (contention.Watch, "finish", "contention finish"),
        (launch_loop.LaunchLoop, "_prove_reference", None),
        (LaunchNumbers, "fill_consistency", "_fill_consistency"),
        (case_module.Case, "_conclude", None),
        (case_module.Case, "_new_result", None),
        (reference.ProtectedReference, "intact", None),
    ]
    for owner, name, label in once:
        wrap(owner, name, label, spent, calls)


def loop_view(args) -> int:
    """Each step's own microseconds per launch over runs of 300 launches of bf16 1024^3 (two runs
    after a warm one), beside the time of the kernel's call itself; then what each run pays once
    (the steps before its first launch and after its last), in microseconds per run, over 5 runs
    of 100 launches at bf16 1024^3 and at ptpc 16384x7168x2048. Each named method of the loop is
    wrapped in a timer (which adds a little to each): the steps nest, so a step's time includes
    the steps it calls."""
    spent, calls = defaultdict(float), defaultdict(int)
    once_spent, once_calls = defaultdict(float), defaultdict(int)
    wrap_loop_steps(spent, calls)
    wrap_once_per_run(once_spent, once_calls)
    with gc.session(db=None) as session:
        loop_steps(session, spent, calls)
        for quant, m, n, k in (("bf16", 1024, 1024, 1024), ("ptpc", 16384, 7168, 2048)):
            once_per_run(session, quant, m, n, k, once_spent, once_calls)
    return 0


def loop_steps(session, spent, calls, size: int = 1024, launches: int = 300) -> None:
    case = session.case("probe", m=size, n=size, k=size, quant="bf16")
    x = case.inputs()
    bt = x.b.t()
    user = [0.0]

    def kern(out):
        t = time.perf_counter()
        torch.matmul(x.a, bt, out=out)
        user[0] += time.perf_counter() - t

    case.run(kern, repeat=launches)
    for r in range(2):
        spent.clear()
        calls.clear()
        user[0] = 0
        t = time.perf_counter()
        case.run(kern, repeat=launches)
        torch.cuda.synchronize()
        total = time.perf_counter() - t
        print(f"run {r}: {total * 1e6 / launches:.1f} us per launch; the kernel's call {user[0] * 1e6 / launches:.1f}")
        for label in sorted(spent, key=spent.get, reverse=True):
            print(f"   {label:<20} {spent[label] * 1e6 / launches:8.1f} us per launch  ({calls[label]} calls)")


def once_per_run(session, quant, m, n, k, spent, calls, runs: int = 5) -> None:
    case = shape_case(session, f"once_{quant}", quant, m, n, k)
    launch = kernel_for(quant, case.inputs())
    first = [0.0]

    def stamped(out):
        if not first[0]:
            first[0] = time.perf_counter()
        return launch(out)

    for _ in range(2):
        case.run(launch, repeat=100)
    spent.clear()
    calls.clear()
    before = 0.0
    for _ in range(runs):
        first[0] = 0.0
        torch.cuda.synchronize()
        t = time.perf_counter()
        case.run(stamped, repeat=100)
        before += first[0] - t
    print(f"{quant} {m}x{n}x{k}, {runs} runs of 100: {before * 1e6 / runs:.0f} us a run before its first launch's call")
    for label in sorted(spent, key=spent.get, reverse=True):
        print(f"   {label:<20} {spent[label] * 1e6 / runs:8.1f} us per run  ({calls[label] / runs:g} calls)")


# --- run-costs ------------------------------------------------------------------------------


def run_costs_arguments(parser) -> None:
    parser.add_argument("--shapes", default="1024,ptpc")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile-rows", type=int, default=0)
    parser.add_argument("--profile-runs", type=int, default=10)
    parser.add_argument("--kernel-profile", action="store_true")


def run_costs_view(args) -> int:
    """For each shape, ``case.run(launch, repeat=R)`` and ``case.run(launch, repeat=3R)`` through
    the plain API, timed in turn in each round (min of the rounds), and R bare launches beside
    them. From the two runs: per launch ``(T(3R) - T(R)) / 2R`` and once per run ``T(R) - R x
    that``, each against the bare launch. With ``--profile-rows N`` the last shape's
    ``case.run`` of R launches is profiled ``--profile-runs`` times (cProfile; the top N
    functions by internal then cumulative time, microseconds per run); with ``--kernel-profile``
    one such run's GPU time per kernel and copy (torch.profiler), with the host's time from the
    run's start to its first launch and from its last launch to its end."""
    device = torch.device("cuda")
    shapes = pick_shapes(GPU_SHAPES, args.shapes)
    repeat = args.repeat
    print(f"cuda (torch {torch.__version__}), R={repeat}, min of {args.rounds} interleaved rounds")
    print(f"{'shape':<24} {'bare us':>8} {'per launch us':>14} {'ratio':>7} {'once per run ms':>16} {'= launches':>11}")
    with gc.session(db=None) as session:
        for quant, m, n, k in shapes:
            case = shape_case(session, f"costs_{quant}", quant, m, n, k, device="cuda")
            launch = kernel_for(quant, case.inputs())
            run_costs_shape(case, launch, quant, m, n, k, device, repeat, args.rounds)
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


def run_costs_shape(case, launch, quant, m, n, k, device, repeat: int, rounds: int) -> None:
    out = torch.empty((m, n), dtype=torch.bfloat16, device=device)
    case.run(launch, repeat=3)

    def bare():
        for _ in range(repeat):
            launch(out)

    best = {"bare": float("inf"), "short": float("inf"), "long": float("inf")}
    for _ in range(rounds):
        best["bare"] = min(best["bare"], timed(bare, device)[0])
        best["short"] = min(best["short"], timed(lambda: case.run(launch, repeat=repeat), device)[0])
        best["long"] = min(best["long"], timed(lambda: case.run(launch, repeat=3 * repeat), device)[0])
    bare_us = best["bare"] / repeat * 1e6
    per_launch = (best["long"] - best["short"]) / (2 * repeat) * 1e6
    once_ms = (best["short"] * 1e6 - repeat * per_launch) / 1e3
    print(
        f"{quant + ' ' + f'{m}x{n}x{k}':<24} {bare_us:8.1f} {per_launch:14.1f} {per_launch / bare_us:6.2f}x "
        f"{once_ms:16.2f} {once_ms * 1e3 / bare_us:11.1f}",
        flush=True,
    )


def print_profile(stats: pstats.Stats, rows: int, runs: int) -> None:
    """The top ``rows`` functions by internal and by cumulative time, in microseconds per run
    (pstats prints milliseconds to three places: zeros for most of a short run's calls)."""
    entries = [
        (f"{Path(file).name}:{line}({name})", calls / runs, own / runs * 1e6, total / runs * 1e6)
        for (file, line, name), (_, calls, own, total, _) in stats.stats.items()
    ]
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
    print(
        f"\ncase.run of {repeat} launches under torch.profiler: {(ended - begun) * 1e3:.2f} ms, "
        f"{(calls[0] - begun) * 1e3:.2f} ms before the first launch's call, "
        f"{(ended - calls[-1]) * 1e3:.2f} ms after the last one's"
    )
    print(prof.key_averages().table(sort_by="self_device_time_total", row_limit=25, max_name_column_width=55))


# --- gpu-busy -------------------------------------------------------------------------------


def gpu_busy_arguments(parser) -> None:
    parser.add_argument("shape", nargs="?", default="ptpc", help="ptpc, or 256 ... 8192 for bf16 (default ptpc)")
    parser.add_argument(
        "--graphs",
        action="store_true",
        help="graph a launch's work whatever the launch's length (launch/loop.py's GRAPHS_BELOW_S raised past it)",
    )


def gpu_busy_view(args) -> int:
    """A checked run of 100 launches beside 100 bare launches: the minimum of 5 interleaved
    rounds of each, then, from torch.profiler over one more of each, the GPU's time from its
    first op to its last, how much of it was busy, the idle gaps (the largest, and the op each
    one came before), and where the first and last GEMM fell."""
    if args.graphs:
        from pytest_gemmcheck.launch import loop as launch_loop

        launch_loop.GRAPHS_BELOW_S = float("inf")
    device = torch.device("cuda")
    quant, m, n, k = next(s for s in GPU_SHAPES if s[0] == args.shape or str(s[1]) == args.shape)
    with gc.session(db=None) as session:
        case = shape_case(session, f"busy_{quant}", quant, m, n, k, device="cuda")
        launch = kernel_for(quant, case.inputs())
        out = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
        works = {"bare": lambda: [launch(out) for _ in range(100)], "checked": lambda: case.run(launch, repeat=100)}
        for _ in range(3):
            works["checked"]()
        best = {name: float("inf") for name in works}
        for _ in range(5):
            for name, work in works.items():
                best[name] = min(best[name], timed(work, device)[0])
        print(
            f"{quant} {m}x{n}x{k}{' (graphs)' if args.graphs else ''}: "
            f"100 bare launches {best['bare'] * 1e3:.2f} ms, "
            f"a checked run of 100 {best['checked'] * 1e3:.2f} ms: {best['checked'] / best['bare']:.3f}x"
        )
        for name, work in works.items():
            print(f" {name}, under torch.profiler:")
            gpu_timeline(work, device)
    return 0


def gpu_timeline(work, device) -> None:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        wall = timed(work, device)[0]
    spans = sorted(
        (event.start_ns(), event.start_ns() + event.duration_ns(), event.name())
        for event in prof.profiler.kineto_results.events()
        if event.device_type() == torch.autograd.DeviceType.CUDA
    )
    busy, gaps, reached = 0, [], spans[0][0]
    for start, end, name in spans:
        if start > reached:
            gaps.append((start - reached, name))
        busy += max(0, end - max(start, reached))
        reached = max(reached, end)
    gaps.sort(reverse=True)
    largest = ", ".join(f"{gap / 1e3:.0f} us before {name[:30]}" for gap, name in gaps[:6])
    print(
        f"   wall {wall * 1e3:.2f} ms; GPU first op to last {(spans[-1][1] - spans[0][0]) / 1e6:.2f} ms, busy "
        f"{busy / 1e6:.2f} ms, idle {sum(gap for gap, _ in gaps) / 1e6:.2f} ms in {len(gaps)} gaps; "
        f"largest: {largest}"
    )
    gemms = [span for span in spans if span[2].startswith(("nvjet", "sm90", "cutlass")) or "gemm" in span[2].lower()]
    if gemms:
        print(
            f"   first GEMM {(gemms[0][0] - spans[0][0]) / 1e6:.2f} ms after the first op; the last ends "
            f"{(spans[-1][1] - gemms[-1][1]) / 1e6:.2f} ms before the last op's end"
        )


# --- the command ----------------------------------------------------------------------------

# name: (run, add its options or None, needs a GPU)
VIEWS = {
    "shapes": (shapes_view, shapes_arguments, False),
    "ratio": (ratio_view, ratio_arguments, True),
    "breakdown": (breakdown_view, None, True),
    "host": (host_view, host_arguments, True),
    "floor": (floor_view, floor_arguments, True),
    "loop": (loop_view, None, True),
    "run-costs": (run_costs_view, run_costs_arguments, True),
    "gpu-busy": (gpu_busy_view, gpu_busy_arguments, True),
}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m benchmarks.launch_cost",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("Views:", 1)[1],
    )
    views = top.add_subparsers(dest="view", required=True, metavar="VIEW")
    for name, (run, add_arguments, _) in VIEWS.items():
        view = views.add_parser(name, description=" ".join(run.__doc__.split()))
        if add_arguments:
            add_arguments(view)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    print_header("benchmarks.launch_cost", argv)
    run, _, needs_gpu = VIEWS[args.view]
    if needs_gpu and not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
