"""Names of unknown values that are the same in every wave: what they are computed from, so that
two of them with one name are one value. A kernel argument the lint does not know (loaded from
the kernel argument segment, or preloaded into an SGPR) is unknown, but it is the same number at
every visit of a branch that tests it and in every wave; a flag tested at every iteration of a
loop (Triton's ``if accuracy:`` inside the row loop, ``N > 0`` before a column loop) is then
decided once per phase, not once per visit, and never apart per wave past the visits decided
alike (:data:`.phase_states.SHARED_VISITS`).

A name is a tuple: ``("k", v)`` a known value, ``("init", i)`` SGPR ``i`` as the kernel began
(the kernel argument segment's pointer, preloaded arguments, the workgroup ids: the same in
every wave), ``("kernarg", offset)`` the dword at ``offset`` of the kernel argument segment
(read-only), and ``(depth, operation, part, inputs)`` an operation of named inputs, exec among
those of a vector one: the same inputs give the same result, in every lane, in every wave. A
VGPR's name stands for all its lanes; an SGPR spilled into a VGPR lane keeps its own. A register
that is written gets a new name or none; a name does not reach past :data:`DEPTH` operations,
nor through an update of a register by itself (``s_add_i32 s15, s15, s33``: a loop counter is a
new value at each iteration), nor through a vector write that leaves lanes as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .asm import Instruction
from .liveness import KEEPING_MODIFIERS
from .opcodes import KEEPS_SCC_PREFIXES, NO_DEST_PREFIXES
from .operands import EXEC_LO, VCC_LO, Const, Reg, decode
from .values import MASK64

if TYPE_CHECKING:
    from .registers import RegisterFile

DEPTH = 8  # operations a name may hold: kernel-argument flags take 2 to 7
_READS_SCC = ("s_cselect", "s_cmov", "s_addc", "s_subb")
_READS_DESTINATION = ("s_addk", "s_mulk", "s_bitset", "s_cmov")


def _depth(name: tuple) -> int:
    return name[0] if isinstance(name[0], int) else 0


def operand_name(regs: RegisterFile, text: str) -> tuple | None:
    """The name of a source operand (a tuple of its dwords' names), or None."""
    if text == "scc":
        return (regs.scc_name,) if regs.scc_name is not None else None
    op = decode(text)
    if isinstance(op, Const):
        return (("k", op.value),)
    if not isinstance(op, Reg):
        return None
    table = regs.names if op.kind == "s" else regs.vnames if op.kind == "v" else {}
    parts = []
    for p in range(op.count):
        value = regs.sgpr.get(op.index + p) if op.kind == "s" else None
        name = ("k", value) if isinstance(value, int) else table.get(op.index + p)
        if name is None:
            return None
        parts.append(name)
    return tuple(parts)


def gather(regs: RegisterFile, inst: Instruction) -> tuple | None:
    """What naming ``inst``'s results needs of the registers before it runs: its sources' names
    (None where one has none), and whether it writes a register it reads."""
    name, ops = inst.base, inst.operands
    compare = name.startswith(("s_cmp", "s_bitcmp"))
    if not ops or (name.startswith(NO_DEST_PREFIXES) and not compare) or not name.startswith(("s_", "v_")):
        return None
    if name.startswith("v_writelane") and len(ops) > 2:
        return (operand_name(regs, ops[1]),), False
    if name.startswith(("v_readlane", "v_readfirstlane")) and len(ops) > 1:
        source = decode(ops[1])
        lane = decode(ops[2]) if len(ops) > 2 else Const(0)
        if isinstance(source, Reg) and isinstance(lane, Const):
            spilled = regs.lane_names.get((source.index, lane.value % regs.width))
            if spilled is not None and name.startswith("v_readlane"):
                return ((spilled,),), False
        return (operand_name(regs, ops[1]),), False
    sources = list(ops if compare else ops[1:])
    if name.startswith(_READS_SCC):
        sources.append("scc")
    if name.startswith(_READS_DESTINATION):
        sources.append(ops[0])
    if name.startswith("v_"):
        sources.append("exec")  # the lanes it writes, those a compare's mask has
        if not name.startswith("v_cmp") and (
            regs.exec_mask != MASK64
            or any(m.startswith(KEEPING_MODIFIERS) for m in inst.modifiers)
            or name.startswith(("v_mac", "v_fmac"))
        ):
            sources.append(ops[0])  # the lanes and bits it leaves as they were
    names = tuple(operand_name(regs, op) for op in sources)
    dest = decode(ops[0]) if not compare else None
    written = {(dest.kind, dest.index + p) for p in range(dest.count)} if isinstance(dest, Reg) else set()
    read = set()
    for op in sources:
        reg = decode(op) if op != "scc" else None
        if isinstance(reg, Reg):
            read |= {(reg.kind, reg.index + p) for p in range(reg.count)}
    return names, bool(written & read) and not name.startswith(("s_mov", "v_mov"))


def assign(regs: RegisterFile, inst: Instruction, gathered: tuple | None, kernarg: int | None) -> None:
    """Name what ``inst`` wrote, from what :func:`gather` saw before it ran."""
    name, ops = inst.base, inst.operands
    if name.startswith(("s_load", "s_buffer_load")):
        _name_kernarg_load(regs, inst, kernarg)
        return
    if gathered is None:
        return
    inputs, updates_itself = gathered
    dest = decode(ops[0]) if not name.startswith(("s_cmp", "s_bitcmp")) else None
    if name.startswith("v_writelane"):
        lane = decode(ops[2])
        if isinstance(dest, Reg) and isinstance(lane, Const) and inputs[0] is not None:
            regs.lane_names[(dest.index, lane.value % regs.width)] = inputs[0][0]
        return
    if None in inputs or updates_itself:
        return
    depth = 1 + max((_depth(part) for source in inputs for part in source), default=0)
    if not isinstance(dest, Reg):
        parts = ()
    elif name.startswith(("s_mov", "v_mov", "v_readlane", "v_readfirstlane")) and len(inputs[0]) == dest.count:
        parts = inputs[0]
    else:
        parts = tuple((depth, name, p, inputs) for p in range(dest.count)) if depth <= DEPTH else ()
    if parts and dest.kind == "s":
        for p, part in enumerate(parts):
            if regs.sgpr.get(dest.index + p) is None:
                regs.names[dest.index + p] = part
    elif parts and dest.kind == "v":
        for p, part in enumerate(parts):
            regs.vnames[dest.index + p] = part
    if (
        name.startswith("s_")
        and (dest is None or not name.startswith(KEEPS_SCC_PREFIXES))
        and regs.scc is None
        and depth <= DEPTH
    ):
        regs.scc_name = (depth, name, "scc", inputs)


def _name_kernarg_load(regs: RegisterFile, inst: Instruction, kernarg: int | None) -> None:
    """``s_load_dword* sD, s[k:k+1], offset`` from the kernel argument segment's pointer as the
    kernel began: the segment is read-only, so each dword is the same number at every load."""
    ops = inst.operands
    if kernarg is None or len(ops) < 3:
        return
    dest, base, offset = decode(ops[0]), decode(ops[1]), decode(ops[2])
    if not (isinstance(dest, Reg) and isinstance(base, Reg) and isinstance(offset, Const)):
        return
    if (regs.names.get(base.index), regs.names.get(base.index + 1)) != (("init", kernarg), ("init", kernarg + 1)):
        return
    for p in range(dest.count):
        regs.names[dest.index + p] = ("kernarg", offset.value + 4 * p)


def condition_name(regs: RegisterFile, branch: str) -> tuple | None:
    """The name of a branch's condition (SCC for a select: ``branch`` "scc"), where it has one."""
    if branch.endswith(("scc", "scc0", "scc1")):
        return regs.scc_name
    first = VCC_LO if branch.endswith(("vccz", "vccnz")) else EXEC_LO
    parts = regs.names.get(first), regs.names.get(first + 1)
    return parts if None not in parts else None
