"""The check of one launch with torch ops, on any device (rule.py defines its numbers): the
accuracy detector and the bitwise comparison with stored outputs, in one pass.

In row chunks, so that temporaries stay bounded whatever the output's size; everything
accumulates on the tensors' device and the host reads a handful of scalars at the end.
"""

from __future__ import annotations

import weakref

import torch

from .rule import SAMPLE, AccuracyStats, DiffStats, Locations, Tolerance

# Elements per chunk: bounds every fp32 temporary to a few of these.
CHUNK_ELEMENTS = 1 << 22


def row_max(ref: torch.Tensor) -> torch.Tensor:
    """Largest |ref| of each row, fp32 [M] (NaN where a row has one). Computed once per case;
    of one chunk by three ops (|x| and the maximum are exact in any float dtype, and so is the
    conversion to fp32 after them), where the chunked way takes six."""
    if 0 < ref.numel() <= CHUNK_ELEMENTS:
        return ref.abs().amax(dim=1).float()
    out = torch.empty(ref.shape[0], dtype=torch.float32, device=ref.device)
    for rows in row_chunks(ref.shape[0], ref.shape[1]):
        out[rows] = ref[rows].float().abs().amax(dim=1) if ref.shape[1] else 0.0
    return out


def row_chunks(m: int, n: int):
    step = max(1, CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, m, step):
        yield slice(start, min(m, start + step))


def bits_view(t: torch.Tensor) -> torch.Tensor:
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
        differ = bits_view(out_rows) != bits_view(other_rows)
        self.locations.add(rows, differ)
        delta = (out_rows.float() - other_rows.float()).abs()
        # a NaN on one side only is as different as it gets
        delta = torch.where(differ, torch.nan_to_num(delta, nan=torch.inf), 0.0)
        relative = delta / torch.where(rmax > 0, rmax, 1.0)
        if relative.numel():
            self.worst = torch.maximum(self.worst, relative.max())

    def result(self) -> DiffStats:
        return DiffStats(self.locations.result(), float(self.worst))


def _accuracy_terms(out_rows: torch.Tensor, ref_rows: torch.Tensor, rmax: torch.Tensor, tol: Tolerance):
    """(finite, |error|, relative error) of rows of an output, as the rule (rule.py) defines them."""
    o = out_rows.float()
    finite = torch.isfinite(o)
    err = torch.where(finite, (o - ref_rows).abs(), 0.0)
    scale = torch.maximum(ref_rows.abs(), tol.floor * rmax)
    # scale is 0 only where the whole row of ref is 0: any error there is infinitely relative
    rel = torch.where(scale > 0, err / scale, torch.where(err > 0, torch.inf, 0.0))
    return finite, err, rel


class _ReferenceTerms:
    """What the clean way needs of a reference alone (its fp32 values, each element's scale, the
    sum of its squares), worked out once for every launch checked against it (see
    :func:`_reference_terms`)."""

    def __init__(self, ref: torch.Tensor, rowmax: torch.Tensor, floor: float, key: tuple | None):
        self.key = key
        self.r = ref.float()
        floor_scale = floor * rowmax[:, None]
        self.scale = torch.maximum(self.r.abs(), floor_scale)
        # every scale positive: the division alone; else 0 where a whole row of ref is 0 (or the
        # floor is 0), where any error is infinitely relative
        self.positive = None if bool((floor_scale > 0).all()) else self.scale > 0
        self.ref_sq = float((self.r.double() ** 2).sum())

    def serves(self, ref: torch.Tensor, rowmax: torch.Tensor, floor: float) -> bool:
        held_ref, held_rowmax, ref_version, rowmax_version, held_floor = self.key
        return (
            held_ref() is ref
            and held_rowmax() is rowmax
            and ref._version == ref_version
            and rowmax._version == rowmax_version
            and held_floor == floor
        )


_held_terms: _ReferenceTerms | None = None  # the latest reference's: a case checks against one


def _reference_terms(ref: torch.Tensor, rowmax: torch.Tensor, floor: float) -> _ReferenceTerms:
    """The terms of ``ref``, held for the reference object itself (a weak reference: a new
    tensor at a freed one's address is not it) and its version counter, so that a reference
    changed in place by torch is worked out again; the harness's own reference is never handed
    out, and is proved unchanged by its bytes. A tensor made under torch.inference_mode has no
    version counter: its terms are worked out at each check."""
    global _held_terms
    if ref.is_inference() or rowmax.is_inference():
        return _ReferenceTerms(ref, rowmax, floor, None)
    if _held_terms is None or not _held_terms.serves(ref, rowmax, floor):
        key = (weakref.ref(ref), weakref.ref(rowmax), ref._version, rowmax._version, floor)
        _held_terms = _ReferenceTerms(ref, rowmax, floor, key)
    return _held_terms


def _clean_in_one_chunk(
    out: torch.Tensor, ref: torch.Tensor, rowmax: torch.Tensor, tol: Tolerance
) -> AccuracyStats | None:
    """check_launch's numbers for an output of one chunk with no wrong element, by fewer ops (no
    accumulators, no per-row counts, the reference's own terms worked out once); None when an
    element is wrong, which check_launch then counts and locates. The same numbers: every
    maximum and sum is the one the accumulators would add to zero. A non-finite element makes
    its relative error NaN or infinite, and so the largest one (torch's max propagates NaN),
    which no ``<= rtol`` admits: the maximum decides, where a comparison of every element took
    66 us more at 256x256. 25 us a check at 64x64 and 146 us at 256x256 on one thread against
    kept terms, where working everything out each time took 88 and 1096 us."""
    terms = _reference_terms(ref, rowmax, tol.floor)
    err = (out.float() - terms.r).abs_()
    if terms.positive is None:
        rel = err / terms.scale
    else:
        rel = torch.where(terms.positive, err / terms.scale, torch.where(err > 0, torch.inf, 0.0))
    worst = float(rel.max())  # NaN where any is NaN
    if not worst <= tol.rtol:
        return None
    return AccuracyStats(
        Locations(elements=0, tiles=None),
        0,
        float(err.max()),
        worst,
        _rel_l2(float((err.double() ** 2).sum()), terms.ref_sq),
    )


def _rel_l2(err_sq: float, ref_sq: float) -> float:
    return (err_sq / ref_sq) ** 0.5 if ref_sq > 0 else (0.0 if err_sq == 0 else float("inf"))


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
    Everything accumulates on the tensors' device; the host reads a handful of scalars at the end.
    An output of one chunk compared with no copy is checked by fewer ops when no element of it is
    wrong (a launch's first check on the CPU: 0.16 ms of a 64^3 case's 0.87 ms on one thread)."""
    m, n = ref.shape
    if not copies and m * n <= CHUNK_ELEMENTS and m and n:
        clean = _clean_in_one_chunk(out, ref, rowmax, tol)
        if clean is not None:
            clean.wrong.tiles = 0 if tile is not None else None
            return clean, []
    device = out.device
    wrong = _LocationAccumulator(m, n, tile, device)
    diffs = [_DiffAccumulator(m, n, tile, device) for _ in copies]
    zero = torch.zeros((), dtype=torch.float64, device=device)
    nonfinite = torch.zeros((), dtype=torch.int64, device=device)
    max_abs, max_rel, err_sq, ref_sq = zero.clone(), zero.clone(), zero.clone(), zero.clone()
    for rows in row_chunks(m, n):
        r = ref[rows].float()
        rmax = rowmax[rows, None]
        finite, err, rel = _accuracy_terms(out[rows], r, rmax, tol)
        wrong.add(rows, ~finite | (rel > tol.rtol))
        nonfinite += (~finite).sum()
        if err.numel():
            max_abs = torch.maximum(max_abs, err.max().double())
            max_rel = torch.maximum(max_rel, rel.max().double())
        err_sq += (err.double() ** 2).sum()
        ref_sq += (r.double() ** 2).sum()
        for acc, copy in zip(diffs, copies):
            acc.add(rows, out[rows], copy[rows], rmax)
    rel_l2 = _rel_l2(float(err_sq), float(ref_sq))
    accuracy = AccuracyStats(wrong.result(), int(nonfinite), float(max_abs), float(max_rel), rel_l2)
    return accuracy, [acc.result() for acc in diffs]


def compare(a: torch.Tensor, b: torch.Tensor, rowmax: torch.Tensor, tile: tuple[int, int] | None) -> DiffStats:
    """Bitwise comparison of two outputs (used between stored copies)."""
    m, n = a.shape
    acc = _DiffAccumulator(m, n, tile, a.device)
    for rows in row_chunks(m, n):
        acc.add(rows, a[rows], b[rows], rowmax[rows, None])
    return acc.result()


# A wrong-tile map is coarsened to at most this many cells a side: enough for a heatmap, and a
# bounded record whatever the output's size.
TILE_MAP_CELLS = 64


def wrong_tile_map(
    out: torch.Tensor,
    ref: torch.Tensor,
    rowmax: torch.Tensor,
    tol: Tolerance,
    tile: tuple[int, int],
    max_cells: int = TILE_MAP_CELLS,
) -> dict:
    """Where an output's wrong elements are: their count per tile, summed into cells of whole
    tiles so that the grid is at most ``max_cells`` a side. One more pass over ``out`` and
    ``ref``, worth it for a bad launch only. A plain dict (it is stored as JSON): m, n, tile,
    cell (tiles per cell, rows and columns), grid (wrong elements per cell, row-major)."""
    m, n = ref.shape
    acc = _LocationAccumulator(m, n, tile, out.device)
    for rows in row_chunks(m, n):
        finite, _, rel = _accuracy_terms(out[rows], ref[rows].float(), rowmax[rows, None], tol)
        acc.add(rows, ~finite | (rel > tol.rtol))
    return _tile_grid(acc.tile_counts, m, n, tile, max_cells)


def differing_tile_map(
    out: torch.Tensor, other: torch.Tensor, tile: tuple[int, int], max_cells: int = TILE_MAP_CELLS
) -> dict:
    """Where two outputs' bits differ (a launch's and the consensus'), per tile, in the grid
    :func:`wrong_tile_map` gives: what shows a race whose errors stay under any tolerance."""
    m, n = out.shape
    acc = _LocationAccumulator(m, n, tile, out.device)
    for rows in row_chunks(m, n):
        acc.add(rows, bits_view(out[rows]) != bits_view(other[rows]))
    return _tile_grid(acc.tile_counts, m, n, tile, max_cells)


def _tile_grid(counts: torch.Tensor, m: int, n: int, tile: tuple[int, int], max_cells: int) -> dict:
    """Per-tile counts summed into cells of whole tiles, at most ``max_cells`` a side."""
    tiles_m, tiles_n = counts.shape
    cell = (-(-tiles_m // max_cells), -(-tiles_n // max_cells))
    cells = (-(-tiles_m // cell[0]), -(-tiles_n // cell[1]))
    padded = torch.nn.functional.pad(counts, (0, cells[1] * cell[1] - tiles_n, 0, cells[0] * cell[0] - tiles_m))
    grid = padded.reshape(cells[0], cell[0], cells[1], cell[1]).sum(dim=(1, 3))
    return {"m": m, "n": n, "tile": list(tile), "cell": list(cell), "grid": grid.cpu().tolist()}
