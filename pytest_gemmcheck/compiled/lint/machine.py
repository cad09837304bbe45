"""One wave's register state and the integer semantics of the SALU/VALU instructions.

Values are tracked per lane where they are known exactly (thread ids, constants, LDS bases and
everything computed from them) and marked unknown otherwise (kernel arguments, loaded data,
floating point). Addresses of LDS accesses come out of this model, so it implements the integer
and bitwise operations compilers use for address arithmetic and leaves the rest unknown.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import re

import numpy as np

from . import affine
from .asm import Instruction
from .operands import EXEC_LO, MASK32, VCC_LO, Const, Reg, decode

U32 = np.int64  # values are kept as non-negative int64 below 2**32
MASK64 = 0xFFFFFFFFFFFFFFFF


class Lanes:
    """A 32-bit value per lane with a known-mask. Scalars are one-lane Lanes.

    A lane that is not known may still be *affine*: ``values + step * J`` (mod 2**32) for one
    unknown natural ``J`` named by ``symbol``, the iteration count of a folded loop (see
    :mod:`.affine`). ``fuzz`` low bits of an affine lane are not known (a quotient by a magic
    multiplication whose final shift is still to come).
    """

    __slots__ = ("values", "known", "step", "affine", "symbol", "fuzz")

    def __init__(self, values: np.ndarray, known: np.ndarray, step: np.ndarray | None = None,
                 affine: np.ndarray | None = None, symbol: int = 0, fuzz: int = 0):
        self.values = values
        self.known = known
        self.step = step  # None: no lane is affine
        self.affine = affine
        self.symbol = symbol
        self.fuzz = fuzz

    @staticmethod
    def constant(value: int, width: int) -> "Lanes":
        return Lanes(np.full(width, value & MASK32, dtype=U32), np.ones(width, dtype=bool))

    @staticmethod
    def unknown(width: int) -> "Lanes":
        return Lanes(np.zeros(width, dtype=U32), np.zeros(width, dtype=bool))

    def broadcast(self, width: int) -> "Lanes":
        if len(self.values) == width:
            return self
        if self.step is None:
            return Lanes(np.full(width, self.values[0], dtype=U32), np.full(width, bool(self.known[0])))
        return Lanes(np.full(width, self.values[0], dtype=U32), np.full(width, bool(self.known[0])),
                     np.full(width, self.step[0], dtype=np.int64), np.full(width, bool(self.affine[0])),
                     self.symbol, self.fuzz)

    @property
    def all_known(self) -> bool:
        return bool(self.known.all())

    @property
    def has_affine(self) -> bool:
        return self.step is not None and bool(self.affine.any())

    def scalar(self) -> int | None:
        return int(self.values[0]) if self.known[0] else None

    def lane(self, index: int) -> "Lanes":
        """Lane ``index`` as a one-lane value (a scalar read of it)."""
        one = slice(index, index + 1)
        if self.step is None:
            return Lanes(self.values[one].copy(), self.known[one].copy())
        return Lanes(self.values[one].copy(), self.known[one].copy(), self.step[one].copy(), self.affine[one].copy(),
                     self.symbol, self.fuzz)

    def key(self) -> tuple:
        """A hashable form: equal keys, equal values (unknown lanes compare equal)."""
        values = np.where(self.known, self.values, 0)
        if not self.has_affine:
            return (values.tobytes(), self.known.tobytes())
        return (values.tobytes(), self.known.tobytes(), np.where(self.affine, self.step, 0).tobytes(),
                self.affine.tobytes(), self.symbol, self.fuzz)


@dataclass(frozen=True)
class Affine:
    """A scalar register's value ``base + step * J`` (mod 2**32) for the folded loop ``symbol``."""

    base: int
    step: int
    symbol: int
    fuzz: int = 0

    def lanes(self) -> Lanes:
        return Lanes(np.array([self.base], dtype=U32), np.zeros(1, dtype=bool), np.array([self.step], dtype=np.int64),
                     np.ones(1, dtype=bool), self.symbol, self.fuzz)


def select_lanes(mask: np.ndarray, new: Lanes, old: Lanes) -> Lanes:
    """``new`` on the lanes of ``mask``, ``old`` elsewhere (affine lanes kept where they are)."""
    values = np.where(mask, _u(new.values), old.values)
    known = np.where(mask, new.known, old.known)
    if new.step is None and old.step is None:
        return Lanes(values, known)
    width = len(values)
    zeros, none = np.zeros(width, dtype=np.int64), np.zeros(width, dtype=bool)
    new_step, new_aff = (new.step, new.affine) if new.step is not None else (zeros, none)
    old_step, old_aff = (old.step, old.affine) if old.step is not None else (zeros, none)
    affine = np.where(mask, new_aff, old_aff)
    symbols = {lanes.symbol for lanes, aff in ((new, new_aff & mask), (old, old_aff & ~mask)) if aff.any()}
    if len(symbols) > 1 or (affine.any() and new.fuzz != old.fuzz and (new_aff & mask).any() and (old_aff & ~mask).any()):
        affine = np.zeros(width, dtype=bool)  # two loops' symbols, or two fuzz widths: not one affine value
    fuzz = new.fuzz if (new_aff & mask).any() else old.fuzz
    return Lanes(values, known, np.where(mask, new_step, old_step), affine, symbols.pop() if symbols else 0, fuzz)


def join_lanes(a: Lanes, b: Lanes) -> Lanes:
    """What two paths' values have in common: lanes equal on both stay, the others are unknown."""
    same_known = a.known & b.known & (a.values == b.values)
    if not (a.has_affine and b.has_affine and a.symbol == b.symbol and a.fuzz == b.fuzz):
        return Lanes(np.where(same_known, a.values, 0), same_known)
    same_affine = a.affine & b.affine & (a.values == b.values) & (a.step == b.step)
    return Lanes(np.where(same_known | same_affine, a.values, 0), same_known, np.where(same_affine, a.step, 0),
                 same_affine, a.symbol, a.fuzz)


def _with_affine(name: str, sources: list[Lanes], exact: Lanes) -> Lanes:
    """``exact`` with the lanes an affine rule resolves added (see :mod:`.affine`)."""
    symbols = {s.symbol for s in sources if s.has_affine}
    if len(symbols) != 1:
        return exact
    parts = []
    for s in sources:
        step = s.step if s.step is not None else np.zeros(len(s.values), dtype=np.int64)
        affine_lanes = s.affine if s.affine is not None else np.zeros(len(s.values), dtype=bool)
        parts.append((s.values.astype(np.int64), np.where(s.known, 0, step), s.known | affine_lanes, s.fuzz))
    result = affine.apply(name, parts)
    if result is None:
        return exact
    base, step, valid, fuzz = result
    step = np.asarray(step, dtype=np.int64)
    exact_now = valid & (step == 0) & (fuzz == 0)
    known = exact.known | exact_now
    values = np.where(exact.known, exact.values, _u(base))
    stepped = valid & ~known
    if not stepped.any():
        return Lanes(values, known)
    return Lanes(values, known, np.where(stepped, step, 0), stepped, symbols.pop(), fuzz)


def _shifted_value(value: Lanes, shift: int) -> int | Affine:
    base = (int(value.values[0]) + shift) & MASK32
    return base if value.known[0] else Affine(base, int(value.step[0]), value.symbol, value.fuzz)


def _value_class(value: int | Affine) -> tuple:
    """Values of one class compare by their bases: exact ints, or one folded loop's with one step."""
    return ("exact",) if isinstance(value, int) else ("affine", value.symbol, value.step, value.fuzz)


def _base(value: int | Affine) -> int:
    return value if isinstance(value, int) else value.base


def contradicts(bounds: dict, value: int | Affine | None) -> bool:
    """Whether a register's bounds rule out ``value``, or each other."""
    by_class: dict[tuple, dict[str, int]] = {}
    for (kind, cls), bound in bounds.items():
        by_class.setdefault(cls, {})[kind] = _base(bound)
    for cls, sides in by_class.items():
        if "lt" in sides and "ge" in sides and sides["ge"] >= sides["lt"]:
            return True
        if value is not None and _value_class(value) == cls:
            if ("lt" in sides and _base(value) >= sides["lt"]) or ("ge" in sides and _base(value) < sides["ge"]):
                return True
    return False


def _same_step_bases(a: Lanes, b: Lanes) -> tuple[int | None, int | None]:
    """Two scalars ``x + s*J`` and ``y + s*J`` of one folded loop compare as ``x`` and ``y`` for
    every J (unsigned, no wraparound: the assumption of :mod:`.affine`)."""
    if not (a.has_affine and b.has_affine and a.symbol == b.symbol and a.fuzz == b.fuzz == 0
            and int(a.step[0]) == int(b.step[0])):
        return None, None
    return int(a.values[0]), int(b.values[0])


def _partners(rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A permlane swap of ``rows``-lane groups: the lane each lane trades with, and the lanes
    (rows 1 and 3, or lanes 32-63) the first operand takes from the second."""
    taken = np.arange(64).reshape(-1, 2 * rows)[:, rows:].ravel()
    partner = np.arange(64)
    partner[taken], partner[taken - rows] = taken - rows, taken
    return partner, np.isin(np.arange(64), taken)


_PERMLANES = {"permlane16_swap_b32": _partners(16), "permlane32_swap_b32": _partners(32)}


def _rearranged(lanes: Lanes, order: np.ndarray) -> Lanes:
    """``lanes`` with lane i holding lane ``order[i]``'s value (affine parts included)."""
    if lanes.step is None:
        return Lanes(lanes.values[order], lanes.known[order])
    return Lanes(lanes.values[order], lanes.known[order], lanes.step[order], lanes.affine[order], lanes.symbol, lanes.fuzz)


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


def _signed(a: np.ndarray) -> np.ndarray:
    return np.where(a >= 0x80000000, a - (1 << 32), a)


def _u(a) -> np.ndarray:
    return np.asarray(a, dtype=U32) & MASK32


def _bitop3(table: int, a, b, c):
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


def _sext(value, bits):
    sign = np.int64(1) << (bits - 1)
    return ((value & ((sign << 1) - 1)) ^ sign) - sign


# Integer operations on 32-bit lanes: name -> (number of sources, function).
_BINARY = {
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
    "mul_hi_i32": lambda a, b: (_signed(a) * _signed(b)) >> 32,
    "mul_u32_u24": lambda a, b: (a & 0xFFFFFF) * (b & 0xFFFFFF),
    "mul_hi_u32_u24": lambda a, b: ((a & 0xFFFFFF) * (b & 0xFFFFFF)) >> 32,
    "mul_i32_i24": lambda a, b: _sext(a, 24) * _sext(b, 24),
    "lshl_b32": lambda a, b: a << (b & 31),
    "lshr_b32": lambda a, b: a >> (b & 31),
    "ashr_i32": lambda a, b: _signed(a) >> (b & 31),
    "lshlrev_b32": lambda a, b: b << (a & 31),
    "lshrrev_b32": lambda a, b: b >> (a & 31),
    "ashrrev_i32": lambda a, b: _signed(b) >> (a & 31),
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
    "min_i32": lambda a, b: np.minimum(_signed(a), _signed(b)),
    "max_i32": lambda a, b: np.maximum(_signed(a), _signed(b)),
    "lshl1_add_u32": lambda a, b: (a << 1) + b,
    "lshl2_add_u32": lambda a, b: (a << 2) + b,
    "lshl3_add_u32": lambda a, b: (a << 3) + b,
    "lshl4_add_u32": lambda a, b: (a << 4) + b,
    "bfe_u32_packed": lambda a, b: _bfe(a, b, b >> 16),
    "bfe_i32_packed": lambda a, b: _sext(_bfe(a, b, b >> 16), np.maximum((b >> 16) & 31, 1)),
    "bfm_b32": lambda a, b: ((np.int64(1) << (a & 31)) - 1) << (b & 31),
}
_TERNARY = {
    "lshl_add_u32": lambda a, b, c: (a << (b & 31)) + c,
    "add_lshl_u32": lambda a, b, c: (a + b) << (c & 31),
    "lshl_or_b32": lambda a, b, c: (a << (b & 31)) | c,
    "and_or_b32": lambda a, b, c: (a & b) | c,
    "or3_b32": lambda a, b, c: a | b | c,
    "xor3_b32": lambda a, b, c: a ^ b ^ c,
    "add3_u32": lambda a, b, c: a + b + c,
    "xad_u32": lambda a, b, c: (a ^ b) + c,
    "mad_u32_u24": lambda a, b, c: (a & 0xFFFFFF) * (b & 0xFFFFFF) + c,
    "mad_i32_i24": lambda a, b, c: _sext(a, 24) * _sext(b, 24) + _signed(c),
    "bfe_u32": _bfe,
    "bfe_i32": lambda a, b, c: _sext(_bfe(a, b, c), np.maximum(c & 31, 1)),
    "bfi_b32": lambda a, b, c: (a & b) | (~a & c),
    "alignbit_b32": lambda a, b, c: (((a << 32) | b) >> (c & 31)),
    "alignbyte_b32": lambda a, b, c: (((a << 32) | b) >> ((c & 3) * 8)),
    "min3_u32": lambda a, b, c: np.minimum(np.minimum(a, b), c),
    "max3_u32": lambda a, b, c: np.maximum(np.maximum(a, b), c),
}
_UNARY = {
    "mov_b32": lambda a: a,
    "movk_i32": lambda a: _sext(a, 16),
    "not_b32": lambda a: ~a,
    "brev_b32": lambda a: np.array([int(f"{int(x):032b}"[::-1], 2) for x in a], dtype=U32),
    "abs_i32": lambda a: np.abs(_signed(a)),
    "bcnt1_i32_b32": lambda a: np.array([bin(int(x)).count("1") for x in a], dtype=U32),
    "sext_i32_i8": lambda a: _sext(a, 8),
    "sext_i32_i16": lambda a: _sext(a, 16),
}
_COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lg": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
_SCALAR_64 = {
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
_BITWISE_64 = {name for name in _SCALAR_64 if not name.startswith(("lshl", "lshr"))}
_SAVEEXEC = {
    "and_saveexec_b64": lambda src, exec_: src & exec_,
    "or_saveexec_b64": lambda src, exec_: src | exec_,
    "xor_saveexec_b64": lambda src, exec_: src ^ exec_,
    "andn2_saveexec_b64": lambda src, exec_: src & ~exec_ & 0xFFFFFFFFFFFFFFFF,
    "orn2_saveexec_b64": lambda src, exec_: (src | ~exec_) & 0xFFFFFFFFFFFFFFFF,
    "andn1_saveexec_b64": lambda src, exec_: ~src & exec_ & 0xFFFFFFFFFFFFFFFF,
}

# Scalar operations that leave SCC alone, and those that set it to an overflow flag.
_KEEPS_SCC = {"mov_b32", "movk_i32", "mul_i32", "mul_hi_u32", "mul_hi_i32", "brev_b32", "bfm_b32", "sext_i32_i8", "sext_i32_i16"}
_SCC_OVERFLOW = {"add_i32", "sub_i32", "lshl1_add_u32", "lshl2_add_u32", "lshl3_add_u32", "lshl4_add_u32"}

# Instructions that write no register operand (beyond what the model handles explicitly).
_NO_DEST_PREFIXES = (
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

# Scalar instructions that leave SCC as it was.
# what makes a vector result depend on other lanes or on the lane's position
_LANE_WORDS = ("mbcnt", "permlane", "writelane", "swap", "dpp", "bpermute")
_LANE_MODIFIERS = ("row_", "quad_perm", "bound_ctrl", "wave_", "dpp", "fi:", "bank_mask", "row_mask")

_KEEPS_SCC_PREFIXES = ("s_mov", "s_movk", "s_cselect", "s_cmov", "s_mul_i32", "s_mul_hi", "s_load", "s_buffer_load",
                       "s_getpc", "s_memtime", "s_memrealtime", "s_getreg", "s_sext", "s_brev", "s_bfm", "s_pack",
                       "s_bitset", "s_addk", "s_mulk", "s_movrel", "s_setpc", "s_swappc")

# Instructions whose results are data the model does not track by design (loaded values, clocks,
# hardware state, the program counter): unknown results, but modelled as such.
_DATA_PREFIXES = (
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
_INTEGER_RESULT = re.compile(r"^v_.*_(b|u|i)(8|16|32|64)$")


@functools.lru_cache(maxsize=1 << 16)
def _vector_facts(inst: Instruction) -> tuple[bool, bool, tuple[int, ...], tuple[str, ...]]:
    """Of a VALU instruction: whether it writes a carry or other scalar second result; whether it
    computes each lane from that lane's sources alone (false too where a source is neither a
    register nor a constant, or an AGPR); the VGPRs and the scalar operands it reads."""
    name, ops = inst.mnemonic, inst.operands
    carry = ("_co_" in name or "div_scale" in name or "mad_u64" in name or "mad_i64" in name) and len(ops) > 1
    lane_free = bool(ops) and not any(word in inst.base for word in _LANE_WORDS) and not any(
        m.startswith(_LANE_MODIFIERS) for m in inst.modifiers)
    vector, scalar = [], []
    for text in ops[2 if carry else 1:]:
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


@functools.lru_cache(maxsize=4096)
def _mask_lanes(mask: int, width: int) -> np.ndarray:
    return np.array([(mask >> lane) & 1 for lane in range(width)], dtype=bool)


def _mark_registers(text: str, kind: str, registers: set[int], present: bool) -> None:
    """Each register of operand ``text``, when it is of ``kind``, into ``registers`` or out of it."""
    op = decode(text)
    if isinstance(op, Reg) and op.kind == kind:
        for part in range(op.count):
            (registers.add if present else registers.discard)(op.index + part)


def _bitwise(operation, a: tuple | None, b: tuple | None) -> tuple | None:
    """A bitwise operation on two masks of ``WaveState.masks``' form, bit by bit on P and on Q;
    None when either is unknown or they are functions of different compares."""
    if a is None or b is None or (a[0] is not None and b[0] is not None and a[0] != b[0]):
        return None
    return (a[0] if a[0] is not None else b[0]), operation(a[1], b[1]) & MASK64, operation(a[2], b[2]) & MASK64


class WaveState:
    """Registers, exec mask and SCC of one wave, with the instruction semantics."""

    def __init__(self, width: int):
        self.width = width
        self.sgpr: dict[int, int | Affine | None] = {}
        self.vgpr: dict[int, Lanes] = {}  # 'v' registers
        self.agpr: dict[int, Lanes] = {}  # 'a' registers
        self.scc: bool | None = None
        # SGPRs (and SCC) whose value may differ between the waves of a workgroup at the same point
        # of the program: derived from lanes (readfirstlane, a vector compare) or from an exec that
        # is not a full wave's. Every other scalar comes from what all waves share (kernel
        # arguments, workgroup ids, constants).
        self.nonuniform: set[int] = set()
        self.scc_nonuniform = False
        # VGPRs whose every lane holds the same value in every wave at the same point: computed
        # from uniform scalars and constants only (a loop bound moved to a VGPR for a 64-bit
        # compare). A vector compare of such values is a uniform condition.
        self.uniform_v: set[int] = set()
        self.assumed: set[int] = set()  # SGPRs whose value a decided branch gave them, unwritten since
        self.unequal: dict[int, frozenset[int | Affine]] = {}  # SGPRs a decided branch says differ from these
        # SGPRs a decided branch bounds: index -> {comparable class: (("lt", v) tightest, ("ge", v) tightest)}
        self.bounds: dict[int, dict] = {}
        # unknown 64-bit lane masks as bitwise functions of one vector compare's unknown result X:
        # pair index -> (the compare's index, P, Q), the mask being (P & X) | (Q & ~X). LLVM's
        # if/else (and_saveexec, xor, andn2_saveexec, or) then gives exec back as it was
        self.masks: dict[int, tuple[int, int, int]] = {}
        # VGPRs last written under such an unknown exec: index -> (exec's mask, the value written).
        # Its lanes may be active or not, so the register holds join(old, new); but in the lanes
        # active under that same exec it holds the value written, which is what an LDS address
        # computed and used inside an ``s_and_saveexec`` region needs
        self.active_v: dict[int, tuple[tuple[int, int, int], Lanes]] = {}

    def copy(self) -> "WaveState":
        """An independent copy (Lanes are never changed in place, so the tables are shallow)."""
        other = WaveState(self.width)
        other.sgpr, other.vgpr, other.agpr, other.scc = dict(self.sgpr), dict(self.vgpr), dict(self.agpr), self.scc
        other.nonuniform, other.scc_nonuniform = set(self.nonuniform), self.scc_nonuniform
        other.uniform_v = set(self.uniform_v)
        other.assumed = set(self.assumed)
        other.unequal = dict(self.unequal)
        other.bounds = {i: dict(b) for i, b in self.bounds.items()}
        other.masks = dict(self.masks)
        other.active_v = dict(self.active_v)
        return other

    def uniform_key(self, live) -> tuple:
        """The values every wave at the same dynamic point shares, of the SGPRs ``live(i)`` says
        the program may still read: waves with equal keys take a branch on a uniform condition
        the same way (one that has lost a dead register's value to a join is no different)."""
        return tuple(sorted((i, v) for i, v in self.sgpr.items()
                            if v is not None and i not in self.nonuniform and live(i))), self.scc

    def key(self) -> tuple:
        """A hashable form of every register value: equal keys, equal states."""
        sgprs = tuple(sorted((i, v) for i, v in self.sgpr.items() if v is not None))
        vgprs = tuple(sorted((i, v.key()) for i, v in self.vgpr.items() if v.known.any() or v.has_affine))
        agprs = tuple(sorted((i, v.key()) for i, v in self.agpr.items() if v.known.any() or v.has_affine))
        return (sgprs, vgprs, agprs, self.scc, frozenset(self.nonuniform), self.scc_nonuniform, frozenset(self.assumed),
                frozenset(self.uniform_v),
                tuple(sorted((i, tuple(sorted(v, key=repr))) for i, v in self.unequal.items())),
                tuple(sorted((i, tuple(sorted(b.items(), key=repr))) for i, b in self.bounds.items())),
                tuple(sorted(self.masks.items())),
                tuple(sorted((i, mask, v.key()) for i, (mask, v) in self.active_v.items())))

    # ---- reading ----------------------------------------------------------------------------
    def assume_equal(self, a: str, b: str) -> None:
        """On a path where the scalars ``a`` and ``b`` are known to be equal (a decided
        ``s_cmp_eq`` / ``s_cmp_lg``): an unknown register of the two takes the other's value."""
        left, right = self.read(a), self.read(b)
        for unknown, other, text in ((left, right, a), (right, left, b)):
            op = decode(text)
            if isinstance(op, Reg) and not unknown.known[0] and not unknown.has_affine and (
                    other.known[0] or other.has_affine):
                self.write(text, other)
                if op.kind == "s" and op.index not in self.nonuniform:
                    self.assumed.add(op.index)
                return

    def assume_unequal(self, a: str, b: str) -> None:
        """On a path where the scalars ``a`` and ``b`` differ: remember it of an unknown uniform
        register compared with a constant (the other waves must not learn it equal)."""
        left, right = self.read(a), self.read(b)
        for unknown, other, text in ((left, right, a), (right, left, b)):
            op = decode(text)
            if (isinstance(op, Reg) and op.kind == "s" and op.index not in self.nonuniform and not unknown.known[0]
                    and not unknown.has_affine and (other.known[0] or other.has_affine)):
                value = int(other.values[0]) if other.known[0] else Affine(
                    int(other.values[0]) & MASK32, int(other.step[0]), other.symbol, other.fuzz)
                self.unequal[op.index] = self.unequal.get(op.index, frozenset()) | {value}
                return

    def assume_below(self, a: str, b: str, offset: int, holds: bool, exact: bool = False) -> None:
        """On a path where ``a < b + offset`` holds (or not), unsigned: bound an unknown uniform
        register of the two by the other side's value (a loop's trip count by its counter)."""
        left, right = self.read(a), self.read(b)
        for unknown, other, text, mine in ((left, right, a, True), (right, left, b, False)):
            op = decode(text)
            if not (isinstance(op, Reg) and op.kind == "s" and op.index not in self.nonuniform
                    and not unknown.known[0] and not unknown.has_affine and (other.known[0] or other.has_affine)):
                continue
            # r < v + k  |  r >= v + k   (r on the left);   v < r + k  <=>  r >= v - k + 1
            shift = offset if mine else 1 - offset
            bound = _shifted_value(other, shift)
            kind = ("lt" if holds else "ge") if mine else ("ge" if holds else "lt")
            if exact and kind == "lt" and bound == 1:
                # below 1: the register is 0 (a loop that runs no iteration: its trip count).
                # Like an equality, only where that does not split a loop's iterations by value
                self.write(text, Lanes.constant(0, 1))
                self.assumed.add(op.index)
                return
            classes = self.bounds.setdefault(op.index, {})
            key = (kind, _value_class(bound))
            old = classes.get(key)
            if old is None or (_base(bound) < _base(old) if kind == "lt" else _base(bound) > _base(old)):
                classes[key] = bound
            return

    def sgpr_value(self, index: int) -> int | None:
        value = self.sgpr.get(index)
        return value if isinstance(value, int) else None

    def sgpr64(self, index: int) -> int | None:
        lo, hi = self.sgpr_value(index), self.sgpr_value(index + 1)
        if lo is None or hi is None:
            return None
        return lo | (hi << 32)

    @property
    def exec_mask(self) -> int | None:
        return self.sgpr64(EXEC_LO)

    def active(self) -> np.ndarray:
        """Lanes that may be active: every lane when exec is unknown."""
        mask = self.exec_mask
        if mask is None:
            return np.ones(self.width, dtype=bool)
        return _mask_lanes(mask, self.width).copy()

    def read(self, text: str, *, part: int = 0) -> Lanes:
        """A 32-bit source operand (``part`` selects a dword of a range) as lanes or a scalar."""
        op = decode(text)
        if isinstance(op, Const):
            return Lanes.constant(op.value >> (32 * part), 1)
        if isinstance(op, Reg):
            if op.kind == "s":
                value = self.sgpr.get(op.index + part)
                if isinstance(value, Affine):
                    return value.lanes()
                return Lanes.constant(value, 1) if value is not None else Lanes.unknown(1)
            if op.kind == "v" and self.active_v:
                written = self.active_v.get(op.index + part)
                if written is not None and written[0] == self.exec_symbol():
                    return written[1]
            table = self.vgpr if op.kind == "v" else self.agpr
            return table.get(op.index + part) or Lanes.unknown(self.width)
        return Lanes.unknown(1)

    def exec_symbol(self) -> tuple[int, int, int] | None:
        """exec as a mask of one vector compare's unknown result (see ``masks``), or None."""
        return self.masks.get(EXEC_LO) if self.masks and self.exec_mask is None else None

    def mask64(self, text: str) -> tuple[int | None, int, int] | None:
        """A 64-bit scalar operand as (symbol, P, Q) (see ``masks``; symbol None: the constant
        P == Q), or None when it is neither known nor such a mask."""
        value = self.read_scalar64(text)
        if value is not None:
            return None, value, value
        op = decode(text)
        if isinstance(op, Reg) and op.kind == "s" and op.count == 2 and self.sgpr.get(op.index) is None \
                and self.sgpr.get(op.index + 1) is None:
            return self.masks.get(op.index)
        return None

    def write_mask64(self, index: int, mask: tuple[int | None, int, int] | None) -> None:
        if mask is None or mask[1] == mask[2]:
            self.write_sgpr64(index, None if mask is None else mask[1])
            return
        self.write_sgpr64(index, None)
        self.masks[index] = mask

    def read_scalar64(self, text: str) -> int | None:
        op = decode(text)
        if isinstance(op, Const):
            value = op.value
            # a 32-bit literal used as a 64-bit operand is sign-extended
            if value < (1 << 32) and value & 0x80000000:
                value |= 0xFFFFFFFF00000000
            return value
        if isinstance(op, Reg) and op.kind == "s":
            return self.sgpr64(op.index)
        return None

    # ---- writing ----------------------------------------------------------------------------
    def write_sgpr(self, index: int, value: int | Affine | None) -> None:
        if self.masks:
            self.masks.pop(index, None)
            self.masks.pop(index - 1, None)
        self.assumed.discard(index)
        self.unequal.pop(index, None)
        self.bounds.pop(index, None)
        self.sgpr[index] = value if value is None or isinstance(value, Affine) else int(value) & MASK32

    def write_sgpr64(self, index: int, value: int | None) -> None:
        if value is None:
            self.write_sgpr(index, None)
            self.write_sgpr(index + 1, None)
        else:
            self.write_sgpr(index, value & MASK32)
            self.write_sgpr(index + 1, (value >> 32) & MASK32)

    def write(self, text: str, value: Lanes, *, part: int = 0) -> None:
        """Write one dword of a destination; vector writes touch active lanes only."""
        op = decode(text)
        if not isinstance(op, Reg):
            return
        index = op.index + part
        if op.kind == "s":
            if value.known[0] or value.step is None or not value.affine[0]:
                self.write_sgpr(index, value.scalar())
            else:
                self.write_sgpr(index, Affine(int(value.values[0]) & MASK32, int(value.step[0]), value.symbol, value.fuzz))
            return
        table = self.vgpr if op.kind == "v" else self.agpr
        new = value.broadcast(self.width)
        old = table.get(index) or Lanes.unknown(self.width)
        if op.kind == "v" and self.active_v:
            self.active_v.pop(index, None)
        if self.exec_mask is None:
            # exec unknown: a lane keeps a value only if old and new agree on it
            table[index] = join_lanes(old, new)
            symbol = self.exec_symbol()
            if op.kind == "v" and symbol is not None:
                self.active_v[index] = (symbol, new)
            return
        table[index] = select_lanes(self.active(), new, old)

    def clobber(self, text: str) -> None:
        """Mark every dword of a destination operand unknown."""
        op = decode(text)
        if not isinstance(op, Reg):
            return
        whole = op.kind != "s" and self.exec_mask in (None, MASK64)
        for part in range(op.count):
            if op.kind == "s":
                self.write_sgpr(op.index + part, None)
            elif whole:  # every lane unknown: an absent register reads as unknown
                (self.vgpr if op.kind == "v" else self.agpr).pop(op.index + part, None)
                if op.kind == "v":
                    self.active_v.pop(op.index + part, None)
            else:
                self.write(text, Lanes.unknown(self.width), part=part)

    # ---- execution --------------------------------------------------------------------------
    def execute(self, inst: Instruction) -> bool:
        """Apply an instruction's effect on registers. False when it is not modelled: it then
        makes the registers it writes unknown, and an integer result the model should know is lost."""
        name = inst.base
        ops = inst.operands
        self._track_uniformity(inst)
        if name.startswith("s_") and self._scalar(name[2:], ops, inst.index):
            return True
        if name.startswith("v_") and self._vector(name[2:], inst):
            return True
        return self._clobber_destinations(inst)

    def _tainted(self, text: str) -> bool:
        op = decode(text)
        if not (isinstance(op, Reg) and op.kind == "s"):
            return False
        indices = {op.index + p for p in range(op.count)}
        if indices & {EXEC_LO, EXEC_LO + 1}:
            # a full wave's exec is the same in every full wave: "s_and_b64 vcc, exec, s[2:3]" of a
            # uniform s[2:3] is uniform; any other exec (a divergent region, a partial wave) is not
            if self.exec_mask != MASK64:
                return True
            indices -= {EXEC_LO, EXEC_LO + 1}
        return bool(indices & self.nonuniform)

    def _mark_vector(self, text: str, uniform: bool) -> None:
        _mark_registers(text, "v", self.uniform_v, uniform)

    def _mark(self, text: str, nonuniform: bool) -> None:
        _mark_registers(text, "s", self.nonuniform, nonuniform)

    def _track_uniformity(self, inst: Instruction) -> None:
        """Which scalar results may differ between waves (see ``nonuniform``)."""
        name, ops = inst.base, inst.operands
        e64 = inst.mnemonic.endswith("_e64")
        if name.startswith("v_"):
            carry, lane_free, vector_sources, scalar_sources = _vector_facts(inst)
            # a result of uniform sources is uniform: the same lanes of the same values in every wave
            uniform = (lane_free and self.sgpr.get(EXEC_LO) == MASK32 and self.sgpr.get(EXEC_LO + 1) == MASK32
                       and all(i in self.uniform_v for i in vector_sources)
                       and not any(self._tainted(op) for op in scalar_sources))
            if name.startswith(("v_readfirstlane", "v_readlane")) and ops:
                self._mark(ops[0], not uniform)
            elif name.startswith("v_cmp"):
                self._mark(ops[0] if e64 and ops else "vcc", not uniform)
                if name.startswith("v_cmpx"):
                    self._mark("exec", not uniform)
            else:
                self._mark_vector(ops[0] if ops else "", uniform)
                if carry:
                    self._mark(ops[1] if e64 else "vcc", not uniform)
            return
        if not name.startswith("s_"):
            if ops and "lds" not in inst.modifiers:
                # a load's data, or a store's source: no longer known uniform, but for a load of one
                # address in every lane of every wave (as a scalar load of a uniform address is)
                self._mark_vector(ops[0], self._uniform_load(inst))
            return
        if not name.startswith("s_") or not ops or name.startswith(_NO_DEST_PREFIXES[:3]):
            return
        compare = name.startswith(("s_cmp", "s_bitcmp"))
        sources = ops if compare else ops[1:]
        tainted = any(self._tainted(op) for op in sources) or (
            name.startswith(("s_cselect", "s_cmov", "s_addc", "s_subb")) and self.scc_nonuniform)
        if name.startswith(("s_addk", "s_mulk", "s_bitset")):
            tainted |= self._tainted(ops[0])
        if not compare:
            self._mark(ops[0], tainted)
        if "saveexec" in name:
            self._mark("exec", True)
            self._mark(ops[0], True)
        if compare or not name.startswith(_KEEPS_SCC_PREFIXES):
            self.scc_nonuniform = tainted

    def _uniform_load(self, inst: Instruction) -> bool:
        """Whether a vector load reads the same memory in every lane of every wave, so its data is
        uniform as a scalar load's of a uniform address is: a full exec, a ``buffer_load`` whose
        offsets are uniform (the VGPR offset one computed from uniform values, the soffset a
        constant or a uniform SGPR) through a resource whose last word is known with
        ADD_TID_ENABLE (bit 23) clear (no per-lane address; a scratch descriptor sets it), or a
        ``global_load`` of uniform address operands. Flat and scratch loads never are: a flat
        address may fall into a lane's private memory."""
        name, ops = inst.mnemonic, inst.operands
        if self.exec_mask != MASK64 or len(ops) < 3 or any(m in ("lds", "tfe", "lwe") for m in inst.modifiers):
            return False
        if name.startswith("buffer_load"):
            address, resource, soffset = ops[1], decode(ops[2]), ops[3] if len(ops) > 3 else "0"
            if not (isinstance(resource, Reg) and resource.kind == "s" and resource.count == 4):
                return False
            word3 = self.sgpr.get(resource.index + 3)
            if not isinstance(word3, int) or word3 >> 23 & 1 or self._tainted(ops[2]) or self._tainted(soffset):
                return False
            if not isinstance(decode(soffset), (Const, Reg)) or (isinstance(decode(soffset), Reg) and decode(soffset).kind != "s"):
                return False
            return address == "off" or self._uniform_vector(address)
        if name.startswith("global_load"):
            saddr = ops[2]
            if saddr != "off" and (not isinstance(decode(saddr), Reg) or self._tainted(saddr)):
                return False
            return self._uniform_vector(ops[1])
        return False

    def _uniform_vector(self, text: str) -> bool:
        op = decode(text)
        return isinstance(op, Reg) and op.kind == "v" and all(op.index + p in self.uniform_v for p in range(op.count))

    def _clobber_destinations(self, inst: Instruction) -> bool:
        name = inst.mnemonic
        if name.startswith(_NO_DEST_PREFIXES) or "lds" in inst.modifiers:
            return True
        modelled = name.startswith(_DATA_PREFIXES) or not (
            name.startswith("s_") or _INTEGER_RESULT.search(inst.base) is not None
        )
        if name.startswith("v_cmpx"):
            self.write_sgpr64(EXEC_LO, None)
        elif name.startswith("v_cmp") and name.endswith("_e32"):
            self.write_sgpr64(VCC_LO, None)
            return True
        if inst.operands:
            self.clobber(inst.operands[0])
        if ("_co_" in name or "div_scale" in name or "mad_u64" in name or "mad_i64" in name) and len(inst.operands) > 1:
            self.clobber(inst.operands[1])
        if ("_co_" in name or "addc" in name or "subb" in name) and name.endswith("_e32"):
            self.write_sgpr64(VCC_LO, None)
        if name.startswith("s_"):
            self.scc = None
        return modelled

    def _swap(self, name: str, ops: tuple[str, ...]) -> bool:
        """``v_swap_b32`` and gfx950's ``v_permlane16_swap_b32`` / ``v_permlane32_swap_b32``,
        which write both their operands: the permlanes swap rows 1 and 3 of the first with rows 0
        and 2 of the second (16-lane rows), or its lanes 32-63 with the second's lanes 0-31. A
        permlane is modelled with every lane of a 64-lane wave active only; otherwise, and for
        values folded with different loops, both registers become unknown."""
        first, second = (decode(ops[0]), decode(ops[1])) if len(ops) > 1 else (None, None)
        modelled = (isinstance(first, Reg) and isinstance(second, Reg) and first.kind == second.kind == "v"
                    and first.count == second.count == 1)
        if modelled:
            a, b = self.read(ops[0]).broadcast(self.width), self.read(ops[1]).broadcast(self.width)
            modelled = len({(v.symbol, v.fuzz) for v in (a, b) if v.has_affine}) <= 1 and (
                name == "swap_b32" or (self.width == 64 and self.exec_mask == MASK64))
        if not modelled:
            for text in ops[:2]:
                self.clobber(text)
        elif name == "swap_b32":
            self.write(ops[0], b)
            self.write(ops[1], a)
        else:
            partner, taken = _PERMLANES[name]
            self.write(ops[0], select_lanes(taken, _rearranged(b, partner), a))
            self.write(ops[1], select_lanes(~taken, _rearranged(a, partner), b))
        if len(ops) > 1:
            self._mark_vector(ops[1], False)
        return modelled

    def _conjunction(self, site: int, a: tuple | None, b: tuple | None) -> tuple | None:
        """``a & b`` of masks of two different compares (a bounds check on rows and one on
        columns, and-ed into one exec) as ``X' & U`` for a new unknown ``X'`` named by the ``and``,
        ``U`` the lanes either may have: which lanes an ``s_and_saveexec`` region may run stays known."""
        if a is None or b is None:
            return None
        self._forget_unknown(site)  # a new X': that of this and's last run is gone
        return site, (a[1] | a[2]) & (b[1] | b[2]), 0

    def _forget_unknown(self, symbol: int) -> None:
        """The masks of the unknown named ``symbol`` (a compare or an ``and``), and the values
        written under them: its instruction ran again, so they are of another X."""
        self.masks = {i: m for i, m in self.masks.items() if m[0] != symbol}
        self.active_v = {i: w for i, w in self.active_v.items() if w[0][0] != symbol}

    def _scalar(self, name: str, ops: tuple[str, ...], site: int = -1) -> bool:
        if name in _SAVEEXEC:
            src, exec_ = self.mask64(ops[1]), self.mask64("exec")
            self.write_mask64(decode(ops[0]).index, exec_)
            new = _bitwise(_SAVEEXEC[name], src, exec_)
            if new is None and name == "and_saveexec_b64":
                new = self._conjunction(site, src, exec_)
            self.write_mask64(EXEC_LO, new)
            self.scc = None if new is None or new[1] != new[2] else new[1] != 0
            return True
        if name in _BITWISE_64:
            a = self.mask64(ops[1])
            b = self.mask64(ops[2]) if len(ops) > 2 else (None, 0, 0)
            value = _bitwise(_SCALAR_64[name], a, b)
            if value is None and name == "and_b64":
                value = self._conjunction(site, a, b)
            if value is None and name == "or_b64" and (None, MASK64, MASK64) in (a, b):
                value = None, MASK64, MASK64  # restoring a full wave's exec after a divergent region
            dest = decode(ops[0])
            if isinstance(dest, Reg):
                self.write_mask64(dest.index, value)
            if name != "mov_b64":
                self.scc = None if value is None or value[1] != value[2] else value[1] != 0
            return True
        if name in _SCALAR_64:  # the shifts: every other 64-bit operation is bitwise, above
            a = self.read_scalar64(ops[1])
            b = self.read_scalar64(ops[2]) if len(ops) > 2 else 0
            value = None if a is None or b is None else _SCALAR_64[name](a, b)
            dest = decode(ops[0])
            if isinstance(dest, Reg):
                self.write_sgpr64(dest.index, value)
            self.scc = None if value is None else value != 0
            return True
        if name.startswith("cmp_") or name.startswith("cmpk_"):
            parts = name.split("_")
            relation, kind = parts[1], parts[2]
            if kind == "u64":
                a, b = self.read_scalar64(ops[0]), self.read_scalar64(ops[1])
            else:
                a, b = self.read(ops[0]).scalar(), self.read(ops[1]).scalar()
                if name.startswith("cmpk_") and b is not None:
                    b = int(_sext(np.int64(b), 16)) & MASK32 if kind == "i32" else b & 0xFFFF
                if a is None and b is None and kind == "u32":
                    a, b = _same_step_bases(self.read(ops[0]), self.read(ops[1]))
            if a is None or b is None or relation not in _COMPARE:
                self.scc = None
            else:
                if kind == "i32":
                    a, b = int(_signed(np.int64(a))), int(_signed(np.int64(b)))
                self.scc = bool(_COMPARE[relation](a, b))
            return True
        if name in ("bitcmp0_b32", "bitcmp1_b32"):
            a, b = self.read(ops[0]).scalar(), self.read(ops[1]).scalar()
            folded = self.sgpr.get(decode(ops[0]).index) if isinstance(decode(ops[0]), Reg) else None
            if a is None and b is not None and isinstance(folded, Affine) and folded.fuzz == 0 \
                    and folded.step % (1 << ((b & 31) + 1)) == 0:
                a = folded.base  # a folded counter's low bits, below its step's lowest set bit, are its base's
            self.scc = None if a is None or b is None else ((a >> (b & 31)) & 1) == (name == "bitcmp1_b32")
            return True
        if name in ("cselect_b32", "cselect_b64"):
            if name == "cselect_b64":
                a, b = self.read_scalar64(ops[1]), self.read_scalar64(ops[2])
                value = None if self.scc is None else (a if self.scc else b)
                if self.scc is None and a is not None and a == b:
                    value = a
                self.write_sgpr64(decode(ops[0]).index, value)
            elif self.scc is None:
                self.write(ops[0], join_lanes(self.read(ops[1]), self.read(ops[2])))
            else:
                self.write(ops[0], self.read(ops[1] if self.scc else ops[2]))
            return True
        if name in ("cmov_b32", "cmovk_i32"):
            value = self.read(ops[1])
            if name == "cmovk_i32" and value.known[0]:
                value = Lanes.constant(int(_sext(np.int64(value.values[0]), 16)), 1)
            if self.scc is None:
                self.write(ops[0], join_lanes(self.read(ops[0]), value))
            elif self.scc:
                self.write(ops[0], value)
            return True
        if name in ("bitset0_b32", "bitset1_b32"):
            old, bit = self.read(ops[0]).scalar(), self.read(ops[1]).scalar()
            value = None
            if old is not None and bit is not None:
                value = old | (1 << (bit & 31)) if name == "bitset1_b32" else old & ~(1 << (bit & 31))
            self.write_sgpr(decode(ops[0]).index, value)
            return True
        if name in ("bitset0_b64", "bitset1_b64"):
            old, bit = self.read_scalar64(ops[0]), self.read(ops[1]).scalar()
            value = None
            if old is not None and bit is not None:
                value = old | (1 << (bit & 63)) if name == "bitset1_b64" else old & ~(1 << (bit & 63))
            self.write_sgpr64(decode(ops[0]).index, value)
            return True
        if name in ("ff1_i32_b32", "flbit_i32_b32", "ff0_i32_b32"):
            a = self.read(ops[1]).scalar()
            value = None
            if a is not None:
                bits = a if name != "ff0_i32_b32" else ~a & MASK32
                if name == "flbit_i32_b32":
                    value = MASK32 if a == 0 else 31 - (a.bit_length() - 1)
                else:
                    value = MASK32 if bits == 0 else (bits & -bits).bit_length() - 1
            self.write_sgpr(decode(ops[0]).index, value)
            return True
        if name in ("pack_ll_b32_b16", "pack_lh_b32_b16", "pack_hh_b32_b16", "pack_hl_b32_b16"):
            a, b = self.read(ops[1]).scalar(), self.read(ops[2]).scalar()
            value = None
            if a is not None and b is not None:
                lo = a & 0xFFFF if name[5] == "l" else a >> 16
                hi = b & 0xFFFF if name[6] == "l" else b >> 16
                value = lo | (hi << 16)
            self.write_sgpr(decode(ops[0]).index, value)
            return True
        if name == "absdiff_i32":
            a, b = self.read(ops[1]).scalar(), self.read(ops[2]).scalar()
            value = None if a is None or b is None else abs(int(_signed(np.int64(a))) - int(_signed(np.int64(b))))
            self.write_sgpr(decode(ops[0]).index, value)
            self.scc = None if value is None else value != 0
            return True
        if name in ("addk_i32", "mulk_i32"):
            a, k = self.read(ops[0]).scalar(), self.read(ops[1]).scalar()
            if a is None and k is not None and self.read(ops[0]).has_affine:
                # a folded loop counter stepped by a signed 16-bit constant
                constant = str(int(_sext(np.int64(k), 16)) & MASK32)
                self._apply("add_i32" if name == "addk_i32" else "mul_i32", (ops[0], ops[0], constant), scalar=True)
                self.scc = None
                return True
            value = None
            if a is not None and k is not None:
                k = int(_sext(np.int64(k), 16))
                value = a + k if name == "addk_i32" else a * k
            self.write_sgpr(decode(ops[0]).index, value)
            self.scc = None
            return True
        if name in ("addc_u32", "subb_u32"):
            a, b = self.read(ops[1]).scalar(), self.read(ops[2]).scalar()
            if a is None or b is None or self.scc is None:
                self.write_sgpr(decode(ops[0]).index, None)
                self.scc = None
            else:
                full = a + b + int(self.scc) if name == "addc_u32" else a - b - int(self.scc)
                self.write_sgpr(decode(ops[0]).index, full)
                self.scc = full > MASK32 if name == "addc_u32" else full < 0
            return True
        if name == "bfe_u32" or name == "bfe_i32":
            return self._apply(name + "_packed", ops, scalar=True)
        if name in _UNARY or name in _BINARY:
            return self._apply(name, ops, scalar=True)
        return False

    def _apply(self, name: str, ops: tuple[str, ...], *, scalar: bool) -> bool:
        arity = 1 if name in _UNARY else 2 if name in _BINARY else 3 if name in _TERNARY else None
        if arity is None or len(ops) < arity + 1:
            return False
        if name in _UNARY:
            sources = [self.read(ops[1])] if len(ops) > 1 else []
            fn = _UNARY[name]
        elif name in _BINARY:
            sources = [self.read(ops[1]), self.read(ops[2])]
            fn = _BINARY[name]
        elif name in _TERNARY:
            sources = [self.read(ops[1]), self.read(ops[2]), self.read(ops[3])]
            fn = _TERNARY[name]
        else:
            return False
        width = max(len(s.values) for s in sources) if sources else 1
        sources = [s.broadcast(width) for s in sources]
        known = np.logical_and.reduce([s.known for s in sources]) if sources else np.ones(width, bool)
        raw = np.asarray(fn(*[s.values for s in sources]), dtype=U32)
        result = Lanes(_u(raw), known)
        if any(s.has_affine for s in sources):
            result = _with_affine(name, sources, result)
        self.write(ops[0], result)
        if scalar:
            value = result.scalar()
            if name in ("add_u32", "sub_u32"):
                self.scc = _carry(name, sources[0], sources[1])
            elif name in _KEEPS_SCC:
                pass
            elif name in _SCC_OVERFLOW:
                self.scc = None  # signed overflow: not modelled
            else:
                self.scc = None if value is None else value != 0
        return True

    def _vector(self, name: str, inst: Instruction) -> bool:
        ops = inst.operands
        if name.startswith("cmp_") or name.startswith("cmpx_"):
            return self._vector_compare(name, inst)
        if name == "swap_b32" or name in _PERMLANES:
            return self._swap(name, ops)
        if name == "cndmask_b32":
            if inst.mnemonic.endswith("_e64") and len(ops) > 3:
                select = self.read_scalar64(ops[3])
            else:
                select = self.sgpr64(VCC_LO)
            a, b = self.read(ops[1]).broadcast(self.width), self.read(ops[2]).broadcast(self.width)
            if select is None:
                same = a.known & b.known & (a.values == b.values)
                self.write(ops[0], Lanes(a.values.copy(), same))
            else:
                bits = np.array([(select >> lane) & 1 for lane in range(self.width)], dtype=bool)
                self.write(ops[0], Lanes(np.where(bits, b.values, a.values), np.where(bits, b.known, a.known)))
            return True
        if name == "readfirstlane_b32":
            self.write(ops[0], self._first_lane(self.read(ops[1])))
            return True
        if name == "readlane_b32":
            lane = self.read(ops[2]).scalar()
            src = self.read(ops[1]).broadcast(self.width)
            if lane is None:
                self.write(ops[0], Lanes.unknown(1))
            else:
                self.write(ops[0], src.lane(lane % self.width))
            return True
        if name == "writelane_b32":
            lane = self.read(ops[2]).scalar()
            value = self.read(ops[1])
            op = decode(ops[0])
            if not isinstance(op, Reg):
                return True
            table = self.vgpr if op.kind == "v" else self.agpr
            old = table.get(op.index) or Lanes.unknown(self.width)
            if lane is None:
                table[op.index] = Lanes.unknown(self.width)
            else:
                values, known = old.values.copy(), old.known.copy()
                values[lane % self.width] = value.values[0]
                known[lane % self.width] = value.known[0]
                table[op.index] = Lanes(values, known)
            return True
        if name in ("mbcnt_lo_u32_b32", "mbcnt_hi_u32_b32"):
            mask, base = self.read(ops[1]).scalar(), self.read(ops[2]).broadcast(self.width)
            if mask is None:
                self.write(ops[0], Lanes.unknown(self.width))
                return True
            lanes = np.arange(self.width)
            shift = lanes if name == "mbcnt_lo_u32_b32" else np.maximum(lanes - 32, 0)
            shift = np.minimum(shift, 32)
            counts = np.array([bin(mask & ((1 << int(s)) - 1)).count("1") for s in shift], dtype=U32)
            self.write(ops[0], Lanes(_u(counts + base.values), base.known.copy()))
            return True
        if name in ("accvgpr_write_b32", "accvgpr_read_b32", "accvgpr_mov_b32", "mov_b32"):
            self.write(ops[0], self.read(ops[1]))
            return True
        if name == "mov_b64":
            for part in range(2):
                self.write(ops[0], self.read(ops[1], part=part), part=part)
            return True
        if name == "pk_mov_b32":
            return self._pk_mov(inst)
        if name in ("lshlrev_b64", "lshrrev_b64", "ashrrev_i64"):
            return self._shift64(name, inst)
        if name == "swap_b32":
            a, b = self.read(ops[0]), self.read(ops[1])
            self.write(ops[0], b)
            self.write(ops[1], a)
            return True
        if name == "bitop3_b32":
            table = inst.modifier("bitop3")
            if table is None or len(ops) < 4:
                return False
            sources = [self.read(o).broadcast(self.width) for o in ops[1:4]]
            known = sources[0].known & sources[1].known & sources[2].known
            values = _bitop3(int(table, 0), *[s.values for s in sources])
            self.write(ops[0], Lanes(_u(values), known))
            return True
        if name in ("add_co_u32", "sub_co_u32", "subrev_co_u32", "addc_co_u32", "subb_co_u32"):
            return self._vector_carry(name, inst)
        if name == "mad_u64_u32":
            return self._mad_u64(inst)
        if name == "lshl_add_u64":
            return self._lshl_add_u64(inst)
        if name in _UNARY or name in _BINARY or name in _TERNARY:
            return self._apply(name, ops, scalar=False)
        return False

    def _first_lane(self, src: Lanes) -> Lanes:
        src = src.broadcast(self.width)
        mask = self.exec_mask
        if mask is None or mask == 0:
            same = src.all_known and bool((src.values == src.values[0]).all())
            return Lanes.constant(int(src.values[0]), 1) if same else Lanes.unknown(1)
        lane = (mask & -mask).bit_length() - 1
        if lane >= self.width:
            return Lanes.unknown(1)
        return src.lane(lane)

    def _lane_bits(self, result: np.ndarray, known: np.ndarray) -> int | None:
        active = self.active()
        if self.exec_mask is None or not known[active].all():
            return None
        mask = 0
        for lane in range(self.width):
            if active[lane] and result[lane]:
                mask |= 1 << lane
        return mask

    def _vector_compare(self, name: str, inst: Instruction) -> bool:
        ops = inst.operands
        e64 = inst.mnemonic.endswith("_e64")
        writes_exec = name.startswith("cmpx_")
        # LLVM prints the implicit vcc of the e32 form as the first operand: "v_cmp_eq_u32_e32 vcc, 0, v2"
        explicit_dest = e64 or (ops and decode(ops[0]) == Reg("s", VCC_LO, 2))
        sources = ops[1:3] if explicit_dest else ops[0:2]
        parts = name.split("_")
        relation, kind = parts[1], parts[2] if len(parts) > 2 else ""
        mask = None
        if len(sources) == 2 and relation in _COMPARE and kind in ("u32", "i32", "u16", "i16"):
            a, b = (self.read(s).broadcast(self.width) for s in sources)
            av, bv = (a.values, b.values) if kind.startswith("u") else (_signed(a.values), _signed(b.values))
            mask = self._lane_bits(_COMPARE[relation](av, bv), a.known & b.known)
        elif len(sources) == 2 and relation in _COMPARE and kind in ("u64", "i64"):
            (al, ah), (bl, bh) = ([self.read(s, part=p).broadcast(self.width) for p in (0, 1)] for s in sources)
            known = al.known & ah.known & bl.known & bh.known
            high_a, high_b = (ah.values, bh.values) if kind == "u64" else (_signed(ah.values), _signed(bh.values))
            # (high, low) compared in order: the high words as the kind says, the low ones unsigned
            lt = (high_a < high_b) | ((high_a == high_b) & (al.values < bl.values))
            eq = (high_a == high_b) & (al.values == bl.values)
            outcome = {"eq": eq, "ne": ~eq, "lg": ~eq, "lt": lt, "le": lt | eq, "gt": ~(lt | eq), "ge": ~lt}[relation]
            mask = self._lane_bits(outcome, known)
        exec_ = self.exec_mask
        # an unknown result is X & exec for a new X, named by the compare's index
        result = (None, mask, mask) if mask is not None else None if exec_ is None or writes_exec else (inst.index, exec_, 0)
        if result is not None and result[0] is not None:
            self._forget_unknown(inst.index)  # a new X: that of the compare's last run is gone
        if e64 and ops:
            dest = decode(ops[0])
            if isinstance(dest, Reg) and dest.kind == "s":
                self.write_mask64(dest.index, result)
        elif not writes_exec:
            self.write_mask64(VCC_LO, result)
        if writes_exec:
            self.write_sgpr64(EXEC_LO, mask)
            if not e64:
                self.write_sgpr64(VCC_LO, mask)
        return True

    def _vector_carry(self, name: str, inst: Instruction) -> bool:
        ops = inst.operands
        e64 = inst.mnemonic.endswith("_e64")
        # _e64: vdst, sdst, src0, src1[, carry-in]; _e32: vdst, vcc, src0, src1[, vcc]
        carry_dest = decode(ops[1]) if len(ops) > 1 else None
        sources = [self.read(o).broadcast(self.width) for o in ops[2:4]]
        if len(sources) < 2:
            return False
        a, b = sources
        known = a.known & b.known
        carry_in = np.zeros(self.width, dtype=U32)
        if name in ("addc_co_u32", "subb_co_u32"):
            cin_mask = self.read_scalar64(ops[4]) if e64 and len(ops) > 4 else self.sgpr64(VCC_LO)
            if cin_mask is None:
                known = np.zeros(self.width, dtype=bool)
            else:
                carry_in = np.array([(cin_mask >> lane) & 1 for lane in range(self.width)], dtype=U32)
        if name in ("add_co_u32", "addc_co_u32"):
            full = a.values + b.values + carry_in
            carry = full > MASK32
        elif name == "subrev_co_u32":
            full = b.values - a.values
            carry = full < 0
        else:
            full = a.values - b.values - carry_in
            carry = full < 0
        self.write(ops[0], Lanes(_u(full), known))
        mask = self._lane_bits(carry, known)
        if isinstance(carry_dest, Reg) and carry_dest.kind == "s":
            self.write_sgpr64(carry_dest.index, mask)
        return True

    def _mad_u64(self, inst: Instruction) -> bool:
        ops = inst.operands  # vdst[2], sdst, src0, src1, src2[2]
        if len(ops) < 5:
            return False
        a, b = (self.read(o).broadcast(self.width) for o in ops[2:4])
        c_lo, c_hi = (self.read(ops[4], part=p).broadcast(self.width) for p in range(2))
        known = a.known & b.known & c_lo.known & c_hi.known
        product = a.values.astype(object) * b.values.astype(object) + (c_hi.values.astype(object) << 32) + c_lo.values
        lo = np.array([int(x) & MASK32 for x in product], dtype=U32)
        hi = np.array([(int(x) >> 32) & MASK32 for x in product], dtype=U32)
        self.write(ops[0], Lanes(lo, known.copy()), part=0)
        self.write(ops[0], Lanes(hi, known.copy()), part=1)
        self.clobber(ops[1])
        return True

    def _pk_mov(self, inst: Instruction) -> bool:
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
        halves = [Lanes.unknown(1) if isinstance(decode(src), Const) and pick else self.read(src, part=pick)
                  for src, pick in zip(ops[1:3], picks)]
        for part, value in enumerate(halves):
            self.write(ops[0], value, part=part)
        return True

    def _shift64(self, name: str, inst: Instruction) -> bool:
        """``v_lshlrev_b64 vdst[2], shift, src[2]`` and the right shifts: the 64-bit source shifted
        by the low 6 bits of the shift, per lane."""
        ops = inst.operands
        if len(ops) < 3:
            return False
        shift = self.read(ops[1]).broadcast(self.width)
        if isinstance(decode(ops[2]), Const):
            return False  # how a 32-bit constant extends to 64 bits is not modelled
        lo, hi = (self.read(ops[2], part=p).broadcast(self.width) for p in range(2))
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
        self._write_u64(ops[0], results, known)
        return True

    def _write_u64(self, dest: str, values: list[int], known: np.ndarray) -> None:
        """A 64-bit vector result, one value per lane, into the two dwords of ``dest``."""
        self.write(dest, Lanes(np.array([v & MASK32 for v in values], dtype=U32), known.copy()), part=0)
        self.write(dest, Lanes(np.array([v >> 32 for v in values], dtype=U32), known.copy()), part=1)

    def _lshl_add_u64(self, inst: Instruction) -> bool:
        ops = inst.operands  # vdst[2], src0[2], shift, src2[2]
        if len(ops) < 4:
            return False
        a_lo, a_hi = (self.read(ops[1], part=p).broadcast(self.width) for p in range(2))
        shift = self.read(ops[2]).broadcast(self.width)
        c_lo, c_hi = (self.read(ops[3], part=p).broadcast(self.width) for p in range(2))
        known = a_lo.known & a_hi.known & shift.known & c_lo.known & c_hi.known
        a = (a_hi.values.astype(object) << 32) + a_lo.values
        c = (c_hi.values.astype(object) << 32) + c_lo.values
        total = [((int(x) << (int(s) & 7)) + int(y)) & 0xFFFFFFFFFFFFFFFF for x, s, y in zip(a, shift.values, c)]
        self._write_u64(ops[0], total, known)
        return True

