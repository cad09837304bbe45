"""Every Triton kernel configuration the plugin launches on an AMD GPU, compiled by Triton's own
AMD backend on a machine without one, and its assembly linted by ``gemmcheck lint``.

The configurations are not listed here: they are recorded from the plugin's own launching code.
A stand-in Triton driver reports the AMD target (``GPUTarget("hip", arch, 64)``), the check's
planning is given that target (``RUNTIME.target_for``), and the plugin's code runs over CPU
tensors of every kind a case hands it (each out dtype, shapes that tile the blocks exactly and
shapes that do not, with and without a tile, each tolerance floor, checksum on and off, the
consensus comparison, the repeat pass with and without its fill, the guards of each quant mode's
inputs and fp8 flavour, the stress loops, the seeded operands' generator). Each launch reaches
Triton's ``jit_cache_hook``, which receives what Triton would compile for that target (signature,
constexprs, alignment attributes, options) and declines it: nothing runs. A new constexpr, block shape or warp count
in the launching code is therefore recorded without any change here.

Each distinct request is then compiled by ``triton.compile`` for the target (to amdgcn and a
hsaco) in a pool of processes, and its amdgcn text linted by the ``gemmcheck lint`` command.

    python tests/checking/triton/amd_kernels.py --arch gfx950 --jobs 2 --keep DIR [--part I/K]

prints one JSON object: each request's kernel, constexprs, compile time, and lint counts.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

# compute units of the GPUs of each arch: only the grid size depends on them, never a compile
COMPUTE_UNITS = {"gfx942": 304, "gfx950": 256}
WAVEFRONT = 64
# four times the lint's own default: the slowest configuration that finishes took 13 s beside one
# other job on two cores and over 30 s in a whole test run there, where it must not read as unfinished
LINT_TIME_LIMIT_S = 120.0
# The configurations the lint does not finish in 60 s (in any time seen): the per-tile counts (docs/amd.md
# says why). They are linted for LONG_SHOT_LIMIT_S: what the lint reaches in that time must hold
# no error.
UNFINISHED = {"_tile_kernel"}
LONG_SHOT_LIMIT_S = 5.0


def known_unfinished(kernel: str) -> bool:
    """Whether the lint is known not to finish this configuration (see UNFINISHED)."""
    return kernel in UNFINISHED


class _AmdDriver:
    """What Triton's launch path asks of the active driver before it compiles: a device, a
    stream and the target. No GPU is touched."""

    def __init__(self, target):
        self.target = target

    def get_current_device(self):
        return f"{self.target.backend}:{self.target.arch}"  # one binder cache per target

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self.target

    def is_active(self):
        return True


@contextlib.contextmanager
def _recording(arch: str, requests: dict):
    """Within: every kernel launch is planned for ``arch`` and recorded into ``requests``
    (keyed by Triton's own specialization data) instead of compiled or run."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.runtime.driver import driver

    from pytest_gemmcheck.checking.triton.runtime import RUNTIME
    from pytest_gemmcheck.checking.triton.target import Target

    def hook(*, key, repr, fn, compile, is_manual_warmup, already_compiled):
        requests.setdefault(
            (fn.module, fn.name, compile["specialization_data"]),
            {
                "module": fn.module,
                "name": fn.name,
                "signature": compile["signature"],
                "constants": compile["constants"],
                "attrs": compile["configs"][0],
                "options": json.loads(compile["specialization_data"])["options"],
            },
        )
        return True  # declined: nothing is compiled or launched

    import torch

    saved = (triton.knobs.runtime.jit_cache_hook, RUNTIME.target_for, RUNTIME.direct_launch, RUNTIME.allocate)
    active = driver._active  # None until a launch asks; reset_active() would look for a GPU
    driver.set_active(_AmdDriver(GPUTarget("hip", arch, WAVEFRONT)))
    triton.knobs.runtime.jit_cache_hook = hook
    RUNTIME.target_for = lambda device: Target("hip", arch, WAVEFRONT, COMPUTE_UNITS[arch])
    RUNTIME.direct_launch = False
    # nothing runs: zeroed scratch, so that the host reads back plain zeros where results would be
    RUNTIME.allocate = lambda numel, dtype, device: torch.zeros(numel, dtype=dtype, device=device)
    try:
        yield
    finally:
        (triton.knobs.runtime.jit_cache_hook, RUNTIME.target_for, RUNTIME.direct_launch, RUNTIME.allocate) = saved
        driver._active = active


# Outputs of the shapes a case may have: blocks that tile it exactly (the unmasked pass), rows
# that do not, and rows and columns that do not (N no multiple of 16: other alignment facts).
SHAPES = [(64, 256), (50, 256), (50, 200)]
TILE = (16, 64)


def _drive_check(torch, dtype) -> None:
    """The fused check as case.run and its consensus call it, and its one-read checksum."""
    from pytest_gemmcheck.checking.rule import Tolerance
    from pytest_gemmcheck.checking.triton import fused_check

    for m, n in SHAPES:
        out = torch.zeros(m, n, dtype=dtype)
        ref = torch.zeros_like(out)
        rowmax = torch.ones(m)
        for tile in (None, TILE):
            for floor in (1.0, 0.5):  # per-row thresholds, and the per-element division
                for checksum in (True, False):
                    fused_check.prepare_check(
                        out, ref, rowmax, Tolerance(floor=floor), tile, checksum=checksum, replay=True
                    ).start()
            fused_check.compare_copies(out, [out.clone()], rowmax, tile)
        fill = torch.zeros_like(out)
        fused_check.checksum(out)
        fused_check.start_checksum_and_fill(out, fill)
        into = torch.zeros(1, dtype=torch.int64)
        for target in (fill, None):
            fused_check.queue_checksum_and_fill(out, target, into)


def _drive_guards(torch, dtype) -> None:
    """The guard kernel and the watch kernel (guards and out's checksum in one) over the inputs
    of every quant mode and fp8 flavour, as launch/guards.py hands them over."""
    from pytest_gemmcheck.case.quant import fp8_flavour, quant_mode, quant_mode_names
    from pytest_gemmcheck.checking.triton.guard_pass import RESULT_WIDTH, queue_guards, queue_watch
    from pytest_gemmcheck.launch.guards import GUARD_ELEMENTS, ROW_WIDTH, GuardedBuffer, InputGuard

    device = torch.device("cpu")
    for name in quant_mode_names():
        mode = quant_mode(name)
        for flavour in ("e4m3fn", "e4m3fnuz") if mode.uses_fp8 else ("e4m3fn",):
            inputs = InputGuard(mode.make_inputs(64, 256, 128, seed=0, device=device, fp8=fp8_flavour(flavour)))
            for m, n in SHAPES:
                buffer = GuardedBuffer(m, n, dtype, device)
                row = torch.zeros(ROW_WIDTH, dtype=torch.int64)
                queue_guards(inputs.words, row, 0, 0, 0, row[:RESULT_WIDTH])  # the pristine inputs' checksums
                queue_guards(
                    inputs.words, buffer.bits, GUARD_ELEMENTS, buffer.after_offset, buffer.canary, row[:RESULT_WIDTH]
                )
                queue_watch(
                    inputs.words,
                    buffer.bits,
                    GUARD_ELEMENTS,
                    buffer.after_offset,
                    buffer.canary,
                    buffer.tensor,
                    row,
                    ROW_WIDTH - 1,
                )


def _drive_operands(torch) -> None:
    """The seeded operands' generator (case/rng_kernel.py), as case/rng.py calls it on a GPU: streams
    whose length is a multiple of 16 and one that is not."""
    from pytest_gemmcheck.case import rng
    from pytest_gemmcheck.case.rng_kernel import bell_on_gpu

    for numel in (4096, 4099):
        bell_on_gpu(numel, rng.stream_keys(0, "a"), torch.device("cpu"))


def _drive_stress(torch, arch: str) -> None:
    """--gemmcheck-stress's loops, as a Workload on a GPU of this arch launches them."""
    from pytest_gemmcheck.environment import stress, stress_kernels

    buffer = torch.zeros(1 << 16)
    programs = stress.PROGRAMS_PER_SM * COMPUTE_UNITS[arch]
    stress_kernels.launch_copy(buffer, torch.zeros_like(buffer), programs)
    stress_kernels.launch_fma(buffer, programs)


def record(arch: str) -> list[dict]:
    """Every distinct compile request the plugin's launches make on ``arch``."""
    import torch

    requests: dict = {}
    with _recording(arch, requests):
        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            _drive_check(torch, dtype)
            _drive_guards(torch, dtype)
        _drive_stress(torch, arch)
        _drive_operands(torch)
    return list(requests.values())


def _constexprs(request: dict) -> dict:
    module = importlib.import_module(request["module"])
    names = getattr(module, request["name"]).arg_names
    return {names[index[0]]: value for index, value in request["constants"].items()}


def compile_and_lint(request: dict, arch: str, folder: str, index: int) -> dict:
    """One request compiled for ``arch`` and its assembly linted: the outcome as plain data."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    kernel = getattr(importlib.import_module(request["module"]), request["name"])
    options = {key: tuple(value) if isinstance(value, list) else value for key, value in request["options"].items()}
    names = kernel.arg_names
    aligned = sorted(
        names[index[0]]
        for index, facts in request["attrs"].items()
        if any(fact[0] == "tt.divisibility" for fact in facts)
    )
    outcome = {
        "kernel": request["name"],
        "constexprs": _constexprs(request),
        "signature": request["signature"],
        "divisible_by_16": aligned,
        "num_warps": options["num_warps"],
    }
    started = time.perf_counter()
    try:
        compiled = triton.compile(
            ASTSource(kernel, request["signature"], request["constants"], request["attrs"]),
            target=GPUTarget("hip", arch, WAVEFRONT),
            options=options,
        )
    except Exception as exc:  # a kernel Triton's AMD backend refuses: reported, never skipped
        outcome.update(compiled=False, error=f"{type(exc).__name__}: {str(exc)[-2000:]}")
        return outcome
    outcome.update(
        compiled=True,
        compile_s=round(time.perf_counter() - started, 2),
        stages=sorted(compiled.asm),
        warp_size=compiled.metadata.warp_size,
    )
    path = Path(folder, f"{index:03d}_{request['name']}.s")
    path.write_text(compiled.asm["amdgcn"])
    outcome["asm"] = str(path)
    started = time.perf_counter()
    limit = LONG_SHOT_LIMIT_S if known_unfinished(request["name"]) else LINT_TIME_LIMIT_S
    outcome["lint_limit_s"] = limit
    done = subprocess.run(
        [sys.executable, "-m", "pytest_gemmcheck", "lint", "--format", "json", "--time-limit", str(limit), str(path)],
        capture_output=True,
        text=True,
    )
    outcome["lint_s"] = round(time.perf_counter() - started, 2)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        outcome["lint"] = {"exit": done.returncode, "error": (done.stderr or done.stdout)[-2000:]}
        return outcome
    files = report.get("files", [report]) if isinstance(report, dict) else report
    counts = {key: sum(entry.get(key, 0) for entry in files) for key in ("errors", "latent", "warnings", "unchecked")}
    outcome["lint"] = {
        "exit": done.returncode,
        **counts,
        "findings": [finding for entry in files for finding in entry.get("findings", [])][:5],
        "unfinished": [name for entry in files for name in entry.get("unfinished", [])],
    }
    return outcome


def run(arch: str, jobs: int, folder: str, part: int = 0, parts: int = 1) -> dict:
    """Record every request, then compile and lint part ``part`` of ``parts`` of them (every
    ``parts``-th, so that each part gets its share of every kernel)."""
    started = time.perf_counter()
    requests = record(arch)
    recorded_s = time.perf_counter() - started
    mine = list(range(part, len(requests), parts))
    Path(folder).mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        outcomes = list(
            pool.map(compile_and_lint, [requests[i] for i in mine], [arch] * len(mine), [folder] * len(mine), mine)
        )
    return {
        "arch": arch,
        "requests": len(requests),
        "kernels": sorted({r["name"] for r in requests}),
        "part": f"{part}/{parts}",
        "record_s": round(recorded_s, 2),
        "wall_s": round(time.perf_counter() - started, 2),
        "outcomes": outcomes,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=sorted(COMPUTE_UNITS), required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", default=None, help="folder for the assembly (default: a temporary one)")
    parser.add_argument("--part", default="0/1", help="I/K: compile and lint only every K-th request from the I-th")
    args = parser.parse_args(argv)
    part, _, parts = args.part.partition("/")
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        parser.error("TRITON_INTERPRET=1 defines the kernels for the interpreter: unset it")
    with tempfile.TemporaryDirectory(prefix="gemmcheck-amd-") as scratch:
        print(json.dumps(run(args.arch, args.jobs, args.keep or scratch, int(part), int(parts or 1))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
