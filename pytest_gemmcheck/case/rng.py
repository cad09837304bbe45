"""Counter-based random numbers that are the same bits on every machine and device.

torch's own generators differ between CPU and CUDA and may change between releases, so
operands are made from an integer hash of (seed, stream, element index) instead. Integer
ops are exact everywhere, and the only float ops used afterwards are IEEE additions and
multiplications in a fixed order, so a seed names the same bytes on any machine.
"""

from __future__ import annotations

import hashlib

import torch

from ..records.mix import MASK32 as _MASK32
from ..records.mix import mix32


def stream_key(seed: int, name: str) -> int:
    """A 32-bit key for one named stream of a seed ("a", "b", "a.rowgain", ...)."""
    digest = hashlib.sha256(f"{int(seed)}:{name}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def bits32(numel: int, key: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """`numel` hashed 32-bit values (as int64) for stream `key`."""
    index = torch.arange(numel, dtype=torch.int64, device=device)
    lo = index & _MASK32
    hi = index >> 32
    x = mix32(lo ^ key)
    x = mix32(x ^ ((hi * 0x9E3779B9 + key) & _MASK32))
    return mix32((x + 0x632BE5AB) & _MASK32)


def uniform01(shape: tuple[int, ...], key: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """float64 values in [0, 1), multiples of 2**-24 (exact in float32 too)."""
    numel = 1
    for size in shape:
        numel *= size
    return ((bits32(numel, key, device) >> 8).to(torch.float64) * 2.0**-24).reshape(shape)


def bell(shape: tuple[int, ...], seed: int, name: str, device: torch.device | str = "cpu") -> torch.Tensor:
    """float32 values in (-1.5, 1.5) with a bell-shaped density (sum of three uniforms).

    The sum is exact in float64 and rounded once to float32, so every device agrees.
    """
    total = None
    for part in range(3):
        u = uniform01(shape, stream_key(seed, f"{name}#{part}"), device)
        total = u if total is None else total + u
    return (total - 1.5).to(torch.float32)


def power_of_two_gains(count: int, seed: int, name: str, span: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """`count` float32 gains 2**e with integer e uniform in [-span, span].

    Real activations have rows (tokens) and channels of very different magnitude; per-row
    and per-block scales exist for that, so the operands should have it too.
    """
    exponents = bits32(count, stream_key(seed, name), device) % (2 * span + 1) - span
    return exp2_exact(exponents)


def exp2_exact(exponents: torch.Tensor) -> torch.Tensor:
    """float32 2**e for integer e in [-126, 127], built from the bits (no libm involved)."""
    return ((exponents.to(torch.int32) + 127) << 23).view(torch.float32)
