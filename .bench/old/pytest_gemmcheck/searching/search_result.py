"""What a search found: every probe with its result, the smallest failing configuration, the
passing values around it, and the ``gemmcheck.case(...)`` line that reproduces it. Plain
records (no torch): they travel as JSON with ``to_dict``/``from_dict``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..records.result import CaseResult

NUMERIC = ("m", "n", "k")
# case keywords the paste line names only when they differ from gemmcheck.case's defaults
_CASE_DEFAULTS = {"out_dtype": "bfloat16", "fp8": "e4m3fn", "tile": None}


@dataclass
class Probe:
    """One configuration tried: its result, judged and recorded as any case's, and whether it
    fails (a bad launch, or a failing verdict)."""

    config: dict[str, Any]  # m, n, k, quant, params
    result: CaseResult
    failing: bool
    seconds: float
    # "search" (Hypothesis: replayed, generated or shrunk), "neighbours" (around the smallest), or
    # "evidence" (more launches of a configuration already probed, for its boundary)
    phase: str
    note: str = ""  # what the summary line does not say (make_launch raised)

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def launch_count(self) -> int:
        return len(self.result.launches)

    @property
    def bad_launch_count(self) -> int:
        return len(self.result.bad_launches)

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "result": self.result.to_dict(),
            "failing": self.failing,
            "seconds": self.seconds,
            "phase": self.phase,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Probe:
        data = dict(data)
        return cls(**{**data, "result": CaseResult.from_dict(data["result"])})


def config_text(config: dict[str, Any]) -> str:
    """``m=192, n=64, k=128, quant="bf16", params={...}``, the keywords of a case."""
    text = f"m={config['m']}, n={config['n']}, k={config['k']}, quant={json.dumps(config['quant'])}"
    if config.get("params"):
        text += f", params={_python(config['params'])}"
    return text


def _python(value) -> str:
    """A JSON value as Python source (True, None, not true, null)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)}: {_python(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_python(item) for item in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


@dataclass
class SearchResult:
    """``gemmcheck.search(...)``'s answer. ``minimal``: None, or the smallest failing
    configuration (least m·n·k, then fewest params away from their first value, then the
    least memory) as a dict of m, n, k, quant and params; ``failing``: every failing
    configuration seen; ``probes``: every probe run; ``boundary``: for each axis of the minimal
    case, the passing values nearest to it with the other axes as they are, each weighed
    against it (``passes`` only where the evidence establishes it)."""

    kernel: str
    # the axes as given: {"m": [lo, hi, step] or {"values": [...]}, ..., "quant", "params", "tile"}
    space: dict[str, Any]
    case: dict[str, Any]  # the case keywords every probe had besides its configuration (out_dtype, fp8, ...)
    probes: list[Probe] = field(default_factory=list)
    minimal: dict[str, Any] | None = None
    boundary: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    stopped: str = ""  # how the search ended, in words
    seed: int = 0
    examples: int = 0
    replayed: int = 0  # failing examples stored by an earlier search, tried first
    skipped: list[dict[str, Any]] = field(default_factory=list)  # {"config", "reason"}: make_launch skipped them
    notes: list[str] = field(default_factory=list)  # what became of the example database, a line each

    # --- derived --------------------------------------------------------------------------
    @property
    def failing(self) -> list[dict[str, Any]]:
        configs: list[dict[str, Any]] = []
        for probe in self.probes:
            if probe.failing and probe.config not in configs:
                configs.append(probe.config)
        return configs

    @property
    def minimal_probe(self) -> Probe | None:
        """The minimal case's first failing probe."""
        if self.minimal is None:
            return None
        return next(probe for probe in self.probes if probe.config == self.minimal and probe.failing)

    @property
    def launch_count(self) -> int:
        return sum(probe.launch_count for probe in self.probes)

    def case_line(self) -> str:
        """The minimal case as a ``gemmcheck.case(...)`` line, or "" when nothing failed."""
        if self.minimal is None:
            return ""
        extra = ""
        for name, value in self.case.items():
            if value is None or _CASE_DEFAULTS.get(name, object()) == value:
                continue
            extra += f", {name}=torch.{value}" if name == "out_dtype" else f", {name}={_python(value)}"
        return f"gemmcheck.case({json.dumps(self.kernel)}, {config_text(self.minimal)}{extra})"

    def boundary_lines(self) -> list[str]:
        """A line per axis of the minimal case that was walked: where it passes beside it, and
        a line per passing neighbour whose launches do not tell it from the minimal case."""
        lines = []
        for name in NUMERIC:
            edge = self.boundary.get(name)
            if edge:
                lines += _numeric_lines(name, edge)
        choices = [("quant", self.boundary.get("quant"))] + [
            (f"params[{json.dumps(name)}]", edge) for name, edge in (self.boundary.get("params") or {}).items()
        ]
        for label, edge in choices:
            if not edge:
                continue
            if edge["passes"] is not None:
                lines.append(
                    f"{label}: {_python(edge['fails'])} fails; {_python(edge['passes'])} passes (the rest as above)"
                )
            elif edge.get("other") is not None:
                lines.append(
                    _unestablished(
                        label,
                        _python(edge["other"]),
                        _python(edge["fails"]),
                        edge["evidence"]["fails"],
                        edge["evidence"]["other"],
                    )
                )
        return lines

    def summary(self) -> str:
        """What was searched and found, the paste line, the boundary and the evidence."""
        head = (
            f"gemmcheck.search {self.kernel}: {_count(len(self.probes), 'probe')} ({len(self.failing)} "
            f"failing configuration{'' if len(self.failing) == 1 else 's'}, "
            f"{_count(self.launch_count, 'launch')}) in {self.seconds:.1f} s; {self.stopped}"
        )
        if self.replayed:
            head += f"; {_count(self.replayed, 'stored failing example')} tried first"
        lines = [head] + [f"  {note}" for note in self.notes] + self.skipped_lines()
        if self.minimal is None:
            return "\n".join(lines + ["  no failing configuration found"])
        probe = self.minimal_probe
        lines += ["  smallest failing configuration:", f"    {self.case_line()}"]
        own = [probe for probe in self.probes if probe.config == self.minimal]
        if len(own) > 1:  # run to the end too, as the evidence its boundary is weighed against
            bad = sum(probe.bad_launch_count for probe in own)
            launches = sum(probe.launch_count for probe in own)
            lines.append(f"    {bad}/{launches} of its launches bad, over {len(own)} probes")
        lines += [f"  {line}" for line in self.boundary_lines()]
        lines.append(f"  its evidence{f' ({probe.note})' if probe.note else ''}:")
        evidence = probe.result.message or f"{probe.bad_launch_count}/{probe.launch_count} launches bad"
        lines += [f"    {line}" for line in evidence.splitlines()]
        return "\n".join(lines)

    def skipped_lines(self, shown: int = 3) -> list[str]:
        """The configurations make_launch skipped, left out of the search: how many, the first
        few with their reasons."""
        if not self.skipped:
            return []
        count = len(self.skipped)
        lines = [f"  {_count(count, 'configuration')} skipped by make_launch, left out of the search:"]
        lines += [f"    {config_text(entry['config'])}: {entry['reason']}" for entry in self.skipped[:shown]]
        if count > shown:
            lines.append(f"    ... and {count - shown} more")
        return lines

    def __str__(self) -> str:
        if self.minimal is None:
            return f"# gemmcheck.search {self.kernel}: no failing configuration in {_count(len(self.probes), 'probe')}"
        return self.case_line()

    def __repr__(self) -> str:
        found = self.case_line() or "nothing failing"
        return f"<gemmcheck search {self.kernel}: {_count(len(self.probes), 'probe')}, {found}>"

    # --- transport ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "space": self.space,
            "case": self.case,
            "probes": [probe.to_dict() for probe in self.probes],
            "minimal": self.minimal,
            "failing": self.failing,
            "boundary": self.boundary,
            "seconds": self.seconds,
            "stopped": self.stopped,
            "seed": self.seed,
            "examples": self.examples,
            "replayed": self.replayed,
            "skipped": self.skipped,
            "notes": self.notes,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchResult:
        data = {key: value for key, value in data.items() if key != "failing"}  # derived from the probes
        return cls(**{**data, "probes": [Probe.from_dict(probe) for probe in data.get("probes", [])]})


def _numeric_lines(name: str, edge: dict[str, Any]) -> list[str]:
    """m, n or k: the failing run and its established passing sides in one line, then a line
    for each passing side that is not established."""
    others = f"({_others(name)} as above)"
    run = edge.get("fails_up_to")
    fails = f"{name}={edge['fails']}" + (f" up to {name}={run}" if run not in (None, edge["fails"]) else "")
    sides = [side for side in ("below", "above") if edge.get(side) is not None]
    established = [side for side in sides if edge["evidence"][side]["established"]]
    lines = []
    if established:
        passing = [f"{name}={edge[side]}" for side in established]
        verb = "passes" if len(passing) == 1 else "pass"
        lines.append(f"{name}: {fails} fails; {' and '.join(passing)} {verb} {others}")
    elif not sides and run not in (None, edge["fails"]):
        lines.append(f"{name}: fails at every value tried from {edge['fails']} up to {run} {others}")
    elif run not in (None, edge["fails"]):
        lines.append(f"{name}: {fails} fails {others}")
    for side in sides:
        if side not in established:
            lines.append(
                _unestablished(
                    name,
                    f"{name}={edge[side]}",
                    f"{name}={edge['fails']}",
                    edge["evidence"]["fails"],
                    edge["evidence"][side],
                )
            )
    return lines


def _unestablished(label: str, passing: str, fails: str, failing: list[int], side: dict[str, Any]) -> str:
    """'m: m=128 passed 0/4 launches, too few to tell it from m=64 with 2/7 bad (one-sided Fisher
    p = 0.33, alpha 0.0083): not a boundary; 0/65 launches at m=128 would make it one'."""
    text = (
        f"{label}: {passing} passed {side['bad']}/{side['launches']} launches, too few to tell it from {fails} "
        f"with {failing[0]}/{failing[1]} bad (one-sided Fisher p = {side['p']:.2g}, alpha {side['alpha']:.2g}): "
        "not a boundary; "
    )
    if side["needs"] is None:
        return text + "no count of launches can make it one (the failing configuration has no bad launch)"
    return text + f"0/{side['needs']:,} launches at {passing} would make it one"


def _others(name: str) -> str:
    others = [axis for axis in NUMERIC if axis != name]
    return f"{others[0]}, {others[1]}, quant and params"


def _count(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "es" if noun.endswith("h") else "s")
