"""Integer operations on values that are affine in a folded loop's iteration count.

When the analysis folds a loop (:mod:`.dataflow`), a register that grew by ``d`` per iteration
becomes ``base + (P * d) * J`` for an unknown natural ``J``: every iteration ``P`` apart at once.
The operations below are exact on such values for every ``J`` (given that the value never wraps
past 2**32, which a loop counter or an offset does not), so a stage index ``k mod N`` with ``N``
dividing ``P`` comes out as a known constant, and everything else about ``J`` stays symbolic. An
operation without an exact rule here makes the lane unknown: the analysis then reports what it
could not resolve instead of guessing.

Each rule takes and returns per-lane ``(base, step)`` arrays (step 0: exact) plus the fuzz (low
bits not known, only after a magic-number multiplication awaiting its shift).
"""

from __future__ import annotations

import numpy as np

from .operands import MASK32

Parts = tuple[np.ndarray, np.ndarray, np.ndarray, int]  # base, step, valid lanes, fuzz


def _trailing_zeros(step: np.ndarray) -> np.ndarray:
    """Per lane, the power of two dividing ``step`` (32 for a zero step: an exact value)."""
    out = np.full(step.shape, 32, dtype=np.int64)
    nonzero = step != 0
    magnitude = np.abs(step[nonzero])
    out[nonzero] = np.log2(magnitude & -magnitude).astype(np.int64)
    return out


def magic_divisor(multiplier: int) -> tuple[int, int] | None:
    """(q, s) when ``mul_hi(x, multiplier) >> s == x // q`` for every 32-bit x, else None.

    Granlund and Montgomery: with ``m = ceil(2**(32+s) / q)`` and ``m * q - 2**(32+s) <= 2**s``
    the quotient is exact over all 32-bit unsigned x. This is what LLVM emits for ``x / q`` and
    ``x % q`` with a small constant q whose magic fits 32 bits (3, 5, 6, 12, ...).
    """
    if multiplier <= 1 or multiplier > MASK32:
        return None
    for shift in range(32):
        q = -(-(1 << (32 + shift)) // multiplier)
        if q <= 1 or q > 1 << 16:
            continue
        if -(-(1 << (32 + shift)) // q) == multiplier and multiplier * q - (1 << (32 + shift)) <= 1 << shift:
            return q, shift
    return None


def signed_magic_divisor(multiplier: int) -> tuple[int, int] | None:
    """(q, s) when ``mul_hi_i32(x, multiplier) >> s == x // q`` for every x in [0, 2**31): LLVM's
    signed ``x / q`` (the sign correction that follows adds 0 for such x). The error of the
    rounded-up multiplier may be twice the unsigned bound, as x has one bit fewer."""
    if multiplier <= 1 or multiplier >= 1 << 31:
        return None
    for shift in range(32):
        q = -(-(1 << (32 + shift)) // multiplier)
        if q <= 1 or q > 1 << 16:
            continue
        if -(-(1 << (32 + shift)) // q) == multiplier and multiplier * q - (1 << (32 + shift)) <= 1 << (shift + 1):
            return q, shift
    return None


def _exact(parts: Parts) -> bool:
    base, step, valid, fuzz = parts
    return fuzz == 0 and bool((step[valid] == 0).all())


def apply(name: str, sources: list[Parts]) -> Parts | None:
    """The affine result of ``name`` on its sources, or None when no exact rule applies."""
    rule = _RULES.get(name)
    if rule is None:
        return None
    if any(parts[3] for parts in sources) and name not in ("lshr_b32", "lshrrev_b32"):
        return None
    return rule(*sources)


def _add(x: Parts, y: Parts) -> Parts:
    return x[0] + y[0], x[1] + y[1], x[2] & y[2], 0


def _sub(x: Parts, y: Parts) -> Parts:
    return x[0] - y[0], x[1] - y[1], x[2] & y[2], 0


def _mul(x: Parts, y: Parts) -> Parts | None:
    if _exact(y):
        return x[0] * y[0], x[1] * y[0], x[2] & y[2], 0
    if _exact(x):
        return _mul(y, x)
    return None


def _shl(x: Parts, k: Parts) -> Parts | None:
    if not _exact(k):
        return None
    amount = k[0] & 31
    return x[0] << amount, x[1] << amount, x[2] & k[2], 0


def _shr(x: Parts, k: Parts) -> Parts | None:
    if k[3] or not bool((k[1][k[2]] == 0).all()):
        return None
    amount = k[0] & 31
    valid = x[2] & k[2] & (x[1] >= 0) & (x[1] % (np.int64(1) << amount) == 0) & (amount >= x[3])
    return (x[0] & MASK32) >> amount, x[1] >> amount, valid, 0


def _and(x: Parts, m: Parts) -> Parts | None:
    if not _exact(m):
        return _and(m, x) if _exact(x) else None
    # (base + step*J) & mask == base & mask when the step is a multiple of a power of two above the mask
    fits = m[0] < (np.int64(1) << np.minimum(_trailing_zeros(x[1]), 32))
    return (x[0] & MASK32) & m[0], np.zeros_like(x[1]), x[2] & m[2] & fits, 0


def _bitwise(op):
    def rule(x: Parts, c: Parts) -> Parts | None:
        if not _exact(c):
            return rule(c, x) if _exact(x) else None
        # the constant touches only bits below the step's lowest set bit: the carry chain is untouched
        fits = c[0] < (np.int64(1) << np.minimum(_trailing_zeros(x[1]), 32))
        return op(x[0] & MASK32, c[0]), x[1], x[2] & c[2] & fits, 0

    return rule


def _non_negative(x: Parts) -> np.ndarray:
    """Lanes whose value is in [0, 2**31) for J = 0 and grows: non-negative as a signed value for
    every J (a folded value does not reach 2**31, as it does not wrap)."""
    return x[2] & (x[0] >= 0) & (x[0] < (1 << 31)) & (x[1] >= 0)


def _magic_division(magic_of, in_range):
    """The rule of a high multiply by one constant that ``magic_of`` knows as a division (a
    quotient and a shift), exact on the lanes ``in_range`` keeps whose step the quotient divides."""

    def rule(x: Parts, c: Parts) -> Parts | None:
        if not _exact(c):
            return rule(c, x) if _exact(x) else None
        constants = set(c[0][c[2]].tolist())
        magic = magic_of(int(constants.pop())) if len(constants) == 1 else None
        if magic is None:
            return None
        q, shift = magic
        valid = in_range(x) & c[2] & (x[1] % q == 0)
        # mul_hi(x, m) lies in [floor(x/q) << s, (floor(x/q) + 1) << s): its low s bits are fuzz
        return ((x[0] & MASK32) // q) << shift, (x[1] // q) << shift, valid, shift

    return rule


_mul_hi = _magic_division(magic_divisor, lambda x: x[2] & (x[1] >= 0))
_mul_hi_signed = _magic_division(signed_magic_divisor, _non_negative)


def _shr_sign(x: Parts, k: Parts) -> Parts | None:
    """``x >> 31``, the sign bit LLVM adds back after a signed division: 0 for a non-negative x."""
    if _exact(k) and bool((k[0][k[2]] & 31 == 31).all()) and x[3] == 0:
        valid = _non_negative(x) & k[2]
        if valid.any():
            return np.zeros_like(x[0]), np.zeros_like(x[1]), valid, 0
    return _shr(x, k)


def _lshl_add(x: Parts, k: Parts, y: Parts) -> Parts | None:
    shifted = _shl(x, k)
    return None if shifted is None else _add(shifted, y)


def _add_lshl(x: Parts, y: Parts, k: Parts) -> Parts | None:
    return _shl(_add(x, y), k)


def _shift_add(amount: int):
    def rule(x: Parts, y: Parts) -> Parts:
        return x[0] * (1 << amount) + y[0], x[1] * (1 << amount) + y[1], x[2] & y[2], 0

    return rule


def _bfe(x: Parts, offset: Parts, width: Parts) -> Parts | None:
    if not (_exact(offset) and _exact(width)):
        return None
    shifted = _shr(x, offset)
    if shifted is None:
        return None
    mask = (np.int64(1) << (width[0] & 31)) - 1
    return _and(shifted, (mask, np.zeros_like(mask), width[2], 0))


_RULES = {
    "add_u32": _add,
    "add_i32": _add,
    "add_nc_u32": _add,
    "sub_u32": _sub,
    "sub_i32": _sub,
    "sub_nc_u32": _sub,
    "subrev_u32": lambda x, y: _sub(y, x),
    "mul_i32": _mul,
    "mul_lo_u32": _mul,
    "mul_lo_i32": _mul,
    "lshl_b32": _shl,
    "lshlrev_b32": lambda k, x: _shl(x, k),
    "lshr_b32": _shr_sign,
    "lshrrev_b32": lambda k, x: _shr_sign(x, k),
    "and_b32": _and,
    "or_b32": _bitwise(np.bitwise_or),
    "xor_b32": _bitwise(np.bitwise_xor),
    "mul_hi_u32": _mul_hi,
    "mul_hi_i32": _mul_hi_signed,
    "lshl_add_u32": _lshl_add,
    "add_lshl_u32": _add_lshl,
    "add3_u32": lambda x, y, z: _add(_add(x, y), z),
    "lshl1_add_u32": _shift_add(1),
    "lshl2_add_u32": _shift_add(2),
    "lshl3_add_u32": _shift_add(3),
    "lshl4_add_u32": _shift_add(4),
    "bfe_u32": _bfe,
    "mov_b32": lambda x: x,
}
