"""A case's launch under compute-sanitizer (``--gemmcheck-sanitize``), in two halves.

**The judging process**, after a case's launches: for each tool the test (or the script) runs
again in a spawned child under ``compute-sanitizer --tool T`` (sanitize/tool_launch.py), with the
session's resolved settings and the case named in its environment. The runs come back as
records on the result, where the verdict reads them.

**The child.** Every case of the test but that one returns at once, launching nothing. That one
(at ``sanitize_shape`` when the test or case names one: the same K loop over fewer tiles) makes
one launch: its inputs are made on the CPU and copied to the device (the same bytes as on the
device, and no kernel of the harness runs beside the kernel under test, so every report is the
kernel's), its output is a plain allocation (no guard regions around it: memcheck then sees a
write past its end) filled with NaN by a copy, the marker line is printed, the launch runs and
is synchronised. Nothing is checked or recorded there: the parent's launches did that.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch

from ..config.table import Settings
from ..records.sanitize import SanitizedLaunch

TARGET_CASE = "GEMMCHECK_SANITIZE_CASE"  # the key of the case a sanitizer child launches
# racecheck reports both the hazards (block, thread, address, memory space) and its race analysis
RACECHECK_REPORT = "all"
PRINT_LIMIT = 100  # reports printed per run; the summary still counts every one


def target_key(environ: Mapping[str, str] | None = None) -> str | None:
    """In a sanitizer child: the key of the case it launches; else None."""
    return (os.environ if environ is None else environ).get(TARGET_CASE) or None


def platform_of(device: torch.device) -> str:
    """Where compute-sanitizer would have to run: "cuda", "rocm" or "cpu"."""
    if device.type != "cuda":
        return "cpu"
    return "rocm" if getattr(torch.version, "hip", None) else "cuda"


def sanitize(
    key: str,
    device: torch.device,
    settings: Settings,
    *,
    child: Sequence[str] | None,
    environ: Mapping[str, str],
    cwd: str | Path,
    unavailable: str = "",
) -> list[SanitizedLaunch]:
    """The case ``key``'s launch under each tool of ``settings.sanitize``: ``child`` (the command
    that runs the test or script again; None: there is none, and ``unavailable`` says why) with
    the case named in its environment (the child takes the smaller shape the test or the case
    names itself). Every tool is skipped, with the reason, where it cannot run."""
    from ..records.sanitize import SKIPPED
    from ..sanitize.tool_launch import run_tools  # a sanitized session's: 28 ms of imports without bytecode

    tools = settings.sanitize
    if not tools:
        return []
    if child is None:
        return [SanitizedLaunch(tool=tool, status=SKIPPED, reason=unavailable) for tool in tools]
    return run_tools(
        tools,
        child,
        timeout=settings.sanitize_timeout,
        platform=platform_of(device),
        environ={**environ, TARGET_CASE: key},
        cwd=str(cwd),
        racecheck_report=RACECHECK_REPORT,
        print_limit=PRINT_LIMIT,
    )


def with_sanitizer(stack: dict) -> dict:
    """A session's stack with the compute-sanitizer its sanitized launches run under (its
    version, or that there is none), when --gemmcheck-sanitize is on."""
    from ..environment.stack import fingerprint
    from ..sanitize.locate import SanitizerUnavailable, find_binary, read_version

    path = find_binary()
    try:
        version = (read_version(path) or "unknown version") if path else "none"
    except SanitizerUnavailable:
        version = "does not run"
    info = {**stack, "compute_sanitizer": version}
    info["fingerprint"] = fingerprint(info)
    return info


def not_launched(result, tools: Sequence[str]) -> list[SanitizedLaunch] | None:
    """Each tool skipped, when the case's launches did not all run (a kernel that raised or hung
    would do so under the sanitizer too, or not end); None when they did."""
    from ..records.result import HUNG, RAISED
    from ..records.sanitize import SKIPPED

    stopped = next((kind for launch in result.launches for kind in launch.kinds if kind in (RAISED, HUNG)), None)
    if stopped is None:
        return None
    return [SanitizedLaunch(tool=tool, status=SKIPPED, reason=f"not run: a launch {stopped}") for tool in tools]


# --- the child ---------------------------------------------------------------------------------


def child_case(
    make: Callable[..., Any], key: str, kernel: str, kwargs: dict[str, Any], test_shape: tuple[int, int, int] | None
):
    """The case a test builds, in a sanitizer child: the target case, at its sanitize_shape (the
    case's own, else the test's marker's) when there is one, marked as the target (its key is the
    one the parent named); any other case as it is, not the target."""
    case = make(kernel, **kwargs)
    if case.key != key:
        return case
    shape = case.sanitize_shape or test_shape
    if shape is not None and shape != (case.m, case.n, case.k):
        m, n, k = shape
        case = make(kernel, **{**kwargs, "m": m, "n": n, "k": k})
    case.sanitize_target = True
    return case


def launch_once(case, launch: Callable[[torch.Tensor], Any]) -> None:
    """The target case's one launch under the sanitizer (see the module's docstring)."""
    from ..sanitize.tool_launch import LAUNCH_MARKER

    out = torch.empty((case.m, case.n), dtype=case.out_dtype, device=case.device)
    out.copy_(torch.full((case.m, case.n), float("nan"), dtype=case.out_dtype))
    if case.device.type == "cuda":
        torch.cuda.synchronize(case.device)
    print(LAUNCH_MARKER, flush=True)
    launch(out)
    if case.device.type == "cuda":
        torch.cuda.synchronize(case.device)


def inputs_by_copy(mode, m: int, n: int, k: int, *, seed: int, device: torch.device, fp8):
    """A case's inputs made on the CPU and copied to ``device``: the same bytes, made by no kernel."""
    from dataclasses import replace

    host = mode.make_inputs(m, n, k, seed=seed, device=torch.device("cpu"), fp8=fp8)
    moved = {
        name: getattr(host, name).to(device)
        for name in ("a", "b", "a_scale", "b_scale")
        if getattr(host, name) is not None
    }
    return replace(host, **moved)
