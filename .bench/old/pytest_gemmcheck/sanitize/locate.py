"""Where compute-sanitizer is, which version, or why there is none to use."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .process import run_limited

NAME = "compute-sanitizer"
# Where the CUDA toolkit puts it when its bin folder is not on PATH.
DEFAULT_CUDA_HOME = "/usr/local/cuda"
# "Version 2025.3.1.0 (build 36400806) (public-release)"
_VERSION = re.compile(r"^\s*Version\s+(\d+(?:\.\d+)+)", re.MULTILINE)
# --version answers at once; a binary that does not is as good as none.
VERSION_TIMEOUT_S = 30.0

PLATFORMS = ("cuda", "rocm", "cpu")
NOT_ON_CPU = "the case runs on the CPU; compute-sanitizer checks kernels on NVIDIA GPUs"
NOT_ON_ROCM = (
    "compute-sanitizer is NVIDIA's and ROCm has no racecheck; "
    "the static lint (gemmcheck lint) covers FlyDSL kernels there"
)


class SanitizerUnavailable(Exception):
    """No compute-sanitizer to run; the message is the reason, one line."""


@dataclass(frozen=True)
class SanitizerBinary:
    path: str
    version: str | None  # "2025.3.1.0"; None when --version names none

    def stack_info(self) -> dict[str, str]:
        """The field the stack fingerprint gets."""
        return {"compute_sanitizer": self.version or "unknown version"}


def find_binary(environ: Mapping[str, str] | None = None) -> str | None:
    """The executable: on PATH, then in $CUDA_HOME/bin, then in /usr/local/cuda/bin."""
    environ = os.environ if environ is None else environ
    found = shutil.which(NAME, path=environ.get("PATH", os.defpath))
    if found:
        return found
    for home in (environ.get("CUDA_HOME"), DEFAULT_CUDA_HOME):
        if home:
            candidate = Path(home, "bin", NAME)
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def read_version(path: str, timeout: float = VERSION_TIMEOUT_S, environ: Mapping[str, str] | None = None) -> str | None:
    """The version ``path --version`` prints. Raises SanitizerUnavailable when it cannot run."""
    with tempfile.TemporaryDirectory(prefix="gemmcheck-sanitize-") as folder:
        done = run_limited(
            [path, "--version"],
            timeout=timeout,
            environ=os.environ if environ is None else environ,
            workdir=Path(folder),
        )
    if done.error is not None:
        raise SanitizerUnavailable(f"{path} cannot be run: {done.error}")
    if done.timed_out:
        raise SanitizerUnavailable(f"{path} --version did not answer within {timeout:g} s")
    if done.exit_status != 0:
        raise SanitizerUnavailable(f"{path} --version exited with status {done.exit_status}")
    match = _VERSION.search(done.stdout + done.stderr)
    return match.group(1) if match else None


def locate(platform: str = "cuda", environ: Mapping[str, str] | None = None) -> SanitizerBinary:
    """The compute-sanitizer to run a case's launch under on ``platform`` ("cuda", "rocm" or
    "cpu": where the case's device is). Raises SanitizerUnavailable with the reason."""
    if platform not in PLATFORMS:
        raise ValueError(f"platform must be one of {', '.join(PLATFORMS)}, got {platform!r}")
    if platform == "cpu":
        raise SanitizerUnavailable(NOT_ON_CPU)
    if platform == "rocm":
        raise SanitizerUnavailable(NOT_ON_ROCM)
    path = find_binary(environ)
    if path is None:
        raise SanitizerUnavailable(
            f"no {NAME} on PATH, in $CUDA_HOME/bin or in {DEFAULT_CUDA_HOME}/bin (it comes with the CUDA toolkit)"
        )
    return SanitizerBinary(path=path, version=read_version(path, environ=environ))
