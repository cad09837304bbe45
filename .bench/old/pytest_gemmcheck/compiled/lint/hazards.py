"""Find LDS reads that global->LDS DMA loads of some wave are not ordered with.

The ordering model, per wave (each wave runs its own copy of the program):

* vector-memory operations (DMA loads included) retire in issue order under one counter, so
  ``s_waitcnt vmcnt(n)`` retires every one of them but the ``n`` youngest;
* DS operations retire in issue order among themselves under lgkmcnt; scalar loads share that
  counter but return out of order, so ``lgkmcnt(n)`` retires a DS read once ``n`` DS operations
  follow it (whatever the scalar loads did);
* ``s_barrier`` number ``k`` of one wave and number ``k`` of another are the same rendezvous:
  what a wave did before its ``k``-th barrier happens before what another does after its
  ``k``-th. It orders another wave's DMA load only if that wave's own wait retired the load
  before that barrier.

A DMA load D (wave w) and an LDS read R (wave v) that overlap are ordered when D retires before
R is issued (through w's program order if v == w, else through a barrier), or R retires before D
is issued. Otherwise: an **error** if the program means R to see D (wave v itself issued the same
load instance before R) — the read may see LDS the load has not finished writing; a **warning**
if D is a later refill of the bytes R reads — it may overtake the read still in flight.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from .lds_ranges import Ranges, overlap
from .paths import Event, WaveTrace

NEVER = 1 << 62  # position of a completion that no wait provides


@dataclass
class WaveTables:
    """One wave's events indexed for ordering queries."""

    trace: WaveTrace
    barriers: list[int]  # positions of the wave's barriers, in order
    completion: dict[int, int]  # event pos of a vmem/dma/ds op -> pos of the wait that retires it
    retired_by: dict[int, Event]  # event pos -> that wait event
    dmas: list[Event]  # in issue order
    dma_completion: list[int]  # completion positions, non-decreasing
    issued_at: dict[tuple[int, int], int]  # (instruction index, occurrence) of a DMA -> pos

    @staticmethod
    def build(trace: WaveTrace) -> "WaveTables":
        barriers: list[int] = []
        completion: dict[int, int] = {}
        retired_by: dict[int, Event] = {}
        vm_pending: list[Event] = []  # issue order, oldest first
        ds_pending: list[Event] = []
        for event in trace.events:
            if event.kind == "barrier":
                barriers.append(event.pos)
            elif event.kind in ("vmem", "dma"):
                vm_pending.append(event)
            elif event.kind in ("ds_read", "ds_write", "ds_other"):
                ds_pending.append(event)
            elif event.kind == "wait":
                for pending, count in ((vm_pending, event.vmcnt), (ds_pending, event.lgkmcnt)):
                    if count is None or len(pending) <= count:
                        continue
                    retiring = len(pending) - count
                    for op in pending[:retiring]:
                        completion[op.pos] = event.pos
                        retired_by[op.pos] = event
                    del pending[:retiring]
        dmas = [e for e in trace.events if e.kind == "dma"]
        return WaveTables(
            trace=trace,
            barriers=barriers,
            completion=completion,
            retired_by=retired_by,
            dmas=dmas,
            dma_completion=[completion.get(d.pos, NEVER) for d in dmas],
            issued_at={(d.inst.index, d.occurrence): d.pos for d in dmas},
        )

    def barrier_line(self, k: int) -> int | None:
        if 0 <= k < len(self.barriers):
            return self.trace.events[self.barriers[k]].inst.line
        return None


@dataclass
class Hazard:
    """One read/load pair that nothing orders."""

    severity: str  # error or warning
    reader: int
    read: Event
    writer: int
    load: Event
    lds: Ranges
    why: str


@dataclass
class WaveSet:
    tables: list[WaveTables] = field(default_factory=list)

    @staticmethod
    def of(traces: list[WaveTrace]) -> "WaveSet":
        return WaveSet([WaveTables.build(t) for t in traces])


def find_hazards(waves: WaveSet) -> list[Hazard]:
    hazards: list[Hazard] = []
    for v in waves.tables:
        for read in v.trace.events:
            if read.kind != "ds_read" or not read.ranges:
                continue
            hazards.extend(_hazards_of_read(waves, v, read))
    return hazards


def _hazards_of_read(waves: WaveSet, v: WaveTables, read: Event) -> list[Hazard]:
    j = read.pos
    read_done = v.completion.get(j, NEVER)
    last_barrier = bisect.bisect_left(v.barriers, j) - 1  # index of v's last barrier before R
    next_barrier = bisect.bisect_right(v.barriers, read_done)  # v's first barrier after R retires
    found: list[Hazard] = []
    for w in waves.tables:
        if w is v:
            retired_before = j  # D ordered before R when it retires before R in program order
            issued_after = read_done  # R ordered before D when D is issued after R retires
        else:
            if w.trace.end != "endpgm" and last_barrier >= len(w.barriers):
                # w's trace was cut (time or visit limit, an indirect branch) before this rendezvous:
                # what it did up to there is not known, and the kernel is reported unchecked for it
                continue
            # the latest rendezvous both waves reach: a wave that ended takes part in no later one
            k = min(last_barrier, len(w.barriers) - 1)
            retired_before = w.barriers[k] if k >= 0 else -1
            # a wave whose trace was cut still reaches its later barriers (an ended one does not)
            reachable = next_barrier < len(w.barriers) and (next_barrier < len(v.barriers) or v.trace.end != "endpgm")
            issued_after = w.barriers[next_barrier] if reachable else NEVER
        first = bisect.bisect_left(w.dma_completion, retired_before)
        for index in range(first, len(w.dmas)):
            load = w.dmas[index]
            if load.pos > issued_after:
                break
            if load.ranges is None:
                continue
            shared = overlap(read.ranges, load.ranges)
            if not shared:
                continue
            severity = "error" if _meant_to_see(v, w, read, load) else "warning"
            why = _explain(severity, v, w, read, load, last_barrier, next_barrier, read_done)
            found.append(Hazard(severity, v.trace.wave, read, w.trace.wave, load, shared, why))
    return found


def _meant_to_see(v: WaveTables, w: WaveTables, read: Event, load: Event) -> bool:
    """Whether the program means ``read`` to see ``load``'s data.

    Wave v's own copy of the same load instance coming before the read says so. A load v never
    issues itself counts as meant when its issue happens before the read through a barrier.
    """
    own = v.issued_at.get((load.inst.index, load.occurrence))
    if own is not None:
        return own < read.pos
    k = bisect.bisect_right(w.barriers, load.pos)  # w's first barrier after the issue
    return k < len(v.barriers) and v.barriers[k] < read.pos


def _lds(ranges: Ranges) -> str:
    return ", ".join(f"[{lo:#x}, {hi:#x})" for lo, hi in ranges[:4]) + (" ..." if len(ranges) > 4 else "")


def _explain(
    severity: str,
    v: WaveTables,
    w: WaveTables,
    read: Event,
    load: Event,
    last_barrier: int,
    next_barrier: int,
    read_done: int,
) -> str:
    rv, lw = v.trace.wave, w.trace.wave
    wait = w.retired_by.get(load.pos)
    retire = (
        f"the first wait in wave {lw} that retires it is line {wait.inst.line} ({wait.inst.text})"
        if wait is not None
        else f"no wait in wave {lw} ever retires it"
    )
    phase = ""
    if w is not v and 0 <= last_barrier < len(w.barriers):
        line_v, line_w = v.barrier_line(last_barrier), w.barrier_line(last_barrier)
        if line_v != line_w:
            phase = (
                f" Waves {rv} and {lw} run a barrier phase apart: barrier #{last_barrier} is line {line_v} "
                f"in wave {rv} but line {line_w} in wave {lw}."
            )
    if severity == "error":
        if w is v:
            if wait is None:
                return (
                    f"Wave {rv} issued this load at line {load.inst.line} and reads the bytes it writes at line "
                    f"{read.inst.line} without any wait that retires it in between."
                )
            return (
                f"Wave {rv} issued this load at line {load.inst.line}; {retire}, which comes after the read at line "
                f"{read.inst.line}: the waits before the read leave it among the youngest outstanding vector-memory "
                f"operations."
            )
        if last_barrier < 0:
            return (
                f"Wave {lw} issues the load at line {load.inst.line}; {retire}. Wave {rv} passes no barrier before "
                f"its read at line {read.inst.line}, so nothing orders the load's completion before the read."
            )
        line_v = v.barrier_line(last_barrier)
        return (
            f"Wave {lw} issues the load at line {load.inst.line}; {retire}, after barrier #{last_barrier}, the last "
            f"barrier wave {rv} passes before reading at line {read.inst.line} (line {line_v}). No barrier follows "
            f"that wait before the read, so the load may still be writing LDS {_lds(load.ranges)} when wave {rv} "
            f"reads it: s_barrier is a rendezvous, not a completion wait.{phase}"
        )
    done = v.retired_by.get(read.pos)
    read_retire = (
        f"the read retires at line {done.inst.line} ({done.inst.text})"
        if done is not None
        else "no lgkmcnt wait retires the read"
    )
    if w is v:
        return (
            f"Wave {rv} refills these bytes with the load at line {load.inst.line} before {read_retire}: the refill "
            f"may land while the read at line {read.inst.line} is still in flight."
        )
    after = v.barrier_line(next_barrier)
    where = (
        f"wave {lw} issues it before barrier #{next_barrier} (line {w.barrier_line(next_barrier)} in wave {lw}), the "
        f"first barrier wave {rv} passes after that (line {after})"
        if after is not None and w.barrier_line(next_barrier) is not None
        else f"no barrier after that orders wave {lw}'s issue"
    )
    return (
        f"Wave {lw} refills LDS the read at line {read.inst.line} (wave {rv}) takes, with the load at line "
        f"{load.inst.line}; {read_retire}, and {where}. The refill may overtake the read still in flight; only "
        f"the DMA's latency would keep it safe.{phase}"
    )
