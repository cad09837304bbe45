"""The floor of a checked launch's host time on a GPU: what the fewest host calls per launch
cost, beside a bare launch, in one run.

    python benchmarks/host_floor.py [--size 1024] [--launches 2000] [--rounds 5]

Each arm queues ``--launches`` bf16 torch.matmul launches of size^3 into a ring of 8 outputs
and waits once at the end; per launch it adds, in turn: one CUDA event record; the harness's
own work (the next output's NaN fill, a checksum of this one into a device row) op by op; that
work replayed as one CUDA graph; the graph and an event; and last the launch and the work
captured together in one graph per ring position (what a kernel that can be captured would
cost); then a launch with the two timing events around it that the harness records; and the
harness's guard kernel alone after the launch, launched directly or as a one-kernel graph
(replayed through torch's wrapper or without it); the two timing events recorded without
torch's wrapper; and the shape of case.run's batches: the launch between its two timing
events, the guard kernel's graph, and once per batch of 8 a graph that poisons the next
batch's outputs, zeroes their rows and copies this batch's rows to pinned memory. Prints host
microseconds per launch (the thread's CPU clock, min of the rounds) and the ratio to the bare
arm. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from pytest_gemmcheck.checking.graphs import _REPLAY


def _guard_kernel(a, b, outs, rows):
    """The harness's guard kernel (checking/triton/guard_pass.py: both inputs' checksums, the
    canary count) over the ring, launched as the harness launches it: one compiled Triton
    kernel per call, without Triton's own launch path."""
    from pytest_gemmcheck.checking.checksum import word_view
    from pytest_gemmcheck.checking.triton.guard_pass import RESULT_WIDTH, queue_guards

    words = [word_view(a), word_view(b)]
    blocks = [out.view(-1).view(torch.int16) for out in outs]

    def guards(i: int) -> None:
        queue_guards(words, blocks[i % len(blocks)], 1024, blocks[0].numel() - 1024, 0, rows[i % len(rows), :RESULT_WIDTH])

    for i in range(len(outs)):
        guards(i)  # compiled
    return guards


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return 0
    size, ring = args.size, 8
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

    def capture(fn) -> torch.cuda.CUDAGraph:
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

    work_graphs = [capture(lambda i=i: work(i)) for i in range(ring)]
    whole_graphs = [capture(lambda i=i: (torch.matmul(a, b, out=outs[i]), work(i))) for i in range(ring)]

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

    guards = _guard_kernel(a, b, outs, rows)
    guard_graphs = [capture(lambda i=i: guards(i)) for i in range(ring)]

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
    arena_outs = [arena[i, :size * size].view(size, size) for i in range(2 * batch)]
    wide_rows = torch.zeros(2 * batch, 8, dtype=torch.int64, device="cuda")
    wide_host = torch.zeros(2 * batch, 8, dtype=torch.int64, pin_memory=True)
    arena_guards = _guard_kernel(a, b, arena_outs, wide_rows)

    def batch_work(half: int) -> None:
        other = 1 - half
        arena[other * batch:(other + 1) * batch, :size * size].fill_(float("nan"))
        wide_rows[other * batch:(other + 1) * batch].zero_()
        wide_host[half * batch:(half + 1) * batch].copy_(wide_rows[half * batch:(half + 1) * batch], non_blocking=True)

    watch_graphs = [capture(lambda i=i: arena_guards(i)) for i in range(2 * batch)]
    batch_graphs = [capture(lambda h=h: batch_work(h)) for h in range(2)]
    record = torch._C._CudaEventBase.record
    wide_timers = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(2 * batch)]

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

    arms = {"bare launch": bare, "launch + event": with_event, "launch + work op by op + event": op_by_op,
            "launch + work graph": graph_only, "launch + work graph + event": graph_and_event,
            "launch and work in one graph + event": one_graph,
            "launch + 2 timing events + event": timed_events,
            "launch + guard kernel, direct + event": one_kernel,
            "launch + guard kernel graph + event": one_kernel_graph,
            "launch + 2 timing events (C record)": c_timing_events,
            "launch + guard kernel graph, raw replay": raw_guard_graph,
            "launch, 2 C events, guard graph, batch graph per 8": watched_batches}
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
    print(f"bf16 {size}^3, {args.launches} launches, ring of {ring}, min of {args.rounds} rounds; host us per launch:")
    for name, us in best.items():
        print(f"{name:<40} {us:7.1f} us  {us / best['bare launch']:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
