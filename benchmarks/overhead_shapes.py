"""What a checked launch costs against a bare one, shape by shape.

    python benchmarks/overhead_shapes.py [--device cpu|cuda] [--repeat 100] [--rounds 5]

For each shape, ``case.run(launch, repeat=R)`` through the plain API (``gc.session(db=None)``:
nothing recorded) against R bare launches of the same kernel into one output, the two timed in
turn in each round (a shared machine drifts), the minimum of the rounds taken for each. The
case's inputs and reference are made before the clock starts (a warm-up run), as a test's
are by its first case. Prints per launch: bare, checked, their ratio, and the host's CPU time
per launch of each (the thread's CPU clock: on a GPU, what the host spends queueing, polling
included; on the CPU, everything), with the spread of the rounds.

GPU: torch.matmul bf16 at 256^3 ... 8192^3 and ptpc torch._scaled_mm at 16384x7168x2048.
CPU (one thread, torch.set_num_threads(1)): torch.matmul bf16 at 64^3 and 256^3.
A benchmark, not a test: it asserts nothing about time.
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

import pytest_gemmcheck as gc  # noqa: E402

GPU_SHAPES = [("bf16", s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192)] + [("ptpc", 16384, 7168, 2048)]
CPU_SHAPES = [("bf16", 64, 64, 64), ("bf16", 256, 256, 256)]


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def kernel_for(quant: str, x):
    if quant == "bf16":
        a, bt = x.a, x.b.t()
        return lambda out: torch.matmul(a, bt, out=out)
    import torch_gemms

    scales = torch_gemms.ptpc_scales(x)
    return lambda out: torch_gemms.scaled_mm(x, scales, out)


def timed(fn, device) -> tuple[float, float]:
    """(wall seconds, this thread's CPU seconds) of fn(), the device idle before and after."""
    synchronize(device)
    wall, cpu = time.perf_counter(), time.thread_time()
    fn()
    synchronize(device)
    return time.perf_counter() - wall, time.thread_time() - cpu


def one_shape(session, quant, m, n, k, device, repeat, rounds) -> dict:
    extra = {"fp8": __import__("torch_gemms").fp8_flavour()} if quant != "bf16" else {}
    case = session.case(f"overhead_{quant}", m=m, n=n, k=k, quant=quant, device=str(device), **extra)
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
    best = {side: (min(w for w, _ in values) / repeat, min(c for _, c in values) / repeat)
            for side, values in samples.items()}
    spread = {side: max(w for w, _ in values) / min(w for w, _ in values) for side, values in samples.items()}
    return {"quant": quant, "shape": [m, n, k], "repeat": repeat, "rounds": rounds,
            "bare_us": best["bare"][0] * 1e6, "checked_us": best["checked"][0] * 1e6,
            "ratio": best["checked"][0] / best["bare"][0],
            "bare_host_us": best["bare"][1] * 1e6, "checked_host_us": best["checked"][1] * 1e6,
            "spread_bare": spread["bare"], "spread_checked": spread["checked"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=None, help="default 3 on a GPU, 7 on the CPU")
    parser.add_argument("--shapes", default="", help="e.g. 256,1024 or ptpc: only these")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
    rounds = args.rounds or (3 if device.type == "cuda" else 7)
    shapes = GPU_SHAPES if device.type == "cuda" else CPU_SHAPES
    if args.shapes:
        wanted = args.shapes.split(",")
        shapes = [s for s in shapes if str(s[1]) in wanted or s[0] in wanted]
    print(f"{device} (torch {torch.__version__}, {torch.get_num_threads()} threads), repeat={args.repeat}, "
          f"min of {rounds} interleaved rounds; per launch:")
    print(f"{'shape':<24} {'bare us':>9} {'checked us':>11} {'ratio':>7} {'host us bare':>13} {'host us checked':>16}"
          f" {'spread':>12}")
    with gc.session(db=None) as session:
        for quant, m, n, k in shapes:
            row = one_shape(session, quant, m, n, k, device, args.repeat, rounds)
            print(f"{quant + ' ' + f'{m}x{n}x{k}':<24} {row['bare_us']:9.1f} {row['checked_us']:11.1f} "
                  f"{row['ratio']:6.2f}x {row['bare_host_us']:13.1f} {row['checked_host_us']:16.1f} "
                  f"{row['spread_bare']:5.2f}/{row['spread_checked']:4.2f}", flush=True)
    print("spread: slowest / fastest round, bare / checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
