"""The lint's analysis: a fixed point over one workgroup's barrier phases, not over its paths.

A *phase* is what the waves of a workgroup do between two rendezvous: each wave runs from the
barrier it passed last to its next ``s_barrier`` (or its end). The analysis explores abstract
workgroup states, one per rendezvous, each holding per wave

* its registers (:class:`.semantics.WaveState`: exact values per lane, affine values of a folded
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
(``P`` = :data:`.phase_states.PERIOD`) for an unknown ``J``: the state then stands for every iteration ``P``
apart, so after ``P`` more iterations the next one is subsumed. Stage indices ``k mod N`` for
``N`` dividing ``P`` stay exact (:mod:`.affine`); anything else that depends on ``J`` is unknown.

Branches on values the model does not know are explored both ways. Scalar conditions (SCC, VCC)
are taken the same way by every wave of a phase, as kernel arguments are uniform over a
workgroup; exec-mask conditions are per wave. Where more than :data:`.phase_states.STATES_PER_BRANCH` states
reach one branch within a phase, they are joined (values that differ become unknown), and where a
phase recurs more than :data:`.phase_states.STATES_PER_PHASE` times without being subsumed, its registers are
joined with the previous ones: the analysis ends on every kernel.

Direction of every approximation: joins, folding and both-way branches only add behaviours
(the concrete run is always among those analysed), so hazards are over-reported, never missed;
an LDS address that becomes unknown is an ``unchecked`` finding, never a silent pass. Findings
reached through a join say so. The exceptions are documented in docs/lint.md (uniform scalar
branches, no 32-bit wraparound of folded values).
"""

from __future__ import annotations

import itertools
import time
from collections import deque

from .asm import Kernel
from .findings import wave_list
from .instructions import classify, parse_waitcnt
from .kernel_facts import SELECTS, KernelFacts
from .lattice import join_scalar
from .lds_ranges import Ranges
from .liveness import is_live, scc_live
from .phase_states import (
    UNKNOWN_COUNT,
    Group,
    LoopSymbols,
    NeedDecision,
    Outcome,
    OutOfTime,
    PhaseRecord,
    Visible,
    Walk,
    WaveAbs,
    relative_counts,
    shifted_snapshot,
)
from .phase_walk import PhaseWalker
from .rendezvous import RendezvousChecker
from .state_space import StateSpace
from .targets import Target
from .values import Affine, bound_base, contradicts
from .workgroup import Geometry, initial_state


class KernelAnalysis:
    """The fixed point of one kernel's workgroup; :meth:`run` returns its :class:`Outcome`. Its
    parts: the kernel's static facts (:mod:`.kernel_facts`), the states seen (:mod:`.state_space`),
    each wave through a phase (:mod:`.phase_walk`), the hazards between waves at a rendezvous
    (:mod:`.rendezvous`)."""

    def __init__(self, kernel: Kernel, geometry: Geometry, target: Target, deadline: float):
        self.geometry = geometry
        self.deadline = deadline
        self.facts = KernelFacts(kernel, target)
        self.outcome = Outcome()
        symbols = LoopSymbols()
        self.states = StateSpace(self.facts.code, self.outcome, symbols)
        self.walker = PhaseWalker(self.facts, target, deadline, self.outcome, symbols, self._decision)
        self.checker = RendezvousChecker(self.facts, self.outcome)
        self.memo: dict[tuple, bool] = {}  # the state's remembered uniform decisions (Group.memo)
        self.stopped: dict[int, list[tuple[tuple, Walk]]] = {}

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
                    admitted = self.states.admit(successor)
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
        self.checker.start_phase()
        self.walker.aligned = _aligned(group.waves)
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

    def _run_phase(
        self, group: Group, decisions: dict, runs: list[list]
    ) -> tuple[list[list[WaveAbs]], list[PhaseRecord]]:
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
                stopped = [
                    walk
                    for key, walk in self.stopped.get(index, ())
                    if self._decision(key, decisions) is not None and self._agrees(walk.read, decisions)
                ]
                walk = max(stopped, key=lambda w: len(w.read)).resumed() if stopped else None
                forks = self.stopped.setdefault(index, [])
                try:
                    ends, record, read = self.walker.run_wave(wave, decisions, walk, forks)
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
        code = self.facts.code
        decided = [
            f"select line {code[pc].line} {'SCC 1' if taken else 'SCC 0'}"
            if code[pc].mnemonic in SELECTS
            else f"branch line {code[pc].line} {'taken' if taken else 'not taken'}"
            for (pc, _, _), taken in sorted(decisions.items(), key=lambda item: item[0][:2])
        ]
        split = self._split_decisions(decisions)
        memo = _memo(decisions)
        for combo in itertools.product(*finals):
            waves = list(combo)
            if all(w.ended for w in waves) and all(g.ended for g in group.waves):
                continue
            if not _consistent(waves, self.facts.single_defs):
                continue
            waves = self._share_facts(waves)
            trace = (group.trace + tuple(decided) + (self._barrier_words(waves),))[-8:]
            self.checker.check_phase(group, waves, records, trace)
            if all(w.ended for w in waves):
                continue
            before = {(v, site, lds): issued for v, site, lds, issued in group.reads}
            snapshots = {
                (v, site, lds): record.reads.get((site, lds), before.get((v, site, lds), ()))
                for v, (w, record) in enumerate(zip(waves, records))
                for site, lds in w.ds
                if self.facts.kinds[site] == "ds_read"
            }
            written = self._written(group, waves, records)
            for w, old, record in zip(waves, group.waves, records):
                if w.ended and not old.ended:
                    w.final = frozenset(record.loads)
            waves, shift = relative_counts(waves)
            waves = [self._forget_dead(w) for w in waves]
            fresh = [{(site, lds) for site, lds, _ in record.loads} for record in records]
            visible = frozenset(
                Visible(
                    w.wave,
                    site,
                    lds,
                    younger,
                    *w.at_barrier(),
                    _final_count(w, site, lds),
                    w.issued.get(site, 0),
                    (site, lds) not in fresh[w.wave],
                )
                for w in waves
                for (site, lds), younger in w.vm.items()
            )
            reads = frozenset(
                (v, site, lds, frozenset(shifted_snapshot(snapshot, shift) for snapshot in issued))
                for (v, site, lds), issued in snapshots.items()
            )
            yield Group(
                waves,
                visible,
                reads,
                written,
                trace,
                dict(group.history),
                group.decided + len(decisions),
                (group.merged + split)[-3:] if split and split[0] not in group.merged else group.merged,
                _remember(waves, group.memo[1], memo),
            )

    def _written(self, group: Group, waves: list[WaveAbs], records: list[PhaseRecord]) -> frozenset:
        """The DS writes unordered with what the other waves do after this rendezvous: those a
        running wave still has in flight (no lgkmcnt wait retired them before its barrier), and
        every write of an ended wave's last phase (it passes no barrier after them)."""
        out = {entry for entry in group.written if group.waves[entry[0]].ended}
        for w, old, record in zip(waves, group.waves, records):
            if not w.ended:
                out.update((w.wave, site, lds) for site, lds in w.ds if self.facts.kinds[site] == "ds_write")
            elif not old.ended:
                out.update((w.wave, site, lds) for site, lds in record.writes)
        return frozenset(out)

    def _forget_dead(self, wave: WaveAbs) -> WaveAbs:
        """The wave without the registers its program cannot read again from here."""
        if wave.ended or wave.pc >= len(self.facts.code):
            return wave
        live = self.facts.live[wave.pc]
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
        regs.uniform_lanes = {i: lanes for i, lanes in regs.uniform_lanes.items() if is_live(live, "v", i)}
        regs.same_v = {(kind, i) for kind, i in regs.same_v if is_live(live, kind, i)}
        regs.same_active = {(kind, i): m for (kind, i), m in regs.same_active.items() if is_live(live, kind, i)}
        regs.names = {i: n for i, n in regs.names.items() if is_live(live, "s", i)}
        regs.vnames = {i: n for i, n in regs.vnames.items() if is_live(live, "v", i)}
        regs.lane_names = {key: n for key, n in regs.lane_names.items() if is_live(live, "v", key[0])}
        if regs.lane_ids is not None and not is_live(live, "v", regs.lane_ids):
            regs.lane_ids = None
        if not scc_live(live):
            regs.scc, regs.scc_nonuniform, regs.scc_name = None, False, None
        return wave

    def _share_facts(self, waves: list[WaveAbs]) -> list[WaveAbs]:
        """What one wave learnt of a uniform register written once in the whole kernel (a kernel
        argument) holds in every wave that has written it: give it to those that do not know it."""
        learnt = {
            index: w.regs.sgpr[index]
            for w in waves
            for index in w.regs.assumed
            if index in self.facts.single_defs and w.regs.sgpr.get(index) is not None
        }
        if not learnt:
            return waves
        out = []
        for w in waves:
            live = self.facts.live[w.pc] if not w.ended and w.pc < len(self.facts.code) else 0
            missing = [
                i
                for i in learnt
                if w.regs.sgpr.get(i) is None
                and i not in w.regs.nonuniform
                and (i in w.regs.sgpr or is_live(live, "s", i))
            ]
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
        code = self.facts.code
        return tuple(
            f"waves at different iterations took the {'select' if code[pc].mnemonic in SELECTS else 'branch'} "
            f"at line {code[pc].line} differently"
            for pc, seen in sorted(outcomes.items())
            if len(seen) > 1
        )

    def _barrier_words(self, waves: list[WaveAbs]) -> str:
        lines: dict[int, list[int]] = {}
        for w in waves:
            if not w.ended:
                lines.setdefault(self.facts.code[w.barrier].line, []).append(w.wave)
        if not lines:
            return "the end of every wave"
        if len(lines) == 1:
            return f"barrier line {next(iter(lines))}"
        return "barriers " + ", ".join(f"line {line} (waves {wave_list(ws)})" for line, ws in sorted(lines.items()))


def _aligned(waves: list[WaveAbs]) -> bool:
    """Whether every running wave passed the same barrier the same known number of times: they
    start the phase at one rendezvous."""
    points = {w.at_barrier() for w in waves if not w.ended}
    return len(points) <= 1 and all(count != UNKNOWN_COUNT for _, count in points)


def _final_count(wave: WaveAbs, site: int, lds: Ranges) -> int | None:
    return next((count for load, load_lds, count in wave.final if (load, load_lds) == (site, lds)), None)


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
            if other != value and join_scalar(other, value) is None:
                return False
    if any(learnt.get(index) in values for w in waves for index, values in w.regs.unequal.items() if index in shared):
        return False
    if any(
        w.regs.sgpr.get(index) in values
        for w in waves
        for index, values in w.regs.unequal.items()
        if index in w.regs.assumed
    ):
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
                if old is None or (
                    bound_base(bound) < bound_base(old) if kind == "lt" else bound_base(bound) > bound_base(old)
                ):
                    mine[key] = bound
    return not any(contradicts(bounds, learnt.get(index)) for index, bounds in merged.items())


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
        if (name == "s_branch" or name.startswith("s_cbranch")) and kernel.labels.get(
            inst.operands[0] if inst.operands else ""
        ) is None:
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
