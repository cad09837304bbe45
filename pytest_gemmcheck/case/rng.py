"""Counter-based random numbers that are the same bits on every machine and device.

torch's own generators differ between CPU and CUDA and may change between releases, so
operands are made from an integer hash of (seed, stream, element index) instead. A stream's
three 32-bit keys come from sha256 of its seed and name; element ``i`` (its flat index, below
2**64) goes through lowbias32 (records.mix.mix32) three times, keyed:

    x  = mix32(lo(i) ^ k1)
    w1 = mix32(x ^ k2 ^ (hi(i) * 0x9E3779B9 mod 2**32))
    w2 = mix32(w1 ^ k3)

and its value is the sum of the four 16-bit halves of ``w1`` and ``w2`` less their mean, times
2**-16: Irwin-Hall of four uniforms, bell-shaped on (-2, 2) with standard deviation 1/sqrt(3),
in steps of 2**-16 (finer than bf16's below 2**-8 of the largest value). Everything before the
last step is unsigned 32-bit arithmetic, wrapping as it does everywhere, and the sum (|s| <
2**18) converts to float32 exactly, so there is nothing to round: numpy on the CPU and one Triton
kernel on a GPU (rng_kernel.py) give the same bits, and a GPU without Triton gets the CPU's
bits by a copy.

The CPU works through the counters in chunks of 2**16 with every operation in place, so that
the dozen temporaries stay in the core's cache: 2.0 ns an element on one thread of a 2-core
EPYC (numpy), about torch.randn's 2.6 ns; the hash of 2024 (three lowbias32 per uniform, three
uniforms, int64 torch ops over whole tensors) took 30-200 ns there.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Iterator

import numpy as np
import torch

from ..records.mix import MASK32

HI_MULTIPLIER = 0x9E3779B9  # the golden ratio's 32 bits: counters of 2**32 and more key the second round apart
HALVES_MEAN = 131070  # four 16-bit halves average 4 * 65535 / 2
BELL_STEP = 2.0**-16
CHUNK = 1 << 16  # counters hashed at once on the CPU: four uint32 temporaries of 256 KiB, in the L2 cache

_MIX1 = np.uint32(0x7FEB352D)  # records.mix.mix32's multipliers
_MIX2 = np.uint32(0x846CA68B)


def stream_keys(seed: int, name: str) -> tuple[int, int, int]:
    """Three 32-bit keys of one named stream of a seed ("a", "b", "a.rowgain", ...)."""
    digest = hashlib.sha256(f"{int(seed)}:{name}".encode()).digest()
    return tuple(int.from_bytes(digest[at : at + 4], "little") for at in (0, 4, 8))


def _mix_in_place(x: np.ndarray, scratch: np.ndarray) -> None:
    """records.mix.mix32 on uint32, in place (``scratch`` as long as ``x``)."""
    np.right_shift(x, 16, out=scratch)
    x ^= scratch
    x *= _MIX1
    np.right_shift(x, 15, out=scratch)
    x ^= scratch
    x *= _MIX2
    np.right_shift(x, 16, out=scratch)
    x ^= scratch


@functools.lru_cache(maxsize=1)
def _counters() -> np.ndarray:
    """0 .. CHUNK-1, made once (read only)."""
    counters = np.arange(CHUNK, dtype=np.uint32)
    counters.flags.writeable = False
    return counters


def _hashed(
    numel: int, keys: tuple[int, int, int], second: bool, first: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray | None]]:
    """(offset, w1, w2 or None) for each chunk of the counters first..first+numel-1 (``first`` a
    multiple of the chunk: CHUNK, or the power of two at or above ``numel`` where that is less),
    offset counted from ``first``. The arrays are reused from chunk to chunk: read them before
    taking the next."""
    k1, k2, k3 = keys
    chunk = min(CHUNK, 1 << max(0, numel - 1).bit_length())  # a power of two: no chunk crosses 2**32
    if first % chunk:
        raise ValueError(f"first counter {first} is no multiple of {chunk}, the chunk of {numel} counters")
    counters = _counters()
    w1, w2, scratch = (np.empty(chunk, np.uint32) for _ in range(3))
    for offset in range(0, numel, chunk):
        size = min(chunk, numel - offset)
        start = first + offset
        x, y, t = w1[:size], w2[:size], scratch[:size]
        # start is a multiple of the chunk: the counter's low word is start's low word | i = ^ i
        np.bitwise_xor(counters[:size], np.uint32((start & MASK32) ^ k1), out=x)
        _mix_in_place(x, t)
        x ^= np.uint32(k2 ^ (((start >> 32) * HI_MULTIPLIER) & MASK32))
        _mix_in_place(x, t)
        if second:
            np.bitwise_xor(x, np.uint32(k3), out=y)
            _mix_in_place(y, t)
        yield offset, x, (y if second else None)


def bell_numpy(numel: int, keys: tuple[int, int, int], first: int = 0) -> np.ndarray:
    """The stream's bell-shaped float32 values of counters first..first+numel-1, on the CPU."""
    out = np.empty(numel, np.float32)
    halves = np.empty(min(CHUNK, max(numel, 1)), np.uint32)
    for start, w1, w2 in _hashed(numel, keys, True, first):
        size = len(w1)
        s = halves[:size]
        np.bitwise_and(w1, 0xFFFF, out=s)
        w1 >>= 16
        s += w1
        np.bitwise_and(w2, 0xFFFF, out=w1)
        s += w1
        w2 >>= 16
        s += w2
        signed = s.view(np.int32)  # below 2**18: the same number
        signed -= HALVES_MEAN
        chunk_out = out[start : start + size]
        chunk_out[:] = signed  # exact: |value| < 2**18
        chunk_out *= np.float32(BELL_STEP)
    return out


def words_numpy(numel: int, keys: tuple[int, int, int], first: int = 0) -> np.ndarray:
    """The stream's first hashed word (w1) of counters first..first+numel-1, uint32, on the CPU."""
    out = np.empty(numel, np.uint32)
    for start, w1, _ in _hashed(numel, keys, False, first):
        out[start : start + len(w1)] = w1
    return out


def _on_gpu_kernel(device: torch.device) -> bool:
    """Whether ``device`` is a GPU the Triton kernel can write on (else the CPU's bits are copied)."""
    if device.type != "cuda":
        return False
    from ..checking.triton import interpreting, triton_importable

    return triton_importable() and not interpreting()


def bell(shape: tuple[int, ...], seed: int, name: str, device: torch.device | str = "cpu") -> torch.Tensor:
    """float32 values in (-2, 2), bell-shaped (the sum of four uniforms), on ``device``: the same
    bits on every device."""
    numel = 1
    for size in shape:
        numel *= size
    device = torch.device(device)
    keys = stream_keys(seed, name)
    if _on_gpu_kernel(device):
        from .rng_kernel import bell_on_gpu

        return bell_on_gpu(numel, keys, device).reshape(shape)
    return torch.from_numpy(_bell_prefix(numel, keys)).reshape(shape).to(device)


# A stream's values depend on the element's flat index alone, so every shape's tensor of a stream
# is a prefix of one sequence: a session of small cases of new shapes (a suite sweeping 64 to 256)
# keeps each stream's first values and copies from them, 2 us where hashing 8192 values took 0.13
# ms a tensor on one core here. Up to PREFIX_ELEMENTS values (1 MiB) of the PREFIX_STREAMS streams
# used last, bell values and hashed words (a row's gains) alike. A kept prefix grows to the power
# of two at or above what is asked (whole chunks beyond CHUNK), doubling: a new seed's 64x64
# tensor hashes 4096 values, where rounding up to a chunk hashed 65536 (a case at 64^3 of a seed
# of its own: 2.5-2.9 ms before, 1.9-2.4 ms after, one thread here; hand_loop cases --new-seeds).
PREFIX_ELEMENTS = 1 << 18
PREFIX_STREAMS = 8
_prefixes: dict[tuple, np.ndarray] = {}


def _bell_prefix(numel: int, keys: tuple[int, int, int]) -> np.ndarray:
    """bell_numpy(numel, keys), a fresh array: from the stream's kept first values where it fits."""
    values = _kept_prefix(bell_numpy, numel, keys)
    return values if values.flags.writeable else values.copy()  # made just now: no copy of it


def _kept_prefix(make, numel: int, keys: tuple[int, int, int]) -> np.ndarray:
    """``make(numel, keys)`` (bell_numpy or words_numpy): from the first values of the stream
    kept where it fits (read only), else made (a fresh array)."""
    if numel > PREFIX_ELEMENTS:
        return make(numel, keys)
    key = (make.__name__, keys)
    kept = _prefixes.pop(key, None)
    if kept is None or len(kept) < numel:
        kept = _grown(make, kept, numel, keys)
        kept.flags.writeable = False
    _prefixes[key] = kept  # the latest used last
    while len(_prefixes) > PREFIX_STREAMS:
        del _prefixes[next(iter(_prefixes))]
    return kept[:numel]


def _grown(make, kept: np.ndarray | None, numel: int, keys: tuple[int, int, int]) -> np.ndarray:
    """A stream's kept first values grown to hold ``numel``: to the power of two at or above it,
    whole chunks beyond CHUNK. Every length kept is one of those, so each piece added starts on a
    multiple of its own chunk, as _hashed needs: the length so far, doubled below CHUNK."""
    target = 1 << max(0, numel - 1).bit_length() if numel <= CHUNK else -(-numel // CHUNK) * CHUNK
    pieces = [make(target, keys)] if kept is None else [kept]
    length = len(pieces[0])
    while length < target:
        more = length if length < CHUNK else target - length
        pieces.append(make(more, keys, first=length))
        length += more
    return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


def power_of_two_gains(count: int, seed: int, name: str, span: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """`count` float32 gains 2**e with integer e uniform in [-span, span] (to one part in 2**32).

    Real activations have rows (tokens) and channels of very different magnitude; per-row
    and per-block scales exist for that, so the operands should have it too. Made on the CPU
    (a few per row or block) and copied.
    """
    words = _kept_prefix(words_numpy, count, stream_keys(seed, name))
    exponents = (words % np.uint32(2 * span + 1)).astype(np.int32) - span
    return torch.from_numpy(((exponents + 127) << 23).view(np.float32)).to(device)  # exp2_exact's bits


def exp2_exact(exponents: torch.Tensor) -> torch.Tensor:
    """float32 2**e for integer e in [-126, 127], built from the bits (no libm involved)."""
    return ((exponents.to(torch.int32) + 127) << 23).view(torch.float32)
