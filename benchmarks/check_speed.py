"""How fast one launch's check is, as ratios measured in one run.

    python benchmarks/check_speed.py                 # on a GPU: 16384x7168 bf16, one stored copy
    python benchmarks/check_speed.py --sweep         # also a few block shapes of the fused kernel
    python benchmarks/check_speed.py --m 64 --n 512  # anything smaller; without a GPU this is
                                                     # the default, run by Triton's interpreter

The fused check must read out, ref and the stored copy: 3 * M * N * element bytes. Its time is
set against a device-to-device copy (which reads and writes) measured here on the same GPU,
against torch.testing.assert_close on the same tensors, against a naive torch comparison (the
two detectors written the obvious way, with full-size temporaries), and against the plugin's
torch path (check.check_launch). Target: the check reads at >= 70% of the copy's bandwidth.
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

from pytest_gemmcheck import check  # noqa: E402
from pytest_gemmcheck.gpu import fused_check  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
TOL = check.Tolerance()


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




def same_numbers(fused, expected) -> bool:
    (accuracy, diffs), (want, want_diffs) = fused, expected
    return (accuracy.wrong == want.wrong and accuracy.nonfinite == want.nonfinite
            and accuracy.max_abs_err == want.max_abs_err and accuracy.max_rel_err == want.max_rel_err
            and abs(accuracy.rel_l2 - want.rel_l2) <= 1e-12 * max(abs(want.rel_l2), 1e-300)
            and [d.differing for d in diffs] == [d.differing for d in want_diffs]
            and [d.max_diff_rel for d in diffs] == [d.max_diff_rel for d in want_diffs])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=16384 if ON_GPU else 64)
    parser.add_argument("--n", type=int, default=7168 if ON_GPU else 512)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--tile", default="256x256", help="tile for the per-tile counts ('none' for none)")
    parser.add_argument("--repeat", type=int, default=20 if ON_GPU else 2)
    parser.add_argument("--sweep", action="store_true", help="also time a few block shapes of the fused kernel")
    args = parser.parse_args(argv)

    device = torch.device("cuda" if ON_GPU else "cpu")
    dtype = DTYPES[args.dtype]
    tile = None if args.tile.lower() == "none" else check.parse_tile(args.tile)
    m, n = args.m, args.n
    out, ref, rowmax, copy = make_tensors(m, n, dtype, device)
    read_bytes = 3 * m * n * out.element_size()  # out, ref and the copy, once each

    where = torch.cuda.get_device_name(device) if ON_GPU else "CPU, Triton interpreter (smoke test: no speed claim)"
    print(f"{where}; {m}x{n} {args.dtype}, one stored copy, tile {args.tile}; "
          f"the check reads {read_bytes / 1e6:.1f} MB; median of {args.repeat}")

    copy_time = copy_seconds(read_bytes, device, args.repeat)
    copy_bandwidth = 2 * read_bytes / copy_time  # a copy reads and writes
    print(f"device-to-device copy of {read_bytes / 1e6:.1f} MB: {copy_time * 1e3:.3f} ms, "
          f"{copy_bandwidth / 1e9:.0f} GB/s (read + write)")

    fused = lambda: fused_check.check_launch(out, ref, rowmax, TOL, tile, [copy])  # noqa: E731
    atol = TOL.rtol * float(rowmax.max())  # assert_close's terms for "within 5% of the largest |ref|"
    timings = {
        "fused check (Triton)": seconds_per_call(fused, args.repeat),
        "fused check, no tile": seconds_per_call(
            lambda: fused_check.check_launch(out, ref, rowmax, TOL, None, [copy]), args.repeat),
        "check.check_launch (torch path)": seconds_per_call(
            lambda: check.check_launch(out, ref, rowmax, TOL, tile, [copy]), args.repeat),
        "naive torch comparison": seconds_per_call(lambda: naive(out, ref, copy), args.repeat),
        "torch.testing.assert_close": seconds_per_call(
            lambda: torch.testing.assert_close(out, ref, rtol=TOL.rtol, atol=atol), args.repeat),
    }
    if args.sweep:
        for block_m in (4, 8, 16):
            for num_warps in (4, 8):
                for per_sm in (4, 8, 16):
                    config = fused_check.LaunchConfig(block_m=block_m, num_warps=num_warps, programs_per_sm=per_sm)
                    timings[f"fused, block_m={block_m} warps={num_warps} programs/SM={per_sm}"] = seconds_per_call(
                        lambda c=config: fused_check.check_launch(out, ref, rowmax, TOL, tile, [copy], config=c),
                        args.repeat)

    base = timings["fused check (Triton)"]
    print(f"\n{'':44s} {'ms/check':>9s} {'read GB/s':>10s} {'of copy bw':>10s} {'time/fused':>10s}")
    for name, seconds in timings.items():
        bandwidth = read_bytes / seconds
        print(f"{name:44s} {seconds * 1e3:9.3f} {bandwidth / 1e9:10.0f} {bandwidth / copy_bandwidth:10.1%} "
              f"{seconds / base:9.1f}x")

    torch_sum = seconds_per_call(lambda: check.checksum(out), args.repeat)
    fused_sum = seconds_per_call(lambda: fused_check.checksum(out), args.repeat)
    print(f"\nchecksum: fused {fused_sum * 1e3:.3f} ms, torch {torch_sum * 1e3:.3f} ms "
          f"({torch_sum / fused_sum:.1f}x); equal: {fused_check.checksum(out) == check.checksum(out)}")

    broken = out.clone()
    broken[m // 3:m // 3 + max(1, m // 64), : max(1, n // 8)] = float("nan")  # unwritten rows: the bad path
    bad = seconds_per_call(lambda: fused_check.check_launch(broken, ref, rowmax, TOL, tile, [copy]), args.repeat)
    print(f"fused check of an output with a NaN block: {bad * 1e3:.3f} ms ({bad / base:.2f}x the clean one)")

    agree = (same_numbers(fused(), check.check_launch(out, ref, rowmax, TOL, tile, [copy]))
             and same_numbers(fused_check.check_launch(broken, ref, rowmax, TOL, tile, [copy]),
                              check.check_launch(broken, ref, rowmax, TOL, tile, [copy])))
    ratio = read_bytes / base / copy_bandwidth
    print(f"\nsame numbers as the torch path: {agree}")
    print(f"fused check at {ratio:.1%} of copy bandwidth (target >= 70%); "
          f"{timings['torch.testing.assert_close'] / base:.1f}x faster than assert_close (target >= 10x)")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
