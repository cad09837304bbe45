"""What compute-sanitizer found in one launch: a report (``SanitizerFinding``) and one tool's
outcome (``SanitizedLaunch``), as plain records whose ``to_dict`` is JSON and whose ``from_dict``
gives back an equal record."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

# The tools, in the order they are run and listed: the one choice list of the option, the
# records and the command line.
TOOLS = ("racecheck", "memcheck", "synccheck", "initcheck")

# The failure kind of a case whose sanitizer run found an error-severity report.
HAZARD = "hazard"

# What became of one tool's run.
RAN = "ran"  # the sanitizer ran the launch and its report was read
SKIPPED = "skipped"  # no sanitizer here (no CUDA toolkit, a CPU or ROCm device): see the reason
TIMED_OUT = "timed_out"  # killed at the step's time limit
FAILED = "failed"  # the child failed without a report, or the report could not be read
STATUSES = (RAN, SKIPPED, TIMED_OUT, FAILED)

# What one report is about.
RACE_HAZARD = "hazard"  # racecheck, hazard mode: one shared-memory address, two threads
RACE = "race"  # racecheck, analysis mode: one access against the accesses it races with
MEMORY = "memory"  # memcheck: an invalid (out-of-bounds or misaligned) access
UNINITIALIZED = "uninitialized"  # initcheck: a read of global memory never written
BARRIER = "barrier"  # synccheck: an invalid use of a barrier
API = "api"  # a CUDA API call that returned an error (often what follows a kernel fault)
OTHER = "other"  # a record of a kind this reader does not know: its text is kept
FINDING_KINDS = (RACE_HAZARD, RACE, MEMORY, UNINITIALIZED, BARRIER, API, OTHER)

ERROR = "Error"
WARNING = "Warning"
# A racecheck hazard whose severity neither the report nor the text said; counted as an error,
# since a race nobody graded is no reason to pass.
UNKNOWN = "Unknown"

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class Access:
    """One side of a racecheck report: who accessed, where in the code."""

    direction: str | None  # "Write" or "Read", as the report says
    function: str | None  # the function at the PC: the kernel, or with -lineinfo the inlined one
    pc: str | None  # offset in the function, "0x5620"
    thread: Dim3 | None = None  # hazard mode only
    source: str | None = None  # "file.cu:84", with -lineinfo
    count: int | None = None  # analysis mode: hazards between the source access and this one

    def at(self) -> str:
        where = f"{self.function}+{self.pc}" if self.function and self.pc else self.function or self.pc or "?"
        return f"{where} ({self.source})" if self.source else where


@dataclass(frozen=True)
class Allocation:
    """The allocation nearest to a memcheck access, as the text report places it."""

    address: str
    size: int | None  # bytes
    relation: str  # "after", "before" or "inside"
    distance: int | None = None  # bytes after its end or before its start; None inside

    def describe(self) -> str:
        size = f"the {self.size:,}-byte allocation" if self.size is not None else "the allocation"
        if self.relation == "inside":
            return f"inside {size} at {self.address}"
        distance = f"{self.distance} byte{'s' if self.distance != 1 else ''} " if self.distance is not None else ""
        return f"{distance}{self.relation} {size} at {self.address}"


class _Record:
    def to_dict(self) -> dict[str, Any]:
        """The record as JSON values (tuples as lists); ``from_dict`` gives back an equal one."""
        return _plain(self)


@dataclass(frozen=True)
class SanitizerFinding(_Record):
    """One record of a compute-sanitizer report. Fields a record does not carry are None."""

    tool: str
    kind: str  # one of FINDING_KINDS
    severity: str  # ERROR, WARNING, "Info" or UNKNOWN
    text: str  # the record's own headline ("Potential RAW hazard detected")
    kernel: str | None = None  # the kernel the report is about (its function at the PC)
    pc: str | None = None
    source: str | None = None  # "file.cu:84" where the kernel was compiled with -lineinfo
    block: Dim3 | None = None
    thread: Dim3 | None = None
    space: str | None = None  # "__shared__", "__global__"
    address: str | None = None
    size: int | None = None  # bytes of the access
    direction: str | None = None  # memcheck and initcheck: "read" or "write"
    hazard: str | None = None  # racecheck: "RAW", "WAR" or "WAW"
    memcpy_async: bool | None = None  # a hazard of invalid memcpy_async (cp.async) synchronization
    note: str | None = None  # the text's note on a hazard: "invalid memcpy_async synchronization"
    error: str | None = None  # "out of bounds", "misaligned", synccheck's type, an API error name
    api: str | None = None  # the CUDA API call of an API record
    allocation: Allocation | None = None
    accesses: tuple[Access, ...] = ()  # racecheck: the writer and reader, or source and destinations
    count: int = 1  # hazards the record stands for (a race analysis report sums its destinations)
    record: str = ""  # the report's own kind ("Hazard", "Analysis", "Precise", ...)

    @property
    def is_error(self) -> bool:
        return self.severity in (ERROR, UNKNOWN) and self.kind != API

    def label(self, n: int | None = None) -> str:
        """What it is: "RAW hazard (cp.async synchronization)", or for n of them "2 RAW hazards
        (cp.async synchronization)"."""
        one, many, detail = self._noun()
        return f"{one}{detail}" if n is None else f"{n} {one if n == 1 else many}{detail}"

    def _noun(self) -> tuple[str, str, str]:
        size = f" of {self.size} bytes" if self.size is not None else ""
        if self.kind == RACE_HAZARD:
            name = f"{self.hazard} hazard" if self.hazard else "hazard"
            details = [
                word
                for word, said in (
                    ("cp.async synchronization", self.memcpy_async),
                    ("warning severity", self.severity == WARNING),
                )
                if said
            ]
            return name, name + "s", f" ({', '.join(details)})" if details else ""
        if self.kind == RACE:
            return "race", "races", ""
        if self.kind == MEMORY:
            name = " ".join(filter(None, ("invalid", self.space, self.direction or "access")))
            return name, name + "s", size + (f" ({self.error})" if self.error else "")
        if self.kind == UNINITIALIZED:
            name = " ".join(filter(None, ("uninitialized", self.space, "read")))
            return name, name + "s", size
        if self.kind == BARRIER:
            return "barrier error", "barrier errors", f" ({self.error})" if self.error else ""
        if self.kind == API:
            detail = " ".join(filter(None, (self.error, f"in {self.api}" if self.api else None)))
            return "CUDA API error", "CUDA API errors", f" ({detail})" if detail else ""
        return self.text, self.text, ""

    def place(self, *, threads: bool = False) -> str:
        """Where: "in tail_gemm at __shared__ 0x22a0, block (3,4,0)", as far as the record says;
        with ``threads``, a hazard's writing and reading threads too."""
        head = ""
        if self.kernel:
            pc = f"+{self.pc}" if self.pc and self.kind not in (RACE_HAZARD, RACE) else ""
            head = f"in {self.kernel}{pc}"
        parts = []
        if self.kind == RACE and self.accesses:
            source, *destinations = self.accesses
            hazards = sum(d.count or 0 for d in destinations)
            directions = "/".join(sorted({d.direction for d in destinations if d.direction})) or "other"
            parts.append(
                f"{source.direction or 'access'} at {source.at()} against {len(destinations)} "
                f"{directions} accesses ({hazards:,} hazards)"
            )
        else:
            at = " ".join(filter(None, (self.space if self.kind == RACE_HAZARD else None, self.address)))
            if at:
                parts.append(f"at {at}")
            if self.allocation:
                parts.append(self.allocation.describe())
            if self.source:
                parts.append(self.source)
            if self.block:
                parts.append(f"block {_dim3(self.block)}")
            if self.thread:
                parts.append(f"thread {_dim3(self.thread)}")
            if threads and self.kind == RACE_HAZARD:
                parts.extend(
                    f"{a.direction or 'access'} thread {_dim3(a.thread) if a.thread else '?'} at {a.at()}"
                    for a in self.accesses
                )
        where = ", ".join(parts)
        if head and where:
            joint = ": " if self.kind == RACE else " " if where.startswith("at ") else ", "
            return f"{head}{joint}{where}"
        return head or where

    def describe(self) -> str:
        """One line: severity, what and where, threads included."""
        return " ".join(filter(None, (f"{self.severity}: {self.label()}", self.place(threads=True))))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SanitizerFinding":
        values = _fields(cls, data)
        _choose(values, "tool", TOOLS)
        _choose(values, "kind", FINDING_KINDS)
        for name in ("block", "thread"):
            values[name] = _dim3_of(values.get(name), name)
        if values.get("allocation") is not None:
            values["allocation"] = Allocation(**_fields(Allocation, values["allocation"]))
        values["accesses"] = tuple(_access(item) for item in values.get("accesses", ()))
        return cls(**values)


@dataclass(frozen=True)
class SanitizedLaunch(_Record):
    """One tool's run of a case's launch under compute-sanitizer."""

    tool: str
    status: str  # one of STATUSES
    reason: str = ""  # why it was skipped, timed out or failed, or what to know about the report
    tail: str = ""  # the last lines the child and compute-sanitizer printed, when it did not end well
    seconds: float = 0.0
    exit_status: int | None = None  # compute-sanitizer's; the findings decide, not this
    shown: int = 0  # records in the report (--print-limit caps them)
    dropped: int = 0  # of them, reports on the harness's own kernels, left out
    errors: int = 0  # error-severity reports on the kernel under test, among those shown
    unshown_errors: int = 0  # errors the summary counts beyond those shown (--print-limit)
    warnings: int = 0
    api_errors: int = 0  # CUDA API calls that failed
    total_errors: int | None = None  # the text summary's count, printed or not; None: no summary
    total_warnings: int | None = None  # racecheck's summary only
    tally: dict[str, int] = field(default_factory=dict)  # label of a kept report -> how many
    findings: tuple[SanitizerFinding, ...] = ()  # the first kept reports, as evidence

    @property
    def has_hazard(self) -> bool:
        """Whether it fails the case: an error-severity report on the kernel under test, shown
        or counted beyond --print-limit (the harness's kernels being excluded at the tool, the
        errors it did not print are the kernel's)."""
        return self.status == RAN and (self.errors > 0 or self.unshown_errors > 0)

    def summary(self) -> str:
        """One line: "racecheck: 2 RAW hazards (cp.async synchronization) in tail_gemm at
        __shared__ 0x22a0, block (3,4,0), 114,690 errors"."""
        if self.status != RAN:
            word = {SKIPPED: "skipped", TIMED_OUT: "timed out", FAILED: "failed"}[self.status]
            return f"{self.tool}: {word}: {self.reason}" if self.reason else f"{self.tool}: {word}"
        counts = self._counts()
        head = (
            next((f for f in self.findings if f.is_error), None)
            or next((f for f in self.findings if f.kind != API), None)
            or next(iter(self.findings), None)
        )
        left_out = f"{_many(self.dropped, 'report')} on the harness's kernels left out" if self.dropped else ""
        if head is not None:
            what = " ".join(filter(None, (head.label(self.tally.get(head.label(), 1)), head.place())))
            line = f"{self.tool}: {what}, {counts}"
            return f"{line}; {left_out}" if left_out else line
        if self.unshown_errors:
            line = (
                f"{self.tool}: {_many(self.unshown_errors, 'error')} beyond the "
                f"{_many(self.shown, 'report')} shown ({counts})"
            )
            return f"{line}; {left_out}" if left_out else line
        if left_out:
            return f"{self.tool}: clean: no report on the kernel under test ({counts} in all; {left_out})"
        return f"{self.tool}: clean ({counts})"

    def _counts(self) -> str:
        errors = self.total_errors if self.total_errors is not None else self.errors + self.api_errors
        text = _many(errors, "error")
        warnings = self.total_warnings if self.total_warnings is not None else self.warnings
        if warnings or self.tool == "racecheck":
            text += f", {_many(warnings, 'warning')}"
        if self.api_errors:
            text += f" ({_many(self.api_errors, 'CUDA API error')} among them)"
        printed_all = self.total_errors is None or self.shown >= self.total_errors + (self.total_warnings or 0)
        return text if printed_all else f"{text}, {self.shown} shown"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SanitizedLaunch":
        values = _fields(cls, data)
        _choose(values, "tool", TOOLS)
        _choose(values, "status", STATUSES)
        values["tally"] = dict(values.get("tally", {}))
        values["findings"] = tuple(SanitizerFinding.from_dict(item) for item in values.get("findings", ()))
        return cls(**values)


def _many(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _dim3(value: Dim3) -> str:
    return "(" + ",".join(str(v) for v in value) + ")"


def _plain(record) -> dict[str, Any]:
    """asdict, with tuples as lists: what JSON gives back."""

    def plain(value):
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(item) for item in value]
        return value

    return plain(dataclasses.asdict(record))


def _fields(cls, data) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"a {cls.__name__} record must be a dict, got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown field(s) of a {cls.__name__} record: {', '.join(unknown)}")
    return dict(data)


def _choose(values: dict, name: str, choices: tuple[str, ...]) -> None:
    if values.get(name) not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {values.get(name)!r}")


def _dim3_of(value, name: str) -> Dim3 | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 3 or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{name} must be three whole numbers, got {value!r}")
    return tuple(value)


def _access(data) -> Access:
    values = _fields(Access, data)
    values["thread"] = _dim3_of(values.get("thread"), "thread")
    return Access(**values)
