"""The stack fingerprint: where a result was produced.

Collected once per process (the process that runs the cases, so an xdist worker reports its
own GPU), without importing anything that is not already needed: versions of optional
packages come from their metadata. Downstream repos add fields through the
``pytest_gemmcheck_stack_info`` hook.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
from importlib import metadata

from ..records.stack_columns import STACK_COLUMNS as COLUMNS


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _driver_version() -> str | None:
    for command in (
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
        ["rocm-smi", "--showdriverversion", "--csv"],
    ):
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            continue
        lines = [line.strip() for line in out.stdout.splitlines() if line.strip()]
        if out.returncode == 0 and lines:
            return lines[-1].split(",")[-1].strip()
    return None


def _rocm_version(environ=os.environ) -> str | None:
    """The ROCm release installed ("7.0.2-56"), from rocm-core's version file under $ROCM_PATH
    (else /opt/rocm): torch.version.hip is HIP's own version, which several releases share."""
    path = os.path.join(environ.get("ROCM_PATH") or "/opt/rocm", ".info", "version")
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip() or None
    except OSError:
        return None


def gpu_arch(props) -> str:
    """'sm_90' on NVIDIA, 'gfx942' (without feature suffixes) on AMD. CUDA builds of torch
    have a gcnArchName too (holding the device's name), so it counts only on ROCm."""
    torch = sys.modules.get("torch")
    on_rocm = torch is not None and getattr(torch.version, "hip", None)
    arch = getattr(props, "gcnArchName", None)
    if on_rocm and arch:
        return arch.split(":")[0]
    return f"sm_{props.major}{props.minor}"


@functools.lru_cache(maxsize=1)
def _base_info() -> dict:
    info = {
        "host": socket.gethostname(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "torch": None,
        "cuda": None,
        "hip": None,
        "gpu_name": None,
        "gpu_arch": None,
        "gpu_count": 0,
        "driver": None,
        "triton": _version("triton") or _version("pytorch-triton-rocm"),
        "flydsl": _version("flydsl"),
    }
    torch = sys.modules.get("torch")  # never import torch just to describe the stack
    if torch is not None:
        info["torch"] = torch.__version__
        info["cuda"] = torch.version.cuda
        info["hip"] = getattr(torch.version, "hip", None)
        if info["hip"]:  # a field of ROCm stacks alone: NVIDIA stacks keep their fingerprints
            info["rocm"] = _rocm_version()
        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            info["gpu_name"] = props.name
            info["gpu_arch"] = gpu_arch(props)
            info["gpu_count"] = torch.cuda.device_count()
            info["driver"] = _driver_version()
    if "flydsl" in sys.modules:  # a FlyDSL user: its HIP, compile arch and toolkit matter too
        from ..compiled.flydsl.adapter import stack_fields

        for key, value in stack_fields().items():
            if info.get(key) is None:
                info[key] = value
    return info


def _plain(value):
    """Plain str/int/float/bool/None: stack info travels through xdist's serializer, which
    refuses subclasses such as torch's TorchVersion."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def collect(hook=None) -> dict:
    """This process's stack, with fields added by ``pytest_gemmcheck_stack_info`` hooks."""
    info = dict(_base_info())
    if hook is not None:
        extra: dict = {}
        hook.pytest_gemmcheck_stack_info(info=extra)
        info.update({str(key): value for key, value in extra.items()})
    info = {key: _plain(value) for key, value in info.items()}
    info["fingerprint"] = fingerprint(info)
    return info


def fingerprint(info: dict) -> str:
    """Hash of everything but the fingerprint itself."""
    canonical = json.dumps({k: v for k, v in info.items() if k != "fingerprint"}, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def split(info: dict) -> tuple[dict, dict]:
    """(column values, extra fields) for the stack table."""
    columns = {key: info.get(key) for key in COLUMNS}
    extra = {key: value for key, value in info.items() if key not in COLUMNS and key != "fingerprint"}
    return columns, extra


def process_start_time(pid: int) -> str | None:
    """The start time of a process (Linux /proc), to tell a live run from a reused pid."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return fields[19]  # field 22 of stat, counted after the command name
    except (OSError, IndexError):
        return None


def process_alive(pid: int, start_time: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    if start_time is not None:
        current = process_start_time(pid)
        if current is not None and current != start_time:
            return False  # the pid was reused
    return True
