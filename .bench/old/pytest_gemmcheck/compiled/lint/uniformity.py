"""Which values may differ between the waves of a workgroup at the same point of the program:
scalars derived from lanes that differ between waves (``v_readfirstlane``, a vector compare) or
computed under such an exec; which VGPRs hold one value in every lane of every wave, and which
hold, lane by lane, the same values in every wave (a lane id below the wave size, what was read
from one LDS address by every wave, moved between lanes the same way in every wave). A branch on
a uniform condition, an exec mask the same in every wave included, is taken alike by every wave
(:mod:`.dataflow` decides it once for all)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .asm import Instruction
from .liveness import KEEPING_MODIFIERS
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


def varies(regs: RegisterFile, text: str) -> bool:
    """Whether a scalar operand may differ between waves."""
    op = decode(text)
    if not (isinstance(op, Reg) and op.kind == "s"):
        return False
    indices = {op.index + p for p in range(op.count)}
    if indices & {EXEC_LO, EXEC_LO + 1}:
        if exec_varies(regs):
            return True
        indices -= {EXEC_LO, EXEC_LO + 1}
    return bool(indices & regs.nonuniform)


def exec_varies(regs: RegisterFile) -> bool:
    """Whether exec may differ between waves: a full wave's exec is the same in every full wave
    ("s_and_b64 vcc, exec, s[2:3]" of a uniform s[2:3] is uniform); any other is where it was
    computed from values the same in every wave (a compare of a value read from one LDS address
    by every wave, the lanes of a lane id below the wave size)."""
    return regs.exec_mask != MASK64 and bool({EXEC_LO, EXEC_LO + 1} & regs.nonuniform)


# how a vector value is the same in every wave, lane by lane: in every lane, or in the lanes the
# current exec has (those written under it; what the others hold is not)
ALL, ACTIVE = "all", "active"


def mark_vector(
    regs: RegisterFile, text: str, uniform: bool, same: str | None = None, lanes_kept: bool = False
) -> None:
    """Record what an instruction wrote into vector operand ``text``: ``uniform`` (one value in
    every lane of every wave), ``same`` (each lane the same in every wave: in every lane, ALL,
    implied by uniform, or in the lanes of the current exec, ACTIVE). Its name goes, and, but for
    a write of one lane (``lanes_kept``), what is known of its lanes one by one."""
    op = decode(text)
    if not (isinstance(op, Reg) and op.kind in ("v", "a")):
        return
    same = ALL if uniform else same
    under = regs.mask64("exec") if same == ACTIVE else None
    for part in range(op.count):
        index = op.index + part
        if op.kind == "v":
            (regs.uniform_v.add if uniform else regs.uniform_v.discard)(index)
            regs.vnames.pop(index, None)
            if not lanes_kept:
                regs.uniform_lanes.pop(index, None)
                if regs.lane_names:
                    regs.lane_names = {key: name for key, name in regs.lane_names.items() if key[0] != index}
            if regs.lane_ids == index:
                regs.lane_ids = None
        (regs.same_v.add if same == ALL else regs.same_v.discard)((op.kind, index))
        if under is not None:
            regs.same_active[(op.kind, index)] = under
        else:
            regs.same_active.pop((op.kind, index), None)


def _lane_index(regs: RegisterFile, text: str) -> int | None:
    """A lane select operand's lane, where every wave selects that one (a constant, or a uniform
    SGPR of known value)."""
    op = decode(text)
    if isinstance(op, Const):
        return op.value % regs.width
    if isinstance(op, Reg) and op.kind == "s" and not varies(regs, text):
        value = regs.sgpr_value(op.index)
        return None if value is None else value % regs.width
    return None


def _lane_same(regs: RegisterFile, text: str, lane: int | None) -> bool:
    """Whether lane ``lane`` of VGPR operand ``text`` holds one value in every wave."""
    op = decode(text)
    if not (isinstance(op, Reg) and op.kind == "v" and op.count == 1) or lane is None:
        return False
    return ("v", op.index) in regs.same_v or lane in regs.uniform_lanes.get(op.index, ())


def same_vector(regs: RegisterFile, text: str, active: bool = False) -> bool:
    """Whether each lane of vector operand ``text`` holds the same value in every wave: every
    lane, or (``active``) every lane the current exec has. A constant does; a scalar where it is
    uniform."""
    op = decode(text)
    if isinstance(op, Const):
        return True
    if not isinstance(op, Reg):
        return False
    if op.kind == "s":
        return not varies(regs, text)
    under = regs.mask64("exec") if active and regs.same_active else None
    return all(
        (op.kind, op.index + p) in regs.same_v
        or (under is not None and regs.same_active.get((op.kind, op.index + p)) == under)
        for p in range(op.count)
    )


def _write_lane(regs: RegisterFile, ops: tuple[str, ...]) -> None:
    """``v_writelane_b32 vD, sX, lane``: lane ``lane`` of vD takes sX whatever exec is (an SGPR
    spilled to a VGPR lane). The lane holds one value in every wave where sX is uniform and every
    wave writes the same lane; the other lanes stay as they were."""
    op = decode(ops[0]) if ops else None
    if not (isinstance(op, Reg) and op.kind == "v") or len(ops) < 3:
        mark_vector(regs, ops[0] if ops else "", False)
        return
    lane = _lane_index(regs, ops[2])
    if lane is None:
        mark_vector(regs, ops[0], False)
        return
    same = ("v", op.index) in regs.same_v
    lanes = frozenset(range(regs.width)) if same else regs.uniform_lanes.get(op.index, frozenset())
    lanes = lanes | {lane} if not varies(regs, ops[1]) else lanes - {lane}
    regs.lane_names.pop((op.index, lane), None)
    mark_vector(regs, ops[0], False, ALL if same and not varies(regs, ops[1]) else None, lanes_kept=True)
    if lanes:
        regs.uniform_lanes[op.index] = lanes
    else:
        regs.uniform_lanes.pop(op.index, None)


def _lane_id(regs: RegisterFile, inst: Instruction) -> bool:
    """Whether a VALU instruction extracts from the work-item ids (v0 at entry) only bits that
    are the same in every wave (the lane: ``v_and_b32 v1, 63, v0`` in a 1-D workgroup of whole
    waves), so its result is the same in every wave lane by lane."""
    name, ops = inst.base, inst.operands
    if regs.lane_ids is None or len(ops) < 3:
        return False
    ids = f"v{regs.lane_ids}"
    if name == "v_and_b32" and ids in ops[1:3]:
        other = decode(ops[2] if ops[1] == ids else ops[1])
        return isinstance(other, Const) and other.value & ~regs.lane_bits & MASK32 == 0
    if name == "v_bfe_u32" and len(ops) > 3 and ops[1] == ids:
        offset, width = decode(ops[2]), decode(ops[3])
        if isinstance(offset, Const) and isinstance(width, Const) and offset.value + width.value <= 32:
            bits = ((1 << width.value) - 1) << offset.value
            return bits & ~regs.lane_bits == 0
    return False


# what moves values between the lanes of a wave (the same way in every wave): a lane it reads
# from may be one exec does not have
_CROSSING = ("v_permlane", "v_swap", "ds_bpermute", "ds_permute", "ds_swizzle")


def same_result(
    regs: RegisterFile, inst: Instruction, sources: tuple[str, ...], keeps: bool = True, lane_ids: bool = False
) -> str | None:
    """How a vector result is the same in every wave lane by lane (ALL, ACTIVE or None): an
    operation, lane-wise or moving values between the lanes of a wave (DPP, permlanes, mbcnt: the
    same pattern in every wave), of sources each the same in every wave (in the lanes exec has,
    for a lane-wise one; or the lane bits of the ids: ``lane_ids``), under an exec the same in
    every wave. Where it leaves lanes as they were (``keeps``: those exec has not, or a DPP mask
    or SDWA's preserved bits; a compare clears them), in every lane only if the destination was
    so too."""
    if exec_varies(regs):
        return None
    kept = any(m.startswith(KEEPING_MODIFIERS) for m in inst.modifiers)
    crossing = kept or inst.base.startswith(_CROSSING)
    every = lane_ids or all(same_vector(regs, op) for op in sources)
    if not (every or (not crossing and all(same_vector(regs, op, active=True) for op in sources))):
        return None
    full = regs.exec_mask == MASK64
    if not keeps or not (kept or not full or inst.base.startswith(("v_mac", "v_fmac"))):
        return ALL if every or full else ACTIVE
    if inst.operands and same_vector(regs, inst.operands[0]):
        return ALL
    return ACTIVE if not full and not kept and not inst.base.startswith(("v_mac", "v_fmac")) else None


def mark_scalar(regs: RegisterFile, text: str, nonuniform: bool) -> None:
    _mark_registers(text, "s", regs.nonuniform, nonuniform)


def track_uniformity(regs: RegisterFile, inst: Instruction) -> None:
    """Which results of ``inst`` may differ between waves (see ``RegisterFile.nonuniform``,
    ``uniform_v``, ``same_v`` and ``same_active``)."""
    name, ops = inst.base, inst.operands
    e64 = inst.mnemonic.endswith("_e64")
    if name.startswith("v_"):
        carry, lane_free, vector_sources, scalar_sources = vector_facts(inst)
        sources = ops[2 if carry else 1 :]
        # a result of uniform sources is uniform: the same lanes of the same values in every wave
        uniform = (
            lane_free
            and regs.sgpr.get(EXEC_LO) == MASK32
            and regs.sgpr.get(EXEC_LO + 1) == MASK32
            and all(i in regs.uniform_v for i in vector_sources)
            and not any(varies(regs, op) for op in scalar_sources)
        )
        if name.startswith("v_writelane"):
            _write_lane(regs, ops)
        elif name.startswith("v_readlane") and len(ops) > 2:
            # one lane of a VGPR: uniform where that lane is (a spilled SGPR read back)
            lane = _lane_index(regs, ops[2])
            mark_scalar(
                regs,
                ops[0],
                not (
                    uniform
                    or _lane_same(regs, ops[1], lane)
                    or (not varies(regs, ops[2]) and same_vector(regs, ops[1]))
                ),
            )
        elif name.startswith("v_readfirstlane") and len(ops) > 1:
            # the first active lane: the same one in every wave where exec is
            mark_scalar(regs, ops[0], not (uniform or (not exec_varies(regs) and same_vector(regs, ops[1], True))))
        elif name.startswith("v_cmp"):
            # a lane mask of the lanes exec has: the same in every wave where they are
            same = same_result(regs, inst, sources, keeps=False)
            mark_scalar(regs, ops[0] if e64 and ops else "vcc", not (uniform or same))
            if name.startswith("v_cmpx"):
                mark_scalar(regs, "exec", not (uniform or same))
        else:
            same = same_result(regs, inst, sources, lane_ids=_lane_id(regs, inst))
            if name.startswith("v_swap") and len(ops) > 1:
                mark_vector(regs, ops[1], False, same_result(regs, inst, ops[:1]))
            mark_vector(regs, ops[0] if ops else "", uniform, same)
            if carry:
                # a carry mask: bits of the lanes exec has
                mark_scalar(
                    regs,
                    "vcc" if inst.mnemonic.endswith("_e32") else ops[1],
                    not (uniform or same_result(regs, inst, sources, False)),
                )
        return
    if not name.startswith("s_"):
        if (
            ops
            and "lds" not in inst.modifiers
            and not name.startswith(("ds_write", "ds_store"))
            and "store" not in name
        ):
            # a load's data: no longer known uniform, but for a load of one address in every lane
            # of every wave (as a scalar load of a uniform address is); lanes moved between the
            # lanes of a wave by the LDS crossbar (bpermute, swizzle) as a VALU moves them
            if name.startswith(("ds_bpermute", "ds_permute", "ds_swizzle")):
                mark_vector(regs, ops[0], False, same_result(regs, inst, ops[1:]))
            else:
                mark_vector(regs, ops[0], *_load_sameness(regs, inst))
        return
    if not name.startswith("s_") or not ops or name.startswith(NO_DEST_PREFIXES[:3]):
        return
    compare = name.startswith(("s_cmp", "s_bitcmp"))
    sources = ops if compare else ops[1:]
    tainted = any(varies(regs, op) for op in sources) or (
        name.startswith(("s_cselect", "s_cmov", "s_addc", "s_subb")) and regs.scc_nonuniform
    )
    if name.startswith(("s_addk", "s_mulk", "s_bitset")):
        tainted |= varies(regs, ops[0])
    if "saveexec" in name:
        # the old exec saved, the new one of it and a mask: each as uniform as what it came from
        mark_scalar(regs, ops[0], varies(regs, "exec"))
        mark_scalar(regs, "exec", tainted or varies(regs, "exec"))
    elif not compare:
        mark_scalar(regs, ops[0], tainted)
    if compare or not name.startswith(KEEPS_SCC_PREFIXES):
        regs.scc_nonuniform = tainted or ("saveexec" in name and varies(regs, "exec"))


def _load_sameness(regs: RegisterFile, inst: Instruction) -> tuple[bool, str | None]:
    """How a vector load's data is the same in every wave: (one value in every lane of every
    wave, lane by lane: ALL, ACTIVE or None). Its data is taken as a scalar load's of a uniform
    address is, the same where the memory read is: a ``buffer_load`` whose offsets are uniform
    (the VGPR offset the same in every wave lane by lane, the soffset a constant or a uniform
    SGPR) through a uniform resource whose last word is known with ADD_TID_ENABLE (bit 23) clear
    (no per-lane address; a scratch descriptor sets it), or a ``global_load`` of such address
    operands; uniform where the VGPR offset is one value in every lane of every wave and exec is
    full (MLA decode reads its work slot's bounds that way). Flat and scratch loads never are: a
    flat address may fall into a lane's private memory."""
    name, ops = inst.mnemonic, inst.operands
    if len(ops) < 3 or any(m in ("lds", "tfe", "lwe") for m in inst.modifiers):
        return False, None
    if name.startswith("buffer_load"):
        address, resource, soffset = ops[1], decode(ops[2]), ops[3] if len(ops) > 3 else "0"
        if not (isinstance(resource, Reg) and resource.kind == "s" and resource.count == 4):
            return False, None
        word3 = regs.sgpr.get(resource.index + 3)
        if not isinstance(word3, int) or word3 >> 23 & 1 or varies(regs, ops[2]) or varies(regs, soffset):
            return False, None
        if not isinstance(decode(soffset), (Const, Reg)) or (
            isinstance(decode(soffset), Reg) and decode(soffset).kind != "s"
        ):
            return False, None
        vector = () if address == "off" else (address,)
    elif name.startswith("global_load"):
        saddr = ops[2]
        if saddr != "off" and (not isinstance(decode(saddr), Reg) or varies(regs, saddr)):
            return False, None
        vector = (ops[1],)
    else:
        return False, None
    uniform = regs.exec_mask == MASK64 and all(_uniform_vector(regs, op) for op in vector)
    return uniform, same_result(regs, inst, vector)


def _uniform_vector(regs: RegisterFile, text: str) -> bool:
    op = decode(text)
    return isinstance(op, Reg) and op.kind == "v" and all(op.index + p in regs.uniform_v for p in range(op.count))
