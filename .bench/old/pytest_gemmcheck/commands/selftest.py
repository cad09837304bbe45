"""``gemmcheck selftest``: the plugin's whole path, checked on this machine in one step.

The kernels it runs, and how each must be judged, are selftest_probes.py's; this command runs
them on the current device (on a GPU the correct one again under ``--gemmcheck-stress=copy``)
and says what ran and what that proved. Exit status 0 when every kernel was judged right, 1
otherwise, 2 for a usage error. Nothing is recorded unless ``--record``.
"""

from __future__ import annotations

import sys
import time

from ..errors import CommandError
from .selftest_probes import PROBES, QUANT, REPEAT, K, M, N, Verdict, device_of, run_probes


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "selftest",
        help="check the plugin on this machine: a correct kernel and broken "
        "ones through the whole path, in under a minute",
    )
    parser.add_argument(
        "--device",
        default=None,
        metavar="DEVICE",
        help="cpu, cuda or cuda:N (AMD GPUs too: ROCm's torch names them cuda); default: the current GPU, else the CPU",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="record the run in the history (--db, else the default database); default: nothing is recorded",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    try:
        return selftest(args.device, record=args.record, db=args.db)
    except ValueError as exc:  # a device torch does not know, or none there
        raise CommandError(str(exc)) from None


def selftest(device_name: str | None = None, *, record: bool = False, db: str | None = None, out=None) -> int:
    """Run the self-test and print what it proved (to ``out``, stdout by default); 0 when every
    kernel was judged right."""
    out = out or sys.stdout
    started = time.monotonic()
    device = device_of(device_name)
    verdicts = run_probes(device, record=record, db=db)
    if device.type == "cuda":  # the correct kernel again beside the background load
        verdicts += run_probes(device, record=record, db=db, stress="copy", probes=PROBES[:1])
    results = [verdict.result for verdict in verdicts]
    stack, fp8 = results[0].stack, results[0].fp8
    print("gemmcheck selftest", file=out)
    for line in _where(device, stack, fp8):
        print("  " + line, file=out)
    print(f"  check    {_backend(device, results)}", file=out)
    contention = results[0].contention if results else {}
    print(f"  monitor  {contention.get('monitor') or 'none'}: {contention.get('note', '')}", file=out)
    if device.type == "cuda":
        print(f"  stress   {results[-1].stress.get('engine') or results[-1].stress.get('note')}", file=out)
    print("kernels", file=out)
    for verdict in verdicts:
        print(_row(verdict), file=out)
    wrong = [verdict for verdict in verdicts if not verdict.right]
    seconds = time.monotonic() - started
    if wrong:
        print(
            f"FAILED: {len(wrong)} of {len(verdicts)} kernels misjudged on {device} ({seconds:.1f} s): the "
            "plugin cannot be trusted here; please report this output",
            file=out,
        )
        return 1
    print(f"proved on {device} ({seconds:.1f} s):", file=out)
    for verdict in verdicts:
        stressed = " (under --gemmcheck-stress=copy)" if verdict.result.stress.get("active") else ""
        print(f"  - {verdict.probe.what}{stressed}", file=out)
    return 0


def _where(device, stack: dict, fp8: str) -> list[str]:
    if device.type == "cuda":
        platform = (
            f"ROCm {stack.get('rocm') or ''} HIP {stack.get('hip')}"
            if stack.get("hip")
            else f"CUDA {stack.get('cuda')}"
        )
        place = (
            f"{device} {stack.get('gpu_name')} ({stack.get('gpu_arch')}), {platform.replace('  ', ' ')}, "
            f"driver {stack.get('driver') or 'unknown'}"
        )
    else:
        place = "cpu"
    return [
        f"device   {place}",
        f"stack    torch {stack.get('torch')}, triton {stack.get('triton') or 'not installed'}, "
        f"python {stack.get('python')}",
        f"inputs   {QUANT} {M}x{N}x{K}, fp8 {fp8}, {REPEAT} launches per kernel",
    ]


def _backend(device, results) -> str:
    backend = results[0].check_backend if results else "?"
    if backend == "triton" and device.type == "cuda":
        from ..checking.triton.target import PROGRAM_WARPS, gpu_target

        target = gpu_target(device)
        return (
            f"triton (fused check compiled for {target.backend} {target.arch}: {PROGRAM_WARPS} warps of "
            f"{target.warp_size} threads per program, {target.multiprocessors} multiprocessors)"
        )
    return backend + (" (Triton's interpreter)" if backend == "triton" else " (torch ops)")


def _row(verdict: Verdict) -> str:
    result = verdict.result
    bad = [launch.index for launch in result.launches if launch.kinds]
    kinds = sorted({kind for launch in result.launches for kind in launch.kinds})
    which = f"launch{'es' if len(bad) > 1 else ''} {', '.join(map(str, bad))}"
    seen = f"{len(bad)}/{len(result.launches)} bad" + (f" ({which}: {', '.join(kinds)})" if bad else "")
    mark = "as expected" if verdict.right else "MISJUDGED: " + "; ".join(verdict.problems)
    return f"  {verdict.probe.name:<22} {result.verdict:<11} {seen:<44} {mark}"
