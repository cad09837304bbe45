"""What a benchmark's output carries so that it can be kept as a result: a header that says where,
on what and how it was measured, and JSON numbers merged under a key of their own.

Every benchmark prints ``header_lines(...)`` first, one ``# key: value`` line each:

    # machine: h200 (host gpu-7, 16 cores, Linux x86_64)
    # gpu: NVIDIA H200, driver 580.159.04
    # commit: 5a5d758 (with uncommitted changes)
    # date: 2026-12-06 14:03 UTC
    # command: python -m benchmarks.launch_cost shapes --shapes 1024

``machine`` names the folder its logs are kept in, ``benchmarks/results/<machine>/`` (the first GPU's
name and the number of GPUs, or ``cpu-<cores>core``). ``python -m gemmcheck_dev.results COMMAND...``
prints the same header for a command that is not a Python benchmark (benchmarks/gpu_run.sh).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(command: list[str], cwd: Path | None = None) -> str | None:
    """The command's stdout, stripped, or None when it cannot run or fails."""
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def gpus() -> list[tuple[str, str]]:
    """(name, driver) of each GPU nvidia-smi or rocm-smi lists, without importing torch (a header
    must not change what a start-up benchmark measures)."""
    listed = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    if listed:
        return [tuple(part.strip() for part in line.split(",", 1)) for line in listed.splitlines() if "," in line]
    listed = _run(["rocm-smi", "--showproductname", "--csv"])
    if listed:
        names = [line.split(",")[1].strip() for line in listed.splitlines()[1:] if line.count(",") >= 1]
        return [(name, "?") for name in names if name]
    return []


def machine_name(found: list[tuple[str, str]]) -> str:
    """The results folder's name: 'h200', 'h200x2', 'cpu-2core'."""
    if not found:
        return f"cpu-{os.cpu_count() or 1}core"
    words = found[0][0].lower().replace("nvidia", "").replace("amd", "").split()
    model = next((word for word in words if any(ch.isdigit() for ch in word)), words[0] if words else "gpu")
    return model if len(found) == 1 else f"{model}x{len(found)}"


def commit() -> str:
    """The checkout's short commit, and whether the tree differs from it; GEMMCHECK_COMMIT when
    set (a copy of a tree sent to another machine, whose own git state is not the tree's)."""
    if os.environ.get("GEMMCHECK_COMMIT"):
        return os.environ["GEMMCHECK_COMMIT"]
    head = _run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT)
    if head is None:
        return "unknown (not a git checkout)"
    changed = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT)
    return f"{head} (with uncommitted changes)" if changed else head


def header_lines(command: str) -> list[str]:
    found = gpus()
    where = f"host {platform.node()}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}"
    machine = f"{machine_name(found)} ({where})"
    gpu = "; ".join(f"{name}, driver {driver}" for name, driver in found) or "none"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"# machine: {machine}",
        f"# gpu: {gpu}",
        f"# commit: {commit()}",
        f"# date: {date}",
        f"# command: {command}",
    ]


def print_header(module: str, argv: list[str] | None = None) -> None:
    """The header of ``python -m MODULE ARGV`` (ARGV: this process's arguments by default)."""
    args = sys.argv[1:] if argv is None else argv
    print("\n".join(header_lines(shlex.join(["python", "-m", module, *args]))), flush=True)


def merge_json(path: Path, key: str, value) -> None:
    """Put ``value`` under ``key`` in the JSON object at ``path``, keeping the other keys, so that
    each part of a run that writes there loses only itself when it fails."""
    data = {}
    if path.exists():
        try:
            data = json.loads(path.read_text())
        except ValueError:
            data = {"unreadable_previous": path.read_text()[:2000]}
    data[key] = value
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    os.replace(tmp, path)


if __name__ == "__main__":
    print("\n".join(header_lines(" ".join(sys.argv[1:]) or "?")))
