"""One wave of the dataflow engine through one barrier phase: from the barrier it passed last to
its next barrier or its end, over every path its branches allow, loops within the phase closed
as loops across phases are. Its loads, waits and DS accesses move its queues of operations in
flight and go into its record of the phase; a read of its own load still in flight is a hazard
found here. Branches on a uniform condition are decided once for every wave of the phase.
"""

from __future__ import annotations

import heapq
import itertools
import time
from typing import Callable

from .asm import Instruction
from .instructions import dma_size, parse_waitcnt
from .kernel_facts import SELECTS, KernelFacts
from .lattice import fold_registers, join_waves, wave_covers, wave_subsumes
from .lds_ranges import Ranges, dma_ranges, ds_ranges, overlap
from .liveness import is_live
from .operands import VCC_LO, decode
from .phase_states import (
    ANYWHERE,
    MAX_PHASE_STEPS,
    SHAPES_PER_BRANCH,
    SHARED_VISITS,
    STATES_PER_BRANCH,
    UNKNOWN_COUNT,
    Hazard,
    LoopSymbols,
    NeedDecision,
    Outcome,
    OutOfTime,
    PhaseRecord,
    Walk,
    WaveAbs,
    add_to_queue,
    age_queue,
    retire_queue,
)
from .semantics import WaveState
from .targets import Target
from .uniformity import exec_varies, mark_vector, same_result
from .value_names import condition_name
from .values import MASK64

_EVENTS = frozenset({"wait", "dma", "vmem", "ds_read", "ds_write", "ds_other"})  # the kinds _event acts on
_BELOW = {"lt": (0, False), "le": (1, False), "gt": (1, True), "ge": (0, True)}


class PhaseWalker:
    """Runs the waves of one kernel through its phases (:meth:`run_wave`), adding to ``outcome``
    what a wave finds on its own; ``decision`` says how the phase takes a uniform branch."""

    def __init__(
        self,
        facts: KernelFacts,
        target: Target,
        deadline: float,
        outcome: Outcome,
        symbols: LoopSymbols,
        decision: Callable[[tuple, dict], bool | None],
    ):
        self.facts = facts
        self.target = target
        self.deadline = deadline
        self.outcome = outcome
        self.symbols = symbols
        self.decision = decision
        # every running wave starts the phase at the same rendezvous (the same barrier, the same
        # known number of times): a read of one address by all of them reads the same bytes,
        # unless a write no barrier orders lands between (checked at the rendezvous)
        self.aligned = False

    def run_wave(
        self, start: WaveAbs, decisions: dict, walk: Walk | None = None, forks: list | None = None
    ) -> tuple[list[WaveAbs], PhaseRecord, dict]:
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
                    target = self.facts.kernel.labels[self.facts.code[pc].operands[0]]
                    other = wave.copy()
                    self._assume(other, self.facts.code[pc].mnemonic, True, target)
                    self._skip(other, pc, target)
                    other.pc = target
                    heapq.heappush(heap, (target, False, next(order), other, dict(visits)))
                    self._assume(wave, self.facts.code[pc].mnemonic, False, target)
                    wave.pc += 1
                    heapq.heappush(heap, (wave.pc, False, next(order), wave, visits))
                continue
            while True:
                steps += 1
                if steps % 4096 == 0 and time.monotonic() > self.deadline:
                    raise OutOfTime
                if steps > MAX_PHASE_STEPS:
                    self.outcome.flag(
                        wave.pc,
                        wave.wave,
                        f"the wave ran {MAX_PHASE_STEPS} instructions without "
                        "reaching a barrier; the rest was not followed",
                    )
                    wave.ended = True
                if wave.ended or wave.pc >= len(self.facts.code):
                    wave.ended = True
                    _keep(finals, wave)
                    break
                inst = self.facts.code[wave.pc]
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
                    target = self.facts.kernel.labels.get(inst.operands[0] if inst.operands else "")
                    if target is None:
                        self.outcome.flag(
                            wave.pc,
                            wave.wave,
                            "the branch target is not in the kernel: the code after it was not followed",
                        )
                        wave.ended = True
                        continue
                    if name == "s_branch":
                        wave.pc = target
                        continue
                    taken = _condition(wave.regs, name[len("s_cbranch_") :])
                    if taken is None:
                        if _uniform(wave.regs, name):
                            taken = self._shared(
                                wave, visits, decisions, (heap, finals, seen, record, read, steps, order), forks
                            )
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
                if self.facts.dead[wave.pc] is not None:
                    _forget_result(wave.regs, self.facts.dead[wave.pc])
                    wave.pc += 1
                    continue
                kind = self.facts.kinds[wave.pc]
                shared_read = self._same_addresses(wave.regs, inst) if kind == "ds_read" and self.aligned else None
                if kind in _EVENTS:
                    self._event(wave, inst, record)
                if kind == "barrier":
                    wave.barrier = wave.pc
                    wave.phase_writes = frozenset()
                    wave.passed[wave.pc] = wave.passed.get(wave.pc, 0) + 1
                    wave.pc += 1
                    _keep(finals, wave)
                    break
                if (
                    name in SELECTS
                    and wave.regs.scc is None
                    and not wave.regs.scc_nonuniform
                    and self.facts.decides_an_address(wave.pc)
                    and _selects_known_values(wave.regs, inst)
                ):
                    # a uniform select between two known values that an LDS address depends on (a
                    # tail's stage base on its trip count's parity): decided for every wave alike,
                    # as a branch on that SCC would be
                    taken = self._shared(
                        wave, visits, decisions, (heap, finals, seen, record, read, steps, order), forks
                    )
                    if taken is not None:
                        wave.regs.scc = taken
                if not wave.regs.execute(inst):
                    self.outcome.incomplete.setdefault(inst.line, inst.text)
                if shared_read is not None:
                    lds, uniform, same = shared_read
                    mark_vector(wave.regs, inst.operands[0], uniform, same)
                    record.uniform.add((wave.pc, lds))
                wave.pc += 1
        return list(finals.values()), record, read

    def _same_addresses(self, regs: WaveState, inst: Instruction) -> tuple[Ranges, bool, str] | None:
        """For an LDS read whose address is the same in every wave lane by lane, in the lanes of
        an exec the same in every wave (its data is then too, where no write lands between the
        waves' reads: the rendezvous checks that, the waves having started the phase at one
        rendezvous; the address is known, so that only writes that may land there count): the
        bytes it reads, whether its data is one value in every lane of every wave (one address in
        every lane, exec full), and how its destination is the same in every wave (ALL, or in the
        lanes exec has: ACTIVE). None for any other read."""
        if (
            not inst.mnemonic.startswith(("ds_read", "ds_load"))
            or len(inst.operands) < 2
            or "addtid" in inst.mnemonic
            or "gds" in inst.modifiers
        ):
            return None
        same = same_result(regs, inst, inst.operands[1:2])
        lds = ds_ranges(regs, inst) if same is not None else None
        if lds is None:
            return None
        uniform = regs.exec_mask == MASK64 and decode(inst.operands[1]).index in regs.uniform_v
        return lds, uniform, same

    def _shared(
        self, wave: WaveAbs, visits: dict, decisions: dict, walk_state: tuple, forks: list | None
    ) -> bool | None:
        """How the phase's uniform decisions take the condition at ``wave.pc`` (a branch or a
        select on a uniform SCC): by the condition's name where it has one (a kernel argument's
        flag: the same at every visit), else for the first :data:`SHARED_VISITS` visits of it,
        by the visit and the uniform scalars; None past them. Undecided, the wave's walk stops
        here (:class:`NeedDecision`: the phase is run once per choice, and the walk resumed);
        decided, the walk as it stands is kept in ``forks`` the first time, to go on from under
        the other choice."""
        heap, finals, seen, record, read, steps, order = walk_state
        visit = visits.get(wave.pc, 0)
        visits[wave.pc] = visit + 1
        mnemonic = self.facts.code[wave.pc].mnemonic
        named = condition_name(wave.regs, "scc" if mnemonic in SELECTS else mnemonic)
        if named is not None:
            key = (wave.pc, "named", named)
        elif visit >= SHARED_VISITS:
            return None
        else:
            live = self.facts.live[wave.pc]
            key = (wave.pc, visit, wave.regs.uniform_key(lambda i: is_live(live, "s", i)))
        taken = self.decision(key, decisions)
        if taken is None:
            visits[wave.pc] = visit
            heapq.heappush(heap, (wave.pc, False, next(order), wave, visits))
            raise NeedDecision(key, Walk(heap, finals, seen, record, read, steps, next(order)))
        if forks is not None and key not in read:
            visits[wave.pc] = visit
            fork = Walk(
                heap + [(wave.pc, False, next(order), wave, visits)], finals, seen, record, read, steps, next(order)
            )
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
        if wave.pc in self.facts.targets or wave.pc == 0 or branch not in ("s_cbranch_scc0", "s_cbranch_scc1"):
            return
        at = self.facts.compare_before(wave.pc)
        if at is None:
            return
        compare = self.facts.code[at]
        relation = compare.mnemonic.split("_")[2] if compare.mnemonic.startswith(("s_cmp_", "s_cmpk_")) else ""
        if not compare.mnemonic.endswith(("_u32", "_i32")) or len(compare.operands) != 2:
            return
        scc = taken == (branch == "s_cbranch_scc1")
        # signed compares read as unsigned: the scalars compared (trip counts, counters, tile
        # indices) are taken as non-negative, below 2**31
        around = [(head, end) for head, end in self.facts.loops if head <= wave.pc <= end]
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
        if self.facts.code[pc].mnemonic != "s_cbranch_execz" or target <= pc:
            return
        for site in self.facts.skipped_loads(pc, target):
            count = wave.issued.get(site, 0)
            wave.issued[site] = UNKNOWN_COUNT if count == UNKNOWN_COUNT else count + 1

    def _merge_at_branch(self, batch: list[tuple[WaveAbs, dict]], seen: dict) -> list[tuple[WaveAbs, dict]]:
        """The states of a batch that reach one branch and go on from it, both ways. A loop inside
        one phase (no barrier in it) closes like one across phases: a state seen at this branch
        that covers one stops it; registers that grew by one step twice fold; past
        :data:`STATES_PER_BRANCH` states of one shape they are joined. Past
        :data:`SHAPES_PER_BRANCH` states of any shape, those of the batch that arrive with the same
        branch visits are joined into one with the state joined there before, queues included."""
        out, overflow = [], {}
        if len(batch) > 1 and self.facts.code[batch[0][0].pc].mnemonic in ("s_cbranch_execz", "s_cbranch_execnz"):
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
            waves = [w for w in waves if wide is None or not wave_subsumes(wide, w)]
            if not waves:
                continue
            joined = waves[0] if wide is None else join_waves(wide, waves[0])
            for w in waves[1:]:
                joined = join_waves(joined, w)
            seen[("joined", joined.pc, key)] = joined
            out.append((joined.copy(), visits))
        return out

    def _merge_shape(self, wave: WaveAbs, seen: dict) -> WaveAbs | None:
        """A state arriving at a branch among those of its shape: None when one of them covers it."""
        # issue counts grow with the iterations of such a loop: they are not part of the shape,
        # and where two iterations differ in them the count becomes unknown (matching any instance)
        shape = wave.shape()[:-3] + wave.shape()[-2:]
        same = seen.setdefault((wave.pc, shape), [])
        if any(wave_covers(old, wave) for old in same):
            return None
        if same:
            wave = wave.copy()
            for site, count in wave.issued.items():
                if same[-1].issued.get(site, 0) != count:
                    wave.issued[site] = UNKNOWN_COUNT
        if len(same) >= 2:
            symbol = self.symbols.at(("branch", wave.pc))
            fold_registers(wave.regs, same[-2].regs, same[-1].regs, symbol)
            if any(wave_covers(old, wave) for old in same):
                return None
        if len(same) >= STATES_PER_BRANCH:
            wave = join_waves(same[-1], wave)
            if wave_covers(same[-1], wave):
                return None
        same.append(wave)
        return wave.copy()

    def _event(self, wave: WaveAbs, inst: Instruction, record: PhaseRecord) -> None:
        """Apply a memory or wait instruction to the wave's queues; check its own ordering."""
        kind = self.facts.kinds[inst.index]
        site = inst.index
        if kind == "wait":
            vm, lgkm = parse_waitcnt(inst)
            problem = self.target.wait_problem(vm, lgkm)
            if problem:
                self.outcome.flag(site, wave.wave, problem)
            retire_queue(wave.vm, vm)
            retire_queue(wave.ds, lgkm)
        elif kind == "dma":
            lds = dma_ranges(wave.regs, inst)
            problem = self.target.dma_problem(dma_size(inst), inst.mnemonic)
            if problem:
                self.outcome.flag(site, wave.wave, problem)
                lds = None
            elif lds is None:
                self.outcome.flag(
                    site, wave.wave, "M0 (the LDS destination) is not known here: what this load writes was not checked"
                )
            else:
                for (read, read_lds), younger in wave.ds.items():
                    shared = (
                        overlap(read_lds, lds)
                        if (read_lds is not ANYWHERE and self.facts.kinds[read] == "ds_read")
                        else ()
                    )
                    if shared:
                        self._own(wave, read, site, shared, "warning", f"s_waitcnt lgkmcnt({younger}) before the load")
            count = wave.issued.get(site, 0)
            count = UNKNOWN_COUNT if count == UNKNOWN_COUNT else count + 1
            wave.issued[site] = count
            if lds is not None:
                record.loads.add((site, lds, count))
            age_queue(wave.vm, self.facts.vm_cap)
            if lds is not None:
                add_to_queue(wave.vm, (site, lds))
        elif kind == "vmem":
            age_queue(wave.vm, self.facts.vm_cap)
        elif kind in ("ds_read", "ds_write", "ds_other"):
            lds = ds_ranges(wave.regs, inst) if kind != "ds_other" else ()
            age_queue(wave.ds, self.facts.lgkm_cap)
            if kind == "ds_write":
                # checked against the other waves' reads at the rendezvous; a wave's own DS
                # accesses are served in its program order
                lds = ANYWHERE if lds is None else lds
                record.writes.add((site, lds))
                add_to_queue(wave.ds, (site, lds))
                wave.phase_writes |= {site}
            if kind == "ds_read":
                lds = ANYWHERE if lds is None else lds
                for (load, load_lds), younger in wave.vm.items():
                    shared = overlap(lds, load_lds)
                    if shared and lds is ANYWHERE:
                        self.outcome.unknown_read(site, wave.wave, self.facts.line(load), wave.wave)
                    elif shared:
                        self._own(wave, site, load, shared, "error", f"s_waitcnt vmcnt({younger}) before the read")
                record.reads.setdefault((site, lds), set()).add(frozenset(wave.issued.items()))
                if wave.phase_writes:
                    record.prior[(site, lds)] = record.prior.get((site, lds), frozenset()) | wave.phase_writes
                add_to_queue(wave.ds, (site, lds))

    def _own(self, wave: WaveAbs, read: int, load: int, lds: Ranges, severity: str, cover: str) -> None:
        self.outcome.hazards.append(Hazard(severity, read, load, wave.wave, wave.wave, lds, "own", cover, "", (), ()))


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
        for index in indices:
            regs.uniform_lanes.pop(index, None)
            if regs.lane_ids == index:
                regs.lane_ids = None
    regs.same_v.difference_update(("v" if vector else "a", index) for index in indices)
    for index in indices:
        regs.same_active.pop(("v" if vector else "a", index), None)
        if vector:
            regs.vnames.pop(index, None)
    if vector and regs.lane_names:
        regs.lane_names = {key: name for key, name in regs.lane_names.items() if key[0] not in indices}


def _keep(finals: dict[int, WaveAbs], wave: WaveAbs) -> None:
    """Keep one final state per end point of the phase, joining the paths that end there."""
    end = -1 if wave.ended else wave.pc
    finals[end] = wave if end not in finals else join_waves(finals[end], wave)


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
    """Whether every wave at this point takes the branch alike (its condition is uniform: an exec
    mask the same in every wave too)."""
    if branch.endswith(("scc0", "scc1")):
        return not regs.scc_nonuniform
    if branch.endswith(("vccz", "vccnz")):
        return VCC_LO not in regs.nonuniform and VCC_LO + 1 not in regs.nonuniform
    return not exec_varies(regs)


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
            joined = join_waves(joined, wave)
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
    joined.uniform_v = {
        index for index in joined.uniform_v if all(side.vgpr.get(index) is sides[0].vgpr.get(index) for side in sides)
    }
    joined.uniform_lanes = {
        index: lanes
        for index, lanes in joined.uniform_lanes.items()
        if all(side.vgpr.get(index) is sides[0].vgpr.get(index) for side in sides)
    }

    def untouched(kind: str, index: int) -> bool:
        return all(
            (side.vgpr if kind == "v" else side.agpr).get(index)
            is (sides[0].vgpr if kind == "v" else sides[0].agpr).get(index)
            for side in sides
        )

    joined.same_v = {(kind, index) for kind, index in joined.same_v if untouched(kind, index)}
    joined.same_active = {key: m for key, m in joined.same_active.items() if untouched(*key)}
