"""Lint findings, their text and JSON forms, and the exit status they make."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field


@dataclass
class LoadRef:
    """A DMA load instruction involved in a finding."""

    line: int
    instruction: str
    waves: list[int]


# How much a finding weighs, heaviest first:
# error      no wait orders the read after the load on some path within a barrier phase, or no
#            barrier (after the writer's lgkmcnt wait) orders a DS write of one wave with a read of another;
# latent     the load's own wave retires it in time, but the barrier that would publish that pairs
#            with another barrier of the reading wave (the waves run a barrier phase apart): only
#            elapsed time orders the read;
# warning    a refill may overtake a read still in flight (only the DMA's latency keeps it safe);
# unchecked  an access (or code) the lint could not check: never a silent pass;
# note       informational.
SEVERITIES = ("error", "latent", "warning", "unchecked", "note")


@dataclass
class Finding:
    severity: str  # one of SEVERITIES
    kind: str  # read-before-load-retires, read-across-phase-offset, refill-overtakes-read, unresolved-address, ...
    kernel: str
    line: int
    instruction: str
    lds: list[tuple[int, int]] = field(default_factory=list)  # bytes involved, half-open
    reader_waves: list[int] = field(default_factory=list)
    loads: list[LoadRef] = field(default_factory=list)
    instances: int = 0  # (read, load, wave pair, iteration) combinations behind this finding
    why: str = ""
    scenario: str = ""  # the branch decisions that showed it (path engine)
    cover: str = ""  # the wait that would order the read and the load
    barriers: str = ""  # the barrier pair involved
    trace: list[str] = field(default_factory=list)  # the last rendezvous and decisions before it

    def to_json(self) -> dict:
        data = asdict(self)
        data["lds"] = [{"start": lo, "end": hi} for lo, hi in self.lds]
        return data


@dataclass
class LintReport:
    path: str
    findings: list[Finding] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)  # instructions not modelled: "kernel:line: text"
    unfinished: list[str] = field(default_factory=list)  # kernels the time limit stopped

    def of(self, severity: str) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]

    @property
    def errors(self) -> list[Finding]:
        return self.of("error")

    @property
    def latent(self) -> list[Finding]:
        return self.of("latent")

    @property
    def warnings(self) -> list[Finding]:
        return self.of("warning")

    @property
    def unchecked(self) -> list[Finding]:
        return self.of("unchecked")

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "kernels": self.kernels,
            **{key: len(self.of(severity)) for key, severity in _COUNTED},
            "findings": [f.to_json() for f in self.findings],
            "notes": self.notes,
            "incomplete": self.incomplete,
            "unfinished": self.unfinished,
        }


_COUNTED = (("errors", "error"), ("latent", "latent"), ("warnings", "warning"), ("unchecked", "unchecked"))

EXIT_CLEAN, EXIT_ERRORS, EXIT_UNCHECKED = 0, 1, 3  # the lint's exit statuses (2 is a usage error)


def exit_status(reports: list[LintReport], *, fail_on_latent: bool = False) -> int:
    """1 for errors (and latent findings on request), else 3 for anything unchecked (a target
    with no kernel in it among them: nothing checked is never a pass), else 0."""
    if any(r.errors or (fail_on_latent and r.latent) for r in reports):
        return EXIT_ERRORS
    if any(r.unchecked or r.unfinished or not r.kernels for r in reports):
        return EXIT_UNCHECKED
    return EXIT_CLEAN


def summary(reports: list[LintReport]) -> str:
    """'16 error(s), 0 warning(s) in 2 kernel(s)', with latent and unchecked counts when there are any."""
    count = {severity: sum(len(r.of(severity)) for r in reports) for _, severity in _COUNTED}
    text = f"{count['error']} error(s), {count['warning']} warning(s)"
    if count["latent"]:
        text += f", {count['latent']} latent"
    if count["unchecked"]:
        text += f", {count['unchecked']} unchecked"
    return text + f" in {sum(len(r.kernels) for r in reports)} kernel(s)"


def wave_list(waves: list[int]) -> str:
    """'0-3,6': wave numbers as runs."""
    if not waves:
        return "-"
    waves = sorted(waves)
    runs, start, prev = [], waves[0], waves[0]
    for w in waves[1:] + [None]:
        if w is not None and w == prev + 1:
            prev = w
            continue
        runs.append(f"{start}" if start == prev else f"{start}-{prev}")
        if w is not None:
            start = prev = w
    return ",".join(runs)


def _ranges(ranges: list[tuple[int, int]], limit: int = 4) -> str:
    text = ", ".join(f"[{lo:#x}, {hi:#x})" for lo, hi in ranges[:limit])
    return text + (f" and {len(ranges) - limit} more" if len(ranges) > limit else "")


def format_finding(path: str, f: Finding) -> str:
    head = f"{path}:{f.line}: {f.severity}: {f.kind}: {f.instruction}"
    lines = [head, f"  kernel {f.kernel}; waves {wave_list(f.reader_waves)}"]
    if f.lds:
        lines.append(f"  LDS {_ranges(f.lds)} (within [{f.lds[0][0]:#x}, {f.lds[-1][1]:#x}))")
    for load in f.loads:
        what = "write" if load.instruction.startswith("ds_") else "load"
        lines.append(f"  {what} line {load.line}: {load.instruction} (waves {wave_list(load.waves)})")
    if f.instances:
        lines.append(f"  {f.instances} unordered read/load instances")
    if f.scenario:
        lines.append(f"  when {f.scenario}")
    if f.barriers:
        lines.append(f"  barriers: {f.barriers}")
    if f.cover:
        lines.append(f"  would be ordered by: {f.cover}")
    if f.trace:
        lines.append(f"  path: {' -> '.join(f.trace)}")
    if f.why:
        lines.append(f"  why: {f.why}")
    return "\n".join(lines)


def format_text(reports: list[LintReport]) -> str:
    out: list[str] = []
    for report in reports:
        for f in report.findings:
            out.append(format_finding(report.path, f))
        for note in report.notes:
            out.append(f"{report.path}: note: {note}")
        if report.incomplete:
            out.append(
                f"{report.path}: incomplete: {len(report.incomplete)} instruction(s) not modelled, their "
                f"results taken as unknown: "
                + "; ".join(report.incomplete[:8])
                + (" ..." if len(report.incomplete) > 8 else "")
            )
    out.append(summary(reports))
    return "\n".join(out)


def format_json(reports: list[LintReport]) -> str:
    return json.dumps(
        {
            **{key: sum(len(r.of(severity)) for r in reports) for key, severity in _COUNTED},
            "unfinished": [kernel for r in reports for kernel in r.unfinished],
            "files": [r.to_json() for r in reports],
        },
        indent=2,
    )
