"""The protocol written by hand, in plain torch, against the plugin for the same shapes.

    python -m benchmarks.hand_loop cases [--device cpu|cuda] [--repeat 12,100] [--shapes 64,256] [--rounds N]
        [--new-seeds]
    python -m benchmarks.hand_loop suite [--device cpu|cuda] [--count 200] [--repeat 12] [--rounds N]
        [--profile-rows 40] [--profile-dump DIR] [--no-bytecode]
    python -m benchmarks.hand_loop gpu [--budget-s 230]

The hand loop is the background's protocol as its authors wrote it: inputs from torch.randn (fp8
with per-row and per-column scales for ptpc), a bf16-rounded fp32 reference (TF32 off, torch's
default), then per launch: fill the output with NaN, launch, synchronise, count the elements off
by more than 5% of the reference (or NaN). The kernels are torch's: bf16 torch.matmul, ptpc
torch._scaled_mm; on the CPU one thread (torch.set_num_threads(1)).

Views:

  cases   whole cases timed one by one: the hand loop, the plugin's case (gc.session(db=None):
          case, inputs, reference, checked launches, verdict) and the same recording into SQLite
          (the baseline read from it and the result written after each case, as pytest does after
          each test). Each round takes a new shape (n one step more, one less, two more, ...),
          launches it bare once (the per-shape set-up inside torch, which both ways pay alike) and
          times every arm on it in turn, the order rotated; the minimum of the rounds for each arm
          (wall time, and this thread's CPU time), and their ratio. --new-seeds: each plugin case
          a seed of its own, as a suite parametrized over seeds has (the hand loop's torch.randn
          has none to change).
  suite   a pytest suite of COUNT distinct shapes at --gemmcheck-repeat=REPEAT recording into
          SQLite and recording nothing, against the same suite of hand loops, as pytest sessions
          (wall time from start to exit, and the sessions' CPU time; interleaved rounds, the
          minimum of each). Its sessions keep their bytecode, as Python does by default: where
          the environment says not to (PYTHONDONTWRITEBYTECODE, as on these benchmark machines),
          the plugin's own modules and everything pytest rewrites were compiled again in every
          session, which a user's machine does once; one untimed session of each arm over one
          shape writes it first. --no-bytecode: as the environment says. --profile-rows N: then
          each plugin arm once more under cProfile, its N functions with the most time of their
          own and the plugin's N by inclusive time (the session's other threads, the contention
          snapshot's, show among them on Python 3.12, and blur inclusive times); --profile-dump
          DIR keeps their stats.
  gpu     all on the current GPU, sized to end within --budget-s (default 230 s): cases at
          repeat 12 and 100 over bf16 256^3, 1024^3, 4096^3 and ptpc 4096x7168x256 and
          16384x7168x2048, the suite of 200 shapes, then python -m benchmarks.case_cost pieces
          (what a case pays beside its launches, piece by piece) when time is left.

A benchmark, not a test: nothing is asserted about time. docs/checking.md quotes the results.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from gemmcheck_dev.results import ROOT, merge_json, print_header

FP8_MAX = 448.0
CPU_SHAPES = [("bf16", 64, 64, 64), ("bf16", 256, 256, 256)]
GPU_SHAPES = [
    ("bf16", 256, 256, 256),
    ("bf16", 1024, 1024, 1024),
    ("bf16", 4096, 4096, 4096),
    ("ptpc", 4096, 7168, 256),
    ("ptpc", 16384, 7168, 2048),
]


# --- the hand loop ------------------------------------------------------------------------------


def hand_case(quant: str, m: int, n: int, k: int, repeat: int, device: str = "cpu") -> int:
    """The protocol by hand; the number of bad launches."""
    a = torch.randn(m, k, device=device)
    b = torch.randn(n, k, device=device)
    if quant == "bf16":
        a, b = a.to(torch.bfloat16), b.to(torch.bfloat16)
        ref = a.float() @ b.float().t()

        def launch(out):
            torch.matmul(a, b.t(), out=out)
    else:  # ptpc: a scale per row of A and of B, from their maxima
        a_scale = a.abs().amax(dim=1) / FP8_MAX
        b_scale = b.abs().amax(dim=1) / FP8_MAX
        a8 = (a / a_scale[:, None]).to(torch.float8_e4m3fn)
        b8 = (b / b_scale[:, None]).to(torch.float8_e4m3fn)
        ref = (a8.float() * a_scale[:, None]) @ (b8.float() * b_scale[:, None]).t()
        scale_a, scale_b = a_scale[:, None].contiguous(), b_scale[None, :].contiguous()

        def launch(out):
            torch._scaled_mm(a8, b8.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=out.dtype, out=out)

    ref = ref.to(torch.bfloat16).float()
    out = torch.empty(m, n, dtype=torch.bfloat16, device=device)
    bad = 0
    for _ in range(repeat):
        out.fill_(float("nan"))
        launch(out)
        if out.device.type == "cuda":
            torch.cuda.synchronize()
        got = out.float()
        wrong = int(((got - ref).abs() > 0.05 * ref.abs()).logical_or_(got.isnan()).sum())
        bad += wrong > 0
    return bad


# --- the plugin -------------------------------------------------------------------------------


def plugin_launch(quant: str, x):
    """The same kernel as the hand loop's, on the case's inputs."""
    if quant == "bf16":
        a, bt = x.a, x.b.t()
        return lambda out: torch.matmul(a, bt, out=out)
    scale_a, scale_b = x.a_scale.reshape(-1, 1).contiguous(), x.b_scale.reshape(1, -1).contiguous()
    return lambda out: torch._scaled_mm(x.a, x.b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=out.dtype, out=out)


def plugin_case(
    session, quant: str, m: int, n: int, k: int, repeat: int, device: str, flush: bool, seed: int | None = None
) -> int:
    """One whole case through the plugin: the case, its inputs, its checked launches, the verdict
    (and with ``flush`` the result written to the session's database, as pytest writes each test's;
    ``seed``: the case's own, else the session's)."""
    case = session.case("hand_loop_bench", m=m, n=n, k=k, quant=quant, device=device, seed=seed)
    x = case.inputs()
    result = case.run(plugin_launch(quant, x), repeat=repeat)
    if flush:
        session.history.flush()
    return len(result.bad_launches)


# --- view cases -----------------------------------------------------------------------------


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, device: str) -> tuple[float, float]:
    """(wall seconds, this thread's CPU seconds) of ``fn()``: on a loaded CPU the thread's CPU time
    is the steadier measure of a one-thread case."""
    synchronize(device)
    started, cpu = time.perf_counter(), time.thread_time()
    fn()
    synchronize(device)
    return time.perf_counter() - started, time.thread_time() - cpu


def shape_step(quant: str, device: str) -> int:
    """How much n grows from round to round: aligned as torch's GPU GEMMs want (16 bytes of bf16,
    _scaled_mm's multiples of 16); one on the CPU."""
    if device == "cpu":
        return 1
    return 16 if quant == "ptpc" else 8


def ptpc_unavailable(device: str) -> str | None:
    if device == "cpu":
        return "ptpc runs on a GPU"
    try:
        a = torch.zeros(16, 32, device=device).to(torch.float8_e4m3fn)
        b = torch.zeros(16, 32, device=device).to(torch.float8_e4m3fn)
        one = torch.ones(1, 1, device=device)
        torch._scaled_mm(
            a,
            b.t(),
            scale_a=one.expand(16, 1).contiguous(),
            scale_b=one.expand(1, 16).contiguous(),
            out_dtype=torch.bfloat16,
        )
    except (RuntimeError, NotImplementedError, AttributeError, TypeError) as exc:
        return f"torch._scaled_mm cannot run ptpc here: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return None


def cases_view(args) -> dict:
    import pytest_gemmcheck as gc

    device = args.device
    shapes = CPU_SHAPES if device == "cpu" else GPU_SHAPES
    if args.shapes:
        words = args.shapes.split(",")
        shapes = [s for s in shapes if str(s[1]) in words or s[0] in words]
    repeats = [int(r) for r in str(args.repeat).split(",")]
    rounds = args.rounds or (15 if device == "cpu" else 3)
    why_not_ptpc = ptpc_unavailable(device) if any(s[0] == "ptpc" for s in shapes) else None
    report = {"device": device, "threads": torch.get_num_threads(), "rounds": rounds, "rows": []}
    print(
        f"{device} (torch {torch.__version__}, {torch.get_num_threads()} thread(s)); whole case, a new shape each "
        f"round (n +- steps){', a seed of its own each case' if args.new_seeds else ''}, the minimum of {rounds} "
        "interleaved rounds, ms:"
    )
    with (
        tempfile.TemporaryDirectory() as folder,
        gc.session(db=None) as plain,
        gc.session(db=str(Path(folder) / "history.db"), tag="hand_loop") as recording,
    ):
        warm = plain.case("hand_loop_warm", m=32, n=32, k=32, device=device)  # the check's kernels compiled
        x = warm.inputs()
        warm.run(plugin_launch("bf16", x), repeat=3)
        hand_case("bf16", 32, 32, 32, 3, device)
        plugin_case(recording, "bf16", 32, 40, 32, 3, device, flush=True)  # the database made and migrated
        print(
            f"{'shape':<26}{'repeat':>7}{'hand':>9}{'plugin':>9}{'ratio':>8}{'recording':>11}{'ratio':>8}"
            f"{'   CPU time: ratio, recording':<30}"
        )
        for repeat in repeats:
            for quant, m, n, k in shapes:
                if quant == "ptpc" and why_not_ptpc:
                    print(f"{quant} {m}x{n}x{k}: skipped, {why_not_ptpc}")
                    continue
                row = one_shape(
                    quant, m, n, k, repeat, rounds, device, plain, recording, args.budget_end, args.new_seeds
                )
                if row is None:
                    print(f"{quant} {m}x{n}x{k} repeat {repeat}: skipped, out of time")
                    continue
                report["rows"].append(row)
                print(
                    f"{quant + ' ' + f'{m}x{n}x{k}':<26}{repeat:>7}{row['hand_ms']:>9.2f}{row['plugin_ms']:>9.2f}"
                    f"{row['ratio']:>7.2f}x{row['recording_ms']:>11.2f}{row['recording_ratio']:>7.2f}x"
                    f"{row['cpu_ratio']:>10.2f}x{row['cpu_recording_ratio']:>8.2f}x",
                    flush=True,
                )
    print(
        "hand: the protocol in plain torch; plugin: gc.session(db=None); recording: into SQLite, flushed each case;\n"
        "CPU time: the same minima by this thread's CPU clock (the steadier measure on a loaded CPU)"
    )
    return report


def one_shape(quant, m, n, k, repeat, rounds, device, plain, recording, budget_end, new_seeds=False) -> dict | None:
    step = shape_step(quant, device)
    seeds = itertools.count(1_000_003) if new_seeds else itertools.repeat(None)
    arms = {
        "hand": lambda shape: hand_case(quant, *shape, repeat, device),
        "plugin": lambda shape: plugin_case(plain, quant, *shape, repeat, device, False, next(seeds)),
        "recording": lambda shape: plugin_case(recording, quant, *shape, repeat, device, True, next(seeds)),
    }
    names = list(arms)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for round_index in range(rounds):
        if budget_end is not None and time.monotonic() > budget_end:
            if round_index == 0:
                return None
            break
        shape = (m, n + step * (round_index // 2 + 1) * (1 if round_index % 2 == 0 else -1), k)  # n+1, n-1, n+2, ...
        hand_case(quant, *shape, 1, device)  # torch's own per-shape set-up, paid alike by both ways
        order = names[round_index % len(names) :] + names[: round_index % len(names)]
        for name in order:
            times[name].append(timed(lambda name=name: arms[name](shape), device))
    best = {name: min(wall for wall, _ in values) * 1e3 for name, values in times.items()}
    cpu = {name: min(used for _, used in values) * 1e3 for name, values in times.items()}
    return {
        "quant": quant,
        "shape": [m, n, k],
        "repeat": repeat,
        "step": step,
        "rounds": len(times["hand"]),
        "hand_ms": best["hand"],
        "plugin_ms": best["plugin"],
        "recording_ms": best["recording"],
        "ratio": best["plugin"] / best["hand"],
        "recording_ratio": best["recording"] / best["hand"],
        "cpu_ms": cpu,
        "cpu_ratio": cpu["plugin"] / cpu["hand"],
        "cpu_recording_ratio": cpu["recording"] / cpu["hand"],
        "plugin_ratios": [p[0] / h[0] for p, h in zip(times["plugin"], times["hand"])],
        "times_ms": {name: [[v * 1e3 for v in pair] for pair in values] for name, values in times.items()},
    }


# --- view suite -----------------------------------------------------------------------------


def suite_shapes(count: int, device: str) -> list[tuple[int, int, int]]:
    """``count`` distinct shapes: 64 to 256 on the CPU, 256 to 2048 on a GPU (aligned for its GEMMs)."""
    if device == "cpu":
        base, step, k_step = 64, 16, 64
    else:
        base, step, k_step = 256, 128, 256
    return [(base + step * (i % 13), base + step * (i // 13 % 13), base + k_step * (i // 169)) for i in range(count)]


SUITE_HEAD = """\
import pytest
import torch

DEVICE = {device!r}
if DEVICE == "cpu":
    torch.set_num_threads(1)
SHAPES = {shapes!r}
"""

PLUGIN_SUITE = (
    SUITE_HEAD
    + """

@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm(gemmcheck, m, n, k):
    case = gemmcheck.case("hand_loop_suite", m=m, n=n, k=k, device=DEVICE)
    x = case.inputs()
    case.run(lambda out: torch.matmul(x.a, x.b.t(), out=out))
"""
)

HAND_SUITE = (
    SUITE_HEAD
    + """
from benchmarks.hand_loop import hand_case


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm(m, n, k):
    hand_case("bf16", m, n, k, {repeat}, DEVICE)  # 5% of |ref| flags near-zero outputs: counted, not asserted
"""
)


def plugin_registered() -> bool:
    from importlib import metadata

    return any(entry.name == "gemmcheck" for entry in metadata.entry_points(group="pytest11"))


def suite_view(args) -> dict:
    device, count, repeat = args.device, args.count, int(str(args.repeat).split(",")[0])
    rounds = args.rounds or 3
    shapes = suite_shapes(count, device)
    report = {
        "device": device,
        "count": count,
        "repeat": repeat,
        "rounds": rounds,
        "hand_s": [],
        "plugin_s": [],
        "unrecorded_s": [],
        "hand_cpu_s": [],
        "plugin_cpu_s": [],
        "unrecorded_cpu_s": [],
    }
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    plugin_option = [] if plugin_registered() else ["-p", "pytest_gemmcheck.plugin"]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "test_plugin_suite.py").write_text(PLUGIN_SUITE.format(device=device, shapes=shapes))
        (work / "test_hand_suite.py").write_text(HAND_SUITE.format(device=device, shapes=shapes, repeat=repeat))
        common = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
        plugin = common + plugin_option + ["test_plugin_suite.py", f"--gemmcheck-repeat={repeat}"]
        commands = {
            "hand": common + ["-p", "no:gemmcheck", "test_hand_suite.py"],
            "plugin": plugin + [f"--gemmcheck-db={work / 'history.db'}"],
            "unrecorded": plugin + ["--gemmcheck-no-record"],
        }
        sizes = [sorted({shape[axis] for shape in shapes}) for axis in range(3)]
        print(
            f"{device}: a pytest suite of {count} distinct shapes (m {sizes[0][0]}-{sizes[0][-1]}, n {sizes[1][0]}-"
            f"{sizes[1][-1]}, k {sizes[2][0]}-{sizes[2][-1]}), repeat {repeat}: the hand loops, the plugin recording "
            f"into SQLite (one database for every round) and the plugin recording nothing; wall time of each pytest "
            f"session, s:"
        )
        names = list(commands)
        if not args.no_bytecode:  # every module each arm imports compiled once, as a machine that ran it before has it
            (work / "test_plugin_warm.py").write_text(PLUGIN_SUITE.format(device=device, shapes=shapes[:1]))
            (work / "test_hand_warm.py").write_text(HAND_SUITE.format(device=device, shapes=shapes[:1], repeat=repeat))
            warm_files = {"test_hand_suite.py": "test_hand_warm.py", "test_plugin_suite.py": "test_plugin_warm.py"}
            for name in names:
                warm = [warm_files.get(part, part) for part in commands[name]]
                subprocess.run(warm, cwd=work, env=env, capture_output=True, text=True)
            print("  bytecode kept: written by one untimed session of each arm over one shape")
        for round_index in range(rounds):
            if args.budget_end is not None and time.monotonic() > args.budget_end and round_index:
                print("out of time: no more rounds")
                break
            for name in names[round_index % 3 :] + names[: round_index % 3]:
                started, cpu = time.perf_counter(), children_cpu_s()
                done = subprocess.run(commands[name], cwd=work, env=env, capture_output=True, text=True)
                seconds, cpu_seconds = time.perf_counter() - started, children_cpu_s() - cpu
                if done.returncode != 0:
                    print(f"{name} suite failed (rc {done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
                    return report
                report[f"{name}_s"].append(seconds)
                report[f"{name}_cpu_s"].append(cpu_seconds)
                print(
                    f"  round {round_index + 1} {name:<11}{seconds:8.2f} s, CPU {cpu_seconds:6.2f} s   "
                    f"{done.stdout.strip().splitlines()[-1]}",
                    flush=True,
                )
    if args.profile_rows:
        profile_suite(
            commands, work_env=env, shapes=shapes, device=device, rows=args.profile_rows, dump_to=args.profile_dump
        )
    for clock, key in (("wall", "s"), ("CPU", "cpu_s")):
        hand, plugin, unrecorded = (min(report[f"{name}_{key}"]) for name in ("hand", "plugin", "unrecorded"))
        report[f"ratio_{key}"], report[f"unrecorded_ratio_{key}"] = plugin / hand, unrecorded / hand
        print(
            f"suite of {count}, {clock} time, the minimum of {len(report['hand_s'])} rounds: hand {hand:.2f} s; "
            f"plugin recording {plugin:.2f} s, {plugin / hand:.2f}x ({(plugin - hand) / count * 1e3:.1f} ms more a "
            f"case, session start-up included); recording nothing {unrecorded:.2f} s, {unrecorded / hand:.2f}x"
        )
    return report


def profile_suite(commands: dict, *, work_env: dict, shapes, device: str, rows: int, dump_to: Path | None) -> None:
    """Each plugin arm once more under cProfile (a fresh database for the recording one): the
    functions with the most time of their own, then the plugin's by inclusive time; each arm's
    stats also written into ``dump_to`` (NAME-suite.pstats), for pstats to read."""
    import io
    import pstats
    import shutil

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "test_plugin_suite.py").write_text(PLUGIN_SUITE.format(device=device, shapes=shapes))
        for name in ("plugin", "unrecorded"):
            dump = work / f"{name}.pstats"
            options = [
                f"--gemmcheck-db={work / 'history.db'}" if arg.startswith("--gemmcheck-db=") else arg
                for arg in commands[name][3:]
            ]  # after "python -m pytest"
            command = [sys.executable, "-m", "cProfile", "-o", str(dump), "-m", "pytest", *options]
            done = subprocess.run(command, cwd=work, env=work_env, capture_output=True, text=True)
            if done.returncode != 0 or not dump.exists():
                print(
                    f"{name} suite under cProfile failed (rc {done.returncode}):\n{(done.stdout + done.stderr)[-2000:]}"
                )
                continue
            for sort, restriction in (("tottime", ()), ("cumulative", ("pytest_gemmcheck",))):
                text = io.StringIO()
                stats = pstats.Stats(str(dump), stream=text)
                stats.sort_stats(sort).print_stats(*restriction, rows)
                print(f"\n{name} suite of {len(shapes)} under cProfile, by {sort} time:")
                print("\n".join(line for line in text.getvalue().splitlines()[6:] if line.strip()))
            if dump_to is not None:
                dump_to.mkdir(parents=True, exist_ok=True)
                shutil.copy(dump, dump_to / f"{name}-suite.pstats")


def children_cpu_s() -> float:
    """User and system CPU seconds of this process's finished children: a session's own work,
    steadier than its wall time on a loaded machine."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --- view gpu -------------------------------------------------------------------------------


def gpu_view(args) -> dict:
    if not torch.cuda.is_available():
        print("no GPU: nothing to measure")
        return {}
    from benchmarks import case_cost

    args.device = "cuda"
    started = time.monotonic()
    args.budget_end = started + args.budget_s * 0.45  # the cases first, within their share
    args.shapes, args.rounds, args.new_seeds = "", 3, False
    args.repeat = "12,100"
    report = {"cases": cases_view(args)}
    args.budget_end = started + args.budget_s * 0.85
    args.repeat, args.count, args.rounds, args.no_bytecode = "12", args.count or 200, 2, False
    print()
    report["suite"] = suite_view(args)
    if time.monotonic() - started < args.budget_s * 0.85:  # what a case pays beside its launches, piece by piece
        print()
        case_cost.pieces_view(argparse.Namespace(device="cuda", shapes="", repeat=12, cases=3, record=False))
    print(f"gpu view: {time.monotonic() - started:.0f} s")
    return report


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m benchmarks.hand_loop", description=__doc__.splitlines()[0])
    views = top.add_subparsers(dest="view", required=True)
    default_device = "cuda" if torch.cuda.is_available() else "cpu"
    cases = views.add_parser("cases", help="whole cases one by one: hand loop, plugin, plugin recording")
    cases.add_argument("--device", choices=["cpu", "cuda"], default=default_device)
    cases.add_argument("--repeat", default="12,100", help="launches a case, comma-separated (default %(default)s)")
    cases.add_argument("--shapes", default="", help="e.g. 256 or ptpc: only these")
    cases.add_argument("--rounds", type=int, default=None, help="default 15 on the CPU, 3 on a GPU")
    cases.add_argument(
        "--new-seeds", action="store_true", help="each plugin case a seed of its own (default: the session's)"
    )
    suite = views.add_parser("suite", help="a pytest suite of distinct shapes, the plugin's against hand loops")
    suite.add_argument("--device", choices=["cpu", "cuda"], default=default_device)
    suite.add_argument("--count", type=int, default=200)
    suite.add_argument("--repeat", default="12")
    suite.add_argument("--rounds", type=int, default=None, help="default 3")
    suite.add_argument(
        "--profile-rows", type=int, default=0, help="then each plugin arm once under cProfile: this many rows"
    )
    suite.add_argument("--profile-dump", type=Path, help="and its stats into this folder, for pstats")
    suite.add_argument(
        "--no-bytecode", action="store_true", help="sessions compile what they import as the environment says"
    )
    gpu = views.add_parser("gpu", help="cases, the suite and case_cost's pieces on the current GPU, within --budget-s")
    gpu.add_argument("--budget-s", type=float, default=230.0)
    gpu.add_argument("--count", type=int, default=200)
    for sub in (cases, suite):
        sub.set_defaults(budget_end=None)
    for sub in (cases, suite, gpu):
        sub.add_argument("--json", type=Path, help="merge the numbers into this JSON file, under 'hand_loop'")
    return top


VIEWS = {"cases": cases_view, "suite": suite_view, "gpu": gpu_view}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    print_header("benchmarks.hand_loop", argv)
    if getattr(args, "device", "cuda") == "cpu":
        torch.set_num_threads(1)
    report = VIEWS[args.view](args)
    if args.json and report:
        merge_json(args.json, "hand_loop", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
