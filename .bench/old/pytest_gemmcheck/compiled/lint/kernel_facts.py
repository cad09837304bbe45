"""What the dataflow engine works out once per kernel from its code alone: each instruction's
memory kind, liveness, loops, the SGPRs written once, the vector results nothing reads, the
queue depths past which waits retire alike, which selects are decided, and the compare each
SCC branch tests."""

from __future__ import annotations

from .asm import Kernel
from .instructions import classify, parse_waitcnt
from .liveness import SCC, live_in, uses_and_defs
from .operands import M0, Reg, decode
from .targets import Target

SELECT_REACH = 64  # instructions after a select searched for an LDS address computed from it
SELECTS = frozenset({"s_cselect_b32", "s_cselect_b64"})


class KernelFacts:
    """The static facts of one kernel's code, for :class:`.dataflow.KernelAnalysis`."""

    def __init__(self, kernel: Kernel, target: Target):
        self.kernel = kernel
        self.code = kernel.instructions
        self.targets = set(kernel.labels.values())
        self.live = live_in(kernel)
        self.loops = _loops(kernel)
        self.selects: dict[int, bool] | None = None  # by pc: whether the select there is decided (decides_an_address)
        self.single_defs = _single_definitions(kernel)
        self.compares: dict[int, int | None] = {}
        self.skipped: dict[int, list[int]] = {}  # by forward execz branch: the DMA loads it jumps over
        self.dead = _dead_vector_results(kernel, self.live)
        # past the largest count any wait of the kernel names, every wait retires an entry alike:
        # younger counts are kept up to there (plus one), so queues that differ beyond are one state
        self.kinds = [classify(inst) for inst in self.code]  # each instruction's memory kind, once
        waits = [parse_waitcnt(inst) for inst, kind in zip(self.code, self.kinds) if kind == "wait"]
        self.vm_cap = min([target.vm_limit] + [max((vm for vm, _ in waits if vm is not None), default=0)])
        self.lgkm_cap = min([target.lgkm_limit] + [max((lgkm for _, lgkm in waits if lgkm is not None), default=0)])

    def decides_an_address(self, pc: int) -> bool:
        """Whether the select at ``pc`` is decided: an LDS address (a DS access's, or M0) is computed
        from its result in the straight-line code after it, and no innermost loop holds it. Inside
        one, a choice per iteration (its selects on the iteration's bounds) would keep the loop from
        folding, where a join of the two values is what folding needs; a select whose value reaches
        an address only through a chain of unknowns (an unsigned division's corrections) would
        multiply the runs for nothing."""
        if self.selects is None:  # first asked: every select's answer at once
            innermost = [
                (head, end)
                for head, end in self.loops
                if not any((h, e) != (head, end) and head <= h and e <= end for h, e in self.loops)
            ]
            self.selects = {
                at: not any(head <= at <= end for head, end in innermost) and self._feeds_an_address(at)
                for at, inst in enumerate(self.code)
                if inst.mnemonic in SELECTS
            }
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

    def compare_before(self, pc: int) -> int | None:
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
            if (
                defs & (1 << SCC)
                or at in self.targets
                or inst.mnemonic.startswith(("s_branch", "s_cbranch", "s_setpc"))
            ):
                break
            written |= defs
            at -= 1
        self.compares[pc] = found
        return found

    def line(self, index: int) -> int:
        return self.code[index].line if index >= 0 else 0

    def skipped_loads(self, pc: int, target: int) -> list[int]:
        """The DMA loads between a forward branch at ``pc`` and its ``target``."""
        if pc not in self.skipped:
            self.skipped[pc] = [i for i in range(pc + 1, target) if self.kinds[i] == "dma"]
        return self.skipped[pc]


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
        out.append(
            (op.kind == "v", tuple(range(op.index, op.index + op.count)))
            if isinstance(op, Reg) and op.kind in ("v", "a")
            else ()
            if dead
            else None
        )
    return out


def _loops(kernel: Kernel) -> list[tuple[int, int]]:
    """(head, back edge) of every loop: a branch to an instruction at or before it."""
    loops = []
    for inst in kernel.instructions:
        if inst.mnemonic.startswith(("s_branch", "s_cbranch")) and inst.operands:
            target = kernel.labels.get(inst.operands[0])
            if target is not None and target <= inst.index:
                loops.append((target, inst.index))
    return loops


def _single_definitions(kernel: Kernel) -> set[int]:
    """SGPRs that one instruction of the kernel writes, and no other."""
    writers: dict[int, int] = {}
    for inst in kernel.instructions:
        defs = uses_and_defs(inst)[1]
        for index in range(106):
            if defs >> index & 1:
                writers[index] = writers.get(index, 0) + 1
    return {index for index, count in writers.items() if count == 1}
