"""Which values may differ between the waves of a workgroup at the same point of the program:
scalars derived from lanes (``v_readfirstlane``, a vector compare) or computed under an exec that
is not a full wave's, and which VGPRs hold one value in every lane of every wave. A branch on a
uniform condition is taken alike by every wave (:mod:`.dataflow` decides it once for all)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .asm import Instruction
from .opcodes import KEEPS_SCC_PREFIXES, NO_DEST_PREFIXES, vector_facts
from .operands import EXEC_LO, MASK32, Const, Reg, decode
from .values import MASK64

if TYPE_CHECKING:
    from .registers import RegisterFile


def _mark_registers(text: str, kind: str, registers: set[int], present: bool) -> None:
    """Each register of operand ``text``, when it is of ``kind``, into ``registers`` or out of it."""
    op = decode(text)
    if isinstance(op, Reg) and op.kind == kind:
        for part in range(op.count):
            (registers.add if present else registers.discard)(op.index + part)


def _varies(regs: RegisterFile, text: str) -> bool:
    """Whether a scalar operand may differ between waves."""
    op = decode(text)
    if not (isinstance(op, Reg) and op.kind == "s"):
        return False
    indices = {op.index + p for p in range(op.count)}
    if indices & {EXEC_LO, EXEC_LO + 1}:
        # a full wave's exec is the same in every full wave: "s_and_b64 vcc, exec, s[2:3]" of a
        # uniform s[2:3] is uniform; any other exec (a divergent region, a partial wave) is not
        if regs.exec_mask != MASK64:
            return True
        indices -= {EXEC_LO, EXEC_LO + 1}
    return bool(indices & regs.nonuniform)


def mark_vector(regs: RegisterFile, text: str, uniform: bool) -> None:
    _mark_registers(text, "v", regs.uniform_v, uniform)


def _mark_scalar(regs: RegisterFile, text: str, nonuniform: bool) -> None:
    _mark_registers(text, "s", regs.nonuniform, nonuniform)


def track_uniformity(regs: RegisterFile, inst: Instruction) -> None:
    """Which results of ``inst`` may differ between waves (see ``RegisterFile.nonuniform`` and
    ``uniform_v``)."""
    name, ops = inst.base, inst.operands
    e64 = inst.mnemonic.endswith("_e64")
    if name.startswith("v_"):
        carry, lane_free, vector_sources, scalar_sources = vector_facts(inst)
        # a result of uniform sources is uniform: the same lanes of the same values in every wave
        uniform = (lane_free and regs.sgpr.get(EXEC_LO) == MASK32 and regs.sgpr.get(EXEC_LO + 1) == MASK32
                   and all(i in regs.uniform_v for i in vector_sources)
                   and not any(_varies(regs, op) for op in scalar_sources))
        if name.startswith(("v_readfirstlane", "v_readlane")) and ops:
            _mark_scalar(regs, ops[0], not uniform)
        elif name.startswith("v_cmp"):
            _mark_scalar(regs, ops[0] if e64 and ops else "vcc", not uniform)
            if name.startswith("v_cmpx"):
                _mark_scalar(regs, "exec", not uniform)
        else:
            mark_vector(regs, ops[0] if ops else "", uniform)
            if carry:
                _mark_scalar(regs, ops[1] if e64 else "vcc", not uniform)
        return
    if not name.startswith("s_"):
        if ops and "lds" not in inst.modifiers:
            # a load's data, or a store's source: no longer known uniform, but for a load of one
            # address in every lane of every wave (as a scalar load of a uniform address is)
            mark_vector(regs, ops[0], _uniform_load(regs, inst))
        return
    if not name.startswith("s_") or not ops or name.startswith(NO_DEST_PREFIXES[:3]):
        return
    compare = name.startswith(("s_cmp", "s_bitcmp"))
    sources = ops if compare else ops[1:]
    tainted = any(_varies(regs, op) for op in sources) or (
        name.startswith(("s_cselect", "s_cmov", "s_addc", "s_subb")) and regs.scc_nonuniform)
    if name.startswith(("s_addk", "s_mulk", "s_bitset")):
        tainted |= _varies(regs, ops[0])
    if not compare:
        _mark_scalar(regs, ops[0], tainted)
    if "saveexec" in name:
        _mark_scalar(regs, "exec", True)
        _mark_scalar(regs, ops[0], True)
    if compare or not name.startswith(KEEPS_SCC_PREFIXES):
        regs.scc_nonuniform = tainted


def _uniform_load(regs: RegisterFile, inst: Instruction) -> bool:
    """Whether a vector load reads the same memory in every lane of every wave, so its data is
    uniform as a scalar load's of a uniform address is: a full exec, a ``buffer_load`` whose
    offsets are uniform (the VGPR offset one computed from uniform values, the soffset a
    constant or a uniform SGPR) through a resource whose last word is known with
    ADD_TID_ENABLE (bit 23) clear (no per-lane address; a scratch descriptor sets it), or a
    ``global_load`` of uniform address operands. Flat and scratch loads never are: a flat
    address may fall into a lane's private memory."""
    name, ops = inst.mnemonic, inst.operands
    if regs.exec_mask != MASK64 or len(ops) < 3 or any(m in ("lds", "tfe", "lwe") for m in inst.modifiers):
        return False
    if name.startswith("buffer_load"):
        address, resource, soffset = ops[1], decode(ops[2]), ops[3] if len(ops) > 3 else "0"
        if not (isinstance(resource, Reg) and resource.kind == "s" and resource.count == 4):
            return False
        word3 = regs.sgpr.get(resource.index + 3)
        if not isinstance(word3, int) or word3 >> 23 & 1 or _varies(regs, ops[2]) or _varies(regs, soffset):
            return False
        if not isinstance(decode(soffset), (Const, Reg)) or (
                isinstance(decode(soffset), Reg) and decode(soffset).kind != "s"):
            return False
        return address == "off" or _uniform_vector(regs, address)
    if name.startswith("global_load"):
        saddr = ops[2]
        if saddr != "off" and (not isinstance(decode(saddr), Reg) or _varies(regs, saddr)):
            return False
        return _uniform_vector(regs, ops[1])
    return False


def _uniform_vector(regs: RegisterFile, text: str) -> bool:
    op = decode(text)
    return isinstance(op, Reg) and op.kind == "v" and all(op.index + p in regs.uniform_v for p in range(op.count))
