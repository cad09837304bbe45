"""The compute-sanitizer command line for one tool, and the child's environment."""

from __future__ import annotations

import os
from typing import Mapping, Sequence

from ..records.sanitize import TOOLS

RACECHECK_REPORTS = ("analysis", "hazard", "all")

# With torch's caching allocator on, a write past the end of a tensor lands inside a pooled
# block that memcheck sees as allocated, and nothing is reported.
CHILD_ENVIRONMENT = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}


def build_command(
    binary: str,
    tool: str,
    save: str,
    child: Sequence[str],
    *,
    racecheck_report: str | None = None,
    print_limit: int | None = None,
    backtraces: bool = True,
    exclude_kernels: Sequence[str] = (),
) -> list[str]:
    """``binary --tool TOOL --xml --save SAVE [--racecheck-report R] [--print-limit N]
    [--show-backtrace no] [--kernel-name-exclude kns=NAME]... CHILD...``.

    ``racecheck_report`` applies to racecheck only (the others have no such option);
    ``print_limit`` caps the reports printed and saved (0: all of them; None: the tool's 100);
    ``backtraces=False`` leaves out the host backtrace of each report (most of its bytes);
    ``exclude_kernels`` are substrings of the mangled names of kernels the tool should not check
    (the harness's own). The kernel's build flags are left alone."""
    if tool not in TOOLS:
        raise ValueError(f"tool must be one of {', '.join(TOOLS)}, got {tool!r}")
    if not child:
        raise ValueError("the child command is empty")
    command = [binary, "--tool", tool, "--xml", "--save", _literal(save)]
    if racecheck_report is not None and tool == "racecheck":
        if racecheck_report not in RACECHECK_REPORTS:
            raise ValueError(
                f"racecheck_report must be one of {', '.join(RACECHECK_REPORTS)}, got {racecheck_report!r}"
            )
        command += ["--racecheck-report", racecheck_report]
    if print_limit is not None:
        if isinstance(print_limit, bool) or not isinstance(print_limit, int) or print_limit < 0:
            raise ValueError(f"print_limit must be a whole number >= 0, got {print_limit!r}")
        command += ["--print-limit", str(print_limit)]
    if not backtraces:
        command += ["--show-backtrace", "no"]
    for name in exclude_kernels:
        # the option's value is key=value pairs separated by commas
        if not isinstance(name, str) or not name or "," in name or "=" in name:
            raise ValueError(f"a kernel to exclude must be a name without ',' or '=', got {name!r}")
        command += ["--kernel-name-exclude", f"kns={name}"]
    return command + list(child)


def child_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment compute-sanitizer (and so the child) runs with."""
    return {**(os.environ if base is None else base), **CHILD_ENVIRONMENT}


def _literal(path: str) -> str:
    # --save expands %p (pid), %q{VAR} and %%; any other % is an error. A literal % is %%.
    return path.replace("%", "%%")
