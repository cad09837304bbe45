"""A table of the dashboard, and its forms: aligned text for a terminal, markdown for a PR,
CSV and JSON for scripts. Every query command builds one and prints it in ``--format``.

The text forms show ``rows`` (display words: "26–59%", "▃▂▁"), every character that is not
printable (an ANSI escape, a bidi control such as U+202E) shown as its escape, never sent to the
terminal (records/printable.py). The machine forms are data, from ``records``: JSON the records
themselves (typed values, fixed field names), CSV (RFC 4180, as Python's csv module writes it:
CRLF between records, a field holding a comma, a quote or a line break quoted) one row per
record with nested fields flattened to dotted columns ("sides.main.launches"), lists and
``params`` as JSON text, None as an empty cell, no display glyph anywhere, and every value as
it is, control characters too.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .. import jsontext
from ..records.printable import printable

FORMATS = ("table", "markdown", "json", "csv")


def params_text(params: dict) -> str:
    """A case's params as every table shows them: 'fuse=False,splits=2'."""
    return ",".join(f"{key}={value}" for key, value in sorted(params.items()))


def plain(value: Any) -> str:
    """A record's value as a CSV cell: numbers as Python writes them (no thousands separators),
    booleans as true/false, None as empty, a moment in ISO 8601, lists and dicts as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    if isinstance(value, (list, tuple, dict)):
        return jsontext.dumps(value, sort_keys=True, default=json_value)
    return str(value)


def flatten(record: dict[str, Any], keep: tuple[str, ...] = ("params",), prefix: str = "") -> dict[str, Any]:
    """A record with nested dicts as dotted keys ('sides.main.launches'); the fields in ``keep``
    (free-form dicts such as a case's params) stay whole."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and key not in keep:
            flat.update(flatten(value, keep, f"{name}."))
        else:
            flat[name] = value
    return flat


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]  # what the text forms show
    title: str = ""
    notes: list[str] = field(default_factory=list)  # lines under the table (method, what was left out)
    records: list[dict[str, Any]] | None = None  # what JSON and CSV give: typed values; the rows as strings if None
    empty: str = "nothing matches"
    name: str = ""  # the table's name in a JSON document of several tables (coverage: matrix, gaps)

    def render(self, form: str) -> str:
        return {"table": self.text, "markdown": self.markdown, "json": self.json, "csv": self.csv}[form]()

    def _shown(self) -> tuple[list[str], list[list[str]]]:
        return [printable(h) for h in self.headers], [[printable(c) for c in row] for row in self.rows]

    def text(self) -> str:
        lines = [printable(self.title)] if self.title else []
        notes = [printable(note) for note in self.notes]
        if not self.rows:
            return "\n".join(lines + [self.empty] + notes)
        headers, rows = self._shown()
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        return "\n".join(lines + notes)

    def markdown(self) -> str:
        lines = [f"**{printable(self.title)}**", ""] if self.title else []
        notes = [printable(note) for note in self.notes]
        if not self.rows:
            return "\n".join(lines + [self.empty] + [f"\n{note}" for note in notes])

        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        headers, rows = self._shown()
        lines.append("| " + " | ".join(cell(h) for h in headers) + " |")
        lines.append("|" + "|".join("---" for _ in headers) + "|")
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
        if notes:
            lines += [""] + notes
        return "\n".join(lines)

    def machine_records(self) -> list[dict[str, Any]]:
        return self.records if self.records is not None else [dict(zip(self.headers, row)) for row in self.rows]

    def csv(self) -> str:
        """One table: a header of field names, a row per record, plain values, each record ended
        by CRLF (a line break inside a field is then always quoted: with a bare LF between
        records Python's csv module leaves a field's lone CR unquoted, and a reader splits it)."""
        flat = [flatten(record) for record in self.machine_records()]
        columns: dict[str, None] = {}  # every record's fields, in the order first seen
        for record in flat:
            columns.update(dict.fromkeys(record))
        if not columns:
            return ""
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(list(columns))
        writer.writerows([[plain(record.get(column)) for column in columns] for record in flat])
        return buffer.getvalue()

    def json(self) -> str:
        return jsontext.dumps(self.machine_records(), indent=1, default=json_value)


def emit(text: str, form: str) -> None:
    """A rendered table onto stdout: CSV as it is (every record, the last too, ends in CRLF),
    the other forms with a line end."""
    sys.stdout.write(text if form == "csv" else text + "\n")


def json_value(value: Any) -> Any:
    """What JSON has no type for: a moment in ISO 8601, anything else as its text."""
    return iso(value) if isinstance(value, datetime) else str(value)


def iso(moment: datetime) -> str:
    """A recorded moment in ISO 8601 with its offset; the history records UTC, and a SQLite
    database gives it back without the offset."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).isoformat()


def json_document(tables: list[Table]) -> str:
    """Several tables as one JSON object, ``{name: records}`` under the tables' fixed names."""
    return jsontext.dumps({table.name: table.machine_records() for table in tables}, indent=1, default=json_value)
