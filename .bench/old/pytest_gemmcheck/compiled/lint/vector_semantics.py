"""The semantics of the vector (VALU) instructions the register model knows: per-lane integer
operations of :mod:`.opcodes`, compares into lane masks, carries, lane reads and writes, lane
swaps and permutations, 64-bit moves, shifts and multiply-adds."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .asm import Instruction
from .opcodes import BINARY, COMPARE, PERMLANES, TERNARY, UNARY, apply_operation, as_signed, bitop3
from .operands import EXEC_LO, MASK32, VCC_LO, Const, Reg, decode
from .uniformity import mark_vector
from .values import MASK64, U32, Lanes, as_u32, rearranged, select_lanes

if TYPE_CHECKING:
    from .registers import RegisterFile


def _swap(state: RegisterFile, name: str, ops: tuple[str, ...]) -> bool:
    """``v_swap_b32`` and gfx950's ``v_permlane16_swap_b32`` / ``v_permlane32_swap_b32``,
    which write both their operands: the permlanes swap rows 1 and 3 of the first with rows 0
    and 2 of the second (16-lane rows), or its lanes 32-63 with the second's lanes 0-31. A
    permlane is modelled with every lane of a 64-lane wave active only; otherwise, and for
    values folded with different loops, both registers become unknown."""
    first, second = (decode(ops[0]), decode(ops[1])) if len(ops) > 1 else (None, None)
    modelled = (
        isinstance(first, Reg)
        and isinstance(second, Reg)
        and first.kind == second.kind == "v"
        and first.count == second.count == 1
    )
    if modelled:
        a, b = state.read(ops[0]).broadcast(state.width), state.read(ops[1]).broadcast(state.width)
        modelled = len({(v.symbol, v.fuzz) for v in (a, b) if v.has_affine}) <= 1 and (
            name == "swap_b32" or (state.width == 64 and state.exec_mask == MASK64)
        )
    if not modelled:
        for text in ops[:2]:
            state.clobber(text)
    elif name == "swap_b32":
        state.write(ops[0], b)
        state.write(ops[1], a)
    else:
        partner, taken = PERMLANES[name]
        state.write(ops[0], select_lanes(taken, rearranged(b, partner), a))
        state.write(ops[1], select_lanes(~taken, rearranged(a, partner), b))
    if len(ops) > 1:
        mark_vector(state, ops[1], False)
    return modelled


def execute_vector(state: RegisterFile, name: str, inst: Instruction) -> bool:
    """Apply ``inst`` (``v_<name>``) to ``state``; False when it is not modelled."""
    ops = inst.operands
    if name.startswith("cmp_") or name.startswith("cmpx_"):
        return _compare(state, name, inst)
    if name == "swap_b32" or name in PERMLANES:
        return _swap(state, name, ops)
    if name == "cndmask_b32":
        if inst.mnemonic.endswith("_e64") and len(ops) > 3:
            select = state.read_scalar64(ops[3])
        else:
            select = state.sgpr64(VCC_LO)
        a, b = state.read(ops[1]).broadcast(state.width), state.read(ops[2]).broadcast(state.width)
        if select is None:
            same = a.known & b.known & (a.values == b.values)
            state.write(ops[0], Lanes(a.values.copy(), same))
        else:
            bits = np.array([(select >> lane) & 1 for lane in range(state.width)], dtype=bool)
            state.write(ops[0], Lanes(np.where(bits, b.values, a.values), np.where(bits, b.known, a.known)))
        return True
    if name == "readfirstlane_b32":
        state.write(ops[0], _first_lane(state, state.read(ops[1])))
        return True
    if name == "readlane_b32":
        lane = state.read(ops[2]).scalar()
        src = state.read(ops[1]).broadcast(state.width)
        if lane is None:
            state.write(ops[0], Lanes.unknown(1))
        else:
            state.write(ops[0], src.lane(lane % state.width))
        return True
    if name == "writelane_b32":
        lane = state.read(ops[2]).scalar()
        value = state.read(ops[1])
        op = decode(ops[0])
        if not isinstance(op, Reg):
            return True
        table = state.vgpr if op.kind == "v" else state.agpr
        old = table.get(op.index) or Lanes.unknown(state.width)
        if lane is None:
            table[op.index] = Lanes.unknown(state.width)
        else:
            values, known = old.values.copy(), old.known.copy()
            values[lane % state.width] = value.values[0]
            known[lane % state.width] = value.known[0]
            table[op.index] = Lanes(values, known)
        return True
    if name in ("mbcnt_lo_u32_b32", "mbcnt_hi_u32_b32"):
        mask, base = state.read(ops[1]).scalar(), state.read(ops[2]).broadcast(state.width)
        if mask is None:
            state.write(ops[0], Lanes.unknown(state.width))
            return True
        lanes = np.arange(state.width)
        shift = lanes if name == "mbcnt_lo_u32_b32" else np.maximum(lanes - 32, 0)
        shift = np.minimum(shift, 32)
        counts = np.array([bin(mask & ((1 << int(s)) - 1)).count("1") for s in shift], dtype=U32)
        state.write(ops[0], Lanes(as_u32(counts + base.values), base.known.copy()))
        return True
    if name in ("accvgpr_write_b32", "accvgpr_read_b32", "accvgpr_mov_b32", "mov_b32"):
        state.write(ops[0], state.read(ops[1]))
        return True
    if name == "mov_b64":
        for part in range(2):
            state.write(ops[0], state.read(ops[1], part=part), part=part)
        return True
    if name == "pk_mov_b32":
        return _pk_mov(state, inst)
    if name in ("lshlrev_b64", "lshrrev_b64", "ashrrev_i64"):
        return _shift64(state, name, inst)
    if name == "bitop3_b32":
        table = inst.modifier("bitop3")
        if table is None or len(ops) < 4:
            return False
        sources = [state.read(o).broadcast(state.width) for o in ops[1:4]]
        known = sources[0].known & sources[1].known & sources[2].known
        values = bitop3(int(table, 0), *[s.values for s in sources])
        state.write(ops[0], Lanes(as_u32(values), known))
        return True
    if name in ("add_co_u32", "sub_co_u32", "subrev_co_u32", "addc_co_u32", "subb_co_u32"):
        return _carry(state, name, inst)
    if name == "mad_u64_u32":
        return _mad_u64(state, inst)
    if name == "lshl_add_u64":
        return _lshl_add_u64(state, inst)
    if name in UNARY or name in BINARY or name in TERNARY:
        return apply_operation(state, name, ops, scalar=False)
    return False


def _first_lane(state: RegisterFile, src: Lanes) -> Lanes:
    src = src.broadcast(state.width)
    mask = state.exec_mask
    if mask is None or mask == 0:
        same = src.all_known and bool((src.values == src.values[0]).all())
        return Lanes.constant(int(src.values[0]), 1) if same else Lanes.unknown(1)
    lane = (mask & -mask).bit_length() - 1
    if lane >= state.width:
        return Lanes.unknown(1)
    return src.lane(lane)


def _lane_bits(state: RegisterFile, result: np.ndarray, known: np.ndarray) -> int | None:
    active = state.active()
    if state.exec_mask is None or not known[active].all():
        return None
    mask = 0
    for lane in range(state.width):
        if active[lane] and result[lane]:
            mask |= 1 << lane
    return mask


def _compare(state: RegisterFile, name: str, inst: Instruction) -> bool:
    ops = inst.operands
    e64 = inst.mnemonic.endswith("_e64")
    writes_exec = name.startswith("cmpx_")
    # LLVM prints the implicit vcc of the e32 form as the first operand: "v_cmp_eq_u32_e32 vcc, 0, v2"
    explicit_dest = e64 or (ops and decode(ops[0]) == Reg("s", VCC_LO, 2))
    sources = ops[1:3] if explicit_dest else ops[0:2]
    parts = name.split("_")
    relation, kind = parts[1], parts[2] if len(parts) > 2 else ""
    mask, outcome, known = None, None, None
    if len(sources) == 2 and relation in COMPARE and kind in ("u32", "i32", "u16", "i16"):
        a, b = (state.read(s).broadcast(state.width) for s in sources)
        av, bv = (a.values, b.values) if kind.startswith("u") else (as_signed(a.values), as_signed(b.values))
        outcome, known = COMPARE[relation](av, bv), a.known & b.known
        mask = _lane_bits(state, outcome, known)
    elif len(sources) == 2 and relation in COMPARE and kind in ("u64", "i64"):
        (al, ah), (bl, bh) = ([state.read(s, part=p).broadcast(state.width) for p in (0, 1)] for s in sources)
        known = al.known & ah.known & bl.known & bh.known
        high_a, high_b = (ah.values, bh.values) if kind == "u64" else (as_signed(ah.values), as_signed(bh.values))
        # (high, low) compared in order: the high words as the kind says, the low ones unsigned
        lt = (high_a < high_b) | ((high_a == high_b) & (al.values < bl.values))
        eq = (high_a == high_b) & (al.values == bl.values)
        outcome = {"eq": eq, "ne": ~eq, "lg": ~eq, "lt": lt, "le": lt | eq, "gt": ~(lt | eq), "ge": ~lt}[relation]
        mask = _lane_bits(state, outcome, known)
    exec_ = state.exec_mask
    symbol = state.exec_symbol()
    if mask is None and symbol is not None and known is not None and known.all():
        # a known result under exec = (P & X) | (Q & ~X): the same function of X, masked
        bits = sum(1 << int(lane) for lane in np.flatnonzero(outcome))
        result = (symbol[0], bits & symbol[1], bits & symbol[2])
    else:
        # an unknown result is X & exec for a new X, named by the compare's index
        result = (
            (None, mask, mask)
            if mask is not None
            else (None if exec_ is None or writes_exec else (inst.index, exec_, 0))
        )
        if result is not None and result[0] is not None:
            state.forget_unknown(inst.index)  # a new X: that of the compare's last run is gone
    if e64 and ops:
        dest = decode(ops[0])
        if isinstance(dest, Reg) and dest.kind == "s":
            state.write_mask64(dest.index, result)
    elif not writes_exec:
        state.write_mask64(VCC_LO, result)
    if writes_exec:
        state.write_mask64(EXEC_LO, result)
        if not e64:
            state.write_mask64(VCC_LO, result)
    return True


def _carry(state: RegisterFile, name: str, inst: Instruction) -> bool:
    ops = inst.operands
    e64 = inst.mnemonic.endswith("_e64")
    # _e64: vdst, sdst, src0, src1[, carry-in]; _e32: vdst, vcc, src0, src1[, vcc]
    carry_dest = decode(ops[1]) if len(ops) > 1 else None
    sources = [state.read(o).broadcast(state.width) for o in ops[2:4]]
    if len(sources) < 2:
        return False
    a, b = sources
    known = a.known & b.known
    carry_in = np.zeros(state.width, dtype=U32)
    if name in ("addc_co_u32", "subb_co_u32"):
        cin_mask = state.read_scalar64(ops[4]) if e64 and len(ops) > 4 else state.sgpr64(VCC_LO)
        if cin_mask is None:
            known = np.zeros(state.width, dtype=bool)
        else:
            carry_in = np.array([(cin_mask >> lane) & 1 for lane in range(state.width)], dtype=U32)
    if name in ("add_co_u32", "addc_co_u32"):
        full = a.values + b.values + carry_in
        carry = full > MASK32
    elif name == "subrev_co_u32":
        full = b.values - a.values
        carry = full < 0
    else:
        full = a.values - b.values - carry_in
        carry = full < 0
    state.write(ops[0], Lanes(as_u32(full), known))
    mask = _lane_bits(state, carry, known)
    if isinstance(carry_dest, Reg) and carry_dest.kind == "s":
        state.write_sgpr64(carry_dest.index, mask)
    return True


def _mad_u64(state: RegisterFile, inst: Instruction) -> bool:
    ops = inst.operands  # vdst[2], sdst, src0, src1, src2[2]
    if len(ops) < 5:
        return False
    a, b = (state.read(o).broadcast(state.width) for o in ops[2:4])
    c_lo, c_hi = (state.read(ops[4], part=p).broadcast(state.width) for p in range(2))
    known = a.known & b.known & c_lo.known & c_hi.known
    product = a.values.astype(object) * b.values.astype(object) + (c_hi.values.astype(object) << 32) + c_lo.values
    lo = np.array([int(x) & MASK32 for x in product], dtype=U32)
    hi = np.array([(int(x) >> 32) & MASK32 for x in product], dtype=U32)
    state.write(ops[0], Lanes(lo, known.copy()), part=0)
    state.write(ops[0], Lanes(hi, known.copy()), part=1)
    state.clobber(ops[1])
    return True


def _pk_mov(state: RegisterFile, inst: Instruction) -> bool:
    """``v_pk_mov_b32 vdst[2], src0[2], src1[2] op_sel:[a,b]``: the low dword is src0's dword
    ``a``, the high one src1's dword ``b`` (LLVM's 64-bit copy is ``op_sel:[0,1]`` of one source;
    ``op_sel:[1,0]`` moves a window one dword along a chain of pairs)."""
    ops = inst.operands
    if len(ops) < 3:
        return False
    selected = inst.modifier("op_sel")
    try:
        picks = [int(x) for x in selected.strip("[]").split(",")] if selected else [0, 0]
    except ValueError:
        return False
    picks = (picks + [0, 0])[:2]
    # both sources are read before the destination (often one of them) is written; the high
    # dword of a constant is not guessed at (how a packed operand extends it is not modelled)
    halves = [
        Lanes.unknown(1) if isinstance(decode(src), Const) and pick else state.read(src, part=pick)
        for src, pick in zip(ops[1:3], picks)
    ]
    for part, value in enumerate(halves):
        state.write(ops[0], value, part=part)
    return True


def _shift64(state: RegisterFile, name: str, inst: Instruction) -> bool:
    """``v_lshlrev_b64 vdst[2], shift, src[2]`` and the right shifts: the 64-bit source shifted
    by the low 6 bits of the shift, per lane."""
    ops = inst.operands
    if len(ops) < 3:
        return False
    shift = state.read(ops[1]).broadcast(state.width)
    if isinstance(decode(ops[2]), Const):
        return False  # how a 32-bit constant extends to 64 bits is not modelled
    lo, hi = (state.read(ops[2], part=p).broadcast(state.width) for p in range(2))
    known = shift.known & lo.known & hi.known
    results = []
    for low, high, amount in zip(lo.values, hi.values, shift.values):
        value, amount = (int(high) << 32) | int(low), int(amount) & 63
        if name == "lshlrev_b64":
            value <<= amount
        elif name == "lshrrev_b64":
            value >>= amount
        else:
            value = (value - (1 << 64) if value >> 63 else value) >> amount
        results.append(value & 0xFFFFFFFFFFFFFFFF)
    _write_u64(state, ops[0], results, known)
    return True


def _write_u64(state: RegisterFile, dest: str, values: list[int], known: np.ndarray) -> None:
    """A 64-bit vector result, one value per lane, into the two dwords of ``dest``."""
    state.write(dest, Lanes(np.array([v & MASK32 for v in values], dtype=U32), known.copy()), part=0)
    state.write(dest, Lanes(np.array([v >> 32 for v in values], dtype=U32), known.copy()), part=1)


def _lshl_add_u64(state: RegisterFile, inst: Instruction) -> bool:
    ops = inst.operands  # vdst[2], src0[2], shift, src2[2]
    if len(ops) < 4:
        return False
    a_lo, a_hi = (state.read(ops[1], part=p).broadcast(state.width) for p in range(2))
    shift = state.read(ops[2]).broadcast(state.width)
    c_lo, c_hi = (state.read(ops[3], part=p).broadcast(state.width) for p in range(2))
    known = a_lo.known & a_hi.known & shift.known & c_lo.known & c_hi.known
    a = (a_hi.values.astype(object) << 32) + a_lo.values
    c = (c_hi.values.astype(object) << 32) + c_lo.values
    total = [((int(x) << (int(s) & 7)) + int(y)) & 0xFFFFFFFFFFFFFFFF for x, s, y in zip(a, shift.values, c)]
    _write_u64(state, ops[0], total, known)
    return True
