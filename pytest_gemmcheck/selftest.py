"""``gemmcheck selftest``: the plugin's whole path, checked on this machine in one step.

A correct kernel and kernels broken on purpose (a corrupted row on some launches, the first
among them; a difference under the tolerance on one launch, as a race leaves; an output left
unwritten; a write past the end of the output; a write into an input) run through the public
script API (:func:`pytest_gemmcheck.api.session`) on the current device: the CPU, an NVIDIA GPU
or an AMD GPU, with the check backend, fp8 flavour, guards, contention monitor and, on a GPU,
``--gemmcheck-stress`` load that a test there gets. Each must be judged as it is (the correct
one clean, each broken one bad on exactly the launches that broke it, with the kind of failure
it has), and the command says what ran and what that proved. Exit status 0 when every kernel
was judged right, 1 otherwise, 2 for a usage error. Nothing is recorded unless ``--record``.

Importing this module imports nothing heavy: the ``gemmcheck`` parser builds from it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable

KERNEL = "gemmcheck_selftest"
M, N, K = 128, 256, 128
QUANT = "ptpc"
REPEAT = 8
ROW = 17  # the row the corrupting kernel scales


@dataclass(frozen=True)
class Probe:
    """A kernel of the self-test: how to build its launch from the product it should write, and
    the launches (1-based) it breaks, each with the kind of failure that must be recorded."""

    name: str
    what: str  # what judging it right proves
    build: Callable  # (product, inputs) -> launch(out)
    bad: dict[int, str] = field(default_factory=dict)  # launch index -> kind of failure it must have
    only: bool = False  # its bad launches have that kind and no other


def _correct(product, inputs):
    return lambda out: out.copy_(product)


def _corrupted_rows(product, inputs):
    count = [0]

    def launch(out):
        count[0] += 1
        out.copy_(product)
        if count[0] in (1, 6):
            out[ROW].mul_(1.25)
    return launch


def _race_under_tolerance(product, inputs):
    count = [0]

    def launch(out):
        count[0] += 1
        out.copy_(product)
        if count[0] == 5:  # 2% off in a few elements: within any tolerance, not within the bits
            out[-1, :8].mul_(1.02)
    return launch


def _unwritten(product, inputs):
    count = [0]

    def launch(out):
        count[0] += 1
        if count[0] != 4:
            out.copy_(product)
    return launch


def _writes_outside(product, inputs):
    import torch

    count = [0]

    def launch(out):
        count[0] += 1
        out.copy_(product)
        if count[0] == 2:  # one element past the end of out, inside its allocation
            torch.as_strided(out, (out.numel() + 1,), (1,), out.storage_offset())[-1] = 0.0
    return launch


def _changes_input(product, inputs):
    import torch

    count = [0]

    def launch(out):
        count[0] += 1
        out.copy_(product)
        if count[0] == 3:  # one bit of A's first fp8 element
            inputs.a.view(-1)[:1].view(torch.uint8).bitwise_xor_(1)
    return launch


PROBES = (
    Probe("correct", "a correct fp8 GEMM passes: no false alarm from the accuracy rule or the consistency check",
          _correct),
    Probe("corrupted row", "a row 25% off on launches 1 and 6 is wrong on exactly those launches, the first "
          "launch included (the consensus is not fooled by a bad first launch)", _corrupted_rows,
          {1: "wrong", 6: "wrong"}),
    Probe("race under tolerance", "elements 2% off on launch 5 (as a race leaves them) are caught by the "
          "bitwise consistency check alone", _race_under_tolerance, {5: "inconsistent"}, only=True),
    Probe("unwritten output", "an output left unwritten on launch 4 is caught by its poison", _unwritten,
          {4: "unwritten"}),
    Probe("write past out", "a write past the end of out on launch 2 is caught by the guard region",
          _writes_outside, {2: "wrote_outside"}),
    Probe("changed input", "a write into an operand on launch 3 is caught, blamed on it, and undone",
          _changes_input, {3: "changed_input"}),
)


def _device(requested: str | None):
    import torch

    if requested:
        device = torch.device(requested)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"--device {requested}: no GPU is available")
        return device
    return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")


def _product(case):
    """The fp32 GEMM of the case's dequantized operands, rounded to its output dtype: what the
    correct kernel writes, by a GEMM of torch's own, not the harness's reference."""
    import torch

    x = case.inputs()
    a = x.a.float() * x.a_scale[:, None]
    b = x.b.float() * x.b_scale[:, None]
    return torch.matmul(a, b.t()).to(case.out_dtype)


@dataclass
class Verdict:
    probe: Probe
    result: object  # api.Result
    problems: list[str]

    @property
    def right(self) -> bool:
        return not self.problems


def _judge(probe: Probe, result, against_clean: bool) -> list[str]:
    """What is wrong with how a probe's launches were judged (nothing: judged right). Its
    verdict counts only against a clean baseline: a recorded history may hold the same bad
    launches from an earlier self-test, which makes them no regression."""
    found = {launch.index: list(launch.kinds) for launch in result.launches if launch.kinds}
    problems = []
    for index, kind in probe.bad.items():
        judged = found.get(index, [])
        if kind not in judged or probe.only and judged != [kind]:
            problems.append(f"launch {index} should be {kind}{' alone' if probe.only else ''}, was judged "
                            f"{', '.join(judged) or 'clean'}")
    for index, kinds in sorted(found.items()):
        if index not in probe.bad:
            problems.append(f"launch {index} is correct, was judged {', '.join(kinds)}")
    if len(result.launches) != REPEAT:
        problems.append(f"{len(result.launches)} launches recorded, {REPEAT} made")
    if against_clean and probe.bad and not result.failed:
        problems.append(f"verdict {result.verdict}: a bad kernel must not pass")
    if against_clean and not probe.bad and result.failed:
        problems.append(f"verdict {result.verdict}: a correct kernel must pass")
    return problems


def _fp8_of(device) -> str:
    import torch

    from .environment.gpus import native_fp8
    from .environment.stack import gpu_arch

    return native_fp8(gpu_arch(torch.cuda.get_device_properties(device)) if device.type == "cuda" else None)


def run_probes(device, *, record: bool, db: str | None = None, stress: str = "none",
               probes=PROBES) -> list[Verdict]:
    """Every probe as a case of one script session on ``device``, recorded in the history
    (``db``, else the default database) only with ``record``."""
    from . import api

    options = {"tag": "selftest", "repeat": REPEAT, "stress": stress}
    with tempfile.TemporaryDirectory(prefix="gemmcheck-selftest-") as scratch:
        if not record:  # judged against clean alone: no goldens or history of the current folder
            options.update(db=None, rootdir=scratch)
        elif db:
            options["db"] = db
        verdicts = []
        with api.session(**options) as session:
            fp8 = _fp8_of(device)
            for probe in probes:
                case = session.case(KERNEL, m=M, n=N, k=K, quant=QUANT, fp8=fp8, device=device,
                                    params={"probe": probe.name, "stress": stress})
                launch = probe.build(_product(case), case.inputs())
                result = case.run(launch)
                verdicts.append(Verdict(probe, result, _judge(probe, result, against_clean=not record)))
    return verdicts


def _where(device, stack: dict, fp8: str) -> list[str]:
    if device.type == "cuda":
        platform = f"ROCm {stack.get('rocm') or ''} HIP {stack.get('hip')}" if stack.get("hip") else \
            f"CUDA {stack.get('cuda')}"
        place = f"{device} {stack.get('gpu_name')} ({stack.get('gpu_arch')}), {platform.replace('  ', ' ')}, " \
                f"driver {stack.get('driver') or 'unknown'}"
    else:
        place = "cpu"
    return [f"device   {place}",
            f"stack    torch {stack.get('torch')}, triton {stack.get('triton') or 'not installed'}, "
            f"python {stack.get('python')}",
            f"inputs   {QUANT} {M}x{N}x{K}, fp8 {fp8}, {REPEAT} launches per kernel"]


def _backend(device, results) -> str:
    backend = results[0].check_backend if results else "?"
    if backend == "triton" and device.type == "cuda":
        from .checking.triton.target import PROGRAM_WARPS, gpu_target

        target = gpu_target(device)
        return (f"triton (fused check compiled for {target.backend} {target.arch}: {PROGRAM_WARPS} warps of "
                f"{target.warp_size} threads per program, {target.multiprocessors} multiprocessors)")
    return backend + (" (Triton's interpreter)" if backend == "triton" else " (torch ops)")


def _row(verdict: Verdict) -> str:
    result = verdict.result
    bad = [launch.index for launch in result.launches if launch.kinds]
    kinds = sorted({kind for launch in result.launches for kind in launch.kinds})
    which = f"launch{'es' if len(bad) > 1 else ''} {', '.join(map(str, bad))}"
    seen = f"{len(bad)}/{len(result.launches)} bad" + (f" ({which}: {', '.join(kinds)})" if bad else "")
    mark = "as expected" if verdict.right else "MISJUDGED: " + "; ".join(verdict.problems)
    return f"  {verdict.probe.name:<22} {result.verdict:<11} {seen:<44} {mark}"


def selftest(device_name: str | None = None, *, record: bool = False, db: str | None = None,
             out=None) -> int:
    """Run the self-test and print what it proved (to ``out``, stdout by default); 0 when every
    kernel was judged right."""
    out = out or sys.stdout
    started = time.monotonic()
    device = _device(device_name)
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
        print(f"FAILED: {len(wrong)} of {len(verdicts)} kernels misjudged on {device} ({seconds:.1f} s): the "
              "plugin cannot be trusted here; please report this output", file=out)
        return 1
    print(f"proved on {device} ({seconds:.1f} s):", file=out)
    for verdict in verdicts:
        stressed = " (under --gemmcheck-stress=copy)" if verdict.result.stress.get("active") else ""
        print(f"  - {verdict.probe.what}{stressed}", file=out)
    return 0


def add_selftest_parser(commands) -> None:
    """``gemmcheck selftest``, onto the gemmcheck command's subparsers."""
    parser = commands.add_parser("selftest", help="check the plugin on this machine: a correct kernel and broken "
                                                  "ones through the whole path, in under a minute")
    parser.add_argument("--device", default=None, metavar="DEVICE",
                        help="cpu, cuda or cuda:N (AMD GPUs too: ROCm's torch names them cuda); default: the "
                             "current GPU, else the CPU")
    parser.add_argument("--record", action="store_true",
                        help="record the run in the history (--db, else the default database); default: nothing "
                             "is recorded")
    parser.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    from .errors import CommandError

    try:
        return selftest(args.device, record=args.record, db=args.db)
    except ValueError as exc:  # a device torch does not know, or none there
        raise CommandError(str(exc)) from None
