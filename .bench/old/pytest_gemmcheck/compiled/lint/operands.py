"""Decode instruction operands: registers, register ranges and constants."""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass

MASK32 = 0xFFFFFFFF

# Special scalar registers, as SGPR indices past the numbered ones so one table holds them all.
SPECIAL_SGPRS = {
    "vcc_lo": 106,
    "vcc_hi": 107,
    "m0": 124,
    "exec_lo": 126,
    "exec_hi": 127,
    "flat_scratch_lo": 102,
    "flat_scratch_hi": 103,
    "xnack_mask_lo": 104,
    "xnack_mask_hi": 105,
}
SPECIAL_PAIRS = {"vcc": 106, "exec": 126, "flat_scratch": 102, "xnack_mask": 104}
M0, EXEC_LO, VCC_LO = 124, 126, 106

_RANGE = re.compile(r"^([vsa])\[(\d+):(\d+)\]$")
_SINGLE = re.compile(r"^([vsa])(\d+)$")
_TTMP = re.compile(r"^ttmp(\d+)$|^ttmp\[(\d+):(\d+)\]$")

# Inline float constants, as the 32-bit patterns an integer operation would see.
_FLOAT_CONSTANTS = {
    text: struct.unpack("<I", struct.pack("<f", value))[0]
    for text, value in (("0.5", 0.5), ("1.0", 1.0), ("2.0", 2.0), ("4.0", 4.0))
}
_FLOAT_CONSTANTS.update({"-" + t: v | 0x80000000 for t, v in list(_FLOAT_CONSTANTS.items())})
_FLOAT_CONSTANTS["0.15915494"] = 0x3E22F983


@dataclass(frozen=True)
class Reg:
    """A register or register range: kind 'v', 's' or 'a', first index and count."""

    kind: str
    index: int
    count: int = 1


@dataclass(frozen=True)
class Const:
    value: int  # 32-bit pattern (or 64-bit for 64-bit operands)


@dataclass(frozen=True)
class Other:
    """An operand the model does not track (scc as a source, off, null, a modifier-wrapped value)."""

    text: str


Operand = Reg | Const | Other


@functools.lru_cache(maxsize=1 << 16)
def decode(text: str) -> Operand:
    t = text.strip()
    m = _RANGE.match(t)
    if m:
        first, last = int(m.group(2)), int(m.group(3))
        return Reg(m.group(1), first, last - first + 1)
    m = _SINGLE.match(t)
    if m:
        return Reg(m.group(1), int(m.group(2)))
    if t in SPECIAL_SGPRS:
        return Reg("s", SPECIAL_SGPRS[t])
    if t in SPECIAL_PAIRS:
        return Reg("s", SPECIAL_PAIRS[t], 2)
    m = _TTMP.match(t)
    if m:
        return Other(t)
    if t in _FLOAT_CONSTANTS:
        return Const(_FLOAT_CONSTANTS[t])
    if t.startswith("lit(") and t.endswith(")"):
        t = t[4:-1]
    try:
        return Const(int(t, 0) & 0xFFFFFFFFFFFFFFFF)
    except ValueError:
        return Other(t)
