"""The self-test's kernels and how each must be judged: a correct kernel and kernels broken on
purpose (a corrupted row on some launches, the first among them; a difference under the
tolerance on one launch, as a race leaves; an output left unwritten; a write past the end of
the output; a write into an input), run as cases of one session of the public script API
(``gemmcheck.session``) on a device: the CPU, an NVIDIA GPU or an AMD GPU, with the check
backend, fp8 flavour, guards, contention monitor and ``--gemmcheck-stress`` load that a test
there gets. Each must be judged as it is: the correct one clean, each broken one bad on
exactly the launches that broke it, with the kind of failure it has.

The session is opened through the package's public names (``pytest_gemmcheck.session``), as a
script opens it: what is checked is the path users take. Importing this module imports nothing
heavy.
"""

from __future__ import annotations

import tempfile
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
    Probe(
        "correct", "a correct fp8 GEMM passes: no false alarm from the accuracy rule or the consistency check", _correct
    ),
    Probe(
        "corrupted row",
        "a row 25% off on launches 1 and 6 is wrong on exactly those launches, the first "
        "launch included (the consensus is not fooled by a bad first launch)",
        _corrupted_rows,
        {1: "wrong", 6: "wrong"},
    ),
    Probe(
        "race under tolerance",
        "elements 2% off on launch 5 (as a race leaves them) are caught by the bitwise consistency check alone",
        _race_under_tolerance,
        {5: "inconsistent"},
        only=True,
    ),
    Probe(
        "unwritten output", "an output left unwritten on launch 4 is caught by its poison", _unwritten, {4: "unwritten"}
    ),
    Probe(
        "write past out",
        "a write past the end of out on launch 2 is caught by the guard region",
        _writes_outside,
        {2: "wrote_outside"},
    ),
    Probe(
        "changed input",
        "a write into an operand on launch 3 is caught, blamed on it, and undone",
        _changes_input,
        {3: "changed_input"},
    ),
)


def device_of(requested: str | None):
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
    result: object  # a CaseResult
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
            problems.append(
                f"launch {index} should be {kind}{' alone' if probe.only else ''}, was judged "
                f"{', '.join(judged) or 'clean'}"
            )
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

    from ..environment.gpus import native_fp8
    from ..environment.stack import gpu_arch

    return native_fp8(gpu_arch(torch.cuda.get_device_properties(device)) if device.type == "cuda" else None)


def run_probes(device, *, record: bool, db: str | None = None, stress: str = "none", probes=PROBES) -> list[Verdict]:
    """Every probe as a case of one script session on ``device``, recorded in the history
    (``db``, else the default database) only with ``record``."""
    import pytest_gemmcheck as gemmcheck

    options = {"tag": "selftest", "repeat": REPEAT, "stress": stress}
    with tempfile.TemporaryDirectory(prefix="gemmcheck-selftest-") as scratch:
        if not record:  # judged against clean alone: no goldens or history of the current folder
            options.update(db=None, rootdir=scratch)
        elif db:
            options["db"] = db
        verdicts = []
        with gemmcheck.session(**options) as session:
            fp8 = _fp8_of(device)
            for probe in probes:
                case = session.case(
                    KERNEL,
                    m=M,
                    n=N,
                    k=K,
                    quant=QUANT,
                    fp8=fp8,
                    device=device,
                    params={"probe": probe.name, "stress": stress},
                )
                launch = probe.build(_product(case), case.inputs())
                result = case.run(launch)
                verdicts.append(Verdict(probe, result, _judge(probe, result, against_clean=not record)))
    return verdicts
