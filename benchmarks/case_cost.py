"""What a whole case pays beside its launches, piece by piece.

    python -m benchmarks.case_cost pieces [--device cpu|cuda] [--shapes 64,256] [--repeat 12] [--cases 10] [--record]
    python -m benchmarks.case_cost profile [--device cpu|cuda] [--shapes 256] [--repeat 12] [--cases 10]
        [--rows 40] [--dump PREFIX] [--torch-ops]
    python -m benchmarks.case_cost inputs [--device cpu|cuda] [--sizes 64,256,1024] [--calls 5]

Views:

  pieces   each piece of a case timed as the case runs it (the plugin's own functions wrapped by
           timers): the case made, its inputs made and kept (the pristine copy or checksums of
           kept_inputs.py), each proof of them, the reference computed, protected (its checksum,
           its pristine copy) and proved, its row maxima, the launch loop's set-up (the guards'
           copies of the inputs, the output ring, the watch), the contention snapshots, the
           launch loop and its own pieces (each kernel call, poison, launch's work queued, wait
           and read; on a GPU the first launch's full check, the checksum pass and the guard
           kernel, a proof's pass, the pinned results' reads, graph captures and replays, and
           Triton's own launch path, compiles and module loads), the consistency at the end, the
           verdict (the baseline read), and with --record the result written into SQLite after
           the case (as pytest writes each test's). A piece's time excludes the pieces timed
           inside it, and includes its timer's own (a microsecond or two a call).
           Every case is a new shape (n grows by one each case, by 8 on a GPU; the shape's GEMM
           run once on zeros before it, torch's own per-shape set-up), in one session
           (gc.session), after one untimed case of the shape itself (the check's kernels compiled,
           the database made); the mean of --cases cases, in ms (on the CPU by the thread's CPU clock).
  profile  cProfile's functions by their own (--sort tottime) or inclusive time over --cases such
           cases (seconds for all); --dump PREFIX writes each shape's stats for pstats to read;
           --torch-ops: torch.profiler's table of torch ops (and GPU kernels) instead.
  inputs   ns an element of the seeded inputs: rng.bell's one stream, and each quant mode's
           make_inputs (both operands and their scales), square shapes.

CPU: one thread (torch.set_num_threads(1)). A benchmark, not a test: nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import torch

from benchmarks import hand_loop
from gemmcheck_dev.results import print_header

CPU_SHAPES = [("bf16", 64, 64, 64), ("bf16", 256, 256, 256), ("ptpc", 256, 256, 256)]
GPU_SHAPES = [
    ("bf16", 256, 256, 256),
    ("bf16", 1024, 1024, 1024),
    ("bf16", 4096, 4096, 4096),
    ("ptpc", 4096, 7168, 256),
    ("ptpc", 16384, 7168, 2048),
]


class PieceTimer:
    """Exclusive time of each wrapped function, by name: a piece's time less that of the pieces
    timed inside it, by ``clock`` (the thread's CPU time on the CPU, steady on a loaded machine;
    the wall clock on a GPU, whose waits count)."""

    def __init__(self, clock=time.perf_counter):
        self.clock = clock
        self.totals: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[list] = []  # [name, started, time of the pieces inside]

    def wrap(self, name: str, function):
        def timed(*args, **kwargs):
            self._stack.append([name, self.clock(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                piece, started, inside = self._stack.pop()
                spent = self.clock() - started
                self.totals[piece] += spent - inside
                self.calls[piece] += 1
                if self._stack:
                    self._stack[-1][2] += spent

        timed.__wrapped__ = function
        return timed


def pieces_of_a_case():
    """(label, owner, attribute) of every piece, in the order a case meets them."""
    from pytest_gemmcheck.case import case, kept_inputs, reference
    from pytest_gemmcheck.checking import graphs
    from pytest_gemmcheck.environment import contention
    from pytest_gemmcheck.launch import batch_work, buffers, guards, in_flight, launch_numbers, loop

    pieces = [
        ("case made (key, checks)", case.Case, "__init__"),
        ("inputs made", case.Case, "_make_inputs"),
        ("inputs kept (pristine copy / checksums)", kept_inputs.KeptInputs, "__init__"),
        ("inputs proved at hand-out", kept_inputs.KeptInputs, "changed"),
        ("reference computed", case, "compute_reference"),
        ("reference protected (checksum, copy)", reference.ProtectedReference, "__init__"),
        ("reference proved", reference.ProtectedReference, "intact"),
        ("reference row maxima", reference.ProtectedReference, "rowmax"),
        ("loop set-up (rest)", loop.LaunchLoop, "__init__"),
        ("inputs copied for the guards", guards.InputGuard, "__init__"),
        ("output ring", in_flight, "ring_for"),
        ("watch: inputs' sums at start", guards.LaunchWatch, "__init__"),
        ("contention snapshot, start", contention, "start"),
        ("contention snapshot, finish", contention.Watch, "finish"),
        ("launches (the loop, rest)", loop.LaunchLoop, "_launches"),
        ("  kernel called", loop.LaunchLoop, "_call"),
        ("  output poisoned (one launch)", buffers.OutputBuffers, "poison"),
        ("  launch's work queued (guards, checksum)", loop.LaunchLoop, "_work"),
        ("  batch work (poison, rows' copy)", batch_work.BatchWork, "close"),
        ("  waits for the GPU (each launch's deadline)", loop.LaunchLoop, "_wait_until"),
        ("  launch read (rows, guards)", loop.LaunchLoop, "_read"),
        ("  launch numbers onto the record", launch_numbers.LaunchNumbers, "finish"),
        ("  ring graphs made", loop.LaunchLoop, "_capture_ring"),
        ("  graph captures", graphs.GraphAtSecondUse, "capture_now"),
        ("  graph replays", graphs.GraphAtSecondUse, "run"),
        ("consistency at the end", launch_numbers.LaunchNumbers, "fill_consistency"),
        ("verdict (rest)", case, "conclude"),
        ("case.run (rest)", case.Case, "run"),
    ]
    try:  # the GPU's own pieces, where Triton is installed
        from triton import compiler as triton_compiler
        from triton.runtime import jit as triton_jit

        from pytest_gemmcheck.checking.triton import fused_check
    except ImportError:
        return pieces
    from pytest_gemmcheck.checking.triton import guard_pass, repeat, runtime

    at = next(index for index, piece in enumerate(pieces) if piece[0] == "  batch work (poison, rows' copy)")
    pieces[at:at] = [
        ("  full check prepared", fused_check, "prepare_check"),
        ("  full check started", fused_check.PendingCheck, "start"),
        ("  full check's result read", fused_check.PendingCheck, "result"),
        ("    checksum pass: checks, its entry", fused_check, "queue_checksum_and_fill"),
        ("    checksum pass: kernel and sum queued", repeat.ChecksumFill, "queue_into"),
        ("    guard kernel queued", guard_pass, "queue_guards"),
        ("  a proof's checksum pass queued", fused_check, "start_checksum_and_fill"),
        ("  results waited for and read (pinned copies)", runtime.Runtime, "read_host"),
    ]
    return pieces + [
        ("  Triton's own launch path (kernel[grid])", triton_jit.JITFunction, "run"),
        ("  Triton kernels compiled or loaded from its cache", triton_jit.JITFunction, "_do_compile"),
        ("  Triton modules loaded onto the GPU", triton_compiler.CompiledKernel, "_init_handles"),
    ]


@contextmanager
def timing(timer: PieceTimer):
    saved = []
    for label, owner, attribute in pieces_of_a_case():
        original = getattr(owner, attribute)
        saved.append((owner, attribute, original))
        setattr(owner, attribute, timer.wrap(label, original))
    try:
        yield
    finally:
        for owner, attribute, original in reversed(saved):
            setattr(owner, attribute, original)


def launch_of(quant: str, x):
    if quant == "bf16":
        a, bt = x.a, x.b.t()
        return lambda out: torch.matmul(a, bt, out=out)
    if x.a.device.type == "cpu":  # no fp8 GEMM on the CPU: the dequantized operands' product, rounded into out
        a, bt = x.a.float() * x.a_scale[:, None], (x.b.float() * x.b_scale[:, None]).t()
        return lambda out: out.copy_(a @ bt)
    scale_a, scale_b = x.a_scale.reshape(-1, 1).contiguous(), x.b_scale.reshape(1, -1).contiguous()
    return lambda out: torch._scaled_mm(x.a, x.b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=out.dtype, out=out)


def torch_set_up(quant, m, n, k, device) -> None:
    """The shape's GEMM once on zeros: torch's own set-up for a new shape (oneDNN's primitive,
    cuBLAS's heuristics), which a hand-written loop pays alike, kept out of the case's time."""
    if quant == "bf16" or device == "cpu":
        dtype = torch.bfloat16 if quant == "bf16" else torch.float32
        torch.zeros(m, k, dtype=dtype, device=device) @ torch.zeros(n, k, dtype=dtype, device=device).t()
        return
    a = torch.zeros(m, k, device=device).to(torch.float8_e4m3fn)
    b = torch.zeros(n, k, device=device).to(torch.float8_e4m3fn)
    torch._scaled_mm(
        a,
        b.t(),
        scale_a=torch.ones(m, 1, device=device),
        scale_b=torch.ones(1, n, device=device),
        out_dtype=torch.bfloat16,
    )


def clock_of(device: str):
    return time.thread_time if device == "cpu" else time.perf_counter


def one_case(session, quant, m, n, k, device, repeat, timer: PieceTimer | None, record: bool) -> float:
    torch_set_up(quant, m, n, k, device)
    if device == "cuda":
        torch.cuda.synchronize()
    clock = clock_of(device)
    started = clock()
    case = session.case("case_cost", m=m, n=n, k=k, quant=quant, device=device)
    x = case.inputs()
    case.run(launch_of(quant, x), repeat=repeat)
    if record:
        if timer is not None:
            timer.wrap("record (SQLite, after the case)", session.history.flush)()
        else:
            session.history.flush()
    if device == "cuda":
        torch.cuda.synchronize()
    return clock() - started


def pick(shapes, wanted: str):
    if not wanted:
        return shapes
    words = wanted.split(",")
    return [shape for shape in shapes if str(shape[1]) in words or shape[0] in words]


@contextmanager
def a_session(record: bool):
    import pytest_gemmcheck as gc

    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "history.db") if record else None
        with gc.session(db=db, tag="case_cost") as session:
            yield session


def warm_up(session, quant, m, n, k, device, args) -> None:
    """One case of the shape itself at the same repeat, untimed: the check's kernels for its
    specialisations compiled and the database made (a suite pays those once, not per case), so
    that the timed cases, each of a new shape, show what every case pays."""
    one_case(session, quant, m, n, k, device, args.repeat, None, args.record)


def pieces_view(args) -> int:
    device = args.device
    shapes = pick(CPU_SHAPES if device == "cpu" else GPU_SHAPES, args.shapes)
    print(
        f"{device} (torch {torch.__version__}, {torch.get_num_threads()} thread(s)), repeat {args.repeat}, "
        f"{'recording into SQLite' if args.record else 'recording nothing'}; mean of {args.cases} cases, each a "
        f"new shape, ms a case by {'the thread CPU clock' if device == 'cpu' else 'the wall clock'}:"
    )
    with a_session(args.record) as session:
        for quant, m, n, k in shapes:
            step = hand_loop.shape_step(quant, device)
            warm_up(session, quant, m, n, k, device, args)
            timer = PieceTimer(clock_of(device))
            whole = 0.0
            with timing(timer):
                for index in range(args.cases):
                    whole += one_case(
                        session, quant, m, n + step * (index + 1), k, device, args.repeat, timer, args.record
                    )
            count = args.cases
            print(f"\n{quant} {m}x{n}x{k}: whole case {whole / count * 1e3:.3f} ms")
            labels = [label for label, _, _ in pieces_of_a_case()] + ["record (SQLite, after the case)"]
            for label in labels:
                if timer.calls.get(label):
                    print(
                        f"  {label:<46}{timer.totals[label] / count * 1e3:9.3f}   ({timer.calls[label] / count:.1f} "
                        f"calls a case)"
                    )
            covered = sum(timer.totals.values())
            print(f"  {'outside the pieces (test code, session)':<46}{(whole - covered) / count * 1e3:9.3f}")
    return 0


def profile_view(args) -> int:
    device = args.device
    shapes = pick(CPU_SHAPES if device == "cpu" else GPU_SHAPES, args.shapes)
    with a_session(args.record) as session:
        for quant, m, n, k in shapes:
            warm_up(session, quant, m, n, k, device, args)
            if args.torch_ops:
                torch_ops_profile(session, quant, m, n, k, device, args)
                continue
            profiler = cProfile.Profile()
            profiler.enable()
            new_shape_cases(session, quant, m, n, k, device, args)
            profiler.disable()
            if args.dump:
                profiler.dump_stats(f"{args.dump}-{quant}-{m}x{n}x{k}.pstats")
            text = io.StringIO()
            stats = pstats.Stats(profiler, stream=text)
            stats.sort_stats(args.sort).print_stats(args.rows)
            print(
                f"\n{quant} {m}x{n}x{k}, repeat {args.repeat}: cProfile of {args.cases} cases, by {args.sort} time "
                f"(seconds for all {args.cases})"
            )
            print("\n".join(line for line in text.getvalue().splitlines()[4:] if line.strip()))
    return 0


def new_shape_cases(session, quant, m, n, k, device, args) -> None:
    """--cases cases of the shape, each a new one (n a step further each time), untimed."""
    step = hand_loop.shape_step(quant, device)
    for index in range(args.cases):
        one_case(session, quant, m, n + step * (index + 1), k, device, args.repeat, None, args.record)


def torch_ops_profile(session, quant, m, n, k, device, args) -> None:
    """torch.profiler over --cases cases: each torch op's calls and the host's time in it (and
    on a GPU each kernel's time on the device), by the host's own time."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        new_shape_cases(session, quant, m, n, k, device, args)
    print(
        f"\n{quant} {m}x{n}x{k}, repeat {args.repeat}: torch.profiler over {args.cases} cases, by the host's own "
        f"time (calls and times for all {args.cases})"
    )
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows, max_name_column_width=48))


def inputs_view(args) -> int:
    """ns an element of rng.bell (one stream) and of each quant mode's make_inputs (both operands,
    their scales), the minimum of --calls calls, on one device."""
    from pytest_gemmcheck.case import rng
    from pytest_gemmcheck.case.quant import fp8_flavour, quant_mode

    device = torch.device(args.device)

    def best(fn) -> float:
        fastest = float("inf")
        for _ in range(args.calls):
            synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
            synchronize()
            started = time.perf_counter()
            fn()
            synchronize()
            fastest = min(fastest, time.perf_counter() - started)
        return fastest

    print(
        f"{device} (torch {torch.__version__}, {torch.get_num_threads()} thread(s)): the minimum of {args.calls} "
        f"calls, ns an element"
    )
    sizes = [int(size) for size in args.sizes.split(",")]
    for size in sizes:
        numel = 2 * size * size
        seconds = best(lambda: rng.bell((numel,), 1, "a", device))
        print(f"  rng.bell, {numel:>10,} values{'':14}{seconds / numel * 1e9:8.2f}   ({seconds * 1e3:.3f} ms)")
    for quant in ("bf16", "ptpc", "blockscale", "mxfp8"):
        for size in sizes:
            mode, numel = quant_mode(quant), 2 * size * size
            seconds = best(lambda: mode.make_inputs(size, size, size, seed=1, device=device, fp8=fp8_flavour("e4m3fn")))
            print(
                f"  make_inputs {quant:<11}{size}^3 ({numel:>10,} elements){seconds / numel * 1e9:8.2f}   "
                f"({seconds * 1e3:.3f} ms)"
            )
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m benchmarks.case_cost", description=__doc__.splitlines()[0])
    views = top.add_subparsers(dest="view", required=True)
    for name, text in (("pieces", "each piece of a case, timed"), ("profile", "cProfile of whole cases")):
        view = views.add_parser(name, help=text)
        view.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
        view.add_argument("--shapes", default="", help="e.g. 256 or ptpc: only these")
        view.add_argument("--repeat", type=int, default=12)
        view.add_argument("--cases", type=int, default=10)
        view.add_argument("--record", action="store_true", help="record into SQLite, written after each case")
        if name == "profile":
            view.add_argument("--rows", type=int, default=40)
            view.add_argument(
                "--sort", choices=["tottime", "cumulative"], default="tottime", help="own or inclusive time"
            )
            view.add_argument("--dump", default="", help="also write each shape's stats to DUMP-SHAPE.pstats")
            view.add_argument(
                "--torch-ops", action="store_true", help="torch.profiler's ops (and kernels) instead of cProfile"
            )
    inputs = views.add_parser("inputs", help="ns an element of the seeded inputs")
    inputs.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    inputs.add_argument("--sizes", default="64,256,1024", help="square shapes, comma-separated (default %(default)s)")
    inputs.add_argument("--calls", type=int, default=5)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    print_header("benchmarks.case_cost", argv)
    if args.device == "cpu":
        torch.set_num_threads(1)
    return {"pieces": pieces_view, "profile": profile_view, "inputs": inputs_view}[args.view](args)


if __name__ == "__main__":
    sys.exit(main())
