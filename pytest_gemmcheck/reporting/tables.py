"""A table of the dashboard, and its forms: aligned text for a terminal, markdown for a PR,
CSV and JSON for scripts. Every query command builds one and prints it in ``--format``."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from .. import jsontext

FORMATS = ("table", "markdown", "json", "csv")


def params_text(params: dict) -> str:
    """A case's params as every table shows them: 'fuse=False,splits=2'."""
    return ",".join(f"{key}={value}" for key, value in sorted(params.items()))


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]  # what the text forms show
    title: str = ""
    notes: list[str] = field(default_factory=list)  # lines under the table (method, what was left out)
    records: list[dict[str, Any]] | None = None  # what JSON gives: typed values; the rows as strings if None
    empty: str = "nothing matches"

    def render(self, form: str) -> str:
        return {"table": self.text, "markdown": self.markdown, "json": self.json, "csv": self.csv}[form]()

    def text(self) -> str:
        lines = [self.title] if self.title else []
        if not self.rows:
            return "\n".join(lines + [self.empty] + self.notes)
        widths = [max(len(h), *(len(row[i]) for row in self.rows)) for i, h in enumerate(self.headers)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(self.headers, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in self.rows]
        return "\n".join(lines + self.notes)

    def markdown(self) -> str:
        lines = [f"**{self.title}**", ""] if self.title else []
        if not self.rows:
            return "\n".join(lines + [self.empty] + [f"\n{note}" for note in self.notes])

        def cell(text: str) -> str:
            return text.replace("|", "\\|").replace("\n", " ")

        lines.append("| " + " | ".join(cell(h) for h in self.headers) + " |")
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in self.rows]
        if self.notes:
            lines += [""] + self.notes
        return "\n".join(lines)

    def csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.headers)
        writer.writerows(self.rows)
        return buffer.getvalue().rstrip("\n")

    def json(self) -> str:
        records = self.records if self.records is not None else [dict(zip(self.headers, row)) for row in self.rows]
        return jsontext.dumps(records, indent=1, default=str)
