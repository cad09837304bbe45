"""What compute-sanitizer's text output (its stdout) says that the XML report does not.

The summary lines carry the totals when --print-limit cut the records::

    ========= RACECHECK SUMMARY: 100 hazards displayed (114690 errors, 16384 warnings)
    ========= ERROR SUMMARY: 1024 errors
    ========= ERROR SUMMARY: 1020 errors were not printed. Use --print-limit option ...

and each record's text, printed in the same order as the XML records, carries what 2025.3.1
writes only there: a racecheck hazard's severity and its memcpy_async note, the space of its
address, memcheck's nearest allocation, and the source lines of a kernel built with -lineinfo.
A text record is used for an XML record only when it names the same place (PC, thread and
block, or address and block), so a text out of step enriches nothing.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from ..records.sanitize import API, MEMORY, RACE, RACE_HAZARD, UNKNOWN, Access, Allocation, SanitizerFinding

PREFIX = "========="  # compute-sanitizer's default --prefix, which the command leaves alone
# How many text records past the expected one an XML record's text is looked for in: text the
# XML has no record of (the target's exit status, for one) sits between them.
LOOKAHEAD = 8

_NUMBER = r"(\d[\d,]*)"
_RACECHECK_SUMMARY = re.compile(
    rf"RACECHECK SUMMARY: {_NUMBER} hazards? displayed \({_NUMBER} errors?, {_NUMBER} warnings?\)"
)
_ERROR_SUMMARY = re.compile(rf"ERROR SUMMARY: {_NUMBER} errors?\s*$")
_NOT_PRINTED = re.compile(rf"ERROR SUMMARY: {_NUMBER} errors? were not printed")
_SUMMARY = ("RACECHECK SUMMARY:", "ERROR SUMMARY:", "LEAK SUMMARY:", "COMPUTE-SANITIZER")
_BACKTRACE = ("Host Frame:", "Saved host backtrace")

_HEX = r"0x[0-9a-fA-F]+"
_DIM3 = r"\((\d+),(\d+),(\d+)\)"
# "cp_async_16(void *, const void *)+0x5620 in f5ec...cubin.cu:84", or "tail_gemm+0x5620"
_AT = re.compile(rf"^(?P<function>.+)\+(?P<pc>{_HEX})(?: in (?P<file>.+):(?P<line>\d+))?$")
# "Warning: (Warp Level Programming) Potential RAW hazard detected (invalid memcpy_async
# synchronization) at __shared__ 0x2000 in block (7,3,0) :"
_HAZARD = re.compile(
    rf"^(?P<severity>\w+): (?:\((?P<category>[^)]*)\) )?Potential (?P<type>\w+) hazard detected"
    rf"(?: \((?P<note>[^)]*)\))?"
    rf" at (?P<space>\S+) (?P<address>{_HEX}) in block {_DIM3}"
)
_HAZARD_THREAD = re.compile(rf"^(?P<direction>\w+) Thread {_DIM3} at (?P<at>.+)$")
_RACE = re.compile(r"^(?P<severity>\w+): Race reported between (?P<direction>\w+) access at (?P<at>.+)$")
_RACE_DESTINATION = re.compile(r"^and (?P<direction>\w+) access at (?P<at>.+?)(?: \[(?P<count>\d+) hazards?\])?$")
_LOCATION = re.compile(r"^at (?P<at>.+)$")
_WHO = re.compile(rf"^by thread {_DIM3} in block {_DIM3}$")
_ALLOCATION = re.compile(
    rf"^and is (?:(?P<distance>{_NUMBER}) bytes? (?P<relation>after|before)|(?P<inside>inside))"
    rf" the nearest allocation at (?P<address>{_HEX}) of size (?P<size>{_NUMBER}) bytes?"
)


@dataclass(frozen=True)
class Totals:
    """The summary lines' counts; None where no such line was printed."""

    displayed: int | None = None  # racecheck: records printed
    errors: int | None = None
    warnings: int | None = None  # racecheck only
    not_printed: int | None = None  # errors beyond --print-limit


@dataclass(frozen=True)
class TextRecord:
    header: str  # the record's first line, prefix stripped
    lines: tuple[str, ...]  # the lines under it, stripped, host backtrace left out


def read_totals(stdout: str) -> Totals:
    found = {}
    for line in _sanitizer_lines(stdout):
        if match := _RACECHECK_SUMMARY.search(line):
            found.update(displayed=_count(match[1]), errors=_count(match[2]), warnings=_count(match[3]))
        elif match := _NOT_PRINTED.search(line):
            found["not_printed"] = _count(match[1])
        elif match := _ERROR_SUMMARY.search(line):
            found["errors"] = _count(match[1])
    return Totals(**found)


def text_records(stdout: str) -> list[TextRecord]:
    """The records of the text output: a header line, the indented lines under it, up to a
    blank prefix line. The target's own output (no prefix) is left out."""
    records: list[TextRecord] = []
    header, lines = None, []
    for line in _sanitizer_lines(stdout):
        if not line.strip() or not line.startswith(" ") and line.startswith(_SUMMARY):
            if header is not None:
                records.append(TextRecord(header, tuple(lines)))
            header, lines = None, []
        elif line.startswith("  "):
            if header is not None and not line.strip().startswith(_BACKTRACE):
                lines.append(line.strip())
        else:
            if header is not None:
                records.append(TextRecord(header, tuple(lines)))
            header, lines = line.strip(), []
    if header is not None:
        records.append(TextRecord(header, tuple(lines)))
    return records


class TextEnricher:
    """Fills in what an XML record leaves out from its text record, taking XML records in order."""

    def __init__(self, stdout: str):
        self._records = text_records(stdout)
        self._next = 0

    def enrich(self, finding: SanitizerFinding) -> SanitizerFinding:
        for index in range(self._next, min(self._next + 1 + LOOKAHEAD, len(self._records))):
            enriched = _enriched(finding, self._records[index])
            if enriched is not None:
                self._next = index + 1
                return enriched
        return finding


def _enriched(finding: SanitizerFinding, text: TextRecord) -> SanitizerFinding | None:
    """``finding`` completed from ``text``, or None when ``text`` is not its record."""
    if finding.kind == RACE_HAZARD:
        return _hazard(finding, text)
    if finding.kind == RACE:
        return _race(finding, text)
    if finding.kind == API:
        return finding if text.header == finding.text else None
    return _located(finding, text)


def _hazard(finding: SanitizerFinding, text: TextRecord) -> SanitizerFinding | None:
    match = _HAZARD.match(text.header)
    if not match or match["type"] != finding.hazard or match["address"].lower() != (finding.address or "").lower():
        return None
    if finding.block is not None and _dim3(match, 7) != finding.block:
        return None
    threads = {}
    for line in text.lines:
        if thread := _HAZARD_THREAD.match(line):
            threads[(thread["direction"], _dim3(thread, 2))] = _AT.match(thread["at"])
    accesses = tuple(
        _with_source(access, threads.get((access.direction, access.thread))) for access in finding.accesses
    )
    note = "; ".join(filter(None, (match["category"], match["note"]))) or None
    return dataclasses.replace(
        finding,
        severity=match["severity"] if finding.severity == UNKNOWN else finding.severity,
        space=finding.space or match["space"],
        note=note,
        memcpy_async="memcpy_async" in (match["note"] or ""),
        accesses=accesses,
        block=finding.block or _dim3(match, 7),
    )


def _race(finding: SanitizerFinding, text: TextRecord) -> SanitizerFinding | None:
    match = _RACE.match(text.header)
    if not match or not finding.accesses:
        return None
    sides = [(match["direction"], _AT.match(match["at"]))]
    sides += [(d["direction"], _AT.match(d["at"])) for d in map(_RACE_DESTINATION.match, text.lines) if d]
    if len(sides) != len(finding.accesses) or any(
        at is None or at["pc"].lower() != (access.pc or "").lower() or direction != access.direction
        for (direction, at), access in zip(sides, finding.accesses)
    ):
        return None
    accesses = tuple(_with_source(access, at) for (_, at), access in zip(sides, finding.accesses))
    severity = match["severity"] if finding.severity == UNKNOWN else finding.severity
    return dataclasses.replace(
        finding, accesses=accesses, severity=severity, source=finding.source or accesses[0].source
    )


def _located(finding: SanitizerFinding, text: TextRecord) -> SanitizerFinding | None:
    """memcheck, initcheck and synccheck records: "at FUNC+PC", "by thread (..) in block (..)"."""
    at = who = allocation = None
    for line in text.lines:
        if (location := _LOCATION.match(line)) and at is None:
            at = _AT.match(location["at"])
        elif (by := _WHO.match(line)) and who is None:
            who = (_dim3(by, 1), _dim3(by, 4))
        elif (near := _ALLOCATION.match(line)) and allocation is None:
            allocation = Allocation(
                address=near["address"],
                size=_count(near["size"]),
                relation="inside" if near["inside"] else near["relation"],
                distance=None if near["inside"] else _count(near["distance"]),
            )
    if at is None or at["pc"].lower() != (finding.pc or "").lower():
        return None
    if who is not None and (finding.thread, finding.block) != who:
        return None
    return dataclasses.replace(
        finding,
        source=finding.source or _source(at),
        allocation=finding.allocation or (allocation if finding.kind == MEMORY else None),
    )


def _with_source(access: Access, at: re.Match | None) -> Access:
    if at is None or access.source or at["pc"].lower() != (access.pc or "").lower():
        return access
    source = _source(at)
    # with -lineinfo the text names the inlined function at the PC ("read_slice(...)")
    function = at["function"] if source and at["function"] != access.function else access.function
    return dataclasses.replace(access, source=source, function=function)


def _source(at: re.Match) -> str | None:
    return f"{at['file']}:{at['line']}" if at["file"] else None


def _sanitizer_lines(stdout: str):
    for line in stdout.splitlines():
        if line.startswith(PREFIX):
            yield line[len(PREFIX) :].removeprefix(" ")


def _dim3(match: re.Match, first: int) -> tuple[int, int, int]:
    return (int(match[first]), int(match[first + 1]), int(match[first + 2]))


def _count(text: str) -> int:
    return int(text.replace(",", ""))
