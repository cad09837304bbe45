"""What a result is judged against: its golden if one exists, else the stored history of the
same case on a compatible stack, else "clean" (no bad launch expected).

History counts only results that were not themselves regressions: a regression stays one on
the next run until it is fixed or accepted into a golden, instead of becoming the new normal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..records.result import KINDS, CaseResult
from .stats import format_rate

if TYPE_CHECKING:  # the storage layer's rows; importing it would import SQLAlchemy
    from ..history.queries import CaseHistory


@dataclass
class Evidence:
    """Launch counts and failure facts of a result, a golden or a stretch of history."""

    launches: int = 0
    bad: int = 0
    per_process: list[tuple[int, int]] = field(default_factory=list)  # (bad, launches) per process
    gpus: int = 0  # distinct GPUs that ran the launches; 0: the CPU did
    worst_wrong: int = 0
    worst_tiles: int = 0
    kinds: list[str] = field(default_factory=list)
    # the ranks of a collective case (0 outside one): each rank is a process, so per_process holds
    # a count per rank (of each run), and its launches cluster as a process's do
    ranks: int = 0

    @property
    def processes(self) -> int:
        return len(self.per_process)

    @property
    def bad_processes(self) -> int:
        return sum(1 for bad, _ in self.per_process if bad)

    @property
    def cluster(self) -> str:
        """What a count of per_process is of, in words: 'rank' in a collective case, else 'process'."""
        return "rank" if self.ranks else "process"

    @classmethod
    def of(cls, result: CaseResult) -> "Evidence":
        per_process: dict[tuple[str, int, int | None], list[int]] = {}
        for launch in result.launches:
            counts = per_process.setdefault((launch.host, launch.pid, launch.rank), [0, 0])
            counts[0] += int(launch.bad)
            counts[1] += 1
        return cls(
            launches=len(result.launches),
            bad=len(result.bad_launches),
            per_process=sorted((bad, n) for bad, n in per_process.values()),
            gpus=len(
                {
                    launch.device_uuid or launch.device
                    for launch in result.launches
                    if launch.device and not launch.device.startswith("cpu")
                }
            ),
            worst_wrong=result.worst_wrong,
            worst_tiles=max((launch.wrong_tiles or 0 for launch in result.launches), default=0),
            kinds=result.kinds,
            ranks=len(result.ranks),
        )

    @classmethod
    def of_history(cls, history: "CaseHistory") -> "Evidence":
        processes = history.processes
        return cls(
            launches=sum(p.launches for p in processes),
            bad=sum(p.bad_launches for p in processes),
            per_process=sorted((p.bad_launches, p.launches) for p in processes),
            gpus=max(history.gpus, 1) if any(arch for _, arch, _ in history.stacks) else 0,
            worst_wrong=max((p.worst_wrong for p in processes), default=0),
            worst_tiles=max((p.worst_tiles for p in processes), default=0),
            kinds=[kind for kind in KINDS if kind in history.kinds],
            ranks=history.ranks,
        )

    def describe(self) -> str:
        """'0/900 launches (rate < 0.33%) in 3 processes on 1 GPU', or '... on the CPU'; in a
        collective case '3/800 launches (rate < 1.1%) of 4 ranks in 4 rank processes (2 with a
        bad launch) on 4 GPUs'."""
        processes = self.processes or 1
        noun = f"process{'es' if processes != 1 else ''}"
        if self.ranks:  # a process per rank (and run)
            where = f"of {self.ranks} rank{'s' if self.ranks != 1 else ''} in {processes} rank {noun}"
        else:
            where = f"in {processes} {noun}"
        text = f"{format_rate(self.bad, self.launches)} launches {where}"
        if processes > 1:
            text += f" ({self.bad_processes} with a bad launch)"
        if not self.gpus:
            return text + " on the CPU"
        return text + f" on {self.gpus} GPU{'s' if self.gpus != 1 else ''}"


@dataclass
class Baseline:
    source: str = "clean"  # clean / golden / history
    description: str = "a clean baseline (no bad launch expected)"
    evidence: Evidence = field(default_factory=Evidence)
    static: dict | None = None  # the case's last recorded static record (metrics, lint)

    @property
    def accepts_bad(self) -> bool:
        """A golden that accepts a bad rate: a tracked, known bug."""
        return self.source == "golden" and self.evidence.bad > 0


CLEAN = Baseline()

_SCOPE_WORDS = {"arch": "on {arch}", "stack": "on this stack", "any": "on any stack"}


def stack_words(gpu_name: str | None, gpu_arch: str | None, torch_version: str | None) -> str:
    """A stack in a few words, each fact once: 'NVIDIA H200 (sm_90), torch 2.11', or for no GPU
    'the CPU, torch 2.13.0+cpu'."""
    if gpu_name or gpu_arch:
        where = (
            f"{gpu_name} ({gpu_arch})" if gpu_name and gpu_arch and gpu_arch not in gpu_name else gpu_name or gpu_arch
        )
    else:
        where = "the CPU"
    return f"{where}, torch {torch_version}" if torch_version else where


def from_history(history: "CaseHistory", scope: str, gpu_arch: str | None) -> Baseline | None:
    """The baseline a case's stored history gives (None when it holds no launch), described
    as 'history: 3 earlier runs on sm_90 (NVIDIA H200, torch 2.11)' or 'history: 1 earlier run
    on cpu (torch 2.13.0+cpu)': the scope names the arch, so the stacks do not again."""
    evidence = Evidence.of_history(history)
    if not evidence.launches:
        return None

    def words(name, arch, torch_version) -> str:
        if scope == "arch" and not name:  # the scope said "on cpu" already
            return f"torch {torch_version}" if torch_version else ""
        return stack_words(name, None if scope == "arch" else arch, torch_version)

    stacks = sorted({words(*stack) for stack in history.stacks} - {""})
    where = (
        f"history: {history.runs} earlier run{'s' if history.runs != 1 else ''} "
        f"{_SCOPE_WORDS[scope].format(arch=gpu_arch or 'cpu')}"
    )
    if stacks:
        where += f" ({'; '.join(stacks[:3])}{'; ...' if len(stacks) > 3 else ''})"
    return Baseline(source="history", description=where, evidence=evidence)


def choose(
    result: CaseResult, *, golden: Baseline | None, history: Baseline | None, static: dict | None = None
) -> Baseline:
    if golden is not None:
        chosen = golden
    elif history is not None and history.evidence.launches > 0:
        chosen = history
    else:
        chosen = Baseline()
    chosen.static = static
    return chosen
