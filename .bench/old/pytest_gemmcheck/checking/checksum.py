"""The output checksum both backends compute: how consistency is judged without reading a
stored copy of an output per launch (consensus.py groups launches by it)."""

from __future__ import annotations

import torch

from ..records.mix import MASK32 as _MASK32
from ..records.mix import mix32
from .torch_backend import bits_view, row_chunks

# The checksum's weights (see checksum): columns in groups of CHECKSUM_GROUP, a lane weight per
# column of a group and a group weight per row and group.
CHECKSUM_GROUP = 128
CHECKSUM_LANE_SEED = 0x9E3779B9
CHECKSUM_ROW_MULTIPLIER = 0x85EBCA77
CHECKSUM_GROUP_MULTIPLIER = 0xC2B2AE3D
CHECKSUM_GROUP_SEED = 0x27D4EB2F
CHECKSUM_GROUP_MIX = 0x7FEB352D
# An element's bits are mixed with a key of its place before they are weighed.
CHECKSUM_KEY_ROW = 0x61C88647
CHECKSUM_KEY_COLUMN = 0x2545F491


def element_key(rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """A 32-bit key of each element's place (int64 holding uint32), xored into its bits."""
    return (rows * CHECKSUM_KEY_ROW + cols * CHECKSUM_KEY_COLUMN) & _MASK32


def lane_weight(lanes: torch.Tensor) -> torch.Tensor:
    """An odd 32-bit weight for each column of a group (int64 holding uint32)."""
    return mix32(lanes ^ CHECKSUM_LANE_SEED) | 1


def group_weight(rows: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """An odd 32-bit weight for each (row, column group) (int64 holding uint32): a product and a
    shift of an affine key, distinct for distinct keys (every step is a bijection of 32-bit
    words but the final odd bit); the lane weights carry the strong hash."""
    key = (rows * CHECKSUM_ROW_MULTIPLIER + groups * CHECKSUM_GROUP_MULTIPLIER + CHECKSUM_GROUP_SEED) & _MASK32
    mixed = (key * CHECKSUM_GROUP_MIX) & _MASK32
    return (mixed ^ (mixed >> 16)) | 1


def checksum_view(t: torch.Tensor) -> torch.Tensor | None:
    """The 2-D [rows, columns] view the checksum is defined on: a 2-D tensor as it is, a
    contiguous one of any shape as [-1, last dimension]; None for layouts it cannot view."""
    if t.dim() == 2:
        return t
    if t.is_contiguous():
        return t.reshape(-1, t.shape[-1]) if t.dim() >= 2 else t.reshape(1, -1)
    return None


def checksum(t: torch.Tensor) -> int:
    """A 64-bit hash of the output's bits and their places. The 2-D view (checksum_view) is cut
    into 32-bit words: each fp32 element is one, and each pair of 16-bit neighbours (columns c
    and c + 1, c even; the high half 0 past the last column) is one, the element at c in the
    low half (a byte element is a word of its own, a 64-bit one two). Over the words (r, c), c the
    word's first column, the checksum is the sum modulo
    2**64 of mix32(word ^ element_key(r, c)) * group_weight(r, c // 128) * lane_weight(c % 128),
    as a signed 64-bit number. The weights are odd and the products exact in 64 bits.

    Equal outputs give equal checksums. A changed output collides with the one it was (or any
    other fixed output) with probability at most 1 / (2**32 - 1), whatever the change, as long
    as the change does not depend on lowbias32 itself: mix32 turns any change of a word's bits
    into a difference d of its mixed value that is, to the change, a random nonzero 32-bit
    number, and the sum collides only when the last changed word's d * w (w odd, |d * w| <
    2**64) is the one residue that cancels the rest, one value of d out of 2**32 - 1. So a
    change to one word is always seen (d * w is never 0 modulo 2**64), and structured changes
    (swapped rows or tiles, sign flips, a shifted block, one ulp) are no more likely to collide
    than random ones: without the mixing, a weighted sum of the bits would see a pair of fp32
    sign flips (differences of 2**31) at two places whose weights agree modulo 2**33 as no
    change at all, and about one pair in 2**32 of any output's places does.

    The GPU's pass computes it at memory speed: per word a key, a lowbias32 and one widening
    multiply-add (a group weight is applied once per 128 columns); two 16-bit elements share
    one word's mix."""
    view = checksum_view(t)
    if view is None:
        view = t.contiguous().reshape(-1, t.shape[-1])
    if view.numel() == 0:
        return 0
    if view.element_size() == 8:  # 64-bit elements: as two 32-bit words each
        view = view.contiguous().view(torch.int32)
    bits = bits_view(view)
    m, n = view.shape
    halves = view.element_size() == 2
    cols = torch.arange(0, n, 2 if halves else 1, dtype=torch.int64, device=t.device)  # each word's first column
    lanes = lane_weight(cols % CHECKSUM_GROUP)
    groups = cols // CHECKSUM_GROUP
    total = torch.zeros((), dtype=torch.int64, device=t.device)
    for rows in row_chunks(m, n):
        row_ids = torch.arange(rows.start, rows.stop, dtype=torch.int64, device=t.device)
        if halves:
            elements = bits[rows].to(torch.int64) & 0xFFFF
            if n % 2:
                elements = torch.nn.functional.pad(elements, (0, 1))
            words = elements[:, 0::2] | (elements[:, 1::2] << 16)
        else:  # a 32-bit element, or a byte
            words = bits[rows].to(torch.int64) & (_MASK32 if view.element_size() == 4 else 0xFF)
        mixed = mix32(words ^ element_key(row_ids[:, None], cols[None, :]))
        weight = group_weight(row_ids[:, None], groups[None, :]) * lanes[None, :]  # int64 products wrap: modulo 2**64
        total += (mixed * weight).sum()
    return int(total)


# words_checksum's constants: a key per word's place, and a weight per place modulo WORDS_LANES
WORDS_KEY = 0x9E3779B1
WORDS_SEED = 0x5BD1E995
WORDS_LANES = 1024


def word_view(t: torch.Tensor) -> torch.Tensor:
    """A flat integer view of a contiguous ``t``'s bits in 32-bit words where its size and
    alignment allow, else in its own elements (bytes, 16-bit); what words_checksum reads."""
    flat = bits_view(t.detach()).reshape(-1)
    if flat.element_size() == 8:
        return flat.view(torch.int32)
    if flat.element_size() < 4 and flat.numel() * flat.element_size() % 4 == 0 and flat.data_ptr() % 4 == 0:
        return flat.view(torch.int32)
    return flat


def words_checksum(words: torch.Tensor) -> int:
    """A 64-bit hash of a flat tensor of integer words (word_view): the sum modulo 2**64 of
    mix32(w ^ (p * WORDS_KEY)) * (mix32((p % WORDS_LANES) ^ WORDS_SEED) | 1) over the words w at
    places p (both taken as unsigned 32-bit numbers), as a signed 64-bit number. As with
    :func:`checksum`, a changed tensor collides with the one it was with probability at most
    1 / (2**32 - 1), and a change to one word is always seen: the key makes each place's mixed
    value its own, and any odd weight keeps a one-word change nonzero, so the weights repeat
    every WORDS_LANES words (the GPU's kernel works them out once per lane, and the keys by one
    addition a word). The guards compare inputs by it (one read of each input instead of two)."""
    mask = (1 << (8 * words.element_size())) - 1
    total = torch.zeros((), dtype=torch.int64, device=words.device)
    step = 1 << 22
    for start in range(0, words.numel(), step):
        w = words[start : start + step].to(torch.int64) & mask
        place = torch.arange(start, start + w.numel(), dtype=torch.int64, device=words.device) & _MASK32
        mixed = mix32(w ^ ((place * WORDS_KEY) & _MASK32))
        weight = mix32((place % WORDS_LANES) ^ WORDS_SEED) | 1
        total += (mixed * weight).sum()  # int64 products and sums wrap: modulo 2**64
    return int(total)
