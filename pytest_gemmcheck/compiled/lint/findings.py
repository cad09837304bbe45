"""Lint findings and their text and JSON forms."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field


@dataclass
class LoadRef:
    """A DMA load instruction involved in a finding."""

    line: int
    instruction: str
    waves: list[int]


@dataclass
class Finding:
    severity: str  # error, warning or note
    kind: str  # read-before-load-retires, refill-overtakes-read, unresolved-address, trace-cut
    kernel: str
    line: int
    instruction: str
    lds: list[tuple[int, int]] = field(default_factory=list)  # bytes involved, half-open
    reader_waves: list[int] = field(default_factory=list)
    loads: list[LoadRef] = field(default_factory=list)
    instances: int = 0  # (read, load, wave pair, iteration) combinations behind this finding
    why: str = ""
    scenario: str = ""

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

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "kernels": self.kernels,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.to_json() for f in self.findings],
            "notes": self.notes,
        }


def _waves(waves: list[int]) -> str:
    if not waves:
        return "-"
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
    lines = [head, f"  kernel {f.kernel}; waves {_waves(f.reader_waves)}"]
    if f.lds:
        lines.append(f"  LDS {_ranges(f.lds)} (within [{f.lds[0][0]:#x}, {f.lds[-1][1]:#x}))")
    for load in f.loads:
        lines.append(f"  load line {load.line}: {load.instruction} (waves {_waves(load.waves)})")
    if f.instances:
        lines.append(f"  {f.instances} unordered read/load instances")
    if f.scenario:
        lines.append(f"  when {f.scenario}")
    if f.why:
        lines.append(f"  why: {f.why}")
    return "\n".join(lines)


def format_text(reports: list[LintReport]) -> str:
    out: list[str] = []
    errors = warnings = 0
    for report in reports:
        for f in report.findings:
            out.append(format_finding(report.path, f))
        for note in report.notes:
            out.append(f"{report.path}: note: {note}")
        errors += len(report.errors)
        warnings += len(report.warnings)
    kernels = sum(len(r.kernels) for r in reports)
    out.append(f"{errors} error(s), {warnings} warning(s) in {kernels} kernel(s)")
    return "\n".join(out)


def format_json(reports: list[LintReport]) -> str:
    return json.dumps(
        {
            "errors": sum(len(r.errors) for r in reports),
            "warnings": sum(len(r.warnings) for r in reports),
            "files": [r.to_json() for r in reports],
        },
        indent=2,
    )
