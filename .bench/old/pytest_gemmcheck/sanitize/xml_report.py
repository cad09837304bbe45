"""Reading compute-sanitizer's XML report (``--xml --save FILE``) into findings.

The report is ``<ComputeSanitizerOutput>`` with one ``<record>`` per report, in the order they
were printed; each has a ``<kind>`` (Hazard, Analysis, Precise, Initcheck, Synccheck, Api, ...)
and, for some kinds, a ``<level>``. It is read as a stream, one record at a time, and
defensively: a field a record lacks is None, and a file that breaks off or is no XML raises
ReportUnreadable after the records before the break have been given.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterator
from xml.parsers import expat

from ..records.sanitize import (
    API,
    BARRIER,
    ERROR,
    MEMORY,
    OTHER,
    RACE,
    RACE_HAZARD,
    UNINITIALIZED,
    UNKNOWN,
    Access,
    SanitizerFinding,
)

ROOT = "ComputeSanitizerOutput"
# expat's errors for input that ends too soon: inside an element, a tag or a character
_BROKE_OFF = {
    expat.errors.codes[name]
    for name in (
        expat.errors.XML_ERROR_NO_ELEMENTS,
        expat.errors.XML_ERROR_UNCLOSED_TOKEN,
        expat.errors.XML_ERROR_PARTIAL_CHAR,
    )
}
_SPACE = re.compile(r"__\w+__")
_DIRECTION = re.compile(r"\b(read|write)\b", re.IGNORECASE)


class ReportUnreadable(Exception):
    """The report is missing, empty, cut short or not compute-sanitizer's XML; one line."""


def read_findings(path: str | Path, tool: str) -> Iterator[SanitizerFinding]:
    """The findings of the report at ``path``, in report order."""
    path = Path(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ReportUnreadable(f"no report at {path} ({exc.strerror or exc})") from None
    records = 0
    with handle:
        try:
            root, depth = None, 0
            for event, element in ET.iterparse(handle, events=("start", "end")):
                if event == "start":
                    depth += 1
                    if root is None:
                        root = element
                        if element.tag != ROOT:
                            raise ReportUnreadable(f"the report {path.name} is <{element.tag}>, not <{ROOT}>")
                    continue
                depth -= 1
                if depth == 1 and element.tag == "record":
                    records += 1
                    yield finding_of(element, tool)
                    root.clear()  # done with it: memory stays flat however many records there are
        except ET.ParseError as exc:
            raise ReportUnreadable(_parse_problem(path, records, exc)) from None


def _parse_problem(path: Path, records: int, exc: ET.ParseError) -> str:
    if records == 0 and path.stat().st_size == 0:
        return f"the report {path.name} is empty"
    after = f"after {records} record{'s' if records != 1 else ''}"
    if exc.code in _BROKE_OFF:
        return f"the report {path.name} breaks off {after} ({exc})"
    return f"the report {path.name} is not well-formed XML {after} ({exc})"


def finding_of(record: ET.Element, tool: str) -> SanitizerFinding:
    """One ``<record>`` as a finding."""
    kind = _text(record, "kind") or ""
    level = _text(record, "level")
    read = _READERS.get(kind, _other)
    return read(record, tool, kind, level)


def _hazard(record, tool, kind, level) -> SanitizerFinding:
    common = record.find("what/common")
    accesses = tuple(
        _access(record.find(f"what/{name}"))
        for name in ("thread0", "thread1")
        if record.find(f"what/{name}") is not None
    )
    return SanitizerFinding(
        tool=tool,
        kind=RACE_HAZARD,
        record=kind,
        severity=level or UNKNOWN,
        text=_text(record, "what/text") or "hazard",
        kernel=accesses[0].function if accesses else None,
        pc=accesses[0].pc if accesses else None,
        hazard=_text(common, "type"),
        address=_text(common, "address"),
        block=_dim3(common, "blockIdx"),
        accesses=accesses,
    )


def _race(record, tool, kind, level) -> SanitizerFinding:
    source = record.find("what/source")
    sides = ([_access(source)] if source is not None else []) + [
        _access(destination, counted=True) for destination in record.findall("what/destination")
    ]
    counts = [side.count for side in sides if side.count is not None]
    return SanitizerFinding(
        tool=tool,
        kind=RACE,
        record=kind,
        severity=level or UNKNOWN,
        text=_text(record, "what/text") or "race",
        kernel=sides[0].function if source is not None else None,
        pc=sides[0].pc if source is not None else None,
        source=sides[0].source if source is not None else None,
        accesses=tuple(sides),
        count=sum(counts) if counts else 1,
    )


def _memory(record, tool, kind, level) -> SanitizerFinding:
    function, pc, source = _where(record.find("where"))
    return SanitizerFinding(
        tool=tool,
        kind=MEMORY,
        record=kind,
        severity=level or ERROR,
        text=_text(record, "what/text") or "invalid access",
        kernel=function,
        pc=pc,
        source=source,
        block=_dim3(record, "who/blockIdx"),
        thread=_dim3(record, "who/threadIdx"),
        space=_text(record, "what/space"),
        address=_text(record, "what/address"),
        size=_int(record, "what/size"),
        direction=_lower(_text(record, "what/direction")),
        error=_text(record, "what/error"),
    )


def _uninitialized(record, tool, kind, level) -> SanitizerFinding:
    function, pc, source = _where(record.find("where"))
    text = _text(record, "what/text") or "uninitialized access"
    space, direction = _SPACE.search(text), _DIRECTION.search(text)
    return SanitizerFinding(
        tool=tool,
        kind=UNINITIALIZED,
        record=kind,
        severity=level or ERROR,
        text=text,
        kernel=function,
        pc=pc,
        source=source,
        block=_dim3(record, "who/blockIdx"),
        thread=_dim3(record, "who/threadIdx"),
        space=space[0] if space else None,
        address=_text(record, "what/address"),
        size=_int(record, "what/size"),
        direction=direction[1].lower() if direction else None,
    )


def _barrier(record, tool, kind, level) -> SanitizerFinding:
    function, pc, source = _where(record.find("where"))
    return SanitizerFinding(
        tool=tool,
        kind=BARRIER,
        record=kind,
        severity=level or ERROR,
        text=_text(record, "what/text") or "barrier error",
        kernel=function,
        pc=pc,
        source=source,
        block=_dim3(record, "who/blockIdx"),
        thread=_dim3(record, "who/threadIdx"),
        error=_text(record, "what/type"),
    )


def _api(record, tool, kind, level) -> SanitizerFinding:
    return SanitizerFinding(
        tool=tool,
        kind=API,
        record=kind,
        severity=level or ERROR,
        text=_text(record, "what/text") or "CUDA API error",
        api=_text(record, "what/api"),
        error=_text(record, "what/error"),
    )


def _other(record, tool, kind, level) -> SanitizerFinding:
    function, pc, source = _where(record.find("where"))
    return SanitizerFinding(
        tool=tool,
        kind=OTHER,
        record=kind,
        severity=level or UNKNOWN,
        text=_text(record, "what/text") or (f"a {kind} record" if kind else "a record without a kind"),
        kernel=function,
        pc=pc,
        source=source,
        block=_dim3(record, "who/blockIdx"),
        thread=_dim3(record, "who/threadIdx"),
    )


# memcheck's Imprecise records are hardware exceptions: no thread, the same fields otherwise.
_READERS = {
    "Hazard": _hazard,
    "Analysis": _race,
    "Precise": _memory,
    "Imprecise": _memory,
    "Initcheck": _uninitialized,
    "Synccheck": _barrier,
    "Api": _api,
}


def _access(element: ET.Element, counted: bool = False) -> Access:
    function, pc, source = _where(element.find("where"))
    return Access(
        direction=_text(element, "direction") or _text(element, "access"),
        function=function,
        pc=pc,
        thread=_dim3(element, "threadIdx"),
        source=source,
        count=_int(element, "count") if counted else None,
    )


def _where(element: ET.Element | None) -> tuple[str | None, str | None, str | None]:
    """Function, PC and "file:line" (with -lineinfo) of a ``<where>``."""
    if element is None:
        return None, None, None
    file = _text(element, "path") or _text(element, "file")
    line = _text(element, "line")
    return _text(element, "func"), _text(element, "pc"), (f"{file}:{line}" if file and line else file)


def _text(element: ET.Element | None, path: str) -> str | None:
    if element is None:
        return None
    found = element.findtext(path)
    return found.strip() or None if found is not None else None


def _int(element: ET.Element | None, path: str) -> int | None:
    text = _text(element, path)
    if text is None:
        return None
    text = text.replace(",", "")
    try:
        return int(text, 16) if text[:2].lower() == "0x" else int(text)
    except ValueError:
        return None


def _dim3(element: ET.Element | None, path: str) -> tuple[int, int, int] | None:
    found = element.find(path) if element is not None else None
    values = [_int(found, axis) for axis in "xyz"] if found is not None else []
    return tuple(values) if len(values) == 3 and None not in values else None


def _lower(text: str | None) -> str | None:
    return text.lower() if text else None
