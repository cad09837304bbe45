"""The 32-bit mix that seeded operands (case/rng.py) and output checksums (checking/checksum.py)
share, on integer tensors of any library that has ``^``, ``>>``, ``*`` and ``&`` (torch's): no
import needed here."""

from __future__ import annotations

MASK32 = 0xFFFFFFFF


def mix32(x):
    """lowbias32 (Chris Wellons' hash-prospector): good avalanche, only 32-bit products, done in
    int64 and masked so that wrap-around never matters."""
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & MASK32
    x = x ^ (x >> 15)
    x = (x * 0x846CA68B) & MASK32
    x = x ^ (x >> 16)
    return x
