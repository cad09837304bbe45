"""What a case's launches produced: plain records that travel (xdist reports, the database,
JSON) without torch."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from . import result_text
from .sanitize import HAZARD, SanitizedLaunch

# Failure kinds of one launch, most severe first. A launch is bad when it has any.
RAISED = "raised"  # the kernel raised
HUNG = "hung"  # the launch did not finish within --gemmcheck-launch-timeout
BAD_OUTPUT = "bad_output"  # replaced/reshaped `out`, or returned a tensor of the wrong shape/dtype/device
WROTE_OUTSIDE = "wrote_outside"  # wrote past either end of `out`, or into the other output buffer
CHANGED_INPUT = "changed_input"  # wrote into its operands or scales
UNWRITTEN = "unwritten"  # every element still holds the poison
NONFINITE = "nonfinite"  # some elements are NaN/inf (poison never overwritten, or computed)
WRONG = "wrong"  # finite elements off the reference by more than the tolerance
RANKS_DISAGREE = "ranks_disagree"  # a collective meant to give every rank the same bits did not
INCONSISTENT = "inconsistent"  # bits differ from the consensus of the launches
KINDS = (
    RAISED,
    HUNG,
    BAD_OUTPUT,
    WROTE_OUTSIDE,
    CHANGED_INPUT,
    UNWRITTEN,
    NONFINITE,
    WRONG,
    RANKS_DISAGREE,
    INCONSISTENT,
)
# A result's kinds: its launches', and a hazard one sanitized launch of the case was reported with
# (compute-sanitizer: sanitize/), which no count of launches shows.
RESULT_KINDS = (HAZARD, *KINDS)


ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER = "all_reduce", "reduce_scatter", "all_gather"
COLLECTIVES = (ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER)  # what case(collective=...) takes


def collective_words(collective: str, world_size: int) -> str:
    """'all_reduce over 4 ranks': a collective case's part of its label."""
    return f"{collective} over {world_size} rank{'s' if world_size != 1 else ''}"


def rank_output_shape(collective: str | None, m: int, n: int, world_size: int) -> tuple[int, int]:
    """What one rank's output holds of the [M, N] product: all of it (all_reduce, or no
    collective), rows r*M/W... (reduce_scatter), columns r*N/W... (all_gather)."""
    if collective == REDUCE_SCATTER:
        return m // world_size, n
    if collective == ALL_GATHER:
        return m, n // world_size
    return m, n


@dataclass
class LaunchRecord:
    index: int  # 1-based, in launch order
    kinds: list[str] = field(default_factory=list)
    wrong: int = 0
    nonfinite: int = 0
    differing: int | None = 0  # None: differs from the consensus by an unknown count (not kept)
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    rel_l2: float = 0.0
    wrong_rows: int = 0
    wrong_tiles: int | None = None
    worst_tile_wrong: int = 0
    differing_rows: int = 0
    differing_tiles: int | None = None
    max_diff_rel: float = 0.0
    elapsed_s: float = 0.0
    poisoned: bool = True
    error: str | None = None
    changed_inputs: dict[str, int] = field(default_factory=dict)  # input -> rows (elements) it changed
    wrote_outside: str = ""  # where it wrote outside `out`, in words
    wrong_row_ids: list[int] = field(default_factory=list)
    wrong_tile_ids: list[list[int]] = field(default_factory=list)
    differing_row_ids: list[int] = field(default_factory=list)
    pid: int = 0
    host: str = ""
    device: str = ""
    device_uuid: str = ""  # the physical GPU, which survives CUDA_VISIBLE_DEVICES renumbering
    rank: int | None = None  # the process's rank in a collective case's group; None outside one

    @classmethod
    def numbered(cls, index: int, where: dict[str, Any]) -> LaunchRecord:
        """``LaunchRecord(index=index, **where)`` in a fraction of its time: a launch loop makes
        one per launch, and the dataclass's own __init__ took 4 us of each on an H200's host."""
        record = cls.__new__(cls)
        fields_of = record.__dict__
        fields_of.update(_BLANK)
        for name, make in _MADE:
            fields_of[name] = make()
        fields_of.update(where)
        record.index = index
        return record

    @property
    def bad(self) -> bool:
        return bool(self.kinds)

    @property
    def label(self) -> str:
        """How every message names it: 'launch 7', or 'launch 7, rank 3' in a collective case
        (each rank has a launch 7)."""
        return f"launch {self.index}" if self.rank is None else f"launch {self.index}, rank {self.rank}"

    @property
    def status(self) -> str:
        return self.kinds[0] if self.kinds else "clean"

    def add_kind(self, kind: str) -> None:
        if kind not in self.kinds:
            self.kinds.append(kind)
            self.kinds.sort(key=KINDS.index)


# a blank LaunchRecord's fields: plain defaults, and those made anew for each record
_BLANK = {f.name: f.default for f in dataclasses.fields(LaunchRecord) if f.default is not dataclasses.MISSING}
_MADE = [
    (f.name, f.default_factory)
    for f in dataclasses.fields(LaunchRecord)
    if f.default_factory is not dataclasses.MISSING
]


@dataclass
class CaseResult:
    key: str
    kernel: str
    m: int
    n: int
    k: int
    quant: str
    tile: str | None
    out_dtype: str
    params: dict[str, Any]
    fp8: str | None
    seed: int
    device: str
    deterministic: bool
    rtol: float
    floor: float
    nodeid: str = ""
    launches: list[LaunchRecord] = field(default_factory=list)
    consensus_size: int = 0  # launches that agree with the consensus output
    consensus_note: str = ""
    verdict: str = ""  # pass / regression / improved / known-bad
    message: str = ""
    baseline: dict[str, Any] = field(default_factory=dict)
    stack: dict[str, Any] = field(default_factory=dict)  # of the process that ran the launches
    stress: dict[str, Any] = field(default_factory=dict)  # the background load, as it ran
    check_backend: str = ""  # torch or triton
    stopped: str = ""  # why --gemmcheck-repeat=auto stopped launching
    consensus_checksum: int | None = None  # of the consensus output (compared across processes)
    contention: dict[str, Any] = field(default_factory=dict)  # other work on the GPU at start and end (contention.py)
    worst_tiles: dict[str, Any] = field(default_factory=dict)  # the worst launch's wrong elements per tile (a grid)
    sanitize: list[SanitizedLaunch] = field(default_factory=list)  # one launch under each compute-sanitizer tool
    collective: str | None = None  # all_reduce / reduce_scatter / all_gather: launches of every rank
    world_size: int = 1  # the ranks of a collective case

    # --- derived --------------------------------------------------------------------
    @property
    def label(self) -> str:
        text = f"{self.kernel} {self.quant} {self.m}x{self.n}x{self.k}"
        if self.tile:
            text += f" tile {self.tile}"
        if self.params:
            text += " " + ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        if self.collective:
            text += f" {collective_words(self.collective, self.world_size)}"
        return text

    @property
    def ranks(self) -> list[int]:
        """The ranks whose launches it holds, in order; [] outside a collective case."""
        return sorted({launch.rank for launch in self.launches if launch.rank is not None})

    @property
    def per_rank(self) -> dict[int, tuple[int, int]]:
        """(bad, launches) of each rank, in rank order; {} outside a collective case."""
        counts: dict[int, list[int]] = {}
        for launch in self.launches:
            if launch.rank is not None:
                entry = counts.setdefault(launch.rank, [0, 0])
                entry[0] += launch.bad
                entry[1] += 1
        return {rank: (bad, launches) for rank, (bad, launches) in sorted(counts.items())}

    @property
    def output_shape(self) -> tuple[int, int]:
        """[rows, columns] of the output one launch writes: a collective case's rank holds its
        part of the [M, N] product (docs/collective.md)."""
        return rank_output_shape(self.collective, self.m, self.n, self.world_size)

    @property
    def bad_launches(self) -> list[LaunchRecord]:
        return [launch for launch in self.launches if launch.bad]

    @property
    def worst_wrong(self) -> int:
        return max((launch.wrong for launch in self.launches), default=0)

    @property
    def total_wrong(self) -> int:
        return sum(launch.wrong for launch in self.launches)

    @property
    def worst_differing(self) -> int:
        """The most elements one launch had that differ from the consensus (a count not kept: 0)."""
        return max((launch.differing or 0 for launch in self.launches), default=0)

    @property
    def hazards(self) -> list[SanitizedLaunch]:
        """The sanitizer runs that reported an error-severity hazard on the kernel under test."""
        return [run for run in self.sanitize if run.has_hazard]

    @property
    def kinds(self) -> list[str]:
        seen = {kind for launch in self.launches for kind in launch.kinds}
        if self.hazards:
            seen.add(HAZARD)
        return [kind for kind in RESULT_KINDS if kind in seen]

    @property
    def failed(self) -> bool:
        return self.verdict == "regression"

    @property
    def processes(self) -> int:
        return len({(launch.host, launch.pid) for launch in self.launches}) or 1

    @property
    def contended(self) -> bool | None:
        """Whether other work shared the GPU while it ran (None: not known): its launch times
        are then not the kernel's own."""
        return self.contention.get("contended") if self.contention else None

    @property
    def elapsed(self) -> list[float]:
        """The launch times of the launches that ran to the end."""
        return [launch.elapsed_s for launch in self.launches if launch.elapsed_s > 0 and "raised" not in launch.kinds]

    @property
    def gpus(self) -> int:
        return len({launch.device_uuid or launch.device for launch in self.launches if launch.device}) or 1

    @property
    def passed(self) -> bool:
        return not self.failed

    # --- text (records/result_text.py) -------------------------------------------------
    def summary(self) -> str:
        """The one line of pytest's terminal summary."""
        return result_text.summary_line(self)

    def evidence(self) -> str:
        """The full evidence, as a failing test shows it (for a passing result: its summary line,
        its baseline and where it ran)."""
        return result_text.evidence(self)

    def markdown(self) -> str:
        """A markdown table of this result, for a pull request or an issue."""
        return result_text.markdown(self)

    def __str__(self) -> str:
        return self.summary()

    # --- transport ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = _plain(self)
        data["sanitize"] = [run.to_dict() for run in self.sanitize]  # its own form: tuples as lists
        return {"type": _TYPE_NAMES[type(self)], **data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CaseResult":
        """The result ``to_dict`` gave, of its own type (launched or compiled)."""
        data = dict(data)
        kind = _TYPES[data.pop("type", "launched")]
        launches = [LaunchRecord(**launch) for launch in data.pop("launches", [])]
        sanitize = [SanitizedLaunch.from_dict(run) for run in data.pop("sanitize", [])]
        return kind(**data, launches=launches, sanitize=sanitize)


@dataclass
class CompiledResult(CaseResult):
    """A case's compiled kernels, checked without running them (``case.compile_flydsl``,
    ``case.check_assembly``): no launches, and the kernels' static metrics and lint findings
    (compiled/static.py) instead."""

    static: dict[str, Any] = field(default_factory=dict)


_IMMUTABLE = (str, int, float, bool, type(None))


def _plain(value):
    """dataclasses.asdict's copy (dataclasses as dicts, containers copied, tuples kept), with
    str, numbers and None taken as they are rather than deep-copied one by one: a result of 12
    launches took 1.7 ms to turn into a dict, each test of a suite paid it."""
    if isinstance(value, _IMMUTABLE):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return type(value)(*map(_plain, value)) if hasattr(value, "_fields") else tuple(map(_plain, value))
    return copy.deepcopy(value)


_TYPES = {"launched": CaseResult, "compiled": CompiledResult}
_TYPE_NAMES = {kind: name for name, kind in _TYPES.items()}
