"""How fast one launch's check is, as ratios measured in one run.

    python -m benchmarks.check_speed                 # on a GPU: 16384x7168 bf16, one stored copy
    python -m benchmarks.check_speed --sweep         # also a table of launch configurations (< 90 s on an H200)
    python -m benchmarks.check_speed --m 64 --n 512  # anything smaller; without a GPU this is
                                                     # the default, run by Triton's interpreter

The fused check reads out, ref and the stored copy once: 3 * M * N * element bytes. The
yardstick is a device-to-device copy of that many bytes, measured here on the same GPU (a copy
reads and writes, so its bandwidth counts both). Targets: the check reads at >= 70% of the
copy's bandwidth, and is >= 10x faster than torch.testing.assert_close on the same tensors.

Each way of checking gets two times:

* wall: one call as the harness makes it, host work and the one synchronisation included
  (median over --repeat calls). The bandwidth percentages and ratios use this.
* device: the kernels alone, launched back to back and timed with CUDA events (fused check
  only, mean per call): what the GPU spends, without the host's share. Wall minus device is
  roughly the host's share per check.

and the fused check with the checksum also a third, "queued": as case.run runs it, each check
queued behind its launch and its numbers read back one check later (api.start_check
with replay=True, then the previous check's result()), so that the host's share overlaps the
GPU's work; the wall time of --repeat such checks in a row, per check. Rows below it show the
same without the CUDA graph, and through Triton's own launch path. This is the check's cost per launch in
the harness, and the headline ratios use it.

The harness line sets poison fill + check against a 0.384 ms fp8 GEMM of the same output
(16384x7168x2048, measured earlier), with the budget of 1.6x the GEMM for the whole launch.
"check + checksum" is api.check_launch_and_checksum: the accuracy check plus the
output's checksum in the same read, no stored copy read (consistency by comparing checksums).

--configs 4x256x4@6,16x128x4@4 times the given launch configurations (block rows x block
elements x warps @ programs per multiprocessor) against each other, interleaved round by round
so that a drifting GPU or host treats them alike: the queued wall time and the device time of
the check case.run makes, and the queued time of its repeat pass, medians over the rounds.

--sweep times the fused kernel's launch configurations (block rows x block bytes x warps,
each at several programs per multiprocessor, without a tile) by device time, best first, and
ends with the configuration to make the default. It times the check case.run makes: accuracy
and the checksum, reading out and ref.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

ON_GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") != "1"
if not ON_GPU:
    # Triton reads the flag when it is imported and on the first launch: set it first
    os.environ["TRITON_INTERPRET"] = "1"

from gemmcheck_dev import cuda_timing  # noqa: E402
from gemmcheck_dev.results import print_header  # noqa: E402
from pytest_gemmcheck.case import identity  # noqa: E402
from pytest_gemmcheck.checking import checksum as checksums  # noqa: E402
from pytest_gemmcheck.checking import rule  # noqa: E402
from pytest_gemmcheck.checking import torch_backend as check  # noqa: E402
from pytest_gemmcheck.checking.triton import fused_check  # noqa: E402
from pytest_gemmcheck.checking.triton.output_check import OutputCheck  # noqa: E402
from pytest_gemmcheck.checking.triton.plan import main_plan  # noqa: E402
from pytest_gemmcheck.checking.triton.runtime import RUNTIME  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
TOL = rule.Tolerance()
GEMM_MS = 0.384  # fp8 GEMM 16384x7168x2048 on an H200 (benchmarks/results/h200/2026-11-29-all-parts.log)
HARNESS_BUDGET = 1.6  # the whole launch (poison fill + GEMM + check + record) within this x the GEMM
SWEEP_DEADLINE_S = 70  # --sweep starts no block shape after this, so that the run ends within 90 s


def synchronize():
    if ON_GPU:
        torch.cuda.synchronize()


def seconds_per_call(fn, repeat: int, warmup: int = 2) -> float:
    """Median wall time of ``fn()``, each call ended by a synchronisation (as a check is)."""
    for _ in range(warmup):
        fn()
    synchronize()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def device_seconds(enqueue, repeat: int) -> float:
    """GPU time per call of ``enqueue`` (kernels only): ``repeat`` calls back to back between two
    CUDA events, after a warm-up call (which compiles); in the interpreter, wall time."""
    if ON_GPU:
        return cuda_timing.device_seconds(enqueue, repeat)
    enqueue()
    return seconds_per_call(enqueue, max(1, repeat // 4), warmup=0)


def copy_seconds(nbytes: int, device, repeat: int) -> float:
    """Median time of a device-to-device copy of ``nbytes`` (CUDA events: no host in the loop)."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    if not ON_GPU:
        return seconds_per_call(lambda: dst.copy_(src), repeat)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(repeat):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) / 1e3)
    return statistics.median(times)


def make_tensors(m: int, n: int, dtype, device):
    """A GEMM-like reference, an output within tolerance of it, and a stored copy of the output."""
    g = torch.Generator(device=device).manual_seed(0)
    ref = (torch.randn(m, n, generator=g, device=device) * 4).to(dtype)
    rowmax = check.row_max(ref)
    noise = torch.randn(m, n, generator=g, device=device) * (0.003 * rowmax[:, None])
    out = (ref.float() + noise).to(dtype)
    return out, ref, rowmax, out.clone()


def naive(out, ref, copy):
    """Both detectors the obvious way: full-size float temporaries, two host reads."""
    o, r = out.float(), ref.float()
    scale = r.abs().amax(dim=1, keepdim=True)
    wrong = (~torch.isfinite(o) | ((o - r).abs() > TOL.rtol * scale)).sum()
    bits = {2: torch.int16, 4: torch.int32}[out.element_size()]
    differing = (out.view(bits) != copy.view(bits)).sum()
    return int(wrong), int(differing)


def enqueuer(out, ref, rowmax, tile, copies, config=None, checksum=False):
    """The fused check's kernels for these tensors, as a function that launches them and does
    not wait (scratch allocated once, outside the timing)."""
    run = OutputCheck(
        out,
        ref,
        rowmax.to(torch.float32).contiguous(),
        TOL,
        tile,
        list(copies),
        config or fused_check.LaunchConfig(),
        checksum=checksum,
    )
    return lambda: run.enqueue(row_scale=True)


def queued_seconds(start, repeat: int) -> float:
    """Wall time per check when each is queued and its numbers read one check later, as case.run
    does (``start()`` returns a PendingCheck)."""
    for _ in range(3):  # warm-up: compiles, and captures a replayed check's CUDA graph
        start().result()
    synchronize()
    began = time.perf_counter()
    previous = start()
    for _ in range(repeat - 1):
        current = start()
        previous.result()
        previous = current
    previous.result()
    return (time.perf_counter() - began) / repeat


def same_numbers(fused, expected) -> bool:
    (accuracy, diffs), (want, want_diffs) = fused, expected
    return (
        accuracy.wrong == want.wrong
        and accuracy.nonfinite == want.nonfinite
        and accuracy.max_abs_err == want.max_abs_err
        and accuracy.max_rel_err == want.max_rel_err
        # relL2 sums fp32 squares within a task: kernels.py's docstring bounds it at 2.9e-6
        and abs(accuracy.rel_l2 - want.rel_l2) <= 1e-5 * abs(want.rel_l2) + 1e-15
        and [d.differing for d in diffs] == [d.differing for d in want_diffs]
        and [d.max_diff_rel for d in diffs] == [d.max_diff_rel for d in want_diffs]
    )


def sweep(out, ref, rowmax, read_bytes, copy_bandwidth, repeat, started) -> None:
    """Device time of each launch configuration; the best first, and the one to make default.
    Without a tile (the tile kernel reads one count per row of a clean output whatever the
    configuration), so that each block shape compiles one kernel: shapes most likely to be
    best go first, should the deadline cut the list."""
    element = out.element_size()
    if ON_GPU:
        shapes = [
            (block_m, row_bytes // element, warps)
            for row_bytes in (512, 1024, 256)
            for block_m in (8, 16, 4)
            for warps in (8, 4)
        ]
        per_sm = (2, 3, 4, 6, 8)
    else:
        shapes = [(4, 128 // element, 4), (8, 256 // element, 8)]
        per_sm = (1, 2)
    default = fused_check.LaunchConfig()
    rows, skipped = [], []
    print(
        f"\nsweep: {len(shapes)} block shapes x programs per multiprocessor {per_sm}, no tile; device time per "
        f"check (mean of {repeat} back to back); no shape starts after {SWEEP_DEADLINE_S} s"
    )
    for block_m, block_n, warps in shapes:
        if time.monotonic() - started > SWEEP_DEADLINE_S:
            skipped.append((block_m, block_n, warps))
            continue
        for programs_per_sm in per_sm:
            config = fused_check.LaunchConfig(
                block_m=block_m,
                block_n=block_n,
                num_warps=warps,
                programs_per_sm=programs_per_sm,
                programs=None if ON_GPU else programs_per_sm,
            )
            try:
                seconds = device_seconds(enqueuer(out, ref, rowmax, None, [], config, checksum=True), repeat)
            except Exception as exc:  # a configuration the compiler or the GPU refuses
                print(
                    f"  block {block_m}x{block_n}, {warps} warps, {programs_per_sm}/SM: failed "
                    f"({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
                )
                break
            rows.append((seconds, block_m, block_n, warps, programs_per_sm))
    rows.sort()
    plan = main_plan(out.shape[0], out.shape[1], element, default, out.device)
    print(
        f"\n{'block rows':>10s} {'block cols':>10s} {'warps':>5s} {'progs/SM':>8s} {'device ms':>9s} "
        f"{'of copy bw':>10s}"
    )
    for seconds, block_m, block_n, warps, programs_per_sm in rows:
        is_default = (block_m, block_n, warps, programs_per_sm) == (
            plan.block_m,
            plan.block_n,
            plan.num_warps,
            default.programs_per_sm,
        )
        print(
            f"{block_m:10d} {block_n:10d} {warps:5d} {programs_per_sm:8d} {seconds * 1e3:9.3f} "
            f"{read_bytes / seconds / copy_bandwidth:10.1%}{'  <- the current default' if is_default else ''}"
        )
    if skipped:
        print(f"not timed (deadline): {', '.join(f'{m}x{n}/{w}w' for m, n, w in skipped)}")
    if rows:
        seconds, block_m, block_n, warps, programs_per_sm = rows[0]
        print(
            f"\nbest: LaunchConfig(block_m={block_m}, block_n={block_n * element} bytes = {block_n} elements, "
            f"num_warps={warps}, programs_per_sm={programs_per_sm}): {seconds * 1e3:.3f} ms device, "
            f"{read_bytes / seconds / copy_bandwidth:.1%} of copy bandwidth"
        )


def parse_config(text: str) -> fused_check.LaunchConfig:
    """'BMxBNxW@P' (block rows x block elements x warps @ programs per multiprocessor)."""
    shape, _, per_sm = text.partition("@")
    block_m, block_n, warps = (int(part) for part in shape.split("x"))
    return fused_check.LaunchConfig(
        block_m=block_m,
        block_n=block_n,
        num_warps=warps,
        programs_per_sm=int(per_sm or 6),
        programs=None if ON_GPU else int(per_sm or 1),
    )


def compare_configs(texts, out, ref, rowmax, tile, read_bytes, copy_bandwidth, repeat, rounds=7) -> None:
    """The given configurations, interleaved round by round: queued wall and device time of the
    accuracy check + checksum, medians over the rounds."""
    configs = {text: parse_config(text) for text in texts}
    walls = {text: [] for text in texts}
    devices = {text: [] for text in texts}
    repeats = {text: [] for text in texts}  # the repeat pass (checksum + next fill) queued, as case.run runs it
    spare = torch.empty_like(out)
    for _ in range(rounds):
        for text, config in configs.items():
            walls[text].append(
                queued_seconds(
                    lambda: fused_check.start_check(
                        out, ref, rowmax, TOL, tile, checksum=True, config=config, replay=True
                    ),
                    max(repeat, 30 if ON_GPU else 2),
                )
            )
            devices[text].append(device_seconds(enqueuer(out, ref, rowmax, None, [], config, checksum=True), repeat))
            repeats[text].append(
                queued_seconds(
                    lambda: fused_check.start_checksum_and_fill(out, spare, config=config),
                    max(repeat, 30 if ON_GPU else 2),
                )
            )
    print(
        f"\nconfigurations, interleaved over {rounds} rounds (medians; check + checksum, reads "
        f"{read_bytes / 1e6:.1f} MB):"
    )
    moved = 2 * out.numel() * out.element_size()
    print(
        f"{'config':>14s} {'queued ms':>9s} {'of copy bw':>10s} {'device ms':>9s} {'of copy bw':>10s} "
        f"{'repeat pass ms':>14s} {'of copy bw':>10s}"
    )
    for text in texts:
        wall, device, again = (
            statistics.median(walls[text]),
            statistics.median(devices[text]),
            statistics.median(repeats[text]),
        )
        print(
            f"{text:>14s} {wall * 1e3:9.3f} {read_bytes / wall / copy_bandwidth:10.1%} {device * 1e3:9.3f} "
            f"{read_bytes / device / copy_bandwidth:10.1%} {again * 1e3:14.3f} "
            f"{moved / again / copy_bandwidth:10.1%}"
        )


def main(argv=None) -> int:
    started = time.monotonic()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=16384 if ON_GPU else 64)
    parser.add_argument("--n", type=int, default=7168 if ON_GPU else 512)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--tile", default="256x256", help="tile for the per-tile counts ('none' for none)")
    parser.add_argument("--repeat", type=int, default=20 if ON_GPU else 2)
    parser.add_argument("--sweep", action="store_true", help="also time the fused kernel's launch configurations")
    parser.add_argument("--configs", default="", help="also compare these configurations, e.g. 4x256x4@6,16x128x4@4")
    args = parser.parse_args(argv)
    print_header("benchmarks.check_speed", argv)

    device = torch.device("cuda" if ON_GPU else "cpu")
    dtype = DTYPES[args.dtype]
    tile = None if args.tile.lower() == "none" else identity.parse_tile(args.tile)
    m, n = args.m, args.n
    out, ref, rowmax, copy = make_tensors(m, n, dtype, device)
    read_bytes = 3 * m * n * out.element_size()  # out, ref and the copy, once each

    where = torch.cuda.get_device_name(device) if ON_GPU else "CPU, Triton interpreter (smoke test: no speed claim)"
    print(
        f"{where}; {m}x{n} {args.dtype}, one stored copy, tile {args.tile}; "
        f"the check reads {read_bytes / 1e6:.1f} MB; median of {args.repeat}"
    )

    copy_time = copy_seconds(read_bytes, device, args.repeat)
    copy_bandwidth = 2 * read_bytes / copy_time  # a copy reads and writes
    print(
        f"device-to-device copy of {read_bytes / 1e6:.1f} MB: {copy_time * 1e3:.3f} ms, "
        f"{copy_bandwidth / 1e9:.0f} GB/s (read + write): the yardstick"
    )

    fused = lambda: fused_check.check_launch(out, ref, rowmax, TOL, tile, [copy])  # noqa: E731
    with_checksum = lambda: fused_check.check_launch_and_checksum(out, ref, rowmax, TOL, tile)  # noqa: E731
    atol = TOL.rtol * float(rowmax.max())  # assert_close's terms for "within 5% of the largest |ref|"
    # name: (wall seconds, device seconds or None, bytes it reads)
    timings = {
        "fused check (Triton)": (
            seconds_per_call(fused, args.repeat),
            device_seconds(enqueuer(out, ref, rowmax, tile, [copy]), args.repeat),
            read_bytes,
        ),
        "fused check, no tile": (
            seconds_per_call(lambda: fused_check.check_launch(out, ref, rowmax, TOL, None, [copy]), args.repeat),
            device_seconds(enqueuer(out, ref, rowmax, None, [copy]), args.repeat),
            read_bytes,
        ),
        "fused check + checksum, no copy": (
            seconds_per_call(with_checksum, args.repeat),
            device_seconds(enqueuer(out, ref, rowmax, tile, [], checksum=True), args.repeat),
            read_bytes * 2 // 3,
        ),
        "check.check_launch (torch path)": (
            seconds_per_call(lambda: check.check_launch(out, ref, rowmax, TOL, tile, [copy]), max(2, args.repeat // 4)),
            None,
            read_bytes,
        ),
        "naive torch comparison": (seconds_per_call(lambda: naive(out, ref, copy), args.repeat), None, read_bytes),
        "torch.testing.assert_close": (
            seconds_per_call(lambda: torch.testing.assert_close(out, ref, rtol=TOL.rtol, atol=atol), args.repeat),
            None,
            read_bytes * 2 // 3,
        ),
    }

    queued = queued_seconds(
        lambda: fused_check.start_check(out, ref, rowmax, TOL, tile, checksum=True, replay=True),
        max(args.repeat, 50 if ON_GPU else 2),
    )
    timings["fused check + checksum, queued (case.run)"] = (queued, None, read_bytes * 2 // 3)
    timings["  the same, no CUDA graph"] = (
        queued_seconds(
            lambda: fused_check.start_check(out, ref, rowmax, TOL, tile, checksum=True),
            max(args.repeat, 50 if ON_GPU else 2),
        ),
        None,
        read_bytes * 2 // 3,
    )
    RUNTIME.direct_launch = False  # the same through Triton's own launch path (gpu/launch.py)
    timings["  no graph, Triton's launch path"] = (
        queued_seconds(
            lambda: fused_check.start_check(out, ref, rowmax, TOL, tile, checksum=True),
            max(args.repeat, 50 if ON_GPU else 2),
        ),
        None,
        read_bytes * 2 // 3,
    )
    RUNTIME.direct_launch = True
    # a repeated launch whose checksum is known (case.run's default): one read of out for its
    # checksum and, in the same pass, the next buffer's poison; its "reads MB" are the bytes it moves
    spare = torch.empty_like(out)
    repeat_bytes = 2 * out.numel() * out.element_size()
    timings["repeat pass: checksum + next fill, queued"] = (
        queued_seconds(lambda: fused_check.start_checksum_and_fill(out, spare), max(args.repeat, 50 if ON_GPU else 2)),
        None,
        repeat_bytes,
    )
    timings["  checksum alone, queued"] = (
        queued_seconds(lambda: fused_check.start_checksum_and_fill(out), max(args.repeat, 50 if ON_GPU else 2)),
        None,
        repeat_bytes // 2,
    )
    base = timings["fused check (Triton)"][0]
    print(f"\n{'':34s} {'wall ms':>8s} {'device ms':>9s} {'reads MB':>8s} {'of copy bw':>10s} {'wall/fused':>10s}")
    for name, (seconds, device_time, nbytes) in timings.items():
        shown = f"{device_time * 1e3:9.3f}" if device_time is not None else f"{'':>9s}"
        print(
            f"{name:34s} {seconds * 1e3:8.3f} {shown} {nbytes / 1e6:8.1f} "
            f"{nbytes / seconds / copy_bandwidth:10.1%} {seconds / base:9.1f}x"
        )
    print(
        "(of copy bw: the bytes each reads per wall second, against the copy's read + write bandwidth; the repeat "
        "pass's bytes are its read and its write)"
    )

    torch_sum = seconds_per_call(lambda: checksums.checksum(out), max(2, args.repeat // 4))
    fused_sum = seconds_per_call(lambda: fused_check.checksum(out), args.repeat)
    print(
        f"\nchecksum alone: fused {fused_sum * 1e3:.3f} ms, torch {torch_sum * 1e3:.3f} ms "
        f"({torch_sum / fused_sum:.1f}x); equal: {fused_check.checksum(out) == checksums.checksum(out)}"
    )

    broken = out.clone()
    broken[m // 3 : m // 3 + max(1, m // 64), : max(1, n // 8)] = float("nan")  # unwritten rows: the bad path
    bad = seconds_per_call(lambda: fused_check.check_launch(broken, ref, rowmax, TOL, tile, [copy]), args.repeat)
    print(
        f"fused check of an output with a NaN block (1/64 of the rows, located per tile): {bad * 1e3:.3f} ms "
        f"({bad / base:.2f}x the clean one)"
    )

    fill = seconds_per_call(lambda: broken.fill_(float("nan")), args.repeat)
    for name in (
        "fused check (Triton)",
        "fused check + checksum, no copy",
        "fused check + checksum, queued (case.run)",
    ):
        launch = GEMM_MS / 1e3 + fill + timings[name][0]
        print(
            f"harness with {name}: poison fill {fill * 1e3:.3f} ms + GEMM {GEMM_MS:.3f} ms + check "
            f"{timings[name][0] * 1e3:.3f} ms = {launch * 1e3:.3f} ms = {launch / (GEMM_MS / 1e3):.2f}x the GEMM "
            f"(budget {HARNESS_BUDGET}x, before recording)"
        )

    repeat_pass = timings["repeat pass: checksum + next fill, queued"][0]
    full_launch = GEMM_MS / 1e3 + fill + queued
    repeat_launch = GEMM_MS / 1e3 + repeat_pass
    print(
        f"harness with the repeat pass (case.run's default once an output is checked): GEMM {GEMM_MS:.3f} ms + "
        f"checksum and next fill {repeat_pass * 1e3:.3f} ms = {repeat_launch * 1e3:.3f} ms = "
        f"{repeat_launch / (GEMM_MS / 1e3):.2f}x the GEMM (target 1.35x, before guards and recording); every launch "
        f"in full: {full_launch / (GEMM_MS / 1e3):.2f}x; repeat / full: {repeat_launch / full_launch:.2f}"
    )
    print(
        f"repeat pass: {repeat_bytes / repeat_pass / copy_bandwidth:.1%} of copy bandwidth for the "
        f"{repeat_bytes / 1e6:.1f} MB it moves (target >= 80%)"
    )

    spare.zero_()
    repeat_total = fused_check.start_checksum_and_fill(out, spare).result()
    repeat_agrees = repeat_total == checksums.checksum(out) and bool(torch.isnan(spare).all())
    print(f"repeat pass: the checksum's value, and the next buffer all NaN: {repeat_agrees}")

    expected = check.check_launch(out, ref, rowmax, TOL, tile, [copy])
    accuracy, total = with_checksum()
    agree = (
        same_numbers(fused(), expected)
        and same_numbers(
            fused_check.check_launch(broken, ref, rowmax, TOL, tile, [copy]),
            check.check_launch(broken, ref, rowmax, TOL, tile, [copy]),
        )
        and same_numbers((accuracy, []), (expected[0], []))
        and total == checksums.checksum(out)
    )
    ratio = read_bytes / base / copy_bandwidth
    device_ratio = read_bytes / timings["fused check (Triton)"][1] / copy_bandwidth
    assert_close_s = timings["torch.testing.assert_close"][0]
    print(f"\nsame numbers as the torch path (clean, NaN block, check + checksum): {agree}")
    print(
        f"fused check with a copy, one call: {ratio:.1%} of copy bandwidth by wall time, {device_ratio:.1%} by "
        f"device time; {assert_close_s / base:.1f}x faster than assert_close"
    )
    summed_bytes = read_bytes * 2 // 3
    single = timings["fused check + checksum, no copy"]
    print(
        f"fused check + checksum, one call: {summed_bytes / single[0] / copy_bandwidth:.1%} of copy bandwidth by "
        f"wall time, {summed_bytes / single[1] / copy_bandwidth:.1%} by device time; "
        f"{assert_close_s / single[0]:.1f}x faster than assert_close"
    )
    print(
        f"fused check + checksum as case.run runs it (queued): {summed_bytes / queued / copy_bandwidth:.1%} of copy "
        f"bandwidth by wall time (target >= 70%); {assert_close_s / queued:.1f}x faster than assert_close "
        f"(target >= 10x)"
    )

    if args.configs:
        compare_configs(
            args.configs.split(","), out, ref, rowmax, tile, read_bytes * 2 // 3, copy_bandwidth, args.repeat
        )
    if args.sweep:
        sweep(out, ref, rowmax, read_bytes * 2 // 3, copy_bandwidth, args.repeat, started)
    print(f"\ndone in {time.monotonic() - started:.0f} s")
    return 0 if agree and repeat_agrees else 1


if __name__ == "__main__":
    sys.exit(main())
