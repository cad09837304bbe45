"""Goldens: accepted baselines as reviewable JSON files, one per kernel, under ``goldens/``.

Deterministic on purpose -- sorted keys, cases in key order, no timestamps -- so that a diff
of two goldens reads like a change log ("bad_launches": 0 -> 8 is a decision someone made).
Written by ``--gemmcheck-accept`` from the current run and by ``gemmcheck goldens export``
from stored history; read by every session to find a case's baseline.

A kernel's file is named after it: a plain name (letters, digits, ``_``, ``.``, ``-``) as it
is, ``fused_gemm`` -> ``fused_gemm.json``; any other name escaped, cut short and given a hash
of the whole name, ``gemm/v1`` -> ``gemm_v1@<hash>.json``, so that names that escape alike,
and names too long for a file system, still get files of their own. A file names its kernel,
and a file naming another kernel is never overwritten. A malformed file is a GoldenError of
one line naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import GemmcheckError
from ..records.result import CaseResult
from .baseline import Baseline, Evidence

FORMAT = 1
NAME_MAX = 255  # bytes in a file name on the common file systems
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_PROCESS = re.compile(r"([0-9]{1,18})/([0-9]{1,18})")  # a per-process count, "bad/launches"


class GoldenError(GemmcheckError):
    """A golden file that cannot be read, or must not be written; the message names it."""


# The notes the plugin writes: --gemmcheck-accept's ("accepted at 3f2a9c0b1d+ (nightly)") and
# gemmcheck goldens export's. Any other note is a reviewer's, and is kept.
_GENERATED_NOTE = re.compile(
    r"accepted( at [0-9a-f]+\+?)?( \(.*\))?|exported from \d+ recorded runs?|"
    r"known-bad: accepted with --include-bad from \d+ runs? that were all regressions"
)


def is_generated_note(note: str) -> bool:
    return _GENERATED_NOTE.fullmatch(note) is not None


def scope_value(scope: str, stack: dict) -> str:
    """The scope string a golden is stored under: 'any', 'arch:sm_90', 'stack:<fingerprint>'."""
    if scope == "any":
        return "any"
    if scope == "arch":
        return f"arch:{stack.get('gpu_arch') or 'cpu'}"
    return f"stack:{stack.get('fingerprint', '')}"


# --- reading: every field checked, a bad one named ---------------------------------------------

_REQUIRED = object()


def _shown(value) -> str:
    """A JSON value as the file has it, cut short."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_scope(value) -> bool:
    return isinstance(value, str) and (value == "any" or value.startswith(("arch:", "stack:")))


def _field(item: dict, name: str, where: str, valid, expected: str, default=_REQUIRED):
    """``item[name]``, checked by ``valid``; ValueError names the field ("cases[2].launches",
    "format" at the top, where ``where`` is empty)."""
    label = f"{where}.{name}" if where else name
    if name not in item:
        if default is _REQUIRED:
            raise ValueError(f"{label}: missing")
        return default
    value = item[name]
    if not valid(value):
        raise ValueError(f"{label}: expected {expected}, got {_shown(value)}")
    return value


def _per_process(item: dict, where: str, bad: int, launches: int) -> list[tuple[int, int]]:
    """(bad, launches) per process, written "bad/launches"; a hand-written golden may leave them
    out: one process."""
    texts = _field(item, "per_process", where, lambda value: isinstance(value, list), "a list of 'bad/launches'", [])
    counts = []
    for index, text in enumerate(texts):
        match = _PROCESS.fullmatch(text) if isinstance(text, str) else None
        if match is None or int(match[1]) > int(match[2]):
            raise ValueError(
                f"{where}.per_process[{index}]: expected 'bad/launches' with bad <= launches, got {_shown(text)}"
            )
        counts.append((int(match[1]), int(match[2])))
    if not counts:
        return [(bad, launches)]
    total = (sum(b for b, _ in counts), sum(n for _, n in counts))
    if total != (bad, launches):
        raise ValueError(
            f"{where}.per_process: adds up to {total[0]}/{total[1]}, not bad_launches/launches {bad}/{launches}"
        )
    return counts


@dataclass
class GoldenEntry:
    key: str
    case: dict
    scope: str
    evidence: Evidence
    note: str = ""

    def to_json(self) -> dict:
        """Its JSON; ``ranks`` only for a collective case's (its per_process counts are then per rank)."""
        e = self.evidence
        return {
            "key": self.key,
            "case": self.case,
            "scope": self.scope,
            "launches": e.launches,
            "bad_launches": e.bad,
            "per_process": [f"{bad}/{n}" for bad, n in sorted(e.per_process)],
            "gpus": e.gpus,
            **({"ranks": e.ranks} if e.ranks else {}),
            "worst_wrong": e.worst_wrong,
            "worst_wrong_tiles": e.worst_tiles,
            "kinds": sorted(e.kinds),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, item, where: str = "case") -> "GoldenEntry":
        """An entry as :meth:`to_json` writes it; ValueError names the field that is wrong."""
        if not isinstance(item, dict):
            raise ValueError(f"{where}: expected an object, got {_shown(item)}")
        count = "a whole number >= 0"
        key = _field(item, "key", where, lambda value: isinstance(value, str) and value, "a non-empty string")
        scope = _field(item, "scope", where, _is_scope, "'any', 'arch:ARCH' or 'stack:FINGERPRINT'", "any")
        launches = _field(item, "launches", where, _is_count, count)
        bad = _field(
            item,
            "bad_launches",
            where,
            lambda value: _is_count(value) and value <= launches,
            f"a whole number from 0 to launches ({launches})",
        )
        evidence = Evidence(
            launches=launches,
            bad=bad,
            per_process=_per_process(item, where, bad, launches),
            gpus=_field(item, "gpus", where, _is_count, count, 1),
            worst_wrong=_field(item, "worst_wrong", where, _is_count, count, 0),
            worst_tiles=_field(item, "worst_wrong_tiles", where, _is_count, count, 0),
            kinds=list(
                _field(
                    item,
                    "kinds",
                    where,
                    lambda value: isinstance(value, list) and all(isinstance(kind, str) for kind in value),
                    "a list of strings",
                    [],
                )
            ),
            ranks=_field(item, "ranks", where, _is_count, count, 0),
        )
        return cls(
            key=key,
            case=_field(item, "case", where, lambda value: isinstance(value, dict), "an object", {}),
            scope=scope,
            evidence=evidence,
            note=_field(item, "note", where, lambda value: isinstance(value, str), "a string", ""),
        )


def _entries_of(data) -> tuple[str | None, dict[tuple[str, str], GoldenEntry]]:
    """A golden file's kernel (None when it does not say) and entries; ValueError names the field."""
    if not isinstance(data, dict):
        raise ValueError(f'expected a JSON object {{"format": 1, "kernel": ..., "cases": [...]}}, got {_shown(data)}')
    version = _field(data, "format", "", lambda value: _is_count(value) and value >= 1, "a whole number", FORMAT)
    if version > FORMAT:
        raise ValueError(f"has format {version}, newer than this pytest-gemmcheck reads ({FORMAT})")
    kernel = _field(data, "kernel", "", lambda value: isinstance(value, str), "a string", None)
    cases = _field(data, "cases", "", lambda value: isinstance(value, list), "a list")
    entries: dict[tuple[str, str], GoldenEntry] = {}
    positions: dict[tuple[str, str], int] = {}
    for index, item in enumerate(cases):
        entry = GoldenEntry.from_json(item, f"cases[{index}]")
        place = (entry.key, entry.scope)
        if place in positions:
            raise ValueError(f"cases[{index}]: the same key and scope as cases[{positions[place]}]")
        positions[place] = index
        entries[place] = entry
    return kernel, entries


# A kernel's goldens: a few hundred bytes a case, so thousands of cases fit many times over.
MAX_GOLDEN_BYTES = 64 << 20


def _read(path: Path) -> tuple[str | None, dict[tuple[str, str], GoldenEntry]] | None:
    """The kernel and entries of the golden file at ``path``; None when there is none."""
    import stat

    try:
        found = path.stat()  # of what a link points to: never opened unless a plain file
        if not stat.S_ISREG(found.st_mode):
            raise GoldenError(
                f"golden file {path}: not a regular file (a device, a pipe or a folder); goldens are JSON files"
            )
        if found.st_size > MAX_GOLDEN_BYTES:
            raise GoldenError(
                f"golden file {path}: {found.st_size:,} bytes, more than a golden file holds ({MAX_GOLDEN_BYTES:,})"
            )
        with path.open("rb") as handle:
            data = handle.read(MAX_GOLDEN_BYTES + 1)  # it may have grown since
        if len(data) > MAX_GOLDEN_BYTES:
            raise GoldenError(f"golden file {path}: more than a golden file holds ({MAX_GOLDEN_BYTES:,} bytes)")
        text = data.decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise GoldenError(f"golden file {path}: not UTF-8 text") from None
    except OSError as exc:
        raise GoldenError(f"cannot read golden file {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise GoldenError(f"golden file {path}: not valid JSON ({exc})") from None
    try:
        return _entries_of(data)
    except ValueError as exc:
        raise GoldenError(f"golden file {path}: {exc}") from None


# --- file names ------------------------------------------------------------------------------


def _escaped(kernel: str) -> str:
    return _UNSAFE.sub("_", kernel).strip("._") or "kernel"


def file_name(kernel: str) -> str:
    """The golden file of ``kernel``: its own name when plain and short enough, else the escaped
    name's first 64 characters, '@' (never in a plain name) and a hash of the whole name."""
    escaped = _escaped(kernel)
    if escaped == kernel and len(kernel) + len(".json") <= NAME_MAX:
        return f"{kernel}.json"
    digest = hashlib.sha256(kernel.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{escaped[:64]}@{digest}.json"


def case_description(result: CaseResult) -> dict:
    """What the case is, for a reviewer: its key's parts (a collective case's collective and world size too)."""
    description = {
        "kernel": result.kernel,
        "m": result.m,
        "n": result.n,
        "k": result.k,
        "quant": result.quant,
        "tile": result.tile,
        "out_dtype": result.out_dtype,
        "fp8": result.fp8,
        "params": result.params,
    }
    if result.collective:
        description.update(collective=result.collective, world_size=result.world_size)
    return description


@dataclass
class GoldenStore:
    directory: Path
    _files: dict[str, dict[tuple[str, str], GoldenEntry]] = field(default_factory=dict)

    def path(self, kernel: str) -> Path:
        return self.directory / file_name(kernel)

    def entries(self, kernel: str) -> dict[tuple[str, str], GoldenEntry]:
        if kernel not in self._files:
            self._files[kernel] = self._load(kernel)
        return self._files[kernel]

    def _load(self, kernel: str) -> dict[tuple[str, str], GoldenEntry]:
        found = _read(self.path(kernel))
        if found is not None:
            owner, entries = found
            # another kernel's file (a case-insensitive file system gives GEMM and gemm one) holds none of ours
            return entries if owner in (None, kernel) else {}
        return {}

    def lookup(self, result: CaseResult) -> Baseline | None:
        """The most specific golden for the result's case and stack: stack, then arch, then any."""
        entries = self.entries(result.kernel)
        stack = result.stack or {}
        for scope in ("stack", "arch", "any"):
            entry = entries.get((result.key, scope_value(scope, stack)))
            if entry is not None:
                where = f"golden {self.path(result.kernel)} [{entry.scope}]"
                if entry.note:
                    where += f" ({entry.note})"
                return Baseline(source="golden", description=where, evidence=entry.evidence)
        return None

    def accept(self, result: CaseResult, scope: str, note: str) -> GoldenEntry:
        entry = GoldenEntry(
            key=result.key,
            case=case_description(result),
            scope=scope_value(scope, result.stack or {}),
            evidence=Evidence.of(result),
            note=note,
        )
        kept = self.entries(result.kernel).get((entry.key, entry.scope))
        if kept is not None and {**kept.to_json(), "note": ""} == {**entry.to_json(), "note": ""}:
            entry.note = kept.note  # the same evidence accepted again: a reviewer's note stays
        self.put(result.kernel, entry)
        return entry

    def put(self, kernel: str, entry: GoldenEntry) -> None:
        self.entries(kernel)[(entry.key, entry.scope)] = entry

    def export(self, kernel: str, entry: GoldenEntry) -> GoldenEntry | None:
        """``entry`` into the store, keeping the note a reviewer wrote on the entry it replaces
        (a note the plugin wrote is replaced). Returns the replaced entry when its note was kept
        and its evidence changed: a reviewer should read the note again."""
        kept = self.entries(kernel).get((entry.key, entry.scope))
        if kept is None or not kept.note or is_generated_note(kept.note):
            self.put(kernel, entry)
            return None
        changed = {**kept.to_json(), "note": ""} != {**entry.to_json(), "note": ""}
        entry.note = kept.note
        self.put(kernel, entry)
        return kept if changed else None

    def kernels(self) -> list[str]:
        """Kernels with entries loaded or added in this store."""
        return sorted(kernel for kernel, entries in self._files.items() if entries)

    def write(self, kernel: str) -> Path:
        """The kernel's file, with every entry it has; GoldenError rather than overwrite another
        kernel's file."""
        path = self.path(kernel)
        found = _read(path)
        if found is not None and found[0] not in (None, kernel):
            raise GoldenError(
                f"golden file {path} holds the goldens of kernel {found[0]!r}, not {kernel!r}: refusing "
                "to overwrite them (on a case-insensitive file system the two names share a file)"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        cases = [entry.to_json() for _, entry in sorted(self.entries(kernel).items())]
        text = json.dumps({"format": FORMAT, "kernel": kernel, "cases": cases}, indent=2, sort_keys=True) + "\n"
        path.write_text(text)
        return path
