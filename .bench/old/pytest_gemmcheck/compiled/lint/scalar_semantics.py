"""The semantics of the scalar (SALU) instructions the register model knows: 64-bit lane masks,
including unknown ones as functions of a vector compare; compares into SCC; selects, moves and
bit operations; the integer operations of :mod:`.opcodes`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .opcodes import BINARY, BITWISE_64, COMPARE, SAVEEXEC, SCALAR_64, UNARY, apply_operation, as_signed, sext
from .operands import EXEC_LO, MASK32, Reg, decode
from .values import MASK64, Affine, Lanes, join_lanes, same_step_bases

if TYPE_CHECKING:
    from .registers import RegisterFile


def _bitwise(operation, a: tuple | None, b: tuple | None) -> tuple | None:
    """A bitwise operation on two masks of ``RegisterFile.masks``' form, bit by bit on P and on Q;
    None when either is unknown or they are functions of different compares."""
    if a is None or b is None or (a[0] is not None and b[0] is not None and a[0] != b[0]):
        return None
    return (a[0] if a[0] is not None else b[0]), operation(a[1], b[1]) & MASK64, operation(a[2], b[2]) & MASK64


def _conjunction(state: RegisterFile, site: int, a: tuple | None, b: tuple | None) -> tuple | None:
    """``a & b`` of masks of two different compares (a bounds check on rows and one on
    columns, and-ed into one exec) as ``X' & U`` for a new unknown ``X'`` named by the ``and``,
    ``U`` the lanes either may have: which lanes an ``s_and_saveexec`` region may run stays known."""
    if a is None or b is None:
        return None
    state.forget_unknown(site)  # a new X': that of this and's last run is gone
    return site, (a[1] | a[2]) & (b[1] | b[2]), 0


def execute_scalar(state: RegisterFile, name: str, ops: tuple[str, ...], site: int = -1) -> bool:
    """Apply ``s_<name>`` (at instruction index ``site``) to ``state``; False when it is not modelled."""
    if name in SAVEEXEC:
        src, exec_ = state.mask64(ops[1]), state.mask64("exec")
        state.write_mask64(decode(ops[0]).index, exec_)
        new = _bitwise(SAVEEXEC[name], src, exec_)
        if new is None and name == "and_saveexec_b64":
            new = _conjunction(state, site, src, exec_)
        state.write_mask64(EXEC_LO, new)
        state.scc = None if new is None or new[1] != new[2] else new[1] != 0
        return True
    if name in BITWISE_64:
        a = state.mask64(ops[1])
        b = state.mask64(ops[2]) if len(ops) > 2 else (None, 0, 0)
        value = _bitwise(SCALAR_64[name], a, b)
        if value is None and name == "and_b64":
            value = _conjunction(state, site, a, b)
        if value is None and name == "or_b64" and (None, MASK64, MASK64) in (a, b):
            value = None, MASK64, MASK64  # restoring a full wave's exec after a divergent region
        dest = decode(ops[0])
        if isinstance(dest, Reg):
            state.write_mask64(dest.index, value)
        if name != "mov_b64":
            state.scc = None if value is None or value[1] != value[2] else value[1] != 0
        return True
    if name in SCALAR_64:  # the shifts: every other 64-bit operation is bitwise, above
        a = state.read_scalar64(ops[1])
        b = state.read_scalar64(ops[2]) if len(ops) > 2 else 0
        value = None if a is None or b is None else SCALAR_64[name](a, b)
        dest = decode(ops[0])
        if isinstance(dest, Reg):
            state.write_sgpr64(dest.index, value)
        state.scc = None if value is None else value != 0
        return True
    if name.startswith("cmp_") or name.startswith("cmpk_"):
        parts = name.split("_")
        relation, kind = parts[1], parts[2]
        if kind == "u64":
            a, b = state.read_scalar64(ops[0]), state.read_scalar64(ops[1])
        else:
            a, b = state.read(ops[0]).scalar(), state.read(ops[1]).scalar()
            if name.startswith("cmpk_") and b is not None:
                b = int(sext(np.int64(b), 16)) & MASK32 if kind == "i32" else b & 0xFFFF
            if a is None and b is None and kind == "u32":
                a, b = same_step_bases(state.read(ops[0]), state.read(ops[1]))
        if a is None or b is None or relation not in COMPARE:
            state.scc = None
        else:
            if kind == "i32":
                a, b = int(as_signed(np.int64(a))), int(as_signed(np.int64(b)))
            state.scc = bool(COMPARE[relation](a, b))
        return True
    if name in ("bitcmp0_b32", "bitcmp1_b32"):
        a, b = state.read(ops[0]).scalar(), state.read(ops[1]).scalar()
        folded = state.sgpr.get(decode(ops[0]).index) if isinstance(decode(ops[0]), Reg) else None
        if (
            a is None
            and b is not None
            and isinstance(folded, Affine)
            and folded.fuzz == 0
            and folded.step % (1 << ((b & 31) + 1)) == 0
        ):
            a = folded.base  # a folded counter's low bits, below its step's lowest set bit, are its base's
        state.scc = None if a is None or b is None else ((a >> (b & 31)) & 1) == (name == "bitcmp1_b32")
        return True
    if name in ("cselect_b32", "cselect_b64"):
        if name == "cselect_b64":
            a, b = state.read_scalar64(ops[1]), state.read_scalar64(ops[2])
            value = None if state.scc is None else (a if state.scc else b)
            if state.scc is None and a is not None and a == b:
                value = a
            state.write_sgpr64(decode(ops[0]).index, value)
        elif state.scc is None:
            state.write(ops[0], join_lanes(state.read(ops[1]), state.read(ops[2])))
        else:
            state.write(ops[0], state.read(ops[1] if state.scc else ops[2]))
        return True
    if name in ("cmov_b32", "cmovk_i32"):
        value = state.read(ops[1])
        if name == "cmovk_i32" and value.known[0]:
            value = Lanes.constant(int(sext(np.int64(value.values[0]), 16)), 1)
        if state.scc is None:
            state.write(ops[0], join_lanes(state.read(ops[0]), value))
        elif state.scc:
            state.write(ops[0], value)
        return True
    if name in ("bitset0_b32", "bitset1_b32"):
        old, bit = state.read(ops[0]).scalar(), state.read(ops[1]).scalar()
        value = None
        if old is not None and bit is not None:
            value = old | (1 << (bit & 31)) if name == "bitset1_b32" else old & ~(1 << (bit & 31))
        state.write_sgpr(decode(ops[0]).index, value)
        return True
    if name in ("bitset0_b64", "bitset1_b64"):
        old, bit = state.read_scalar64(ops[0]), state.read(ops[1]).scalar()
        value = None
        if old is not None and bit is not None:
            value = old | (1 << (bit & 63)) if name == "bitset1_b64" else old & ~(1 << (bit & 63))
        state.write_sgpr64(decode(ops[0]).index, value)
        return True
    if name in ("ff1_i32_b32", "flbit_i32_b32", "ff0_i32_b32"):
        a = state.read(ops[1]).scalar()
        value = None
        if a is not None:
            bits = a if name != "ff0_i32_b32" else ~a & MASK32
            if name == "flbit_i32_b32":
                value = MASK32 if a == 0 else 31 - (a.bit_length() - 1)
            else:
                value = MASK32 if bits == 0 else (bits & -bits).bit_length() - 1
        state.write_sgpr(decode(ops[0]).index, value)
        return True
    if name in ("pack_ll_b32_b16", "pack_lh_b32_b16", "pack_hh_b32_b16", "pack_hl_b32_b16"):
        a, b = state.read(ops[1]).scalar(), state.read(ops[2]).scalar()
        value = None
        if a is not None and b is not None:
            lo = a & 0xFFFF if name[5] == "l" else a >> 16
            hi = b & 0xFFFF if name[6] == "l" else b >> 16
            value = lo | (hi << 16)
        state.write_sgpr(decode(ops[0]).index, value)
        return True
    if name == "absdiff_i32":
        a, b = state.read(ops[1]).scalar(), state.read(ops[2]).scalar()
        value = None if a is None or b is None else abs(int(as_signed(np.int64(a))) - int(as_signed(np.int64(b))))
        state.write_sgpr(decode(ops[0]).index, value)
        state.scc = None if value is None else value != 0
        return True
    if name in ("addk_i32", "mulk_i32"):
        a, k = state.read(ops[0]).scalar(), state.read(ops[1]).scalar()
        if a is None and k is not None and state.read(ops[0]).has_affine:
            # a folded loop counter stepped by a signed 16-bit constant
            constant = str(int(sext(np.int64(k), 16)) & MASK32)
            apply_operation(
                state, "add_i32" if name == "addk_i32" else "mul_i32", (ops[0], ops[0], constant), scalar=True
            )
            state.scc = None
            return True
        value = None
        if a is not None and k is not None:
            k = int(sext(np.int64(k), 16))
            value = a + k if name == "addk_i32" else a * k
        state.write_sgpr(decode(ops[0]).index, value)
        state.scc = None
        return True
    if name in ("addc_u32", "subb_u32"):
        a, b = state.read(ops[1]).scalar(), state.read(ops[2]).scalar()
        if a is None or b is None or state.scc is None:
            state.write_sgpr(decode(ops[0]).index, None)
            state.scc = None
        else:
            full = a + b + int(state.scc) if name == "addc_u32" else a - b - int(state.scc)
            state.write_sgpr(decode(ops[0]).index, full)
            state.scc = full > MASK32 if name == "addc_u32" else full < 0
        return True
    if name == "bfe_u32" or name == "bfe_i32":
        return apply_operation(state, name + "_packed", ops, scalar=True)
    if name in UNARY or name in BINARY:
        return apply_operation(state, name, ops, scalar=True)
    return False
