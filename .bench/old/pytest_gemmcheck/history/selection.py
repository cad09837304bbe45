"""Which part of the history a question is about: kernels, quant modes, shapes, tiles, params,
stacks and runs, as the ``gemmcheck`` command's filters give them.

Glob patterns (``fused_*``, ``4096x*x256``, ``torch=2.12*``) are matched in Python, case by
case, against the small tables they describe (case, stack, run); what reaches SQL is only the
ids that matched, as bound parameters. No text a user typed is ever part of a statement.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import and_, select, true

from ..errors import CommandError
from ..records.stack_columns import STACK_COLUMNS
from .schema import case_table, result_table, run_table, stack_table

NO_GPU_ARCH = "cpu"  # the arch filters match, and tables show, for a stack without a GPU


class SelectionError(CommandError, ValueError):
    """A filter that cannot be understood; the message names it."""


@dataclass(frozen=True)
class Selection:
    kernels: tuple[str, ...] = ()  # globs
    quants: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()  # 'MxNxK', each part a number or a glob
    tiles: tuple[str, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()  # (key, value): the case's param equals the value
    arches: tuple[str, ...] = ()
    stack: tuple[tuple[str, str], ...] = ()  # (field, glob) over the stack's columns and extra fields
    tags: tuple[str, ...] = ()
    revisions: tuple[str, ...] = ()  # prefixes of the git revision
    runs: tuple[int, ...] = ()
    since: datetime | None = None
    keys: tuple[str, ...] = ()  # case key prefixes

    @property
    def describe(self) -> str:
        """The filters as text, 'kernel=fused_* quant=ptpc'; '' for none."""
        parts = [f"kernel={k}" for k in self.kernels] + [f"quant={q}" for q in self.quants]
        parts += [f"shape={s}" for s in self.shapes] + [f"tile={t}" for t in self.tiles]
        parts += [f"param {k}={json.dumps(v)}" for k, v in self.params] + [f"arch={a}" for a in self.arches]
        parts += [f"stack {f}={g}" for f, g in self.stack] + [f"tag={t}" for t in self.tags]
        parts += [f"revision={r}" for r in self.revisions] + [f"run={r}" for r in self.runs]
        parts += [f"case={k}" for k in self.keys]
        if self.since is not None:
            parts.append(f"since {self.since:%Y-%m-%d %H:%M}")
        return " ".join(parts)

    @property
    def on_cases(self) -> bool:
        return bool(self.kernels or self.quants or self.shapes or self.tiles or self.params or self.keys)

    @property
    def on_stacks(self) -> bool:
        return bool(self.arches or self.stack)

    @property
    def on_runs(self) -> bool:
        return bool(self.tags or self.revisions or self.runs or self.since)


# --- parsing what users type ----------------------------------------------------------------


def parse_param(text: str) -> tuple[str, Any]:
    """'fuse=True' -> ('fuse', True); values are JSON where they parse (true, 3, "x"), Python's
    True/False/None spelled as such, and strings otherwise."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise SelectionError(f"--param {text!r}: expected KEY=VALUE, e.g. fuse=True")
    value: Any = {"True": True, "False": False, "None": None}.get(raw, raw)
    if value is raw:
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
    return key.strip(), value


def parse_field(text: str, option: str) -> tuple[str, str]:
    """'torch=2.12*' -> ('torch', '2.12*')."""
    name, sep, pattern = text.partition("=")
    if not sep or not name.strip():
        raise SelectionError(f"{option} {text!r}: expected FIELD=PATTERN, e.g. torch=2.12*")
    return name.strip(), pattern


def parse_shape(text: str) -> str:
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(parts):
        raise SelectionError(
            f"--shape {text!r}: expected MxNxK, each a number or a pattern, e.g. 4096x7168x256 or *x7168x*"
        )
    return "x".join(parts)


_SINCE = re.compile(r"(\d+)\s*([smhdw])")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """A moment: '7d', '12h', '30m', '2w' ago, or an ISO date/time ('2026-11-01', '2026-11-01T12:00')."""
    now = now or datetime.now(timezone.utc)
    match = _SINCE.fullmatch(text.strip().lower())
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[unit]
        try:
            return now - timedelta(seconds=amount * seconds)
        except OverflowError:  # before the year 1, or more days than a timedelta holds
            raise SelectionError(
                f"--since {text!r}: an age back past the year 1; give a date such as "
                "2026-11-01, or leave the option out to match everything"
            ) from None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise SelectionError(
            f"--since {text!r}: expected an age such as 7d, 12h, 30m, or a date such as 2026-11-01"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


# --- matching -----------------------------------------------------------------------------


def _matches(value, patterns) -> bool:
    return any(fnmatch.fnmatchcase("" if value is None else str(value), pattern) for pattern in patterns)


def case_matches(
    selection: Selection,
    kernel: str,
    quant: str,
    m: int,
    n: int,
    k: int,
    tile: str | None,
    params: dict | None,
    key: str,
) -> bool:
    if selection.kernels and not _matches(kernel, selection.kernels):
        return False
    if selection.quants and not _matches(quant, selection.quants):
        return False
    if selection.shapes and not _matches(f"{m}x{n}x{k}", selection.shapes):
        return False
    if selection.tiles and not _matches(tile or "none", selection.tiles):
        return False
    if selection.keys and not any(key.startswith(prefix) for prefix in selection.keys):
        return False
    params = params or {}
    return all(key_ in params and params[key_] == value for key_, value in selection.params)


def stack_matches(selection: Selection, columns: dict, extra: dict | None) -> bool:
    """Whether a stack is selected. A stack without a GPU has the arch 'cpu' in every filter
    (--arch cpu, --stack gpu_arch=cpu, a compare side stack:gpu_arch=cpu), as it is shown."""
    if selection.arches and not _matches(columns.get("gpu_arch") or NO_GPU_ARCH, selection.arches):
        return False
    extra = extra or {}
    for name, pattern in selection.stack:
        value = columns[name] if name in STACK_COLUMNS else extra.get(name)
        if name == "gpu_arch" and value is None:
            value = NO_GPU_ARCH
        if not _matches(value, (pattern,)):
            return False
    return True


def stack_fields(connection) -> set[str]:
    """The stack fields a filter may name: the stack table's columns, and every field a
    fingerprint hook added to a recorded stack."""
    known = set(STACK_COLUMNS)
    for (extra,) in connection.execute(select(stack_table.c.extra).where(stack_table.c.extra.is_not(None))):
        known.update(extra or {})
    return known


def check_stack_fields(connection, fields: tuple[tuple[str, str], ...], option: str) -> None:
    """A SelectionError naming ``option`` for a stack field the history does not know (a
    misspelt field would otherwise match nothing, silently)."""
    unknown = sorted({name for name, _ in fields} - stack_fields(connection))
    if unknown:
        hint = "; the GPU arch is gpu_arch, or --arch" if "arch" in unknown else ""
        raise SelectionError(
            f"{option}: no stack field {', '.join(repr(name) for name in unknown)} in the history "
            f"(the fields: {', '.join(sorted(stack_fields(connection)))}){hint}"
        )


def run_matches(
    selection: Selection, tag: str | None, revision: str | None, run_id: int, started_at: datetime | None
) -> bool:
    if selection.tags and not _matches(tag, selection.tags):
        return False
    if selection.revisions and not any((revision or "").startswith(prefix) for prefix in selection.revisions):
        return False
    if selection.runs and run_id not in selection.runs:
        return False
    if selection.since is not None:
        moment = started_at if started_at is None or started_at.tzinfo else started_at.replace(tzinfo=timezone.utc)
        if moment is None or moment < selection.since:
            return False
    return True


@dataclass
class Matched:
    """The ids a selection matched, per table; None where it does not filter that table."""

    cases: list[int] | None = None
    stacks: list[int] | None = None
    runs: list[int] | None = None
    empty: bool = False  # some filter matched nothing: so does the whole selection

    def condition(self):
        """A WHERE clause over the result table (bound ids only)."""
        clauses = [true()]
        if self.cases is not None:
            clauses.append(result_table.c.case_id.in_(self.cases))
        if self.stacks is not None:
            clauses.append(result_table.c.stack_id.in_(self.stacks))
        if self.runs is not None:
            clauses.append(result_table.c.run_id.in_(self.runs))
        return and_(*clauses)


def match(connection, selection: Selection) -> Matched:
    """The ids of the cases, stacks and runs ``selection`` keeps."""
    matched = Matched()
    if selection.on_cases:
        rows = connection.execute(select(case_table.c["id", "kernel", "quant", "m", "n", "k", "tile", "params", "key"]))
        matched.cases = [
            row.id
            for row in rows
            if case_matches(selection, row.kernel, row.quant, row.m, row.n, row.k, row.tile, row.params, row.key)
        ]
    if selection.on_stacks:
        columns = [stack_table.c[name] for name in STACK_COLUMNS]
        rows = connection.execute(select(stack_table.c.id, stack_table.c.extra, *columns))
        matched.stacks = [
            row.id
            for row in rows
            if stack_matches(selection, {name: getattr(row, name) for name in STACK_COLUMNS}, row.extra)
        ]
    if selection.on_runs:
        rows = connection.execute(select(run_table.c.id, run_table.c.tag, run_table.c.revision, run_table.c.started_at))
        matched.runs = [row.id for row in rows if run_matches(selection, row.tag, row.revision, row.id, row.started_at)]
    matched.empty = any(ids == [] for ids in (matched.cases, matched.stacks, matched.runs))
    return matched
