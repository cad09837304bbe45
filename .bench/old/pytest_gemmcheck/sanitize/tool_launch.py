"""One launch of a child command under a compute-sanitizer tool, and its outcome as a record.

What decides is the report, not the exit status: a kernel fault that memcheck reports also aborts
the kernel, and the child then fails ("unspecified launch failure", exit status 1; 6 when it
dies in torch's teardown). A child that fails with no report at all, a report that cannot be
read, a launch that never began: each is a failed run with its reason, never a clean one.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from ..records.sanitize import API, ERROR, FAILED, RAN, SKIPPED, TIMED_OUT, WARNING, SanitizedLaunch, SanitizerFinding
from .harness import is_harness
from .invocation import build_command, child_environment
from .locate import SanitizerBinary, SanitizerUnavailable, locate
from .process import Finished, run_limited
from .text import PREFIX, TextEnricher, read_totals
from .xml_report import ReportUnreadable, read_findings

# The child prints this line on its stdout, flushed, right before the launch: without it in the
# output the launch never began, and an empty report proves nothing.
LAUNCH_MARKER = "gemmcheck-sanitize: launching"
EVIDENCE = 10  # reports kept per run
TAIL_LINES = 20
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)(:|$)")


def run_tools(
    tools: Sequence[str],
    child: Sequence[str],
    *,
    timeout: float,
    platform: str = "cuda",
    environ: Mapping[str, str] | None = None,
    **options,
) -> list[SanitizedLaunch]:
    """Each tool's run of ``child`` (options as ``run_tool``'s); every tool skipped, with the
    reason, where there is no compute-sanitizer for ``platform``."""
    try:
        binary = locate(platform, environ)
    except SanitizerUnavailable as exc:
        return [SanitizedLaunch(tool=tool, status=SKIPPED, reason=str(exc)) for tool in tools]
    return [run_tool(tool, child, binary=binary, timeout=timeout, environ=environ, **options) for tool in tools]


def run_tool(
    tool: str,
    child: Sequence[str],
    *,
    binary: SanitizerBinary,
    timeout: float,
    racecheck_report: str | None = None,
    print_limit: int | None = None,
    backtraces: bool = True,
    exclude_kernels: Sequence[str] = (),
    harness_kernels: Sequence[str] = (),
    evidence: int = EVIDENCE,
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
    launch_marker: str | None = LAUNCH_MARKER,
) -> SanitizedLaunch:
    """``child`` run once under ``binary --tool TOOL``, for at most ``timeout`` seconds.

    ``exclude_kernels``: substrings of mangled kernel names the tool does not check;
    ``harness_kernels``: patterns of the kernel names, as reports print them, whose reports are
    left out (``harness.is_harness``); ``launch_marker``: the line the child prints before the
    launch (None: not looked for)."""
    with tempfile.TemporaryDirectory(prefix="gemmcheck-sanitize-") as folder:
        workdir = Path(folder)
        save = workdir / f"{tool}.xml"
        command = build_command(
            binary.path,
            tool,
            str(save),
            child,
            racecheck_report=racecheck_report,
            print_limit=print_limit,
            backtraces=backtraces,
            exclude_kernels=exclude_kernels,
        )
        finished = run_limited(command, timeout=timeout, environ=child_environment(environ), workdir=workdir, cwd=cwd)
        return conclude(
            tool,
            finished,
            save,
            timeout=timeout,
            harness_kernels=harness_kernels,
            evidence=evidence,
            launch_marker=launch_marker,
        )


def conclude(
    tool: str,
    finished: Finished,
    save: Path,
    *,
    timeout: float,
    harness_kernels: Sequence[str] = (),
    evidence: int = EVIDENCE,
    launch_marker: str | None = LAUNCH_MARKER,
) -> SanitizedLaunch:
    """What one finished (or killed) run of compute-sanitizer amounts to."""
    seconds = round(finished.seconds, 2)
    if finished.error is not None:
        return SanitizedLaunch(
            tool=tool,
            status=FAILED,
            seconds=seconds,
            reason=f"compute-sanitizer could not be started: {finished.error}",
        )
    totals = read_totals(finished.stdout)
    common = dict(
        tool=tool,
        seconds=seconds,
        exit_status=finished.exit_status,
        total_errors=totals.errors,
        total_warnings=totals.warnings,
    )
    failed = dict(common, tail=_tail(finished))
    if finished.timed_out:
        return SanitizedLaunch(
            status=TIMED_OUT,
            reason=f"{tool} did not finish within {timeout:g} s; compute-sanitizer and the child were killed",
            **failed,
        )
    counted = _Count(harness_kernels, evidence)
    problem = None
    if save.exists():
        enricher = TextEnricher(finished.stdout)
        try:
            for finding in read_findings(save, tool):
                counted.add(enricher.enrich(finding))
        except ReportUnreadable as exc:
            problem = str(exc)
    else:
        problem = f"compute-sanitizer wrote no report ({save.name})"
    launched = launch_marker is None or launch_marker in (line.strip() for line in finished.stdout.splitlines())
    status = finished.exit_status
    if counted.shown:  # the reports decide, whatever the exit status
        reason = "; ".join(filter(None, (problem, _after(status, finished))))
        return SanitizedLaunch(
            status=RAN, reason=reason, **counted.fields(totals.errors), **(failed if status else common)
        )
    if not launched:
        said = f"exited with status {status}" if status else "exited"
        return SanitizedLaunch(status=FAILED, reason=f"the child {said} before the launch{_said(finished)}", **failed)
    if problem:
        reason = "; ".join(filter(None, (problem, _after(status, finished, then=""))))
        return SanitizedLaunch(status=FAILED, reason=reason, **failed)
    if status:
        return SanitizedLaunch(
            status=FAILED,
            reason=f"the child exited with status {status} and {tool} reported nothing{_said(finished)}",
            **failed,
        )
    return SanitizedLaunch(status=RAN, **counted.fields(totals.errors), **common)


class _Count:
    """The kept reports: counted by severity and label, the first few kept as evidence (the
    kernel's own before the CUDA API errors that follow them)."""

    def __init__(self, harness_kernels: Sequence[str], evidence: int):
        self.harness_kernels, self.evidence = tuple(harness_kernels), evidence
        self.shown = self.dropped = self.errors = self.warnings = self.api_errors = 0
        self.shown_errors = 0  # error-severity records shown, the harness's and API errors included
        self.tally: dict[str, int] = {}
        self.kernel: list[SanitizerFinding] = []
        self.api: list[SanitizerFinding] = []

    def add(self, finding: SanitizerFinding) -> None:
        self.shown += 1
        self.shown_errors += finding.is_error or finding.kind == API and finding.severity == ERROR
        if is_harness(finding, self.harness_kernels):
            self.dropped += 1
            return
        label = finding.label()
        self.tally[label] = self.tally.get(label, 0) + 1
        if finding.kind == API:
            self.api_errors += finding.severity == ERROR
            kept = self.api
        else:
            self.errors += finding.is_error
            self.warnings += finding.severity == WARNING
            kept = self.kernel
        if len(kept) < self.evidence:
            kept.append(finding)

    def fields(self, total_errors: int | None) -> dict:
        unshown = max(0, total_errors - self.shown_errors) if total_errors is not None else 0
        return dict(
            shown=self.shown,
            unshown_errors=unshown,
            dropped=self.dropped,
            errors=self.errors,
            warnings=self.warnings,
            api_errors=self.api_errors,
            tally=self.tally,
            findings=tuple((self.kernel + self.api)[: self.evidence]),
        )


def _after(status: int | None, finished: Finished, then: str = " then") -> str:
    return f"the child{then} exited with status {status}{_said(finished)}" if status else ""


def _said(finished: Finished) -> str:
    """ ": ModuleNotFoundError: No module named 'x'": the first exception the child printed, else
    its last line (of stderr, else of its own lines on stdout)."""
    lines = [line.strip() for line in finished.stderr.splitlines() if line.strip()] or [
        line.strip() for line in finished.stdout.splitlines() if line.strip() and not line.startswith(PREFIX)
    ]
    exception = next((line for line in lines if _EXCEPTION.match(line)), None)
    said = exception or (lines[-1] if lines else "")
    return f": {said}" if said else ""


def _tail(finished: Finished) -> str:
    """The end of what the child and compute-sanitizer printed: stderr, else stdout."""
    text = finished.stderr if finished.stderr.strip() else finished.stdout
    return "\n".join(text.rstrip().splitlines()[-TAIL_LINES:])
