"""The paths engine: each wave of a kernel run through its control flow, its memory and sync
events recorded in order (:mod:`.hazards` pairs them).

Each wave of the workgroup is simulated on its own with its own thread ids, so wave-dependent
branches (an extra ``s_barrier`` for one group of waves, say) take the path that wave takes.
Branches on values the model cannot know (kernel arguments) are decided by a shared
:class:`BranchChoices`, the same way for every wave, since such values are uniform across a
workgroup. Loops run for real when their trip count is known and are bounded otherwise.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .asm import Instruction, Kernel
from .instructions import classify, parse_waitcnt
from .lds_ranges import Ranges, dma_ranges, ds_ranges
from .operands import VCC_LO
from .workgroup import Geometry, initial_state


@dataclass(frozen=True)
class Event:
    """A memory or synchronisation event in one wave's program order."""

    kind: str  # vmem, dma, smem, ds_read, ds_write, ds_other, wait, barrier
    pos: int  # index in the wave's event list
    inst: Instruction
    occurrence: int  # how many times this wave executed the instruction before
    ranges: Ranges | None = None  # LDS bytes for dma/ds_*; None when the address is unknown
    vmcnt: int | None = None  # for waits: the counts waited down to (None: not waited on)
    lgkmcnt: int | None = None


@dataclass
class WaveTrace:
    wave: int
    events: list[Event] = field(default_factory=list)
    end: str = "endpgm"  # endpgm, truncated, fell-off, indirect-branch
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Limits:
    loop_unroll: int = 3  # iterations of a loop whose trip count is unknown
    max_visits: int = 4096  # executions of one instruction before the trace is cut
    max_steps: int = 2_000_000
    deadline: float = float("inf")  # time.monotonic() past which a trace is cut


class BranchChoices:
    """Decisions for branches whose condition is unknown, shared by all waves of a scenario."""

    def __init__(self, forced: dict[tuple[int, int], bool] | None = None, *, loop_unroll: int = 3):
        self.forced = dict(forced or {})
        self.loop_unroll = loop_unroll
        self.seen: dict[tuple[int, int], bool] = {}
        self.where: dict[tuple[int, int], Instruction] = {}

    def decide(self, inst: Instruction, occurrence: int, backward: bool) -> bool:
        key = (inst.index, occurrence)
        if key in self.forced:
            taken = self.forced[key]
        else:
            # a back edge keeps looping up to the unroll bound; a forward branch falls through
            taken = backward and occurrence < self.loop_unroll
        self.seen.setdefault(key, taken)
        self.where.setdefault(key, inst)
        return taken


class WaveSimulator:
    """Simulates one wave and produces its :class:`WaveTrace`."""

    def __init__(self, kernel: Kernel, geometry: Geometry, wave: int, choices: BranchChoices, limits: Limits):
        self.kernel = kernel
        self.geometry = geometry
        self.wave = wave
        self.choices = choices
        self.limits = limits
        self.state = initial_state(geometry, wave)
        self.trace = WaveTrace(wave)

    def _event(self, kind: str, inst: Instruction, occurrence: int, **extra) -> None:
        self.trace.events.append(Event(kind, len(self.trace.events), inst, occurrence, **extra))

    def run(self) -> WaveTrace:
        instructions = self.kernel.instructions
        visits = [0] * len(instructions)
        pc, steps = 0, 0
        while True:
            if pc >= len(instructions):
                self.trace.end = "fell-off"
                self.trace.notes.append(f"wave {self.wave}: ran past the kernel's last instruction without s_endpgm")
                break
            inst = instructions[pc]
            occurrence = visits[pc]
            visits[pc] += 1
            steps += 1
            if steps % 4096 == 0 and time.monotonic() > self.limits.deadline:
                self.trace.end = "truncated"
                self.trace.notes.append(
                    f"wave {self.wave}: stopped at line {inst.line} by the time limit; later events are not checked"
                )
                break
            if occurrence >= self.limits.max_visits or steps > self.limits.max_steps:
                self.trace.end = "truncated"
                self.trace.notes.append(
                    f"wave {self.wave}: stopped at line {inst.line} after {occurrence} visits; "
                    "later events are not checked"
                )
                break
            next_pc = self._step(inst, occurrence)
            if next_pc is None:
                break
            pc = next_pc
        return self.trace

    def _step(self, inst: Instruction, occurrence: int) -> int | None:
        """Execute one instruction; return the next pc, or None when the wave ends."""
        name = inst.mnemonic
        if name == "s_endpgm":
            self.trace.end = "endpgm"
            return None
        if name == "s_branch":
            return self._target(inst)
        if name.startswith("s_cbranch"):
            return self._conditional(inst, occurrence)
        if name.startswith(("s_setpc", "s_swappc")):
            self.trace.end = "indirect-branch"
            self.trace.notes.append(f"wave {self.wave}: indirect branch at line {inst.line} is not followed")
            return None
        self._record(inst, occurrence)
        self.state.execute(inst)
        return inst.index + 1

    def _target(self, inst: Instruction) -> int | None:
        label = inst.operands[0] if inst.operands else ""
        if label not in self.kernel.labels:
            self.trace.end = "indirect-branch"
            self.trace.notes.append(
                f"wave {self.wave}: branch target {label!r} at line {inst.line} is not in the kernel"
            )
            return None
        return self.kernel.labels[label]

    def _conditional(self, inst: Instruction, occurrence: int) -> int | None:
        condition = inst.mnemonic[len("s_cbranch_") :]
        state = self.state
        taken: bool | None
        if condition in ("scc0", "scc1"):
            taken = None if state.scc is None else state.scc == (condition == "scc1")
        elif condition in ("vccz", "vccnz"):
            vcc = state.sgpr64(VCC_LO)
            taken = None if vcc is None else (vcc == 0) == (condition == "vccz")
        elif condition in ("execz", "execnz"):
            exec_mask = state.exec_mask
            # unknown exec: the region may run for some lanes, so it is entered (execz not
            # taken) and a divergent loop back edge (execnz) is left after one pass
            taken = False if exec_mask is None else (exec_mask == 0) == (condition == "execz")
        else:
            taken = None
        target = self._target(inst)
        if target is None:
            return None
        if taken is None:
            taken = self.choices.decide(inst, occurrence, backward=target <= inst.index)
        return target if taken else inst.index + 1

    def _record(self, inst: Instruction, occurrence: int) -> None:
        kind = classify(inst)
        if kind == "wait":
            vm, lgkm = parse_waitcnt(inst)
            self._event("wait", inst, occurrence, vmcnt=vm, lgkmcnt=lgkm)
        elif kind == "dma":
            self._event("dma", inst, occurrence, ranges=dma_ranges(self.state, inst))
        elif kind in ("ds_read", "ds_write"):
            self._event(kind, inst, occurrence, ranges=ds_ranges(self.state, inst))
        elif kind == "ds_other":
            self._event(kind, inst, occurrence, ranges=())
        elif kind is not None:
            self._event(kind, inst, occurrence)


def simulate(kernel: Kernel, geometry: Geometry, choices: BranchChoices, limits: Limits) -> list[WaveTrace]:
    """Traces of every wave of one workgroup under one set of branch choices."""
    return [WaveSimulator(kernel, geometry, wave, choices, limits).run() for wave in range(geometry.waves)]
