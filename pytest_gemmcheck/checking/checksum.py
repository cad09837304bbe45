"""The output checksum both backends compute: how consistency is judged without reading a
stored copy of an output per launch (consensus.py groups launches by it)."""

from __future__ import annotations

import torch

from ..case.rng import mix32
from .torch_backend import bits_view, row_chunks

# The checksum's weights (see checksum): columns in groups of CHECKSUM_GROUP, a lane weight per
# column of a group and a group weight per row and group.
CHECKSUM_GROUP = 128
CHECKSUM_LANE_SEED = 0x9E3779B9
CHECKSUM_ROW_MULTIPLIER = 0x85EBCA77
CHECKSUM_GROUP_MULTIPLIER = 0xC2B2AE3D
CHECKSUM_GROUP_SEED = 0x27D4EB2F
CHECKSUM_GROUP_MIX = 0x7FEB352D
_MASK32 = 0xFFFFFFFF


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
    """A position-weighted sum of the output's bits modulo 2**64, as a signed 64-bit number:
    element (r, c) of the 2-D view (checksum_view) weighs group_weight(r, c // 128) *
    lane_weight(c % 128), odd and exact in 64 bits. Equal outputs give equal checksums; a
    change to one element always changes it, and other changes (sign flips of two fp32
    elements included) collide with probability about 2**-32 or less. The GPU's pass folds it
    in at one widening multiply-add per element (a group weight is applied once per 128
    columns), which is how consistency is judged there without reading a stored copy."""
    view = checksum_view(t)
    if view is None:
        view = t.contiguous().reshape(-1, t.shape[-1])
    if view.numel() == 0:
        return 0
    bits = bits_view(view)
    m, n = view.shape
    width_mask = (1 << (8 * t.element_size())) - 1
    cols = torch.arange(n, dtype=torch.int64, device=t.device)
    lanes = lane_weight(cols % CHECKSUM_GROUP)
    groups = cols // CHECKSUM_GROUP
    total = torch.zeros((), dtype=torch.int64, device=t.device)
    for rows in row_chunks(m, n):
        chunk = bits[rows].to(torch.int64) & width_mask
        row_ids = torch.arange(rows.start, rows.stop, dtype=torch.int64, device=t.device)
        weight = group_weight(row_ids[:, None], groups[None, :]) * lanes[None, :]  # int64 products wrap: modulo 2**64
        total += (chunk * weight).sum()
    return int(total)
