"""The lint's analysis: a fixed point over one workgroup's barrier phases, not over its paths.

A *phase* is what the waves of a workgroup do between two rendezvous: each wave runs from the
barrier it passed last to its next ``s_barrier`` (or its end). The analysis explores abstract
workgroup states, one per rendezvous, each holding per wave

* its registers (:class:`.machine.WaveState`: exact values per lane, affine values of a folded
  loop, unknown),
* the global->LDS loads it may still have in flight: (load instruction, LDS bytes) -> the fewest
  vector-memory operations issued after it on any path (``s_waitcnt vmcnt(n)`` retires exactly
  those with at least ``n`` younger), and likewise its LDS reads under lgkmcnt,

and for the workgroup the loads some wave had in flight at its last barrier (visible to the
others as unordered until a later rendezvous) and the reads still in flight across it. States are
deduplicated, and a state that an earlier one *subsumes* (same queues, registers equal or covered
by an unknown or affine value of the earlier one) is not explored again: loops close there.

Loops with a runtime trip count are folded. When the same phase recurs twice along a path through
a runtime branch and a register grew by the same ``d`` both times, it becomes ``base + P*d*J``
(``P`` = :data:`PERIOD`) for an unknown ``J``: the state then stands for every iteration ``P``
apart, so after ``P`` more iterations the next one is subsumed. Stage indices ``k mod N`` for
``N`` dividing ``P`` stay exact (:mod:`.affine`); anything else that depends on ``J`` is unknown.

Branches on values the model does not know are explored both ways. Scalar conditions (SCC, VCC)
are taken the same way by every wave of a phase, as kernel arguments are uniform over a
workgroup; exec-mask conditions are per wave. Where more than :data:`STATES_PER_BRANCH` states
reach one branch within a phase, they are joined (values that differ become unknown), and where a
phase recurs more than :data:`STATES_PER_PHASE` times without being subsumed, its registers are
joined with the previous ones: the analysis ends on every kernel.

Direction of every approximation: joins, folding and both-way branches only add behaviours
(the concrete run is always among those analysed), so hazards are over-reported, never missed;
an LDS address that becomes unknown is an ``unchecked`` finding, never a silent pass. Findings
reached through a join say so. The exceptions are documented in docs/lint.md (uniform scalar
branches, no 32-bit wraparound of folded values).
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import itertools
import math
import pickle
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .asm import Instruction, Kernel
from .findings import wave_list
from .liveness import SCC, is_live, live_in, scc_live, uses_and_defs
from .machine import Affine, Lanes, WaveState, contradicts, join_lanes
from .operands import M0, MASK32, VCC_LO, Reg, decode
from .simulate import Geometry, Ranges, classify, dma_ranges, dma_size, ds_ranges, initial_state, merge_ranges, overlap, parse_waitcnt
from .targets import Target

PERIOD = 12  # a folded loop's state stands for iterations 12 apart: stage counts 1, 2, 3, 4, 6, 12 stay exact
SHARED_VISITS = 2  # visits of a scalar branch in one phase decided for all waves alike
SELECT_REACH = 64  # instructions after a select searched for an LDS address computed from it
STATES_PER_BRANCH = 4 * PERIOD  # states of one shape at a branch within a phase before they are joined
# states of any shape at a branch within a phase before each new one is joined into one state of
# that branch, queues and issue counts included: a run of branches on exec masks that each issue a
# load or wait (a guarded gather) would otherwise give one queue shape per combination of them
SHAPES_PER_BRANCH = 4 * STATES_PER_BRANCH
STATES_PER_PHASE = 8 * PERIOD  # states of one recurring phase before its registers are joined
STATES_PER_POINT = 2 * STATES_PER_PHASE  # states at one set of barriers before whole states are joined
MAX_PHASE_STEPS = 2_000_000  # instructions one wave may run in one phase
UNKNOWN_COUNT = -1  # a load's issue count where paths with different counts were joined
# the bytes of a read whose address the model does not know: it may overlap any load, so a load it
# could pair with makes it unchecked; where no load can (counters and barriers retired them all in
# every wave) it is safe whatever its address
ANYWHERE: Ranges = ((0, 1 << 40),)
UNKNOWN_READ = "the LDS address is not known here"
UNKNOWN_WRITE = "the LDS address of the read or of a DS write is not known here"


@dataclass
class WaveAbs:
    """One wave's abstract state at a point of its program."""

    wave: int
    pc: int
    regs: WaveState
    vm: dict[tuple[int, Ranges], int] = field(default_factory=dict)  # (load, bytes) -> fewest younger VM ops
    # (read or DS write, bytes) -> fewest younger DS ops: both retire under lgkmcnt
    ds: dict[tuple[int, Ranges], int] = field(default_factory=dict)
    barrier: int = -1  # the barrier instruction passed last
    ended: bool = False
    # times the wave issued each load, relative to the workgroup's fewest: the same count in two
    # waves is the same load instance (the same iteration's), as every wave runs the same code
    issued: dict[int, int] = field(default_factory=dict)
    # times the wave passed each barrier, relative likewise: two waves at one barrier instruction
    # with different counts are at different iterations of a loop, a phase apart
    passed: dict[int, int] = field(default_factory=dict)
    # a wave that ended: the loads of its last phase, (load, bytes, issue count). It takes part in
    # no later rendezvous, so they stay unordered with everything the other waves do after it.
    final: frozenset = frozenset()
    # the DS writes the wave issued since its last barrier: a read after its own copy of a write
    # means to see the other waves' copies (every wave runs the same code)
    phase_writes: frozenset = frozenset()

    def copy(self) -> "WaveAbs":
        return WaveAbs(self.wave, self.pc, self.regs.copy(), dict(self.vm), dict(self.ds), self.barrier, self.ended,
                       dict(self.issued), dict(self.passed), self.final, self.phase_writes)

    def shape(self) -> tuple:
        return (self.pc, self.ended, self.barrier, frozenset(self.vm.items()), frozenset(self.ds.items()),
                self.phase_writes, frozenset(self.issued.items()), frozenset(self.passed.items()), self.final)

    def at_barrier(self) -> tuple[int, int]:
        """The barrier passed last, with how many times (relative): equal for aligned waves."""
        return self.barrier, self.passed.get(self.barrier, 0)

    def key(self) -> tuple:
        return self.shape(), self.regs.key()


@dataclass(frozen=True)
class Visible:
    """A load that wave ``wave`` had in flight when it passed barrier ``barrier``."""

    wave: int
    site: int
    lds: Ranges
    younger: int
    barrier: int
    passed: int = 0  # the wave's count of that barrier (see WaveAbs.passed)
    after_end: int | None = None  # issued in the last phase of a wave that ended: its issue count
    count: int = 0  # the issue count of the wave's latest instance of the load
    # in flight at the wave's barrier before this one too (not issued in the phase that ended here,
    # on any path): a whole barrier phase of the workgroup lies between its issue and what follows
    carried: bool = False


@dataclass
class Group:
    """A workgroup state at a rendezvous, with how it was reached."""

    waves: list[WaveAbs]
    visible: frozenset[Visible]  # loads in flight at some wave's last barrier
    # (wave, read, bytes, (load, issue count) the wave issued before it) still in flight at its last barrier
    reads: frozenset[tuple[int, int, Ranges, frozenset]]
    # (wave, DS write, bytes) unordered with the other waves' later accesses: in flight at the
    # wave's last barrier (no lgkmcnt wait retired it), or issued in the last phase of a wave that ended
    written: frozenset[tuple[int, int, Ranges]] = frozenset()
    trace: tuple[str, ...] = ()
    history: dict = field(default_factory=dict)  # shape -> the last two register states along this path; point -> visits
    decided: int = 0  # runtime branches decided along the path
    merged: tuple[str, ...] = ()  # where this state joined others (findings from it may over-report)
    # uniform branches decided in the last two phases: (branch, uniform key) -> taken. A wave that
    # reaches one of them later with the same uniform scalars (a wave group a phase behind, at the
    # same iteration) takes it the same way
    memo: tuple[frozenset, frozenset] = (frozenset(), frozenset())

    def shape(self) -> tuple:
        # which branches were remembered taken or not, without the iteration's values: a state of
        # a later iteration is subsumed through its registers as it is without remembered decisions
        return self.base_shape() + (tuple(frozenset((key[0], taken) for key, taken in table) for table in self.memo),)

    def base_shape(self) -> tuple:
        """The shape less the remembered decisions: what recurs from one iteration to the next
        before a loop is folded (the decisions name the iteration's counter values)."""
        return tuple(w.shape() for w in self.waves), self.visible, self.reads, self.written

    def key(self) -> tuple:
        return self.shape(), self.memo, tuple(w.regs.key() for w in self.waves)


@dataclass
class Hazard:
    severity: str  # error, latent, warning
    read: int  # instruction index of the read
    load: int  # of the load
    reader: int
    writer: int
    lds: Ranges
    how: str  # own, visible, concurrent, in-flight
    cover: str  # the wait that would order them
    barriers: str  # the barrier pair involved
    trace: tuple[str, ...]
    merged: tuple[str, ...]


@dataclass
class Unchecked:
    site: int
    waves: set[int]
    why: str
    merged: set[str] = field(default_factory=set)  # approximations of the states it was found in


@dataclass
class Outcome:
    """What the analysis of one kernel found."""

    hazards: list[Hazard] = field(default_factory=list)
    unchecked: dict[tuple[int, str], Unchecked] = field(default_factory=dict)
    # reads whose pairing with another wave's DS write the addresses could not decide, by read:
    # reported, but not as unchecked (see docs/lint.md, "Which way each approximation errs")
    undecided: dict[int, Unchecked] = field(default_factory=dict)
    incomplete: dict[int, str] = field(default_factory=dict)  # line -> instruction not modelled
    finished: bool = True
    states: int = 0
    merged: tuple[str, ...] = ()  # the approximations behind the state being explored

    def flag(self, site: int, wave: int, why: str) -> None:
        item = self.unchecked.setdefault((site, why), Unchecked(site, set(), why))
        item.waves.add(wave)
        item.merged.update(self.merged)


class NeedDecision(Exception):
    """A uniform branch the phase has not decided yet: the phase is run once per choice."""

    def __init__(self, key: tuple, walk: "Walk | None" = None):
        super().__init__(key)
        self.key = key
        self.walk = walk  # the wave's walk as it stood at the branch: resumed once it is decided


@dataclass
class Walk:
    """One wave's walk through a phase, stopped at a uniform branch not yet decided: the paths
    still to take (the stopped one first, back at its branch), the end states and branch states
    so far, what it recorded and the decisions it read. Resumed under each choice, it does not
    walk again the code before the branch."""

    heap: list
    finals: dict
    seen: dict
    record: PhaseRecord
    read: dict
    steps: int
    order: int

    def resumed(self) -> "Walk":
        """An independent copy to go on from (a walk is resumed once per choice)."""
        heap = [(pc, parked, order, wave.copy(), dict(visits)) for pc, parked, order, wave, visits in self.heap]
        heapq.heapify(heap)
        return Walk(heap,
                    {end: wave.copy() for end, wave in self.finals.items()},
                    {key: list(value) if isinstance(value, list) else value for key, value in self.seen.items()},
                    PhaseRecord({key: set(value) for key, value in self.record.reads.items()}, set(self.record.loads),
                                set(self.record.writes), dict(self.record.prior)),
                    dict(self.read), self.steps, self.order)


@dataclass
class PhaseRecord:
    """What one wave did in a phase, over all its paths: reads and loads, with their bytes."""

    # -> for each instance of the read, the (load, issue count) pairs of its wave at that point
    reads: dict[tuple[int, Ranges], set[frozenset]] = field(default_factory=dict)
    loads: set[tuple[int, Ranges, int]] = field(default_factory=set)  # (load, bytes, its issue count)
    writes: set[tuple[int, Ranges]] = field(default_factory=set)  # (DS write, bytes)
    # (read, bytes) -> the DS writes its wave issued before it in the phase, on some path
    prior: dict[tuple[int, Ranges], frozenset] = field(default_factory=dict)


def _age(queue: dict, cap: int) -> None:
    for entry, younger in queue.items():
        if younger <= cap:
            queue[entry] = younger + 1


def _retire(queue: dict, count: int | None) -> None:
    if count is None:
        return
    for entry in [e for e, younger in queue.items() if younger >= count]:
        del queue[entry]


def _add(queue: dict, entry: tuple, younger: int = 0) -> None:
    queue[entry] = min(queue.get(entry, younger), younger)


_EVENTS = frozenset({"wait", "dma", "vmem", "ds_read", "ds_write", "ds_other"})  # the kinds _event acts on


class OutOfTime(Exception):
    """The time limit passed in the middle of a phase."""


class KernelAnalysis:
    """The fixed point of one kernel's workgroup; :meth:`run` returns its :class:`Outcome`."""

    def __init__(self, kernel: Kernel, geometry: Geometry, target: Target, deadline: float):
        self.kernel = kernel
        self.code = kernel.instructions
        self.geometry = geometry
        self.target = target
        self.deadline = deadline
        self.outcome = Outcome()
        self.exact: set = set()
        self.by_shape: dict[tuple, list[Group]] = {}
        self.by_point: dict[tuple, list[Group]] = {}  # by where each wave is
        self.symbols = itertools.count(1)
        self.fold_symbols: dict[tuple, int] = {}  # one symbol per phase shape where loops fold
        self.targets = set(kernel.labels.values())
        self.live = live_in(kernel)
        self.loops = _loops(kernel)
        self.selects: dict[int, bool] | None = None  # by pc: whether the select there is decided (_decides_an_address)
        self.single_defs = _single_definitions(kernel)
        self.compares: dict[int, int | None] = {}
        self.paired: set[tuple] = set()  # the read/load pairs of a phase's loads already recorded
        self.skipped: dict[int, list[int]] = {}  # by forward execz branch: the DMA loads it jumps over
        self.dead = _dead_vector_results(kernel, self.live)
        # past the largest count any wait of the kernel names, every wait retires an entry alike:
        # younger counts are kept up to there (plus one), so queues that differ beyond are one state
        self.kinds = [classify(inst) for inst in self.code]  # each instruction's memory kind, once
        waits = [parse_waitcnt(inst) for inst, kind in zip(self.code, self.kinds) if kind == "wait"]
        self.vm_cap = min([target.vm_limit] + [max((vm for vm, _ in waits if vm is not None), default=0)])
        self.lgkm_cap = min([target.lgkm_limit] + [max((lgkm for _, lgkm in waits if lgkm is not None), default=0)])

    # ---- the fixed point over rendezvous ---------------------------------------------------
    def run(self) -> Outcome:
        waves = [WaveAbs(w, 0, initial_state(self.geometry, w)) for w in range(self.geometry.waves)]
        queue = deque([Group(waves, frozenset(), frozenset())])
        while queue:
            if time.monotonic() > self.deadline:
                self.outcome.finished = False
                break
            group = queue.popleft()
            try:
                for successor in self._phase(group):
                    admitted = self._admit(successor)
                    if admitted is not None:
                        queue.append(admitted)
            except OutOfTime:
                self.outcome.finished = False
                break
        return self.outcome

    def _phase(self, group: Group):
        """Every rendezvous the workgroup can reach from ``group``, one per scalar decision."""
        pending: list[dict] = [{}]
        self.outcome.merged = group.merged
        self.memo = {key: taken for table in group.memo for key, taken in table}
        self.stopped: dict[int, list[tuple[tuple, Walk]]] = {}  # by wave: (the branch's key, the walk stopped there)
        self.overlapping: dict[tuple, tuple] = {}  # (a wave's phase record's loads, read bytes) -> its loads there
        self.checked_writes: set[tuple] = set()  # the records (and pairs of them) checked for DS writes
        # the read/load pairs checked in this phase: another combination of end states pairs the
        # same records again, and only its trace would differ (the first one is reported)
        self.checked_loads: set[tuple] = set()
        self.contents: dict = {}  # what records (runs under other decisions) hold, one number per distinct content
        self.content_numbers: dict[tuple, int] = {}  # (part, id of what holds it) -> its content's number
        runs: list[list] = [[] for _ in group.waves]  # per wave: (decisions it read, finals, record)
        while pending:
            if time.monotonic() > self.deadline:  # many short runs: the walks' own checks may never come
                raise OutOfTime
            decisions = pending.pop()
            try:
                finals, records = self._run_phase(group, decisions, runs)
            except NeedDecision as need:
                pending += [{**decisions, need.key: True}, {**decisions, need.key: False}]
                continue
            yield from self._rendezvous(group, decisions, finals, records)

    def _run_phase(self, group: Group, decisions: dict, runs: list[list]) -> tuple[list[list[WaveAbs]], list[PhaseRecord]]:
        """Each wave through the phase under ``decisions``. A wave's run depends on them only
        through the decisions it read: a run under decisions that answer those alike is reused
        (a decision a later wave needs reruns the phase, not the waves before it)."""
        finals, records = [], []
        for index, (wave, done) in enumerate(zip(group.waves, runs)):
            if wave.ended:
                finals.append([wave])
                records.append(PhaseRecord())
                continue
            for read, ends, record in done:
                if self._agrees(read, decisions):
                    break
            else:
                # resume the deepest walk this wave stopped at a branch that is decided now
                stopped = [walk for key, walk in self.stopped.get(index, ())
                           if self._decision(key, decisions) is not None and self._agrees(walk.read, decisions)]
                walk = max(stopped, key=lambda w: len(w.read)).resumed() if stopped else None
                forks = self.stopped.setdefault(index, [])
                try:
                    ends, record, read = self._run_wave(wave, decisions, walk, forks)
                except NeedDecision as need:
                    forks.append((need.key, need.walk))
                    raise
                done.append((read, ends, record))
            finals.append(ends)
            records.append(record)
        return finals, records

    def _decision(self, key: tuple, decisions: dict) -> bool | None:
        """How the phase's decisions, else the state's remembered ones, take a uniform branch."""
        return decisions.get(key, self.memo.get(key[::2]))

    def _agrees(self, read: dict, decisions: dict) -> bool:
        return all(self._decision(key, decisions) == taken for key, taken in read.items())

    def _rendezvous(self, group: Group, decisions: dict, finals: list[list[WaveAbs]], records: list[PhaseRecord]):
        decided = [
            f"select line {self.code[pc].line} {'SCC 1' if taken else 'SCC 0'}" if self.code[pc].mnemonic in _SELECTS
            else f"branch line {self.code[pc].line} {'taken' if taken else 'not taken'}"
            for (pc, _, _), taken in sorted(decisions.items(), key=lambda item: item[0][:2])
        ]
        split = self._split_decisions(decisions)
        memo = _memo(decisions)
        for combo in itertools.product(*finals):
            waves = list(combo)
            if all(w.ended for w in waves) and all(g.ended for g in group.waves):
                continue
            if not _consistent(waves, self.single_defs):
                continue
            waves = self._share_facts(waves)
            trace = (group.trace + tuple(decided) + (self._barrier_words(waves),))[-8:]
            self._check_phase(group, waves, records, trace)
            if all(w.ended for w in waves):
                continue
            before = {(v, site, lds): issued for v, site, lds, issued in group.reads}
            snapshots = {(v, site, lds): record.reads.get((site, lds), before.get((v, site, lds), ()))
                         for v, (w, record) in enumerate(zip(waves, records)) for site, lds in w.ds
                         if self.kinds[site] == "ds_read"}
            written = self._written(group, waves, records)
            for w, old, record in zip(waves, group.waves, records):
                if w.ended and not old.ended:
                    w.final = frozenset(record.loads)
            waves, shift = _relative_counts(waves)
            waves = [self._forget_dead(w) for w in waves]
            fresh = [{(site, lds) for site, lds, _ in record.loads} for record in records]
            visible = frozenset(
                Visible(w.wave, site, lds, younger, *w.at_barrier(), _final_count(w, site, lds), w.issued.get(site, 0),
                        (site, lds) not in fresh[w.wave])
                for w in waves for (site, lds), younger in w.vm.items()
            )
            reads = frozenset(
                (v, site, lds, frozenset(_shifted_snapshot(snapshot, shift) for snapshot in issued))
                for (v, site, lds), issued in snapshots.items())
            yield Group(waves, visible, reads, written, trace, dict(group.history), group.decided + len(decisions),
                        (group.merged + split)[-3:] if split and split[0] not in group.merged else group.merged,
                        _remember(waves, group.memo[1], memo))

    def _written(self, group: Group, waves: list[WaveAbs], records: list[PhaseRecord]) -> frozenset:
        """The DS writes unordered with what the other waves do after this rendezvous: those a
        running wave still has in flight (no lgkmcnt wait retired them before its barrier), and
        every write of an ended wave's last phase (it passes no barrier after them)."""
        out = {entry for entry in group.written if group.waves[entry[0]].ended}
        for w, old, record in zip(waves, group.waves, records):
            if not w.ended:
                out.update((w.wave, site, lds) for site, lds in w.ds if self.kinds[site] == "ds_write")
            elif not old.ended:
                out.update((w.wave, site, lds) for site, lds in record.writes)
        return frozenset(out)

    def _forget_dead(self, wave: WaveAbs) -> WaveAbs:
        """The wave without the registers its program cannot read again from here."""
        if wave.ended or wave.pc >= len(self.code):
            return wave
        live = self.live[wave.pc]
        regs = wave.regs
        regs.sgpr = {i: v for i, v in regs.sgpr.items() if is_live(live, "s", i) or i in regs.assumed}
        regs.vgpr = {i: v for i, v in regs.vgpr.items() if is_live(live, "v", i)}
        regs.active_v = {i: v for i, v in regs.active_v.items() if is_live(live, "v", i)}
        regs.agpr = {i: v for i, v in regs.agpr.items() if is_live(live, "a", i)}
        regs.nonuniform = {i for i in regs.nonuniform if is_live(live, "s", i)}
        regs.masks = {i: m for i, m in regs.masks.items() if is_live(live, "s", i) or is_live(live, "s", i + 1)}
        # a bound by a folded value grows with the iterations, and a state bounded otherwise covers
        # no other: forgotten (it only prunes combinations), the loop closes
        regs.bounds = {i: b for i, b in regs.bounds.items() if not any(isinstance(v, Affine) for v in b.values())}
        regs.uniform_v = {i for i in regs.uniform_v if is_live(live, "v", i)}
        if not scc_live(live):
            regs.scc, regs.scc_nonuniform = None, False
        return wave

    def _share_facts(self, waves: list[WaveAbs]) -> list[WaveAbs]:
        """What one wave learnt of a uniform register written once in the whole kernel (a kernel
        argument) holds in every wave that has written it: give it to those that do not know it."""
        learnt = {index: w.regs.sgpr[index] for w in waves for index in w.regs.assumed
                  if index in self.single_defs and w.regs.sgpr.get(index) is not None}
        if not learnt:
            return waves
        out = []
        for w in waves:
            live = self.live[w.pc] if not w.ended and w.pc < len(self.code) else 0
            missing = [i for i in learnt if w.regs.sgpr.get(i) is None and i not in w.regs.nonuniform
                       and (i in w.regs.sgpr or is_live(live, "s", i))]
            if missing:
                w = w.copy()
                for index in missing:
                    w.regs.sgpr[index] = learnt[index]
                    w.regs.assumed.add(index)
            out.append(w)
        return out

    def _split_decisions(self, decisions: dict) -> tuple[str, ...]:
        """Where waves at different iterations took one uniform branch differently in this phase:
        the combination may not be one the program can run (the lint does not relate the
        iterations), so findings from it may be over-reports."""
        outcomes: dict[int, set[bool]] = {}
        for (pc, _, _), taken in decisions.items():
            outcomes.setdefault(pc, set()).add(taken)
        return tuple(f"waves at different iterations took the {'select' if self.code[pc].mnemonic in _SELECTS else 'branch'} "
                     f"at line {self.code[pc].line} differently"
                     for pc, seen in sorted(outcomes.items()) if len(seen) > 1)

    def _barrier_words(self, waves: list[WaveAbs]) -> str:
        lines: dict[int, list[int]] = {}
        for w in waves:
            if not w.ended:
                lines.setdefault(self.code[w.barrier].line, []).append(w.wave)
        if not lines:
            return "the end of every wave"
        if len(lines) == 1:
            return f"barrier line {next(iter(lines))}"
        return "barriers " + ", ".join(f"line {line} (waves {wave_list(ws)})" for line, ws in sorted(lines.items()))

    # ---- states seen, subsumed, folded, widened ---------------------------------------------
    def _admit(self, group: Group) -> Group | None:
        key = hashlib.blake2b(pickle.dumps(group.key()), digest_size=20).digest()
        if key in self.exact:
            return None
        self.exact.add(key)
        shape = group.shape()
        bucket = self.by_shape.setdefault(shape, [])
        if any(_subsumes(old, group) for old in bucket):
            return None
        group = self._fold(group.base_shape(), group)
        if len(bucket) >= STATES_PER_PHASE:
            group = self._widen(_closest(bucket, group), group)
        if any(_subsumes(old, group) for old in bucket):
            return None
        point = tuple((w.pc, w.ended) for w in group.waves)
        here = self.by_point.setdefault(point, [])
        if len(here) >= STATES_PER_POINT:
            # queues and counts differ too: join whole states, a lattice of finite height
            joined = _join_groups(here[-1], group)
            if joined.key() == here[-1].key():
                return None
            group = joined
            bucket = self.by_shape.setdefault(group.shape(), [])
        here.append(group)
        bucket.append(group)
        self.outcome.states += 1
        return group

    def _fold(self, shape: tuple, group: Group) -> Group:
        """Registers that grew by the same step twice through a runtime branch become affine."""
        point = tuple((w.pc, w.ended) for w in group.waves)
        # the times this path reached this point: a shape that recurs only every r-th iteration
        # (a ring of r stages in flight) folds r iterations at a time
        visits = group.history[point] = group.history.get(point, 0) + 1
        seen = group.history.get(shape, ())
        group.history[shape] = (seen + ((tuple(w.regs for w in group.waves), group.decided, visits),))[-2:]
        if len(seen) < 2 or seen[-1][1] == group.decided:
            return group
        (first, _, first_visit), (second, _, second_visit) = seen
        # every path folding here names its iteration count alike, so their states compare
        symbol = self.fold_symbols.setdefault(point, next(self.symbols))
        folded = [w.copy() for w in group.waves]
        changed = False
        if all(_alternates(w.regs, a, b) for w, a, b in zip(group.waves, first, second)):
            period = 2
        else:
            # PERIOD iterations, not PERIOD recurrences of the shape: stage counts dividing PERIOD stay exact
            period = PERIOD // math.gcd(PERIOD, second_visit - first_visit)
        for w, a, b in zip(folded, first, second):
            changed |= _fold_registers(w.regs, a, b, symbol, period)
        if changed:
            group.waves = folded
            group.history = {}
        return group

    def _widen(self, previous: Group, group: Group) -> Group:
        waves = [w.copy() for w in group.waves]
        for w, old in zip(waves, previous.waves):
            w.regs = _join_registers(old.regs, w.regs)
        line = self.code[waves[0].barrier].line if waves[0].barrier >= 0 else 0
        merged = group.merged + (f"the registers of the phase after line {line} were joined after {STATES_PER_PHASE} iterations",)
        return Group(waves, group.visible, group.reads, group.written, group.trace, {}, group.decided, merged[-3:], group.memo)

    # ---- one wave through one phase ----------------------------------------------------------
    def _run_wave(self, start: WaveAbs, decisions: dict, walk: Walk | None = None,
                  forks: list | None = None) -> tuple[list[WaveAbs], PhaseRecord, dict]:
        """The wave's states at the end of the phase (one per end point), what it recorded, and
        the uniform decisions the run took, by key; from the start, or going on with ``walk``.
        ``forks`` gets the walk as it stood at each decision it read first (a run under the other
        choice goes on from there)."""
        if walk is None:
            walk = Walk([(start.pc, False, 0, start.copy(), {})], {}, {}, PhaseRecord(), {}, 0, 1)
        finals, seen, record, read, heap, steps = walk.finals, walk.seen, walk.record, walk.read, walk.heap, walk.steps
        # paths in program order: every path that reaches a branch from code before it has done so
        # when the branch is taken up (a batch), so the states past the bound there are joined at once
        order = itertools.count(walk.order)
        while heap:
            pc, parked, _, wave, visits = heapq.heappop(heap)
            if parked:
                batch = [(wave, visits)]
                while heap and heap[0][0] == pc and heap[0][1]:
                    batch.append(heapq.heappop(heap)[3:])
                for wave, visits in self._merge_at_branch(batch, seen):
                    target = self.kernel.labels[self.code[pc].operands[0]]
                    other = wave.copy()
                    self._assume(other, self.code[pc].mnemonic, True, target)
                    self._skip(other, pc, target)
                    other.pc = target
                    heapq.heappush(heap, (target, False, next(order), other, dict(visits)))
                    self._assume(wave, self.code[pc].mnemonic, False, target)
                    wave.pc += 1
                    heapq.heappush(heap, (wave.pc, False, next(order), wave, visits))
                continue
            while True:
                steps += 1
                if steps % 4096 == 0 and time.monotonic() > self.deadline:
                    raise OutOfTime
                if steps > MAX_PHASE_STEPS:
                    self.outcome.flag(wave.pc, wave.wave, f"the wave ran {MAX_PHASE_STEPS} instructions without reaching a barrier; the rest was not followed")
                    wave.ended = True
                if wave.ended or wave.pc >= len(self.code):
                    wave.ended = True
                    _keep(finals, wave)
                    break
                inst = self.code[wave.pc]
                name = inst.mnemonic
                if name == "s_endpgm":
                    wave.ended = True
                    _keep(finals, wave)
                    break
                if name.startswith(("s_setpc", "s_swappc")):
                    self.outcome.flag(wave.pc, wave.wave, "an indirect branch: the code after it was not followed")
                    wave.ended = True
                    _keep(finals, wave)
                    break
                if name == "s_branch" or name.startswith("s_cbranch"):
                    target = self.kernel.labels.get(inst.operands[0] if inst.operands else "")
                    if target is None:
                        self.outcome.flag(wave.pc, wave.wave, "the branch target is not in the kernel: the code after it was not followed")
                        wave.ended = True
                        continue
                    if name == "s_branch":
                        wave.pc = target
                        continue
                    taken = _condition(wave.regs, name[len("s_cbranch_"):])
                    if taken is None:
                        if _uniform(wave.regs, name):
                            taken = self._shared(wave, visits, decisions, (heap, finals, seen, record, read, steps, order),
                                                 forks)
                        else:
                            visits[wave.pc] = visits.get(wave.pc, 0) + 1
                        if taken is None:  # both ways: the wave's own paths, parked to be joined there
                            heapq.heappush(heap, (wave.pc, True, next(order), wave, visits))
                            break
                    self._assume(wave, name, taken, target)
                    if taken:
                        self._skip(wave, wave.pc, target)
                    wave.pc = target if taken else wave.pc + 1
                    continue
                if self.dead[wave.pc] is not None:
                    _forget_result(wave.regs, self.dead[wave.pc])
                    wave.pc += 1
                    continue
                kind = self.kinds[wave.pc]
                if kind in _EVENTS:
                    self._event(wave, inst, record)
                if kind == "barrier":
                    wave.barrier = wave.pc
                    wave.phase_writes = frozenset()
                    wave.passed[wave.pc] = wave.passed.get(wave.pc, 0) + 1
                    wave.pc += 1
                    _keep(finals, wave)
                    break
                if name in _SELECTS and wave.regs.scc is None and not wave.regs.scc_nonuniform \
                        and self._decides_an_address(wave.pc) and _selects_known_values(wave.regs, inst):
                    # a uniform select between two known values that an LDS address depends on (a
                    # tail's stage base on its trip count's parity): decided for every wave alike,
                    # as a branch on that SCC would be
                    taken = self._shared(wave, visits, decisions, (heap, finals, seen, record, read, steps, order), forks)
                    if taken is not None:
                        wave.regs.scc = taken
                if not wave.regs.execute(inst):
                    self.outcome.incomplete.setdefault(inst.line, inst.text)
                wave.pc += 1
        return list(finals.values()), record, read

    def _decides_an_address(self, pc: int) -> bool:
        """Whether the select at ``pc`` is decided: an LDS address (a DS access's, or M0) is computed
        from its result in the straight-line code after it, and no innermost loop holds it. Inside
        one, a choice per iteration (its selects on the iteration's bounds) would keep the loop from
        folding, where a join of the two values is what folding needs; a select whose value reaches
        an address only through a chain of unknowns (an unsigned division's corrections) would
        multiply the runs for nothing."""
        if self.selects is None:  # first asked: every select's answer at once
            innermost = [(head, end) for head, end in self.loops
                         if not any((h, e) != (head, end) and head <= h and e <= end for h, e in self.loops)]
            self.selects = {at: not any(head <= at <= end for head, end in innermost) and self._feeds_an_address(at)
                            for at, inst in enumerate(self.code) if inst.mnemonic in _SELECTS}
        return self.selects[pc]

    def _feeds_an_address(self, pc: int) -> bool:
        """Whether an LDS address is computed from what the instruction at ``pc`` writes before the
        next label or branch (SCC included: ``s_and_b64`` of a selected mask, then a select on it)."""
        _, tainted, _ = uses_and_defs(self.code[pc])
        for at in range(pc + 1, min(pc + 1 + SELECT_REACH, len(self.code))):
            inst = self.code[at]
            if at in self.targets or inst.mnemonic.startswith(("s_branch", "s_cbranch", "s_setpc", "s_endpgm")):
                return False
            uses, defs, seeds = uses_and_defs(inst)
            if seeds & tainted or (defs >> M0) & 1 and uses & tainted:
                return True
            tainted = tainted | defs if uses & tainted else tainted & ~defs
        return False

    def _shared(self, wave: WaveAbs, visits: dict, decisions: dict, walk_state: tuple, forks: list | None) -> bool | None:
        """How the phase's uniform decisions take the condition at ``wave.pc`` (a branch or a
        select on a uniform SCC), for the first :data:`SHARED_VISITS` visits of it; None past them.
        Undecided, the wave's walk stops here (:class:`NeedDecision`: the phase is run once per
        choice, and the walk resumed); decided, the walk as it stands is kept in ``forks`` the
        first time, to go on from under the other choice."""
        heap, finals, seen, record, read, steps, order = walk_state
        visit = visits.get(wave.pc, 0)
        visits[wave.pc] = visit + 1
        if visit >= SHARED_VISITS:
            return None
        live = self.live[wave.pc]
        key = (wave.pc, visit, wave.regs.uniform_key(lambda i: is_live(live, "s", i)))
        taken = self._decision(key, decisions)
        if taken is None:
            visits[wave.pc] = visit
            heapq.heappush(heap, (wave.pc, False, next(order), wave, visits))
            raise NeedDecision(key, Walk(heap, finals, seen, record, read, steps, next(order)))
        if forks is not None and key not in read:
            visits[wave.pc] = visit
            fork = Walk(heap + [(wave.pc, False, next(order), wave, visits)], finals, seen, record, read, steps, next(order))
            forks.append((key, fork.resumed()))
            visits[wave.pc] = visit + 1
        read[key] = taken
        return taken

    def _assume(self, wave: WaveAbs, branch: str, taken: bool, target: int) -> None:
        """What a decided SCC branch says: after ``s_cmp_eq`` / ``s_cmp_lg`` right before it (and
        no label between), the side where the two are equal gives an unknown one the other's value
        (a loop's exit test against its trip count: the count is then the counter's value).

        Equalities only on an edge that leaves the innermost loop around the branch, or outside
        loops: a value learnt inside a loop would split its iterations into one family per value.
        The other edge remembers that the unknown one differs from a known value (a loop that went
        on past iteration k: its trip count is not k), so no wave may later learn it equal."""
        if wave.pc in self.targets or wave.pc == 0 or branch not in ("s_cbranch_scc0", "s_cbranch_scc1"):
            return
        at = self._compare_before(wave.pc)
        if at is None:
            return
        compare = self.code[at]
        relation = compare.mnemonic.split("_")[2] if compare.mnemonic.startswith(("s_cmp_", "s_cmpk_")) else ""
        if not compare.mnemonic.endswith(("_u32", "_i32")) or len(compare.operands) != 2:
            return
        scc = taken == (branch == "s_cbranch_scc1")
        # signed compares read as unsigned: the scalars compared (trip counts, counters, tile
        # indices) are taken as non-negative, below 2**31
        around = [(head, end) for head, end in self.loops if head <= wave.pc <= end]
        stays = False
        if around:
            head, end = min(around, key=lambda loop: loop[1] - loop[0])
            destination = target if taken else wave.pc + 1
            stays = head <= destination <= end
        if relation in _BELOW and (compare.mnemonic.endswith("_u32") or not stays):
            # a < b + k, or its negation: lt (k 0), le (k 1), gt = not le, ge = not lt. Signed
            # ones only where they leave a loop or outside loops: inside one (a causal mask's
            # bound per tile) they would tell iterations apart by the interval they leave
            offset, negated = _BELOW[relation]
            wave.regs.assume_below(*compare.operands, offset, scc != negated, exact=not stays)
            return
        if relation not in ("eq", "lg"):
            return
        if scc != (relation == "eq"):
            wave.regs.assume_unequal(*compare.operands)
            return
        if not stays:
            wave.regs.assume_equal(*compare.operands)

    def _skip(self, wave: WaveAbs, pc: int, target: int) -> None:
        """A wave that jumps over a region because no lane takes it (``s_cbranch_execz`` forward)
        still passes its DMA loads: each counts as issued, writing nothing, so the waves' k-th
        passes through a load stay one instance whichever waves had lanes for it."""
        if self.code[pc].mnemonic != "s_cbranch_execz" or target <= pc:
            return
        if pc not in self.skipped:
            self.skipped[pc] = [i for i in range(pc + 1, target) if self.kinds[i] == "dma"]
        for site in self.skipped[pc]:
            count = wave.issued.get(site, 0)
            wave.issued[site] = UNKNOWN_COUNT if count == UNKNOWN_COUNT else count + 1

    def _compare_before(self, pc: int) -> int | None:
        """The ``s_cmp`` whose SCC the branch at ``pc`` tests, when the code between writes neither
        SCC nor what it compared and no label enters it (the scheduler moves VALU work, waits and
        barriers in between)."""
        if pc in self.compares:
            return self.compares[pc]
        found, written, at = None, 0, pc - 1
        while at >= 0 and pc - at <= 64:
            inst = self.code[at]
            uses, defs, _ = uses_and_defs(inst)
            if inst.mnemonic.startswith(("s_cmp_", "s_cmpk_")):
                found = at if not uses & written else None
                break
            if defs & (1 << SCC) or at in self.targets or inst.mnemonic.startswith(("s_branch", "s_cbranch", "s_setpc")):
                break
            written |= defs
            at -= 1
        self.compares[pc] = found
        return found

    def _merge_at_branch(self, batch: list[tuple[WaveAbs, dict]], seen: dict) -> list[tuple[WaveAbs, dict]]:
        """The states of a batch that reach one branch and go on from it, both ways. A loop inside
        one phase (no barrier in it) closes like one across phases: a state seen at this branch
        that covers one stops it; registers that grew by one step twice fold; past
        :data:`STATES_PER_BRANCH` states of one shape they are joined. Past
        :data:`SHAPES_PER_BRANCH` states of any shape, those of the batch that arrive with the same
        branch visits are joined into one with the state joined there before, queues included."""
        out, overflow = [], {}
        if len(batch) > 1 and self.code[batch[0][0].pc].mnemonic in ("s_cbranch_execz", "s_cbranch_execnz"):
            batch = _joined_by_visits(batch)
        for wave, visits in batch:
            if seen.get(("count", wave.pc), 0) >= SHAPES_PER_BRANCH:
                overflow.setdefault(tuple(sorted(visits.items())), (visits, []))[1].append(wave)
                continue
            kept = self._merge_shape(wave, seen)
            if kept is not None:
                seen[("count", wave.pc)] = seen.get(("count", wave.pc), 0) + 1
                out.append((kept, visits))
        for key, (visits, waves) in overflow.items():
            wide = seen.get(("joined", waves[0].pc, key))
            waves = [w for w in waves if wide is None or not _wave_subsumes(wide, w)]
            if not waves:
                continue
            joined = waves[0] if wide is None else _join_waves(wide, waves[0])
            for w in waves[1:]:
                joined = _join_waves(joined, w)
            seen[("joined", joined.pc, key)] = joined
            out.append((joined.copy(), visits))
        return out

    def _merge_shape(self, wave: WaveAbs, seen: dict) -> WaveAbs | None:
        """A state arriving at a branch among those of its shape: None when one of them covers it."""
        # issue counts grow with the iterations of such a loop: they are not part of the shape,
        # and where two iterations differ in them the count becomes unknown (matching any instance)
        shape = wave.shape()[:-3] + wave.shape()[-2:]
        same = seen.setdefault((wave.pc, shape), [])
        if any(_wave_covers(old, wave) for old in same):
            return None
        if same:
            wave = wave.copy()
            for site, count in wave.issued.items():
                if same[-1].issued.get(site, 0) != count:
                    wave.issued[site] = UNKNOWN_COUNT
        if len(same) >= 2:
            symbol = self.fold_symbols.setdefault(("branch", wave.pc), next(self.symbols))
            _fold_registers(wave.regs, same[-2].regs, same[-1].regs, symbol)
            if any(_wave_covers(old, wave) for old in same):
                return None
        if len(same) >= STATES_PER_BRANCH:
            wave = _join_waves(same[-1], wave)
            if _wave_covers(same[-1], wave):
                return None
        same.append(wave)
        return wave.copy()

    def _event(self, wave: WaveAbs, inst: Instruction, record: PhaseRecord) -> None:
        """Apply a memory or wait instruction to the wave's queues; check its own ordering."""
        kind = self.kinds[inst.index]
        site = inst.index
        if kind == "wait":
            vm, lgkm = parse_waitcnt(inst)
            problem = self.target.wait_problem(vm, lgkm)
            if problem:
                self.outcome.flag(site, wave.wave, problem)
            _retire(wave.vm, vm)
            _retire(wave.ds, lgkm)
        elif kind == "dma":
            lds = dma_ranges(wave.regs, inst)
            problem = self.target.dma_problem(dma_size(inst), inst.mnemonic)
            if problem:
                self.outcome.flag(site, wave.wave, problem)
                lds = None
            elif lds is None:
                self.outcome.flag(site, wave.wave, "M0 (the LDS destination) is not known here: what this load writes was not checked")
            else:
                for (read, read_lds), younger in wave.ds.items():
                    shared = overlap(read_lds, lds) if read_lds is not ANYWHERE and self.kinds[read] == "ds_read" else ()
                    if shared:
                        self._own(wave, read, site, shared, "warning", f"s_waitcnt lgkmcnt({younger}) before the load")
            count = wave.issued.get(site, 0)
            count = UNKNOWN_COUNT if count == UNKNOWN_COUNT else count + 1
            wave.issued[site] = count
            if lds is not None:
                record.loads.add((site, lds, count))
            _age(wave.vm, self.vm_cap)
            if lds is not None:
                _add(wave.vm, (site, lds))
        elif kind == "vmem":
            _age(wave.vm, self.vm_cap)
        elif kind in ("ds_read", "ds_write", "ds_other"):
            lds = ds_ranges(wave.regs, inst) if kind != "ds_other" else ()
            _age(wave.ds, self.lgkm_cap)
            if kind == "ds_write":
                # checked against the other waves' reads at the rendezvous; a wave's own DS
                # accesses are served in its program order
                lds = ANYWHERE if lds is None else lds
                record.writes.add((site, lds))
                _add(wave.ds, (site, lds))
                wave.phase_writes |= {site}
            if kind == "ds_read":
                lds = ANYWHERE if lds is None else lds
                for (load, load_lds), younger in wave.vm.items():
                    shared = overlap(lds, load_lds)
                    if shared and lds is ANYWHERE:
                        self._unknown(site, wave.wave, load, wave.wave)
                    elif shared:
                        self._own(wave, site, load, shared, "error", f"s_waitcnt vmcnt({younger}) before the read")
                record.reads.setdefault((site, lds), set()).add(frozenset(wave.issued.items()))
                if wave.phase_writes:
                    record.prior[(site, lds)] = record.prior.get((site, lds), frozenset()) | wave.phase_writes
                _add(wave.ds, (site, lds))

    def _unknown(self, read: int, reader: int, load: int, writer: int) -> None:
        """A read of unknown address that a load still in flight may write: not checked."""
        who = "its own" if reader == writer else f"wave {writer}'s"
        why = f"{UNKNOWN_READ}, and {who} load at line {self._line(load)} may still be in flight: this read was not checked"
        item = self.outcome.unchecked.setdefault((read, UNKNOWN_READ), Unchecked(read, set(), why))
        item.waves.add(reader)
        item.merged.update(self.outcome.merged)

    def _own(self, wave: WaveAbs, read: int, load: int, lds: Ranges, severity: str, cover: str) -> None:
        self.outcome.hazards.append(Hazard(severity, read, load, wave.wave, wave.wave, lds, "own", cover, "", (), ()))

    # ---- hazards between waves, at a rendezvous ----------------------------------------------
    def _check_phase(self, group: Group, waves: list[WaveAbs], records: list[PhaseRecord], trace: tuple) -> None:
        before = group.waves
        # a read against the phase's loads depends on the records alone: once per content of them
        loads = tuple(self._content("loads", record) for record in records)
        for v, record in enumerate(records):
            against_loads = ("concurrent", v, self._content("snapshots", record), loads)
            concurrent = against_loads not in self.checked_loads
            self.checked_loads.add(against_loads)
            for (read, lds), issued in record.reads.items():
                for seen in group.visible:
                    if seen.wave == v:
                        continue
                    shared = overlap(lds, seen.lds)
                    if not shared:
                        continue
                    # retired by the load's wave before a barrier of its own (an ended wave has none)
                    retired = (seen.site, seen.lds) not in waves[seen.wave].vm and not waves[seen.wave].ended
                    checked = ("visible", v, read, lds, self._content("issued", issued), seen, retired)
                    if checked in self.checked_loads:
                        continue
                    self.checked_loads.add(checked)
                    shared = ANYWHERE if _is_anywhere(lds) else shared
                    if seen.after_end is not None:
                        # issued after the ended wave's last rendezvous: as unordered as a load of this phase
                        cover = f"s_waitcnt vmcnt(0) + s_barrier in wave {seen.wave} after its load, before it ends"
                        pair = f"wave {seen.wave} ended without passing another barrier"
                        for severity in _weights(issued, seen.site, seen.after_end):
                            self._cross(severity, read, seen.site, v, seen.wave, shared, "after-end", cover, pair, trace, group)
                        continue
                    apart = _apart(before[v].at_barrier(), (seen.barrier, seen.passed))
                    pair = self._pair(v, before[v].barrier, seen.wave, seen.barrier, apart)
                    cover = f"s_waitcnt vmcnt({seen.younger}) in wave {seen.wave} before its barrier at line {self._line(seen.barrier)}"
                    for severity in _weights(issued, seen.site, seen.count):
                        # a load the read does not mean to see, issued before it: a refill that may overtake it.
                        # Retired by its wave before a barrier that pairs with a later one of the reader's:
                        # latent where a whole barrier phase lies between the load's issue and the read (HTI's
                        # offset), an error where the load was issued in the phase that ended here (as behind a
                        # barrier with no wait: the offset adds no elapsed time)
                        how = "visible"
                        if severity == "error" and apart and retired:
                            severity, how = ("latent", how) if seen.carried else (severity, "visible-offset")
                        self._cross(severity, read, seen.site, v, seen.wave, shared, how, cover, pair, trace, group)
                if concurrent:
                    self._against_phase_loads(records, v, read, lds, issued, "concurrent", trace, group,
                                              "s_waitcnt lgkmcnt(0) + s_barrier in wave {v} between its read and wave {w}'s load")
        if ("in-flight", loads) not in self.checked_loads:
            self.checked_loads.add(("in-flight", loads))
            for v, read, lds, issued in group.reads:
                self._against_phase_loads(records, v, read, lds, issued, "in-flight", trace, group,
                                          "s_waitcnt lgkmcnt(0) in wave {v} before its barrier at line {line}")
        self._check_writes(group, records, trace)

    def _check_writes(self, group: Group, records: list[PhaseRecord], trace: tuple) -> None:
        """The phase's reads against the other waves' DS writes that nothing orders with them:
        those of the same phase (either may come first: no barrier both pass lies between), and
        those a wave still had in flight at its last barrier or left behind when it ended; the
        reads still in flight at their wave's last barrier against the phase's writes. Each pair
        of a reading and a writing wave's records once per phase: another combination of end
        states finds the same pairs (the first trace is the one reported)."""
        before = group.waves
        for w, record in enumerate(records):
            checked = (w, self._content("writes", record))
            if not record.writes or checked in self.checked_writes:
                continue
            self.checked_writes.add(checked)
            for v, read, lds in self._in_flight_reads(group):
                if v == w:
                    continue
                cover = f"s_waitcnt lgkmcnt(0) in wave {v} before its barrier at line {self._line(before[v].barrier)}"
                for write, shared in self._overlapping_writes(record, lds, frozenset()):
                    self._write_race("warning", read, write, v, w, shared, "ds-in-flight", cover,
                                     self._pair_of(before, v, w), trace, group)
        for v, record in enumerate(records):
            if not record.reads:
                continue
            for w, other in enumerate(records):
                checked = (v, w, self._content("reads", record), self._content("writes", other))
                if w == v or not other.writes or checked in self.checked_writes:
                    continue
                self.checked_writes.add(checked)
                cover = f"s_waitcnt lgkmcnt(0) + s_barrier in wave {w} between its write and wave {v}'s read, or s_barrier between wave {v}'s read and wave {w}'s write"
                pair = self._pair_of(before, v, w)
                for read, prior, lds in self._reads_by_site(record):
                    if _is_anywhere(lds):
                        # a read of unknown address: only writes it means to see can be reported
                        # (undecided, once per read and wave); those that may overtake it need its address
                        noted = self.outcome.undecided.get(read)
                        if noted is not None and v in noted.waves:
                            continue
                        for write in sorted(prior & self._write_sites(other)):
                            self._write_race("error", read, write, v, w, ANYWHERE, "ds-concurrent", cover, pair, trace, group)
                        continue
                    for write, shared in self._overlapping_writes(other, lds, prior):
                        # after its own copy of the write, the read means to see it: an error;
                        # else the write may overtake a read of what the bytes held before
                        severity = "error" if write in prior else "warning"
                        self._write_race(severity, read, write, v, w, shared, "ds-concurrent", cover, pair, trace, group)
        for v, record in enumerate(records):
            checked = (v, self._content("reads", record))
            if not record.reads or not group.written or checked in self.checked_writes:
                continue
            self.checked_writes.add(checked)
            for w, write, write_lds in group.written:
                if v == w:
                    continue
                ended = before[w].ended
                cover = (f"s_waitcnt lgkmcnt(0) + s_barrier in wave {w} after its write, before it ends" if ended else
                         f"s_waitcnt lgkmcnt(0) in wave {w} before its barrier at line {self._line(before[w].barrier)}")
                pair = f"wave {w} ended without passing another barrier" if ended else self._pair_of(before, v, w)
                for read, _, lds in self._reads_by_site(record):
                    shared = _shared(lds, write_lds)
                    if shared:
                        self._write_race("error", read, write, v, w, shared, "ds-visible", cover, pair, trace, group)

    def _content(self, part: str, held) -> int:
        """One number for each distinct content of a record's part (or of a read's snapshots) in
        this phase: runs of a wave under other decisions often record the same, and a pair
        checked once needs no second check."""
        key = (part, id(held))
        number = self.content_numbers.get(key)
        if number is None:
            content = (part, _CONTENTS[part](held))
            number = self.content_numbers[key] = self.contents.setdefault(content, len(self.contents))
        return number

    def _pair_of(self, before: list[WaveAbs], v: int, w: int) -> str:
        return self._pair(v, before[v].barrier, w, before[w].barrier, _apart(before[v].at_barrier(), before[w].at_barrier()))

    def _in_flight_reads(self, group: Group) -> tuple:
        """(wave, read, bytes) of the reads in flight at the phase's start, the instances of one
        read in one wave as one set of bytes, once per phase."""
        cached = self.overlapping.get("in flight")
        if cached is None:
            grouped: dict[tuple, list] = {}
            for v, read, lds, _ in group.reads:
                grouped.setdefault((v, read), []).append(lds)
            cached = self.overlapping["in flight"] = tuple(
                (v, read, _union(parts)) for (v, read), parts in sorted(grouped.items()))
        return cached

    def _reads_by_site(self, record: PhaseRecord) -> tuple:
        """(read, the writes its wave issued before it, bytes) of a wave's reads in a phase, the
        bytes of the instances with the same prior writes as one set, once per record."""
        key = ("reads", id(record))
        cached = self.overlapping.get(key)
        if cached is None:
            grouped: dict[tuple, list] = {}
            for read, lds in record.reads:
                grouped.setdefault((read, record.prior.get((read, lds), frozenset())), []).append(lds)
            cached = self.overlapping[key] = tuple(
                (read, prior, _union(parts)) for (read, prior), parts in sorted(grouped.items(), key=lambda item: item[0][0]))
        return cached

    def _write_sites(self, record: PhaseRecord) -> frozenset:
        return frozenset(site for site, _ in self._writes_by_site(record)[1])

    def _overlapping_writes(self, record: PhaseRecord, lds: Ranges, meant: frozenset):
        """(write, shared bytes) of a wave's DS writes in a phase that may overlap ``lds``: the
        union of them all first (in a race-free phase it overlaps nothing), then each write; of
        unknown address only those of ``meant`` (writes the read means to see: undecided, where
        a write that may overtake the read needs the addresses)."""
        union, sites = self._writes_by_site(record)
        if not _shared(lds, union):
            return
        for write, written in sites:
            if _is_anywhere(written) and write not in meant:
                continue
            shared = _shared(lds, written)
            if shared:
                yield write, shared

    def _writes_by_site(self, record: PhaseRecord) -> tuple:
        """(the union of a wave's DS writes' bytes in a phase, (write, its bytes over all its
        instances) for each), once per record."""
        key = ("writes", id(record))
        cached = self.overlapping.get(key)
        if cached is None:
            by_site: dict[int, list] = {}
            for site, written in record.writes:
                by_site.setdefault(site, []).append(written)
            sites = tuple((site, _union(parts)) for site, parts in sorted(by_site.items()))
            union = _union([b for _, b in sites])
            cached = self.overlapping[key] = (union, sites)
        return cached

    def _write_race(self, severity, read, write, reader, writer, lds, how, cover, pair, trace, group) -> None:
        """An error: the read means to see the write (the reader issued its own copy first, or
        the write was in flight at a barrier before the read); a warning: the write may overtake
        a read of what the bytes held before, which only the time the writer takes orders."""
        seen = (severity, read, write, reader, writer, lds, how, group.merged)
        if seen in self.paired:
            return
        self.paired.add(seen)
        if _is_anywhere(lds):
            # as for refills, an overtaking write needs the addresses to be told from one that cannot
            if severity == "warning":
                return
            item = self.outcome.undecided.setdefault(read, Unchecked(read, set(), (
                f"{UNKNOWN_WRITE}, and wave {writer}'s DS write at line {self._line(write)} is not ordered with this "
                f"read of wave {reader}: the pair was not decided")))
            item.waves.add(reader)
            item.merged.update(self.outcome.merged)
            return
        self.outcome.hazards.append(Hazard(severity, read, write, reader, writer, lds, how, cover, pair, trace, group.merged))

    def _against_phase_loads(self, records, v, read, lds, issued, how, trace, group, refill_cover: str) -> None:
        """A read of wave ``v`` against the other waves' loads of this phase: nothing orders them."""
        before = group.waves
        for w, record in enumerate(records):
            if w == v or not record.loads:
                continue
            loads = self._content("loads", record)
            checked = (how, v, read, lds, self._content("issued", issued), w, loads)
            if checked in self.checked_loads:
                continue
            self.checked_loads.add(checked)
            overlapping = self.overlapping.get((loads, lds))
            if overlapping is None:
                overlapping = self.overlapping[(loads, lds)] = tuple(_overlapping_loads(record, lds))
            if not overlapping:
                continue
            pair = self._pair(v, before[v].barrier, w, before[w].barrier, _apart(before[v].at_barrier(), before[w].at_barrier()))
            for load, shared, count in overlapping:
                shared = ANYWHERE if _is_anywhere(lds) else shared
                for severity in _weights(issued, load, count):
                    # the same pair again, from another combination of end states or decisions:
                    # it would add nothing to the finding (its first trace is the one reported)
                    seen = (severity, read, load, v, w, shared, how, before[v].barrier, refill_cover, group.merged)
                    if seen in self.paired:
                        continue
                    self.paired.add(seen)
                    cover = (f"s_waitcnt vmcnt(0) + s_barrier in wave {w} between its load and wave {v}'s read"
                             if severity == "error" else refill_cover.format(v=v, w=w, line=self._line(before[v].barrier)))
                    self._cross(severity, read, load, v, w, shared, how, cover, pair, trace, group)

    def _cross(self, severity, read, load, reader, writer, lds, how, cover, pair, trace, group) -> None:
        if _is_anywhere(lds):
            # a read of unknown address: a load it would mean to see may write it (unchecked); a
            # refill it may overtake needs its address to be told apart from one that cannot
            if severity != "warning":
                self._unknown(read, reader, load, writer)
            return
        self.outcome.hazards.append(Hazard(severity, read, load, reader, writer, lds, how, cover, pair, trace, group.merged))

    def _line(self, index: int) -> int:
        return self.code[index].line if index >= 0 else 0

    def _pair(self, v: int, v_barrier: int, w: int, w_barrier: int, apart: bool) -> str:
        if v_barrier < 0 and w_barrier < 0:
            return "no barrier before either"
        if not apart:
            return f"both waves last passed the barrier at line {self._line(v_barrier)}"
        if v_barrier == w_barrier:
            return (f"waves {v} and {w} last passed the barrier at line {self._line(v_barrier)} in different iterations: "
                    f"the waves run a barrier phase apart")
        return (f"wave {v} last passed the barrier at line {self._line(v_barrier)}, paired with wave {w}'s at line "
                f"{self._line(w_barrier)}: the waves run a barrier phase apart")


# ---- state helpers ----------------------------------------------------------------------------

# what each part of a phase record holds, as a value to compare (see KernelAnalysis._content)
_CONTENTS = {
    "issued": frozenset,  # a read's snapshots of its wave's issue counts
    "snapshots": lambda record: frozenset((read, frozenset(issued)) for read, issued in record.reads.items()),
    "reads": lambda record: (frozenset(record.reads), frozenset(record.prior.items())),
    "loads": lambda record: frozenset(record.loads),
    "writes": lambda record: frozenset(record.writes),
}


def _is_anywhere(lds: Ranges) -> bool:
    """Whether ``lds`` stands for a read of unknown address."""
    return lds == ANYWHERE


def _union(parts: list[Ranges]) -> Ranges:
    """The bytes of several accesses as one set: ANYWHERE when any address is unknown."""
    if len(parts) == 1:
        return parts[0]
    if any(map(_is_anywhere, parts)):
        return ANYWHERE
    return merge_ranges([r for b in parts for r in b])


def _shared(a: Ranges, b: Ranges) -> Ranges:
    """The bytes two accesses may share: ANYWHERE when either address is unknown."""
    if _is_anywhere(a) or _is_anywhere(b):
        return ANYWHERE
    return overlap(a, b)


def _final_count(wave: WaveAbs, site: int, lds: Ranges) -> int | None:
    return next((count for load, load_lds, count in wave.final if (load, load_lds) == (site, lds)), None)


def _weights(snapshots, load: int, count: int) -> set[str]:
    """For an unordered load instance and the instances of a read: "error" where the reading wave
    issued its own copy of that load instance (or a later one) before the read, so the program
    means the read to see it (every wave runs the same code); "warning" where it did not, so the
    load refills bytes the read means to see as they were."""
    weights = set()
    for snapshot in snapshots:
        mine = _issue_counts(snapshot).get(load)
        same = mine is not None and (mine >= count or UNKNOWN_COUNT in (mine, count))
        weights.add("error" if same else "warning")
        if len(weights) == 2:
            break
    return weights


@functools.lru_cache(maxsize=1 << 16)
def _issue_counts(snapshot: frozenset) -> dict[int, int]:
    """A read's snapshot of its wave's issue counts, by load site (snapshots recur: read once)."""
    return dict(snapshot)


def _overlapping_loads(record: PhaseRecord, lds: Ranges):
    """(load, shared bytes, issue count) of a wave's loads in a phase that overlap ``lds``."""
    for load, load_lds, count in record.loads:
        shared = overlap(lds, load_lds)
        if shared:
            yield load, shared, count


def _dead_vector_results(kernel: Kernel, live: list[int]) -> list[tuple | None]:
    """Per instruction, for a VALU instruction that writes vector registers only, none of which
    the program can read again on the way to an LDS address, M0, exec or a branch (MFMA, floating
    point, data moves): the registers it writes, to forget instead of computing them (what it
    writes is unknown, as the model would take it at the next rendezvous anyway); else None."""
    code = kernel.instructions
    out = []
    for i, inst in enumerate(code):
        if not inst.mnemonic.startswith("v_") or inst.mnemonic.startswith(("v_cmp", "v_readlane", "v_readfirstlane")):
            out.append(None)
            continue
        defs = uses_and_defs(inst)[1]
        after = live[i + 1] if i + 1 < len(code) else 0
        scalar = defs & ((1 << 256) - 1) or defs >> SCC & 1
        dead = bool(defs) and not scalar and not defs & after
        op = decode(inst.operands[0]) if dead and inst.operands else None
        # what to forget: (vector or accumulator, the registers of its destination)
        out.append((op.kind == "v", tuple(range(op.index, op.index + op.count)))
                   if isinstance(op, Reg) and op.kind in ("v", "a") else () if dead else None)
    return out


def _forget_result(regs: WaveState, dead: tuple) -> None:
    if not dead:
        return
    vector, indices = dead
    table = regs.vgpr if vector else regs.agpr
    for index in indices:
        table.pop(index, None)
        if vector:
            regs.active_v.pop(index, None)
    if vector:
        regs.uniform_v.difference_update(indices)


def _memo(decisions: dict) -> frozenset:
    """A phase's uniform decisions as (branch, uniform key) -> taken, less those it took both ways."""
    seen: dict[tuple, set[bool]] = {}
    for (pc, _, key), taken in decisions.items():
        seen.setdefault((pc, key), set()).add(taken)
    return frozenset((key, taken.pop()) for key, taken in seen.items() if len(taken) == 1)


def _remember(waves: list[WaveAbs], previous: frozenset, latest: frozenset) -> tuple[frozenset, frozenset]:
    """The decisions a state remembers: none where every running wave is at the same rendezvous
    (no wave is behind another to take a branch the others took)."""
    if len({w.at_barrier() for w in waves if not w.ended}) <= 1:
        return frozenset(), frozenset()
    return previous, latest


def _keep(finals: dict[int, WaveAbs], wave: WaveAbs) -> None:
    """Keep one final state per end point of the phase, joining the paths that end there."""
    end = -1 if wave.ended else wave.pc
    finals[end] = wave if end not in finals else _join_waves(finals[end], wave)


def _loops(kernel: Kernel) -> list[tuple[int, int]]:
    """(head, back edge) of every loop: a branch to an instruction at or before it."""
    loops = []
    for inst in kernel.instructions:
        if inst.mnemonic.startswith(("s_branch", "s_cbranch")) and inst.operands:
            target = kernel.labels.get(inst.operands[0])
            if target is not None and target <= inst.index:
                loops.append((target, inst.index))
    return loops


_BELOW = {"lt": (0, False), "le": (1, False), "gt": (1, True), "ge": (0, True)}


def _single_definitions(kernel: Kernel) -> set[int]:
    """SGPRs that one instruction of the kernel writes, and no other."""
    writers: dict[int, int] = {}
    for inst in kernel.instructions:
        defs = uses_and_defs(inst)[1]
        for index in range(106):
            if defs >> index & 1:
                writers[index] = writers.get(index, 0) + 1
    return {index for index, count in writers.items() if count == 1}


def _consistent(waves: list[WaveAbs], shared: set[int]) -> bool:
    """False when waves learnt contradicting things of one uniform register from branches they
    decided (a trip count that would be two numbers at once, a kernel argument both zero and not):
    no run takes that combination. Across waves only for registers written once in the kernel
    (``shared``): only those hold one value in every wave."""
    learnt: dict[int, int | Affine] = {}
    for w in waves:
        for index in w.regs.assumed & shared:
            value = w.regs.sgpr.get(index)
            if value is None:
                continue
            other = learnt.setdefault(index, value)
            if other != value and _join_scalar(other, value) is None:
                return False
    if any(learnt.get(index) in values for w in waves for index, values in w.regs.unequal.items() if index in shared):
        return False
    if any(w.regs.sgpr.get(index) in values for w in waves for index, values in w.regs.unequal.items()
           if index in w.regs.assumed):
        return False
    # bounds: each wave's own, and a kernel argument's from every wave together
    merged: dict[int, dict] = {}
    for w in waves:
        for index, bounds in w.regs.bounds.items():
            if contradicts(bounds, w.regs.sgpr.get(index) if index in w.regs.assumed else None):
                return False
            if index not in shared:
                continue
            mine = merged.setdefault(index, {})
            for key, bound in bounds.items():
                kind = key[0]
                old = mine.get(key)
                if old is None or (_bound_base(bound) < _bound_base(old) if kind == "lt" else _bound_base(bound) > _bound_base(old)):
                    mine[key] = bound
    return not any(contradicts(bounds, learnt.get(index)) for index, bounds in merged.items())


def _bound_base(value) -> int:
    return value if isinstance(value, int) else value.base


_SELECTS = frozenset({"s_cselect_b32", "s_cselect_b64"})


def _selects_known_values(regs: WaveState, inst) -> bool:
    """Whether a select's two sources are known and differ: only then does deciding SCC tell more
    than their join."""
    if len(inst.operands) < 3:
        return False
    if inst.mnemonic == "s_cselect_b64":
        a, b = regs.read_scalar64(inst.operands[1]), regs.read_scalar64(inst.operands[2])
    else:
        a, b = regs.read(inst.operands[1]).scalar(), regs.read(inst.operands[2]).scalar()
    return a is not None and b is not None and a != b


def _uniform(regs: WaveState, branch: str) -> bool:
    """Whether every wave at this point takes the branch alike (its condition is uniform)."""
    if branch.endswith(("scc0", "scc1")):
        return not regs.scc_nonuniform
    if branch.endswith(("vccz", "vccnz")):
        return VCC_LO not in regs.nonuniform and VCC_LO + 1 not in regs.nonuniform
    return False


def _condition(regs: WaveState, condition: str) -> bool | None:
    if condition in ("scc0", "scc1"):
        return None if regs.scc is None else regs.scc == (condition == "scc1")
    if condition in ("vccz", "vccnz"):
        vcc = regs.sgpr64(VCC_LO)
        return None if vcc is None else (vcc == 0) == (condition == "vccz")
    if condition in ("execz", "execnz"):
        mask = regs.exec_mask
        return None if mask is None else (mask == 0) == (condition == "execz")
    return None


def _joined_by_visits(batch: list[tuple[WaveAbs, dict]]) -> list[tuple[WaveAbs, dict]]:
    """The states of a batch at one exec-mask branch joined into one per set of branch visits.
    The paths of structured divergence (LLVM's if/else of a per-lane condition, each side
    skipped when no lane takes it) differ only in what each side issued; a run of such
    regions (MLA decode's gather: 16 loads or zero fills) would otherwise double them at each."""
    groups: dict[tuple, tuple[list[WaveAbs], dict]] = {}
    for wave, visits in batch:
        groups.setdefault(tuple(sorted(visits.items())), ([], visits))[0].append(wave)
    out = []
    for waves, visits in groups.values():
        joined = waves[0]
        for wave in waves[1:]:
            joined = _join_waves(joined, wave)
        if len(waves) > 1:
            _mark_divergent(joined.regs, [w.regs for w in waves])
        out.append((joined, visits))
    return out


def _mark_divergent(joined: WaveState, sides: list[WaveState]) -> None:
    """What the sides of a per-lane branch left different may differ between waves (one wave
    skipped a side another ran): not uniform, so no branch on it is decided for all waves alike."""
    for index in set().union(*(side.sgpr for side in sides)):
        if len({repr(side.sgpr.get(index)) for side in sides}) > 1:
            joined.nonuniform.add(index)
    if len({side.scc for side in sides}) > 1:
        joined.scc_nonuniform = True
    joined.uniform_v = {index for index in joined.uniform_v
                        if all(side.vgpr.get(index) is sides[0].vgpr.get(index) for side in sides)}


def _join_waves(a: WaveAbs, b: WaveAbs) -> WaveAbs:
    out = a.copy()
    out.regs = _join_registers(a.regs, b.regs)
    out.phase_writes = a.phase_writes | b.phase_writes
    for mine, theirs in ((out.vm, b.vm), (out.ds, b.ds)):
        for entry, younger in theirs.items():
            _add(mine, entry, younger)
    for site in set(a.issued) | set(b.issued):
        if a.issued.get(site, 0) != b.issued.get(site, 0):
            out.issued[site] = UNKNOWN_COUNT
    for site in set(a.passed) | set(b.passed):
        if a.passed.get(site, 0) != b.passed.get(site, 0):
            out.passed[site] = UNKNOWN_COUNT
    return out


def _relative_counts(waves: list[WaveAbs]) -> tuple[list[WaveAbs], dict[int, int]]:
    """Issue and barrier counts less the fewest of any running wave: what tells instances apart,
    and finite. Returns the waves and what was taken off each load's count (for counts kept
    elsewhere: the reads in flight, an ended wave's last loads)."""
    running = [w for w in waves if not w.ended]
    out = []
    for w in waves:
        w = w.copy()
        if w.ended:
            w.issued, w.passed = {}, {}
        out.append(w)
    shifts: dict[str, dict[int, int]] = {}
    # loads with an instance still in flight somewhere, or among an ended wave's last ones
    pending = {site for w in waves for site, _ in w.vm} | {site for w in waves for site, _, _ in w.final}
    for table in ("issued", "passed"):
        shift = shifts[table] = {}
        for site in {site for w in running for site in getattr(w, table)}:
            counts = [getattr(w, table).get(site, 0) for w in running]
            fewest = min((c for c in counts if c != UNKNOWN_COUNT), default=0)
            # a load every wave issued keeps count 1, not 0: "issued" stays told apart from
            # "never" while an instance of it may still pair. With none in flight and every wave at
            # one count, the next instance pairs alike either way: the count is forgotten (else
            # the loads of every region a path once took would tell states apart forever)
            forget = site not in pending and all(c == fewest for c in counts)
            shift[site] = fewest = fewest - 1 if table == "issued" and fewest > 0 and not forget else fewest
            for w in out:
                counts_of = getattr(w, table)
                if w.ended or site not in counts_of or counts_of[site] == UNKNOWN_COUNT:
                    continue
                counts_of[site] -= fewest
                if counts_of[site] == 0:
                    del counts_of[site]
    for w in out:
        if w.ended and w.final:
            w.final = frozenset((site, lds, _shifted(count, site, shifts["issued"])) for site, lds, count in w.final)
    return out, shifts["issued"]


def _shifted(count: int, site: int, shift: dict[int, int]) -> int:
    return count if count == UNKNOWN_COUNT else count - shift.get(site, 0)


def _shifted_snapshot(snapshot: frozenset, shift: dict[int, int]) -> frozenset:
    """A read's issue counts, shifted as the waves' were. A count shifted to 0 or below is one
    older than any instance that can still pair with the read: it reads as never issued."""
    if not shift:
        return snapshot
    return frozenset((load, _shifted(count, load, shift)) for load, count in snapshot
                     if count == UNKNOWN_COUNT or count > shift.get(load, 0))


def _apart(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two waves' last barriers are different rendezvous points of the program (a
    different barrier, or the same one a known number of times apart). Unknown counts (joined
    paths) are taken as aligned: that keeps a finding an error rather than making it latent."""
    if a[0] != b[0]:
        return True
    return UNKNOWN_COUNT not in (a[1], b[1]) and a[1] != b[1]


def _join_groups(a: Group, b: Group) -> Group:
    """Two workgroup states at the same barriers as one: every behaviour of either."""
    waves = [_join_waves(x, y) for x, y in zip(a.waves, b.waves)]
    for w, x, y in zip(waves, a.waves, b.waves):
        w.final = x.final | y.final
    line = f"the workgroup states at these barriers were joined after {STATES_PER_POINT} of them"
    memo = tuple(x & y for x, y in zip(a.memo, b.memo))
    return Group(waves, a.visible | b.visible, a.reads | b.reads, a.written | b.written, b.trace, {}, b.decided,
                 (b.merged + (line,))[-3:], memo)


def _closest(bucket: list[Group], group: Group) -> Group:
    """The state of ``bucket`` whose folded (affine) registers are those of ``group``: joining with
    it keeps them, where joining with any other would lose the loop's iteration count."""
    def folded(g: Group) -> tuple:
        return tuple(frozenset((i, v.step, v.symbol) for i, v in w.regs.sgpr.items() if isinstance(v, Affine))
                     for w in g.waves)

    mine = folded(group)
    return next((old for old in reversed(bucket) if folded(old) == mine), bucket[-1])


def _join_scalar(a: int | Affine | None, b: int | Affine | None) -> int | Affine | None:
    """Equal values stay; an affine value that covers the other (one of its iterations) stays."""
    if a == b:
        return a
    for cover, other in ((a, b), (b, a)):
        if isinstance(cover, Affine) and cover.fuzz == 0:
            base = other.base if isinstance(other, Affine) and (other.step, other.symbol, other.fuzz) == (
                cover.step, cover.symbol, 0) else other if isinstance(other, int) else None
            if base is not None and _affine_offset(cover.base, cover.step, base) is not None:
                return cover
    return None


def _join_registers(a: WaveState, b: WaveState) -> WaveState:
    out = WaveState(a.width)
    for index in set(a.sgpr) & set(b.sgpr):
        value = _join_scalar(a.sgpr[index], b.sgpr[index])
        if value is not None:
            out.sgpr[index] = value
    for mine, x, y in ((out.vgpr, a.vgpr, b.vgpr), (out.agpr, a.agpr, b.agpr)):
        for index in set(x) & set(y):
            mine[index] = x[index] if x[index] is y[index] else join_lanes(x[index], y[index])
    out.scc = a.scc if a.scc == b.scc else None
    out.masks = {i: m for i, m in a.masks.items() if b.masks.get(i) == m}
    out.active_v = {i: (mask, v) for i, (mask, v) in a.active_v.items()
                    if i in b.active_v and b.active_v[i][0] == mask and b.active_v[i][1].key() == v.key()}
    out.nonuniform = a.nonuniform | b.nonuniform
    out.uniform_v = a.uniform_v & b.uniform_v
    out.assumed = {i for i in a.assumed & b.assumed if i in out.sgpr}
    out.scc_nonuniform = a.scc_nonuniform or b.scc_nonuniform
    return out


def _signed_differences(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """``new - old`` lane by lane, as signed 32-bit values (the vector form of :func:`_signed32`)."""
    return (new - old + (1 << 31)) % (1 << 32) - (1 << 31)


def _signed32(value: int) -> int:
    value &= MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def _alternates(regs: WaveState, first: WaveState, second: WaveState) -> bool:
    """Whether the registers of ``regs`` that did not grow by one step from ``first`` through
    ``second`` are as in ``first`` and some differ from ``second``: a loop over a two-stage ring
    whose stages swap registers (MLA decode's LDS bases and M0). Folded two iterations apart,
    its state closes after two more instead of :data:`PERIOD`; a stage computed from the counter
    (``k mod 3``) alternates nothing, and keeps the period of 12."""
    differs = False
    for index in set(regs.sgpr) | set(first.sgpr) | set(second.sgpr):
        a, b, c = first.sgpr.get(index), second.sgpr.get(index), regs.sgpr.get(index)
        if c is None or (c == a and c == b):  # an unknown value stays unknown folded
            continue
        if isinstance(a, int) and isinstance(b, int) and isinstance(c, int) and _signed32(c - b) == _signed32(b - a):
            continue
        if c != a:
            return False
        differs = True
    for table, firsts, seconds in ((regs.vgpr, first.vgpr, second.vgpr), (regs.agpr, first.agpr, second.agpr)):
        for index in set(table) | set(firsts) | set(seconds):
            a, b, c = firsts.get(index), seconds.get(index), table.get(index)
            keys = [x.key() if x is not None and (x.known.any() or x.has_affine) else None for x in (a, b, c)]
            if keys[2] is None or keys[2] == keys[0] == keys[1]:
                continue
            if keys[2] != keys[0]:
                if a is None or b is None or c is None or c.has_affine or a.has_affine or b.has_affine:
                    return False
                step, previous = _signed_differences(c.values, b.values), _signed_differences(b.values, a.values)
                known = c.known & a.known & b.known
                if not (np.array_equal(c.known, a.known) and np.array_equal(c.known, b.known) and (step == previous)[known].all()):
                    return False
                continue
            differs = True
    return differs


def _fold_registers(regs: WaveState, first: WaveState, second: WaveState, symbol: int, period: int = PERIOD) -> bool:
    """Make affine, ``period`` steps apart, the registers of ``regs`` that grew by one step from
    ``first`` to ``second`` to ``regs``; True when one did."""
    changed = False
    for index, value in list(regs.sgpr.items()):
        a, b = first.sgpr.get(index), second.sgpr.get(index)
        if isinstance(value, int) and isinstance(a, int) and isinstance(b, int):
            step = _signed32(value - b)
            if step and step == _signed32(b - a):
                regs.sgpr[index] = Affine(value, period * step, symbol)
                changed = True
    for table, firsts, seconds in ((regs.vgpr, first.vgpr, second.vgpr), (regs.agpr, first.agpr, second.agpr)):
        for index, lanes in list(table.items()):
            a, b = firsts.get(index), seconds.get(index)
            if a is None or b is None or lanes is b or a is b or lanes.has_affine or a.has_affine or b.has_affine:
                continue
            known = lanes.known & a.known & b.known
            step, previous = _signed_differences(lanes.values, b.values), _signed_differences(b.values, a.values)
            grows = known & (step != 0) & (step == previous)
            if not grows.any():
                continue
            table[index] = Lanes(lanes.values.copy(), lanes.known & ~grows, np.where(grows, period * step, 0), grows, symbol)
            changed = True
    return changed


def _wave_covers(old: WaveAbs, new: WaveAbs) -> bool:
    """Within a phase: whether ``new`` adds nothing to ``old`` (its counts included)."""
    for site in set(old.issued) | set(new.issued):
        if old.issued.get(site, 0) not in (new.issued.get(site, 0), UNKNOWN_COUNT):
            return False
    return _registers_cover(old.regs, new.regs, {})


def _wave_subsumes(old: WaveAbs, new: WaveAbs) -> bool:
    """Within a phase, for states of any shape: whether ``new`` adds nothing to ``old``. Every
    load and read ``new`` has in flight ``old`` has too, with no more younger operations (it
    stays in flight at least as long); the rest as :func:`_wave_covers`."""
    for mine, theirs in ((old.vm, new.vm), (old.ds, new.ds)):
        if any(mine.get(entry, younger + 1) > younger for entry, younger in theirs.items()):
            return False
    return old.passed == new.passed and old.final == new.final and _wave_covers(old, new)


def _subsumes(old: Group, new: Group) -> bool:
    """Whether every behaviour of ``new`` is one of ``old``'s (their shapes are equal)."""
    offsets: dict[int, int] = {}
    for a, b in zip(old.waves, new.waves):
        if not _registers_cover(a.regs, b.regs, offsets):
            return False
    return True


def _affine_offset(base_a: int, step: int, base_b: int) -> int | None:
    """The J at which ``base_a + step*J`` equals ``base_b``, when it is a natural number."""
    if step == 0:
        return 0 if base_a == base_b else None
    diff = _signed32(base_b - base_a)
    if diff % step or diff // step < 0:
        return None
    return diff // step


def _embedding(old: Affine, new: Affine) -> tuple | None:
    """How ``new``'s values sit among ``old``'s: (k, m, new symbol) with ``old`` at ``J = k + m J'``
    equal to ``new`` at ``J'``, for naturals k and m; None when they do not all."""
    if old.step == 0:
        return None
    k = _affine_offset(old.base, old.step, new.base)
    if k is None or new.step % old.step or new.step // old.step < 0:
        return None
    m = new.step // old.step
    return k, m, new.symbol if m else 0


def _agree(offsets: dict[int, object], symbol: int, k) -> bool:
    """Whether one symbol of the covering state maps alike for every register that uses it."""
    if k is None:
        return False
    return offsets.setdefault(symbol, k) == k


def _registers_cover(a: WaveState, b: WaveState, offsets: dict[int, int]) -> bool:
    if a.scc is not None and a.scc != b.scc:
        return False
    if not a.uniform_v <= b.uniform_v:  # a wave-uniform vector value is a fact that narrows a state
        return False
    # what a decided branch ruled out narrows a state: the covering one may rule out no more
    if any(not values <= b.unequal.get(index, frozenset()) for index, values in a.unequal.items()):
        return False
    if any(not bounds.items() <= b.bounds.get(index, {}).items() for index, bounds in a.bounds.items()):
        return False
    if any(b.masks.get(index) != mask for index, mask in a.masks.items()):
        return False
    for index, (mask, value) in a.active_v.items():
        other = b.active_v.get(index)
        if other is None or other[0] != mask or other[1].key() != value.key():
            return False
    for index, value in a.sgpr.items():
        if value is None:
            continue
        other = b.sgpr.get(index)
        if value == other:
            continue
        if not isinstance(value, Affine):
            return False
        if isinstance(other, Affine):
            if other.fuzz != value.fuzz or not _agree(offsets, value.symbol, _embedding(value, other)):
                return False
        elif not (isinstance(other, int) and value.fuzz == 0
                  and _agree(offsets, value.symbol, _embedding(value, Affine(other, 0, 0)))):
            return False
    for mine, theirs in ((a.vgpr, b.vgpr), (a.agpr, b.agpr)):
        for index, lanes in mine.items():
            other = theirs.get(index)
            if other is lanes:
                continue
            if not (lanes.known.any() or lanes.has_affine):
                continue
            if other is None or not _lanes_cover(lanes, other, offsets):
                return False
    return True


def _lanes_cover(a: Lanes, b: Lanes, offsets: dict[int, object]) -> bool:
    if not (b.known[a.known].all() and (a.values[a.known] == b.values[b.known & a.known]).all()):
        return False
    if not a.has_affine:
        return True
    lanes = a.affine
    if not (b.has_affine and b.fuzz == a.fuzz and b.affine[lanes].all()):
        return False
    step, other_step = a.step[lanes], b.step[lanes]
    diff = _signed_differences(b.values[lanes], a.values[lanes])
    if (diff % step).any() or (other_step % step).any():
        return False
    ks, ms = set((diff // step).tolist()), set((other_step // step).tolist())
    if len(ks) != 1 or len(ms) != 1 or min(ks) < 0 or min(ms) < 0:
        return False
    m = ms.pop()
    return _agree(offsets, a.symbol, (ks.pop(), m, b.symbol if m else 0))


def analyse(kernel: Kernel, geometry: Geometry, target: Target, deadline: float) -> Outcome:
    """The hazards, unchecked accesses and unmodelled instructions of one kernel."""
    if _nothing_to_pair(kernel):
        return _waits_only(kernel, geometry, target)
    return KernelAnalysis(kernel, geometry, target, deadline).run()


def _nothing_to_pair(kernel: Kernel) -> bool:
    """Whether the kernel has no global->LDS load, no DS write together with an LDS read, and no
    way to reach code that may have them (an indirect branch, a branch out of the kernel): every
    hazard the lint reports pairs a read with a load or a DS write, so there is nothing to pair
    and nothing to follow."""
    kinds = {classify(inst) for inst in kernel.instructions}
    if "dma" in kinds or {"ds_read", "ds_write"} <= kinds:
        return False
    for inst in kernel.instructions:
        name = inst.mnemonic
        if name.startswith(("s_setpc", "s_swappc")):
            return False
        if (name == "s_branch" or name.startswith("s_cbranch")) and kernel.labels.get(inst.operands[0] if inst.operands else "") is None:
            return False
    return True


def _waits_only(kernel: Kernel, geometry: Geometry, target: Target) -> Outcome:
    """The outcome of a kernel without global->LDS loads: no hazard; a wait its target cannot
    encode is still unchecked, as the analysis would flag it in every wave that reaches it."""
    outcome = Outcome()
    for inst in kernel.instructions:
        if classify(inst) == "wait":
            problem = target.wait_problem(*parse_waitcnt(inst))
            if problem:
                for wave in range(geometry.waves):
                    outcome.flag(inst.index, wave, problem)
    return outcome
