"""The integer operations of the register model by opcode (SALU and VALU, with the ``s_`` or
``v_`` and the encoding suffix taken off), which of them set or keep SCC, which instructions
write no register or data the model does not track, and how a table's operation is applied to
a wave's registers.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import numpy as np

from .asm import Instruction
from .operands import MASK32, Const, Reg, decode
from .values import U32, Lanes, as_u32, with_affine

if TYPE_CHECKING:
    from .registers import RegisterFile


def as_signed(a: np.ndarray) -> np.ndarray:
    return np.where(a >= 0x80000000, a - (1 << 32), a)


def bitop3(table: int, a, b, c):
    out = np.zeros_like(a)
    for bit in range(32):
        ia = (a >> bit) & 1
        ib = (b >> bit) & 1
        ic = (c >> bit) & 1
        out |= ((table >> (ia * 4 + ib * 2 + ic)) & 1) << bit
    return out


def _bfe(a, offset, width):
    offset = offset & 31
    width = width & 31
    return (a >> offset) & ((np.int64(1) << width) - 1)


def sext(value, bits):
    sign = np.int64(1) << (bits - 1)
    return ((value & ((sign << 1) - 1)) ^ sign) - sign


# Integer operations on 32-bit lanes, by the number of their sources: name -> function.
BINARY = {
    "add_u32": lambda a, b: a + b,
    "add_i32": lambda a, b: a + b,
    "add_nc_u32": lambda a, b: a + b,
    "sub_u32": lambda a, b: a - b,
    "sub_i32": lambda a, b: a - b,
    "sub_nc_u32": lambda a, b: a - b,
    "subrev_u32": lambda a, b: b - a,
    "mul_i32": lambda a, b: a * b,
    "mul_lo_u32": lambda a, b: a * b,
    "mul_lo_i32": lambda a, b: a * b,
    "mul_hi_u32": lambda a, b: ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)).astype(U32),
    "mul_hi_i32": lambda a, b: (as_signed(a) * as_signed(b)) >> 32,
    "mul_u32_u24": lambda a, b: (a & 0xFFFFFF) * (b & 0xFFFFFF),
    "mul_hi_u32_u24": lambda a, b: ((a & 0xFFFFFF) * (b & 0xFFFFFF)) >> 32,
    "mul_i32_i24": lambda a, b: sext(a, 24) * sext(b, 24),
    "lshl_b32": lambda a, b: a << (b & 31),
    "lshr_b32": lambda a, b: a >> (b & 31),
    "ashr_i32": lambda a, b: as_signed(a) >> (b & 31),
    "lshlrev_b32": lambda a, b: b << (a & 31),
    "lshrrev_b32": lambda a, b: b >> (a & 31),
    "ashrrev_i32": lambda a, b: as_signed(b) >> (a & 31),
    "and_b32": lambda a, b: a & b,
    "or_b32": lambda a, b: a | b,
    "xor_b32": lambda a, b: a ^ b,
    "andn2_b32": lambda a, b: a & ~b,
    "orn2_b32": lambda a, b: a | ~b,
    "and_not1_b32": lambda a, b: a & ~b,
    "or_not1_b32": lambda a, b: a | ~b,
    "nand_b32": lambda a, b: ~(a & b),
    "nor_b32": lambda a, b: ~(a | b),
    "xnor_b32": lambda a, b: ~(a ^ b),
    "min_u32": np.minimum,
    "max_u32": np.maximum,
    "min_i32": lambda a, b: np.minimum(as_signed(a), as_signed(b)),
    "max_i32": lambda a, b: np.maximum(as_signed(a), as_signed(b)),
    "lshl1_add_u32": lambda a, b: (a << 1) + b,
    "lshl2_add_u32": lambda a, b: (a << 2) + b,
    "lshl3_add_u32": lambda a, b: (a << 3) + b,
    "lshl4_add_u32": lambda a, b: (a << 4) + b,
    "bfe_u32_packed": lambda a, b: _bfe(a, b, b >> 16),
    "bfe_i32_packed": lambda a, b: sext(_bfe(a, b, b >> 16), np.maximum((b >> 16) & 31, 1)),
    "bfm_b32": lambda a, b: ((np.int64(1) << (a & 31)) - 1) << (b & 31),
}
TERNARY = {
    "lshl_add_u32": lambda a, b, c: (a << (b & 31)) + c,
    "add_lshl_u32": lambda a, b, c: (a + b) << (c & 31),
    "lshl_or_b32": lambda a, b, c: (a << (b & 31)) | c,
    "and_or_b32": lambda a, b, c: (a & b) | c,
    "or3_b32": lambda a, b, c: a | b | c,
    "xor3_b32": lambda a, b, c: a ^ b ^ c,
    "add3_u32": lambda a, b, c: a + b + c,
    "xad_u32": lambda a, b, c: (a ^ b) + c,
    "mad_u32_u24": lambda a, b, c: (a & 0xFFFFFF) * (b & 0xFFFFFF) + c,
    "mad_i32_i24": lambda a, b, c: sext(a, 24) * sext(b, 24) + as_signed(c),
    "bfe_u32": _bfe,
    "bfe_i32": lambda a, b, c: sext(_bfe(a, b, c), np.maximum(c & 31, 1)),
    "bfi_b32": lambda a, b, c: (a & b) | (~a & c),
    "alignbit_b32": lambda a, b, c: ((a << 32) | b) >> (c & 31),
    "alignbyte_b32": lambda a, b, c: ((a << 32) | b) >> ((c & 3) * 8),
    "min3_u32": lambda a, b, c: np.minimum(np.minimum(a, b), c),
    "max3_u32": lambda a, b, c: np.maximum(np.maximum(a, b), c),
}
UNARY = {
    "mov_b32": lambda a: a,
    "movk_i32": lambda a: sext(a, 16),
    "not_b32": lambda a: ~a,
    "brev_b32": lambda a: np.array([int(f"{int(x):032b}"[::-1], 2) for x in a], dtype=U32),
    "abs_i32": lambda a: np.abs(as_signed(a)),
    "bcnt1_i32_b32": lambda a: np.array([bin(int(x)).count("1") for x in a], dtype=U32),
    "sext_i32_i8": lambda a: sext(a, 8),
    "sext_i32_i16": lambda a: sext(a, 16),
}
COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lg": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
SCALAR_64 = {
    "mov_b64": lambda a, b=None: a,
    "and_b64": lambda a, b: a & b,
    "or_b64": lambda a, b: a | b,
    "xor_b64": lambda a, b: a ^ b,
    "andn2_b64": lambda a, b: a & ~b & 0xFFFFFFFFFFFFFFFF,
    "orn2_b64": lambda a, b: (a | ~b) & 0xFFFFFFFFFFFFFFFF,
    "and_not1_b64": lambda a, b: a & ~b & 0xFFFFFFFFFFFFFFFF,
    "nand_b64": lambda a, b: ~(a & b) & 0xFFFFFFFFFFFFFFFF,
    "nor_b64": lambda a, b: ~(a | b) & 0xFFFFFFFFFFFFFFFF,
    "xnor_b64": lambda a, b: ~(a ^ b) & 0xFFFFFFFFFFFFFFFF,
    "not_b64": lambda a, b=None: ~a & 0xFFFFFFFFFFFFFFFF,
    "lshl_b64": lambda a, b: (a << (b & 63)) & 0xFFFFFFFFFFFFFFFF,
    "lshr_b64": lambda a, b: a >> (b & 63),
}
BITWISE_64 = {name for name in SCALAR_64 if not name.startswith(("lshl", "lshr"))}
SAVEEXEC = {
    "and_saveexec_b64": lambda src, exec_: src & exec_,
    "or_saveexec_b64": lambda src, exec_: src | exec_,
    "xor_saveexec_b64": lambda src, exec_: src ^ exec_,
    "andn2_saveexec_b64": lambda src, exec_: src & ~exec_ & 0xFFFFFFFFFFFFFFFF,
    "orn2_saveexec_b64": lambda src, exec_: (src | ~exec_) & 0xFFFFFFFFFFFFFFFF,
    "andn1_saveexec_b64": lambda src, exec_: ~src & exec_ & 0xFFFFFFFFFFFFFFFF,
}

# Scalar operations that leave SCC alone, and those that set it to an overflow flag.
_KEEPS_SCC = {
    "mov_b32",
    "movk_i32",
    "mul_i32",
    "mul_hi_u32",
    "mul_hi_i32",
    "brev_b32",
    "bfm_b32",
    "sext_i32_i8",
    "sext_i32_i16",
}
_SCC_OVERFLOW = {"add_i32", "sub_i32", "lshl1_add_u32", "lshl2_add_u32", "lshl3_add_u32", "lshl4_add_u32"}

# Instructions that write no register operand (beyond what the model handles explicitly).
NO_DEST_PREFIXES = (
    "s_waitcnt",
    "s_barrier",
    "s_nop",
    "s_setprio",
    "s_sched",
    "s_endpgm",
    "s_branch",
    "s_cbranch",
    "s_sendmsg",
    "s_sleep",
    "s_dcache",
    "s_icache",
    "s_trap",
    "s_setreg",
    "s_set_gpr_idx",
    "s_cmp",
    "s_bitcmp",
    "s_store",
    "s_buffer_store",
    "s_wait",
    "buffer_store",
    "buffer_wbl2",
    "buffer_inv",
    "buffer_wbinvl1",
    "global_store",
    "flat_store",
    "scratch_store",
    "ds_write",
    "ds_store",
    "exp",
    "s_denorm_mode",
    "s_round_mode",
)

# what makes a vector result depend on other lanes or on the lane's position
_LANE_WORDS = ("mbcnt", "permlane", "writelane", "swap", "dpp", "bpermute")
_LANE_MODIFIERS = ("row_", "quad_perm", "bound_ctrl", "wave_", "dpp", "fi:", "bank_mask", "row_mask")

# Scalar instructions that leave SCC as it was.
KEEPS_SCC_PREFIXES = (
    "s_mov",
    "s_movk",
    "s_cselect",
    "s_cmov",
    "s_mul_i32",
    "s_mul_hi",
    "s_load",
    "s_buffer_load",
    "s_getpc",
    "s_memtime",
    "s_memrealtime",
    "s_getreg",
    "s_sext",
    "s_brev",
    "s_bfm",
    "s_pack",
    "s_bitset",
    "s_addk",
    "s_mulk",
    "s_movrel",
    "s_setpc",
    "s_swappc",
)

# Instructions whose results are data the model does not track by design (loaded values, clocks,
# hardware state, the program counter): unknown results, but modelled as such.
DATA_PREFIXES = (
    "s_load",
    "s_buffer_load",
    "s_scratch_load",
    "s_getpc",
    "s_memtime",
    "s_memrealtime",
    "s_getreg",
    "s_sendmsg_rtn",
    "s_atomic",
    "s_buffer_atomic",
    "s_rfe",
)
# A vector instruction with an integer result type: an address computation the model should know.
INTEGER_RESULT = re.compile(r"^v_.*_(b|u|i)(8|16|32|64)$")


@functools.lru_cache(maxsize=1 << 16)
def vector_facts(inst: Instruction) -> tuple[bool, bool, tuple[int, ...], tuple[str, ...]]:
    """Of a VALU instruction: whether it writes a carry or other scalar second result; whether it
    computes each lane from that lane's sources alone (false too where a source is neither a
    register nor a constant, or an AGPR); the VGPRs and the scalar operands it reads."""
    name, ops = inst.mnemonic, inst.operands
    carry = ("_co_" in name or "div_scale" in name or "mad_u64" in name or "mad_i64" in name) and len(ops) > 1
    lane_free = (
        bool(ops)
        and not any(word in inst.base for word in _LANE_WORDS)
        and not any(m.startswith(_LANE_MODIFIERS) for m in inst.modifiers)
    )
    vector, scalar = [], []
    for text in ops[2 if carry else 1 :]:
        op = decode(text)
        if isinstance(op, Const):
            continue
        if isinstance(op, Reg) and op.kind == "s":
            scalar.append(text)
        elif isinstance(op, Reg) and op.kind == "v":
            vector.extend(range(op.index, op.index + op.count))
        else:
            lane_free = False
    return carry, lane_free, tuple(vector), tuple(scalar)


def _partners(rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A permlane swap of ``rows``-lane groups: the lane each lane trades with, and the lanes
    (rows 1 and 3, or lanes 32-63) the first operand takes from the second."""
    taken = np.arange(64).reshape(-1, 2 * rows)[:, rows:].ravel()
    partner = np.arange(64)
    partner[taken], partner[taken - rows] = taken - rows, taken
    return partner, np.isin(np.arange(64), taken)


PERMLANES = {"permlane16_swap_b32": _partners(16), "permlane32_swap_b32": _partners(32)}


def _carry(name: str, a: Lanes, b: Lanes) -> bool | None:
    """The carry (``add_u32``) or borrow (``sub_u32``) of two scalars. A folded loop counter
    ``x + s*J`` never wraps (the assumption of :mod:`.affine`), so its sum with a constant carries
    only where ``x`` plus it does, and a constant no larger than ``x`` never borrows from it:
    a 64-bit counter's high word stays known through the loop."""
    x, y = a.scalar(), b.scalar()
    if x is not None and y is not None:
        return x + y > MASK32 if name == "add_u32" else x < y

    def folded(v: Lanes) -> int | None:
        return int(v.values[0]) if v.has_affine and v.fuzz == 0 else None

    base, constant = (folded(a), y) if y is not None or name == "sub_u32" else (folded(b), x)
    if base is None or constant is None:
        return None
    return False if (base + constant <= MASK32 if name == "add_u32" else base >= constant) else None


def apply_operation(state: RegisterFile, name: str, ops: tuple[str, ...], *, scalar: bool) -> bool:
    """An operation of the tables on a wave's registers: ``ops[0]`` := the operation of the
    others, affine lanes kept where a rule of :mod:`.affine` resolves them; a scalar one sets
    SCC as the instruction does. False when ``name`` is in no table or lacks its operands."""
    arity = 1 if name in UNARY else 2 if name in BINARY else 3 if name in TERNARY else None
    if arity is None or len(ops) < arity + 1:
        return False
    if name in UNARY:
        sources = [state.read(ops[1])] if len(ops) > 1 else []
        fn = UNARY[name]
    elif name in BINARY:
        sources = [state.read(ops[1]), state.read(ops[2])]
        fn = BINARY[name]
    elif name in TERNARY:
        sources = [state.read(ops[1]), state.read(ops[2]), state.read(ops[3])]
        fn = TERNARY[name]
    else:
        return False
    width = max(len(s.values) for s in sources) if sources else 1
    sources = [s.broadcast(width) for s in sources]
    known = np.logical_and.reduce([s.known for s in sources]) if sources else np.ones(width, bool)
    raw = np.asarray(fn(*[s.values for s in sources]), dtype=U32)
    result = Lanes(as_u32(raw), known)
    if any(s.has_affine for s in sources):
        result = with_affine(name, sources, result)
    state.write(ops[0], result)
    if scalar:
        value = result.scalar()
        if name in ("add_u32", "sub_u32"):
            state.scc = _carry(name, sources[0], sources[1])
        elif name in _KEEPS_SCC:
            pass
        elif name in _SCC_OVERFLOW:
            state.scc = None  # signed overflow: not modelled
        else:
            state.scc = None if value is None else value != 0
    return True
