"""FlyDSL support for gemmcheck cases: stack fields, a one-line launch, and linting what compiles.

Nothing here imports FlyDSL, torch or HIP until a function needs them, so importing this module
costs nothing on machines without them.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.metadata
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

OUT = object()  # marks where the output tensor goes in :func:`bind_launch`'s arguments


def flydsl_version() -> str | None:
    try:
        return importlib.metadata.version("flydsl")
    except importlib.metadata.PackageNotFoundError:
        return None


def hip_version() -> str | None:
    """The HIP runtime version: torch's when it is a ROCm build, else the loadable libamdhip64's."""
    try:
        import torch

        if getattr(torch.version, "hip", None):
            return str(torch.version.hip)
    except ImportError:
        pass
    for name in ("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        version = ctypes.c_int(0)
        if lib.hipRuntimeGetVersion(ctypes.byref(version)) == 0:
            v = version.value  # major * 10_000_000 + minor * 100_000 + patch
            return f"{v // 10_000_000}.{(v // 100_000) % 100}.{v % 100_000}"
    return None


def device_arch() -> str | None:
    """The arch of an AMD GPU that is actually present, or None.

    Asks the device (torch's ROCm build, else ``rocm_agent_enumerator``). FlyDSL's own helper is
    not used: with no device it answers gfx942, which is a guess, not a fact about this machine.
    """
    try:
        import torch

        if getattr(torch.version, "hip", None) and torch.cuda.is_available():
            return torch.cuda.get_device_properties(torch.cuda.current_device()).gcnArchName.split(":", 1)[0]
    except (ImportError, RuntimeError, AssertionError):
        pass
    if shutil.which("rocm_agent_enumerator"):
        try:
            out = subprocess.run(["rocm_agent_enumerator", "-name"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        for line in out.splitlines():
            name = line.strip()
            if name.startswith("gfx") and name != "gfx000":
                return name.split(":", 1)[0]
    return None


def toolkit_fingerprint(arch: str | None = None) -> str | None:
    """FlyDSL's fingerprint of the device bitcode its ROCDL backend links against."""
    try:
        from flydsl.compiler.backends import get_backend

        # The fingerprint does not depend on the arch; naming one keeps FlyDSL from guessing.
        return str(get_backend(arch=arch or "gfx950").toolkit_fingerprint())
    except Exception:  # no FlyDSL, or a backend that cannot say: the field stays empty
        return None


def stack_fields() -> dict[str, str | None]:
    """What a run's stack records about FlyDSL; empty when FlyDSL is not installed."""
    version = flydsl_version()
    if version is None:
        return {}
    arch = device_arch()
    return {
        "flydsl": version,
        "hip": hip_version(),
        "gpu_arch": arch,
        "flydsl_compile_arch": os.environ.get("ARCH") or os.environ.get("FLYDSL_GPU_ARCH") or None,
        "flydsl_toolkit": toolkit_fingerprint(arch),
    }


def current_stream(like: Any = None):
    """The current torch stream on ``like``'s device (a tensor), or None off the GPU."""
    try:
        import torch
    except ImportError:
        return None
    device = getattr(like, "device", None)
    if not torch.cuda.is_available() or (device is not None and device.type != "cuda"):
        return None
    return torch.cuda.current_stream(device)


def bind_launch(function: Callable, *args: Any, stream: Any = None) -> Callable[[Any], Any]:
    """A ``launch(out)`` for a compiled FlyDSL launcher whose last parameter is the stream.

    ``args`` are the launcher's other arguments, with :data:`OUT` where the output goes::

        case.run(bind_launch(gemm, x.a, x.b, OUT, x.a_scale, x.b_scale, M, N))

    Each launch passes the current stream of the output's device (or ``stream``), so the
    kernel runs in order with the poisoning and checking around it.
    """
    if sum(a is OUT for a in args) != 1:
        raise ValueError("bind_launch needs exactly one OUT among the arguments")

    def launch(out):
        call_args = [out if a is OUT else a for a in args]
        return function(*call_args, stream if stream is not None else current_stream(out))

    return launch


@dataclass
class CapturedAssembly:
    """Assembly FlyDSL wrote while a :func:`capture_assembly` block compiled kernels."""

    directory: str
    files: list[str] = field(default_factory=list)

    def lint(self, **options: Any):
        """Lint every captured kernel; returns one ``LintReport`` per assembly file."""
        from ..lint import Options, lint_file

        return [lint_file(path, Options(**options)) for path in self.files]


@contextlib.contextmanager
def capture_assembly(directory: str | None = None) -> Iterator[CapturedAssembly]:
    """Have FlyDSL dump the final ISA of every kernel it compiles inside the block.

    FlyDSL reads its settings from the environment at each compile, so this works in-process;
    kernels already compiled before the block (FlyDSL's in-memory cache) are not recompiled.
    """
    target = directory or tempfile.mkdtemp(prefix="gemmcheck-flydsl-asm-")
    saved = {key: os.environ.get(key) for key in ("FLYDSL_DEBUG_DUMP_ASM", "FLYDSL_DUMP_DIR")}
    os.environ["FLYDSL_DEBUG_DUMP_ASM"] = "1"
    os.environ["FLYDSL_DUMP_DIR"] = target
    captured = CapturedAssembly(target)
    try:
        yield captured
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for root, _, names in os.walk(target):
            captured.files.extend(os.path.join(root, n) for n in sorted(names) if n.endswith("final_isa.s"))
        captured.files.sort()
