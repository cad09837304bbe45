"""What the guards of each launch cost on a GPU (launch/guards.py: the inputs' checksums taken by the
guard kernel, or with torch ops compared with their pristine copies; the canary around ``out``
counted), against the fused check of the same launch.

    python -m benchmarks.guard_cost [--shape 16384x7168x2048] [--quant ptpc] [--rounds 50] [--sweep]

Both are timed as case.run queues them, interleaved round by round: GPU time between CUDA
events, and the host's time to queue and read them. Prints each and the ratio. ``--sweep``
then times the guard kernel alone (20 in one CUDA graph, so that the host's launching is not
what is timed) for each number of programs per SM and of warps, beside a copy of as many bytes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from gemmcheck_dev.results import print_header
from pytest_gemmcheck.case.case import Case, CaseContext
from pytest_gemmcheck.checking.backends import select_checker
from pytest_gemmcheck.checking.graphs import GraphAtSecondUse
from pytest_gemmcheck.checking.torch_backend import row_max
from pytest_gemmcheck.config.table import Settings
from pytest_gemmcheck.launch.guards import ROW_WIDTH, GuardedBuffer, InputGuard, LaunchWatch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="16384x7168x2048")
    parser.add_argument("--quant", default="ptpc")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args(argv)
    print_header("benchmarks.guard_cost", argv)
    if not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return 0
    m, n, k = (int(v) for v in args.shape.split("x"))
    case = Case(CaseContext(Settings()), "guard_cost", m=m, n=n, k=k, quant=args.quant)
    ref = case.judged_reference().tensor
    rowmax = row_max(ref)
    buffer = GuardedBuffer(m, n, ref.dtype, case.device)
    buffer.tensor.copy_(ref)
    checker = select_checker("triton", buffer.tensor)
    # as case.run watches a launch with the fused check: one Triton kernel (input checksums and
    # the canary) and the row's copy to pinned memory, replayed as a graph
    watch = LaunchWatch(InputGuard(case.inputs()), case.device, fused=True)
    torch_ops = LaunchWatch(InputGuard(case.inputs()), case.device)  # the torch backend's guards
    stream = torch.cuda.current_stream()
    row = torch.zeros(ROW_WIDTH, dtype=torch.int64, device=case.device)
    host = torch.zeros(ROW_WIDTH, dtype=torch.int64, pin_memory=True)

    def queued(which):
        which.queue(buffer, row)
        host.copy_(row, non_blocking=True)

    graph = GraphAtSecondUse(lambda: queued(watch), case.device)

    def check():
        begun = checker.prepare(buffer.tensor, ref, rowmax, case.tolerance, None, [], True)
        begun.start()
        begun.result()

    def guards():
        graph.run()
        stream.synchronize()
        watch.read(host.tolist())

    def guards_eager():  # the same kernel without the graph: what the graph saves the host
        queued(watch)
        stream.synchronize()
        watch.read(host.tolist())

    def guards_torch():
        queued(torch_ops)
        stream.synchronize()
        torch_ops.read(host.tolist())

    works = (
        ("fused check", check),
        ("guards", guards),
        ("guards, no graph", guards_eager),
        ("guards, torch ops", guards_torch),
    )
    times = {name: ([], []) for name, _ in works}
    for _ in range(5):  # compile, capture, warm
        for _, work in works:
            work()
    for _ in range(args.rounds):
        for name, work in works:
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            begun = time.perf_counter()
            start.record(stream)
            work()
            stop.record(stream)
            stop.synchronize()
            times[name][1].append(time.perf_counter() - begun)
            times[name][0].append(start.elapsed_time(stop) / 1000)
    # the guards' own GPU time: queued back to back, no host wait between them (the rows above
    # hold each one's synchronisation and read too, as case.run's deadline wait does)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(stream)
    for _ in range(args.rounds):
        watch.queue(buffer, row)
    stop.record(stream)
    stop.synchronize()
    back_to_back = start.elapsed_time(stop) / 1000 / args.rounds
    inputs = sum(t.numel() * t.element_size() for t in watch.inputs.live.values())
    print(
        f"{args.quant} {m}x{n}x{k}: inputs {inputs / 1e6:.1f} MB (read once per launch for their checksums; "
        f"compared with their copies by the torch ops: {2 * inputs / 1e6:.1f} MB); "
        f"out {m * n * ref.element_size() / 1e6:.1f} MB; median of {args.rounds} interleaved rounds"
    )
    for name, (gpu, host) in times.items():
        print(f"   {name:<17} GPU {1e3 * statistics.median(gpu):.3f} ms   wall {1e3 * statistics.median(host):.3f} ms")
    print(
        f"   guards, queued back to back: GPU {1e3 * back_to_back:.3f} ms each, "
        f"{inputs / back_to_back / 1e9:.0f} GB/s read"
    )
    wall = {name: statistics.median(host) for name, (_, host) in times.items()}
    print(
        f"   guards / fused check (wall): {wall['guards'] / wall['fused check']:.2f}; "
        f"guards without the graph / with it (wall): {wall['guards, no graph'] / wall['guards']:.2f}"
    )
    if args.sweep:
        sweep(watch.inputs.words, inputs, case.device)
    return 0


def sweep(words: list[torch.Tensor], inputs: int, device: torch.device) -> None:
    from pytest_gemmcheck.checking.triton import guard_pass

    row = torch.zeros(guard_pass.RESULT_WIDTH, dtype=torch.int64, device=device)

    def replayed(queue, times=5) -> float:
        queue()  # compiled before the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(20):
                queue()
        graph.replay()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(times):
            graph.replay()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1000 / (20 * times)

    source = torch.empty(inputs // 4, dtype=torch.int32, device=device)
    target = torch.empty_like(source)
    print(
        f"   the guard kernel alone, 20 in a CUDA graph; a copy of {inputs / 1e6:.1f} MB: "
        f"{1e6 * replayed(lambda: target.copy_(source)):.1f} us"
    )
    defaults = guard_pass._WARPS, guard_pass._PROGRAMS_PER_SM
    try:
        for warps in (4, 8):
            for per_sm in (4, 8, 16, 32):
                guard_pass._WARPS, guard_pass._PROGRAMS_PER_SM = warps, per_sm
                seconds = replayed(lambda: guard_pass.queue_guards(words, row, 0, 0, 0, row))
                mark = "  (the default)" if (warps, per_sm) == defaults else ""
                print(
                    f"   {warps} warps, {per_sm:2d} programs per SM: {1e6 * seconds:6.1f} us, "
                    f"{inputs / seconds / 1e9:5.0f} GB/s{mark}"
                )
    finally:
        guard_pass._WARPS, guard_pass._PROGRAMS_PER_SM = defaults


if __name__ == "__main__":
    sys.exit(main())
