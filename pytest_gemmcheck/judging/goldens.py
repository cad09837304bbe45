"""Goldens: accepted baselines as reviewable JSON files, one per kernel, under ``goldens/``.

Deterministic on purpose -- sorted keys, cases in key order, no timestamps -- so that a diff
of two goldens reads like a change log ("bad_launches": 0 -> 8 is a decision someone made).
Written by ``--gemmcheck-accept`` from the current run and by ``gemmcheck goldens export``
from stored history; read by every session to find a case's baseline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .baseline import Baseline, Evidence
from ..errors import GemmcheckError
from ..case.result import CaseResult

FORMAT = 1


class GoldenError(GemmcheckError):
    """A golden file that cannot be read; the message names it."""


def scope_value(scope: str, stack: dict) -> str:
    """The scope string a golden is stored under: 'any', 'arch:sm_90', 'stack:<fingerprint>'."""
    if scope == "any":
        return "any"
    if scope == "arch":
        return f"arch:{stack.get('gpu_arch') or 'cpu'}"
    return f"stack:{stack.get('fingerprint', '')}"


@dataclass
class GoldenEntry:
    key: str
    case: dict
    scope: str
    evidence: Evidence
    note: str = ""

    def to_json(self) -> dict:
        e = self.evidence
        return {
            "key": self.key, "case": self.case, "scope": self.scope, "launches": e.launches,
            "bad_launches": e.bad, "per_process": [f"{bad}/{n}" for bad, n in sorted(e.per_process)], "gpus": e.gpus,
            "worst_wrong": e.worst_wrong, "worst_wrong_tiles": e.worst_tiles, "kinds": sorted(e.kinds),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: dict) -> "GoldenEntry":
        # per process as "bad/launches"; a hand-written golden may leave it out: one process
        per_process = [tuple(item.split("/")) for item in data.get("per_process") or []] \
            or [(data["bad_launches"], data["launches"])]
        evidence = Evidence(launches=int(data["launches"]), bad=int(data["bad_launches"]),
                            per_process=[(int(b), int(n)) for b, n in per_process], gpus=int(data.get("gpus", 1)),
                            worst_wrong=int(data.get("worst_wrong", 0)),
                            worst_tiles=int(data.get("worst_wrong_tiles", 0)), kinds=list(data.get("kinds", [])))
        return cls(key=data["key"], case=data.get("case", {}), scope=data.get("scope", "any"), evidence=evidence,
                   note=data.get("note", ""))


def case_description(result: CaseResult) -> dict:
    return {"kernel": result.kernel, "m": result.m, "n": result.n, "k": result.k, "quant": result.quant,
            "tile": result.tile, "out_dtype": result.out_dtype, "fp8": result.fp8, "params": result.params}


def file_name(kernel: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", kernel).strip("._") or "kernel"
    return f"{safe}.json"


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
        path = self.path(kernel)
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text())
            entries = [GoldenEntry.from_json(item) for item in data.get("cases", [])]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise GoldenError(f"cannot read golden file {path}: {exc}") from None
        if data.get("format", FORMAT) > FORMAT:
            raise GoldenError(f"golden file {path} has format {data['format']}, newer than this pytest-gemmcheck reads")
        return {(entry.key, entry.scope): entry for entry in entries}

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
        entry = GoldenEntry(key=result.key, case=case_description(result), scope=scope_value(scope, result.stack or {}),
                            evidence=Evidence.of(result), note=note)
        self.put(result.kernel, entry)
        return entry

    def put(self, kernel: str, entry: GoldenEntry) -> None:
        self.entries(kernel)[(entry.key, entry.scope)] = entry

    def kernels(self) -> list[str]:
        """Kernels with entries loaded or added in this store."""
        return sorted(kernel for kernel, entries in self._files.items() if entries)

    def write(self, kernel: str) -> Path:
        path = self.path(kernel)
        path.parent.mkdir(parents=True, exist_ok=True)
        cases = [entry.to_json() for _, entry in sorted(self.entries(kernel).items())]
        text = json.dumps({"format": FORMAT, "kernel": kernel, "cases": cases}, indent=2, sort_keys=True) + "\n"
        path.write_text(text)
        return path
