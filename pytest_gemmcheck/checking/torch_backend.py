"""One launch's check: the accuracy detector and the bitwise comparison with stored outputs.

Accuracy. An element is wrong when it is not finite, or when

    |out - ref| > rtol * max(|ref|, floor * rowmax)

where ``rowmax`` is the largest |ref| in the element's row. Plain ``|ref|`` is not a usable
scale: outputs near zero come from cancellation, and a correct fp8 kernel that accumulates
in another order (or in reduced precision, as Hopper's fp8 tensor cores do) is off on them by
far more than 5% of themselves. What a correct kernel never exceeds is about one bf16 ulp of
the row's largest value (0.4%-0.8% of rowmax, measured on correct bf16 and fp8 kernels up to
K=16384; see docs/checking.md). With the default ``floor=1`` the rule is "off by more than
5% of the row's largest |ref|", a 6x margin over that. ``max_rel_err`` is reported on the
same scale, so an element is wrong exactly when its relative error exceeds ``rtol``.

Consistency. Each output is compared bit for bit with the outputs stored so far (see
consensus.py); counting, localising and sizing those differences happens in the same pass.

One implementation for CPU and GPU tensors, in row chunks so that temporaries stay bounded
whatever the output's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..case.rng import mix32

# Elements per chunk: bounds every fp32 temporary to a few of these.
CHUNK_ELEMENTS = 1 << 22
# How many row indices / tile coordinates a result keeps for its message.
SAMPLE = 8


@dataclass(frozen=True)
class Tolerance:
    rtol: float = 0.05
    floor: float = 1.0  # fraction of the row's largest |ref| below which |ref| is not trusted


@dataclass
class Locations:
    """Where bad elements are: counts plus a few coordinates for messages."""

    elements: int = 0
    rows: int = 0
    tiles: int | None = None
    row_ids: list[int] = field(default_factory=list)
    tile_ids: list[tuple[int, int]] = field(default_factory=list)
    worst_tile_elements: int = 0


@dataclass
class AccuracyStats:
    wrong: Locations
    nonfinite: int
    max_abs_err: float
    max_rel_err: float
    rel_l2: float


@dataclass
class DiffStats:
    """Bitwise differences between an output and one stored output."""

    differing: Locations
    max_diff_rel: float  # largest |difference| as a fraction of the row's largest |ref|


def parse_tile(tile: str | tuple[int, int] | None) -> tuple[int, int] | None:
    if tile is None:
        return None
    if isinstance(tile, str):
        parts = tile.lower().split("x")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"tile={tile!r} is not of the form 'MxN' (e.g. '256x128')")
        tile = (int(parts[0]), int(parts[1]))
    tm, tn = (int(v) for v in tile)
    if tm <= 0 or tn <= 0:
        raise ValueError(f"tile={tile!r} must have positive sizes")
    return tm, tn


def row_max(ref: torch.Tensor) -> torch.Tensor:
    """Largest |ref| of each row, fp32 [M]. Computed once per case."""
    out = torch.empty(ref.shape[0], dtype=torch.float32, device=ref.device)
    for rows in _row_chunks(ref.shape[0], ref.shape[1]):
        out[rows] = ref[rows].float().abs().amax(dim=1) if ref.shape[1] else 0.0
    return out


def _row_chunks(m: int, n: int):
    step = max(1, CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, m, step):
        yield slice(start, min(m, start + step))


def _bits(t: torch.Tensor) -> torch.Tensor:
    """Same-width integer view, for bitwise equality (NaN payloads included)."""
    size = t.element_size()
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size])


class _LocationAccumulator:
    """Counts of flagged elements per row and per tile, kept on the device until the end."""

    def __init__(self, m: int, n: int, tile: tuple[int, int] | None, device):
        self.n = n
        self.tile = tile
        self.elements = torch.zeros((), dtype=torch.int64, device=device)
        self.row_flags = torch.zeros(m, dtype=torch.bool, device=device)
        if tile is not None:
            tm, tn = tile
            self.tile_counts = torch.zeros((-(-m // tm), -(-n // tn)), dtype=torch.int64, device=device)

    def add(self, rows: slice, mask: torch.Tensor) -> None:
        per_row = mask.sum(dim=1)
        self.row_flags[rows] = per_row > 0
        self.elements += per_row.sum()
        if self.tile is not None:
            tm, tn = self.tile
            nt = self.tile_counts.shape[1]
            padded = torch.nn.functional.pad(mask, (0, nt * tn - self.n)).reshape(mask.shape[0], nt, tn)
            row_tiles = torch.arange(rows.start, rows.stop, device=mask.device) // tm
            self.tile_counts.index_add_(0, row_tiles, padded.sum(dim=2))

    def result(self) -> Locations:
        loc = Locations(elements=int(self.elements))
        if loc.elements == 0:
            loc.tiles = 0 if self.tile is not None else None
            return loc
        bad_rows = torch.nonzero(self.row_flags).flatten()
        loc.rows = int(bad_rows.numel())
        loc.row_ids = [int(r) for r in bad_rows[:SAMPLE].tolist()]
        if self.tile is not None:
            bad_tiles = torch.nonzero(self.tile_counts)
            loc.tiles = int(bad_tiles.shape[0])
            loc.tile_ids = [(int(i), int(j)) for i, j in bad_tiles[:SAMPLE].tolist()]
            loc.worst_tile_elements = int(self.tile_counts.max())
        return loc


class _DiffAccumulator:
    """Bitwise differences between an output and one other output, chunk by chunk."""

    def __init__(self, m: int, n: int, tile, device):
        self.locations = _LocationAccumulator(m, n, tile, device)
        self.worst = torch.zeros((), dtype=torch.float32, device=device)

    def add(self, rows: slice, out_rows: torch.Tensor, other_rows: torch.Tensor, rmax: torch.Tensor) -> None:
        differ = _bits(out_rows) != _bits(other_rows)
        self.locations.add(rows, differ)
        delta = (out_rows.float() - other_rows.float()).abs()
        # a NaN on one side only is as different as it gets
        delta = torch.where(differ, torch.nan_to_num(delta, nan=torch.inf), 0.0)
        relative = delta / torch.where(rmax > 0, rmax, 1.0)
        if relative.numel():
            self.worst = torch.maximum(self.worst, relative.max())

    def result(self) -> DiffStats:
        return DiffStats(self.locations.result(), float(self.worst))


def check_launch(
    out: torch.Tensor,
    ref: torch.Tensor,
    rowmax: torch.Tensor,
    tol: Tolerance,
    tile: tuple[int, int] | None = None,
    copies: list[torch.Tensor] = (),
) -> tuple[AccuracyStats, list[DiffStats]]:
    """Check ``out`` against ``ref`` and compare it bitwise with each of ``copies``, in one pass
    over row chunks. Shapes and dtypes must already match (the caller reports mismatches).
    Everything accumulates on the tensors' device; the host reads a handful of scalars at the end."""
    m, n = ref.shape
    device = out.device
    wrong = _LocationAccumulator(m, n, tile, device)
    diffs = [_DiffAccumulator(m, n, tile, device) for _ in copies]
    zero = torch.zeros((), dtype=torch.float64, device=device)
    nonfinite = torch.zeros((), dtype=torch.int64, device=device)
    max_abs, max_rel, err_sq, ref_sq = zero.clone(), zero.clone(), zero.clone(), zero.clone()
    for rows in _row_chunks(m, n):
        o = out[rows].float()
        r = ref[rows].float()
        rmax = rowmax[rows, None]
        finite = torch.isfinite(o)
        err = torch.where(finite, (o - r).abs(), 0.0)
        scale = torch.maximum(r.abs(), tol.floor * rmax)
        # scale is 0 only where the whole row of ref is 0: any error there is infinitely relative
        rel = torch.where(scale > 0, err / scale, torch.where(err > 0, torch.inf, 0.0))
        wrong.add(rows, ~finite | (rel > tol.rtol))
        nonfinite += (~finite).sum()
        if err.numel():
            max_abs = torch.maximum(max_abs, err.max().double())
            max_rel = torch.maximum(max_rel, rel.max().double())
        err_sq += (err.double() ** 2).sum()
        ref_sq += (r.double() ** 2).sum()
        for acc, copy in zip(diffs, copies):
            acc.add(rows, out[rows], copy[rows], rmax)
    err_sq, ref_sq = float(err_sq), float(ref_sq)
    rel_l2 = (err_sq / ref_sq) ** 0.5 if ref_sq > 0 else (0.0 if err_sq == 0 else float("inf"))
    accuracy = AccuracyStats(wrong.result(), int(nonfinite), float(max_abs), float(max_rel), rel_l2)
    return accuracy, [acc.result() for acc in diffs]


def compare(a: torch.Tensor, b: torch.Tensor, rowmax: torch.Tensor, tile: tuple[int, int] | None) -> DiffStats:
    """Bitwise comparison of two outputs (used between stored copies)."""
    m, n = a.shape
    acc = _DiffAccumulator(m, n, tile, a.device)
    for rows in _row_chunks(m, n):
        acc.add(rows, a[rows], b[rows], rowmax[rows, None])
    return acc.result()


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
    bits = _bits(view)
    m, n = view.shape
    width_mask = (1 << (8 * t.element_size())) - 1
    cols = torch.arange(n, dtype=torch.int64, device=t.device)
    lanes = lane_weight(cols % CHECKSUM_GROUP)
    groups = cols // CHECKSUM_GROUP
    total = torch.zeros((), dtype=torch.int64, device=t.device)
    for rows in _row_chunks(m, n):
        chunk = bits[rows].to(torch.int64) & width_mask
        row_ids = torch.arange(rows.start, rows.stop, dtype=torch.int64, device=t.device)
        weight = group_weight(row_ids[:, None], groups[None, :]) * lanes[None, :]  # int64 products wrap: modulo 2**64
        total += (chunk * weight).sum()
    return int(total)
