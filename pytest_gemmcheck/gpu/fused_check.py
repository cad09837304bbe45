"""The check of one launch as Triton kernels: :func:`pytest_gemmcheck.check.check_launch`'s
numbers (its docstring defines them), reading each tensor once.

One pass reads ``out``, ``ref`` and up to four stored copies in [BLOCK_M, BLOCK_N] blocks and keeps
its counts, maxima and sums in registers. It leaves little in memory: one row of partial
results per program, and per detector a count per row and per tile, which only rows and tiles
holding a flagged element touch (atomics: a clean output writes none). A one-program kernel
then reduces the partial results and, only for a detector that flagged something, scans its
row and tile counts for the totals and the first few coordinates. The host reads one small
vector: one synchronisation per check, no copy of a full tensor, no temporary of its size.

Why the numbers are the torch path's:

* Counts are exact, and every float the torch path compares or takes the maximum of is computed
  by the same fp32 operations, NaN propagating where torch's does; divisions are ``div_rn``
  (Triton's plain ``/`` may be approximate on GPUs).
* The GPU cannot afford a correctly rounded division per element at memory speed, and needs
  none: with ``floor >= 1`` every element of a row has the row's scale, and rounding a
  quotient is monotonic, so ``fl(err / scale) > rtol`` is ``err > t`` for a per-row threshold
  ``t`` found once per row, and the row's largest relative error is its largest error divided
  once. Should some |ref| exceed its row's scale after all (a ``rowmax`` that is not ref's
  row maximum), the check notices and runs again dividing per element, as it does for
  ``floor < 1``.
* relL2's float64 sums of exact float64 squares are only added in another order: equal to the
  last few bits.

Triton decides when it is imported, and again on the first launch, whether kernels run in
its interpreter (``TRITON_INTERPRET=1``: CPU tensors, numpy) or compile for the GPU; set the
flag before importing triton for the interpreter.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from .. import check as torch_check
from ..check import SAMPLE, AccuracyStats, DiffStats, Locations, Tolerance

# Kernels were defined for the interpreter (CPU tensors) rather than compiled for a GPU.
INTERPRETED = bool(triton.knobs.runtime.interpret)

# Copies compared in one pass (each is a kernel argument). More copies take more passes, each
# reading ``out`` again; the consensus keeps at most four, so one pass is the usual case.
COPIES_PER_PASS = 4

# Per-program partial results, float64: one row of P_WIDTH per program and pass.
P_WRONG: tl.constexpr = tl.constexpr(0)
P_NONFINITE: tl.constexpr = tl.constexpr(1)
P_MAX_ABS: tl.constexpr = tl.constexpr(2)
P_MAX_REL: tl.constexpr = tl.constexpr(3)
P_ERR_SQ: tl.constexpr = tl.constexpr(4)
P_REF_SQ: tl.constexpr = tl.constexpr(5)
P_OUTSIDE: tl.constexpr = tl.constexpr(6)  # rows with a |ref| beyond the row's scale (see ROW_SCALE)
P_COPIES: tl.constexpr = tl.constexpr(7)  # then (differing, worst) for each copy of the pass
P_WIDTH: tl.constexpr = tl.constexpr(7 + 2 * COPIES_PER_PASS)
PASS_COPIES: tl.constexpr = tl.constexpr(COPIES_PER_PASS)

# The result vector the host reads, float64: five scalars, then one record per detector (the
# accuracy detector, then each copy).
R_NONFINITE: tl.constexpr = tl.constexpr(0)
R_MAX_ABS: tl.constexpr = tl.constexpr(1)
R_ERR_SQ: tl.constexpr = tl.constexpr(2)
R_REF_SQ: tl.constexpr = tl.constexpr(3)
R_OUTSIDE: tl.constexpr = tl.constexpr(4)
R_RECORDS: tl.constexpr = tl.constexpr(5)
D_ELEMENTS: tl.constexpr = tl.constexpr(0)
D_WORST: tl.constexpr = tl.constexpr(1)  # max_rel_err for accuracy, max_diff_rel for a copy
D_ROWS: tl.constexpr = tl.constexpr(2)
D_TILES: tl.constexpr = tl.constexpr(3)
D_WORST_TILE: tl.constexpr = tl.constexpr(4)
D_ROW_IDS: tl.constexpr = tl.constexpr(5)
D_TILE_IDS: tl.constexpr = tl.constexpr(5 + SAMPLE)
D_WIDTH: tl.constexpr = tl.constexpr(5 + 2 * SAMPLE)
SAMPLE_IDS: tl.constexpr = tl.constexpr(SAMPLE)

FLT_MAX: tl.constexpr = tl.constexpr(3.4028234663852886e38)
INF_BITS: tl.constexpr = tl.constexpr(0x7F800000)
_INT32_MAX = 2**31 - 1

# _LOOPS: kernels loop with `while`, not `for ... in range(runtime bound)`: Triton 3.6's
# interpreter turns a runtime bound into a Python int through a conversion numpy >= 2.4
# refuses (triton-lang/triton#9171, fixed after 3.6). Compiled, the two are the same loop.


# --------------------------------------------------------------------------------------------
# kernels


@triton.jit
def _nan_max(a, b):
    # torch.maximum: NaN wins. (tl.maximum's default takes the other operand on GPUs.)
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _max_all(x):
    """Largest element of a block, NaN if any is NaN, as torch's ``max()``. tl.max skips NaN
    (on GPUs and in the interpreter alike), so NaN is looked for separately."""
    largest = tl.max(x, axis=None)
    nan_seen = tl.max((x != x).to(tl.int32), axis=None)
    return tl.where(nan_seen > 0, float("nan"), largest)


@triton.jit
def _magnitude_key(x):
    """|x| as an int32 that orders as |x| does, NaN above +inf: an integer max over keys is a
    NaN-propagating max of magnitudes, and folds with tl.max."""
    return x.to(tl.int32, bitcast=True) & 0x7FFFFFFF


@triton.jit
def _fold_sum(x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VEC: tl.constexpr):
    # each thread holds VEC consecutive elements of a row: fold them in registers, so that an
    # accumulator costs one register per thread, not VEC
    return tl.sum(tl.reshape(x, [BLOCK_M, BLOCK_N // VEC, VEC]), axis=2)


@triton.jit
def _fold_max(x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VEC: tl.constexpr):
    return tl.max(tl.reshape(x, [BLOCK_M, BLOCK_N // VEC, VEC]), axis=2)


@triton.jit
def _bits(x, BITS: tl.constexpr):
    # same-width integers, for bitwise equality (NaN payloads and signed zeros included)
    if BITS == 16:
        bits = x.to(tl.int16, bitcast=True)
    else:
        bits = x.to(tl.int32, bitcast=True)
    return bits


@triton.jit
def _divide(x, scale):
    """fl(x / scale) per row as check.py has it: a zero scale makes any error infinitely
    relative. Exact (div_rn): by monotonicity, dividing a row's largest x gives the row's
    largest quotient, so rows divide once instead of every element."""
    quotient = tl.math.div_rn(x, tl.where(scale > 0, scale, 1.0))
    return tl.where(scale > 0, quotient, tl.where(x > 0, float("inf"), 0.0))


@triton.jit
def _row_threshold(scale, rtol):
    """Per row, the largest error e with fl(e / scale) <= rtol. Because correctly rounded
    division is monotonic, ``err > threshold`` is then exactly the torch path's test
    ``fl(err / scale) > rtol``, with no division per element. fl(rtol * scale) is within an
    ulp or two of it; a few steps each way settle it."""
    divisor = tl.where(scale > 0, scale, 1.0)
    threshold = rtol * scale
    for _ in tl.static_range(4):
        up = (threshold.to(tl.int32, bitcast=True) + 1).to(tl.float32, bitcast=True)
        threshold = tl.where((threshold < float("inf")) & (tl.math.div_rn(up, divisor) <= rtol), up, threshold)
    for _ in tl.static_range(4):
        down = (threshold.to(tl.int32, bitcast=True) - 1).to(tl.float32, bitcast=True)
        threshold = tl.where((threshold > 0) & (tl.math.div_rn(threshold, divisor) > rtol), down, threshold)
    threshold = tl.where(scale > 0, threshold, 0.0)  # zero scale: any error is wrong
    return tl.where(scale == float("inf"), float("inf"), threshold)  # err / inf is never above rtol


@triton.jit
def _count_tiles(tile_ptr, flag, tile_base, cols, col0, tile_n, TILE_SEGMENTS: tl.constexpr):
    """Add a block's flagged elements to their tiles' counts: per row and per tile column the
    block spans, one atomic for each row that has any (none on a clean block)."""
    first_col = col0 // tile_n
    if TILE_SEGMENTS == 1:  # the block lies within one tile column
        per_row = tl.sum(flag.to(tl.int32), axis=1)
        tl.atomic_add(tile_ptr + tile_base + first_col, per_row, mask=per_row > 0, sem="relaxed")
    else:
        col_tiles = cols // tile_n
        for segment in tl.static_range(TILE_SEGMENTS):
            in_tile = flag & (col_tiles == first_col + segment)[None, :]
            per_row = tl.sum(in_tile.to(tl.int32), axis=1)
            tl.atomic_add(tile_ptr + tile_base + first_col + segment, per_row, mask=per_row > 0, sem="relaxed")


@triton.jit
def _finish_count(counts, row_counts_ptr, rows, slot_ptr):
    """Per-row counts to their rows (atomics only where non-zero) and the program's total."""
    per_row = tl.sum(counts, axis=1)
    tl.atomic_add(row_counts_ptr + rows, per_row, mask=per_row > 0, sem="relaxed")
    tl.store(slot_ptr, tl.sum(per_row, axis=0).to(tl.float64))


@triton.jit
def _compare_copy(copy_ptr, stride_m, stride_n, rows64, cols64, mask, out_raw, out_val,
                  differing, largest, tile_ptr, tile_base, cols, col0, tile_n,
                  HAS_TILE: tl.constexpr, TILE_SEGMENTS: tl.constexpr, BITS: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VEC: tl.constexpr):
    """One block of the bitwise comparison with one stored copy (check._DiffAccumulator.add):
    counts of differing elements and the largest |difference| as a magnitude key (mapped and
    divided per row at the end, see _finish_copy)."""
    offsets = (rows64 * stride_m)[:, None] + (cols64 * stride_n)[None, :]
    copy_raw = tl.load(copy_ptr + offsets, mask=mask, other=0.0, eviction_policy="evict_first")
    differ = _bits(out_raw, BITS) != _bits(copy_raw, BITS)
    delta = _magnitude_key(out_val - copy_raw.to(tl.float32))
    largest = tl.maximum(largest, _fold_max(tl.where(differ, delta, 0), BLOCK_M, BLOCK_N, VEC))
    differing += _fold_sum(differ.to(tl.int32), BLOCK_M, BLOCK_N, VEC)
    if HAS_TILE:
        _count_tiles(tile_ptr, differ, tile_base, cols, col0, tile_n, TILE_SEGMENTS)
    return differing, largest


@triton.jit
def _finish_copy(differing, largest, diff_scale, row_counts_ptr, rows, slot_ptr):
    _finish_count(differing, row_counts_ptr, rows, slot_ptr)
    key = tl.max(largest, axis=1)
    # torch.nan_to_num(delta, nan=inf) as check.py has it: NaN -> inf, and +inf -> the largest
    # float. Both maps keep the order of keys, so mapping the row's largest key is enough.
    delta = tl.where(key > INF_BITS, float("inf"),
                     tl.where(key == INF_BITS, FLT_MAX, key.to(tl.float32, bitcast=True)))
    row_worst = tl.math.div_rn(delta, diff_scale)
    tl.store(slot_ptr + 1, _max_all(row_worst).to(tl.float64))


@triton.jit
def _check_kernel(
    out_ptr, ref_ptr, rowmax_ptr,
    copy0_ptr, copy1_ptr, copy2_ptr, copy3_ptr,
    partial_ptr, row_counts_ptr, tile_counts_ptr,
    M, N,
    stride_out_m, stride_out_n, stride_ref_m, stride_ref_n,
    stride_c0_m, stride_c0_n, stride_c1_m, stride_c1_n,
    stride_c2_m, stride_c2_n, stride_c3_m, stride_c3_n,
    rtol, floor,
    tile_m, tile_n, tile_cols, tile_total,
    blocks_per_program,
    ACCURACY: tl.constexpr, ROW_SCALE: tl.constexpr, NUM_COPIES: tl.constexpr,
    HAS_TILE: tl.constexpr, TILE_SEGMENTS: tl.constexpr, BITS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VEC: tl.constexpr,
):
    """One program: BLOCK_M rows by ``blocks_per_program`` column blocks of BLOCK_N.

    ROW_SCALE: every |ref| is assumed within floor * rowmax (true when floor >= 1 and rowmax is
    the row's largest |ref|), so each element's scale is its row's and the per-element
    division becomes a comparison with a per-row threshold. Rows where that does not hold
    are counted (P_OUTSIDE) and the host checks again without it.

    Detector slots in ``row_counts_ptr`` ([slot, M]) and ``tile_counts_ptr`` ([slot, tile_total]):
    0 is accuracy, 1 + j is copy j of this pass."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    rows64 = rows.to(tl.int64)  # offsets in int64: outputs may exceed 2**31 elements
    rowmax = tl.load(rowmax_ptr + rows, mask=row_ok, other=0.0)
    row_scale = floor * rowmax
    threshold = _row_threshold(row_scale, rtol)[:, None]
    floor_scale = row_scale[:, None]
    diff_scale = tl.where(rowmax > 0, rowmax, 1.0)
    tile_base = (rows // tile_m) * tile_cols
    FOLDED: tl.constexpr = BLOCK_N // VEC

    wrong = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    nonfinite = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    ref_key = tl.zeros([BLOCK_M, FOLDED], tl.int32)  # ROW_SCALE: largest |ref|, NaN included
    max_err = tl.zeros([BLOCK_M, FOLDED], tl.float32)  # ROW_SCALE: never NaN there
    abs_key = tl.zeros([BLOCK_M, FOLDED], tl.int32)  # otherwise: NaN-propagating maxima
    rel_key = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    err_sq = tl.zeros([BLOCK_M, FOLDED], tl.float64)
    ref_sq = tl.zeros([BLOCK_M, FOLDED], tl.float64)
    differing0 = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    differing1 = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    differing2 = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    differing3 = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    largest0 = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    largest1 = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    largest2 = tl.zeros([BLOCK_M, FOLDED], tl.int32)
    largest3 = tl.zeros([BLOCK_M, FOLDED], tl.int32)

    first = pid_n * blocks_per_program
    last = tl.minimum(first + blocks_per_program, tl.cdiv(N, BLOCK_N))
    # Masked-out elements load as 0, which no detector flags: the mask guards the loads only.
    block = first
    while block < last:  # not range(): see _LOOPS
        col0 = block * BLOCK_N
        cols = col0 + tl.arange(0, BLOCK_N)
        cols64 = cols.to(tl.int64)
        mask = row_ok[:, None] & (cols < N)[None, :]
        out_offsets = (rows64 * stride_out_m)[:, None] + (cols64 * stride_out_n)[None, :]
        out_raw = tl.load(out_ptr + out_offsets, mask=mask, other=0.0, eviction_policy="evict_first")
        out_val = out_raw.to(tl.float32)
        if ACCURACY:
            ref_offsets = (rows64 * stride_ref_m)[:, None] + (cols64 * stride_ref_n)[None, :]
            ref_val = tl.load(ref_ptr + ref_offsets, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            finite = tl.abs(out_val) <= FLT_MAX  # false for NaN and both infinities
            err = tl.where(finite, tl.abs(out_val - ref_val), 0.0)
            if ROW_SCALE:
                flagged = (~finite) | (err > threshold)
                max_err = tl.maximum(max_err, _fold_max(err, BLOCK_M, BLOCK_N, VEC))
                ref_key = tl.maximum(ref_key, _fold_max(_magnitude_key(ref_val), BLOCK_M, BLOCK_N, VEC))
            else:
                scale = _nan_max(tl.abs(ref_val), floor_scale)
                rel = _divide(err, scale)
                flagged = (~finite) | (rel > rtol)
                abs_key = tl.maximum(abs_key, _fold_max(_magnitude_key(err), BLOCK_M, BLOCK_N, VEC))
                rel_key = tl.maximum(rel_key, _fold_max(_magnitude_key(rel), BLOCK_M, BLOCK_N, VEC))
            wrong += _fold_sum(flagged.to(tl.int32), BLOCK_M, BLOCK_N, VEC)
            nonfinite += _fold_sum((~finite).to(tl.int32), BLOCK_M, BLOCK_N, VEC)
            err64 = err.to(tl.float64)
            ref64 = ref_val.to(tl.float64)
            err_sq += _fold_sum(err64 * err64, BLOCK_M, BLOCK_N, VEC)  # exact squares: fp32 fits twice in fp64
            ref_sq += _fold_sum(ref64 * ref64, BLOCK_M, BLOCK_N, VEC)
            if HAS_TILE:
                _count_tiles(tile_counts_ptr, flagged, tile_base, cols, col0, tile_n, TILE_SEGMENTS)
        if NUM_COPIES > 0:
            differing0, largest0 = _compare_copy(
                copy0_ptr, stride_c0_m, stride_c0_n, rows64, cols64, mask, out_raw, out_val,
                differing0, largest0, tile_counts_ptr + tile_total, tile_base, cols, col0, tile_n,
                HAS_TILE, TILE_SEGMENTS, BITS, BLOCK_M, BLOCK_N, VEC)
        if NUM_COPIES > 1:
            differing1, largest1 = _compare_copy(
                copy1_ptr, stride_c1_m, stride_c1_n, rows64, cols64, mask, out_raw, out_val,
                differing1, largest1, tile_counts_ptr + 2 * tile_total, tile_base, cols, col0, tile_n,
                HAS_TILE, TILE_SEGMENTS, BITS, BLOCK_M, BLOCK_N, VEC)
        if NUM_COPIES > 2:
            differing2, largest2 = _compare_copy(
                copy2_ptr, stride_c2_m, stride_c2_n, rows64, cols64, mask, out_raw, out_val,
                differing2, largest2, tile_counts_ptr + 3 * tile_total, tile_base, cols, col0, tile_n,
                HAS_TILE, TILE_SEGMENTS, BITS, BLOCK_M, BLOCK_N, VEC)
        if NUM_COPIES > 3:
            differing3, largest3 = _compare_copy(
                copy3_ptr, stride_c3_m, stride_c3_n, rows64, cols64, mask, out_raw, out_val,
                differing3, largest3, tile_counts_ptr + 4 * tile_total, tile_base, cols, col0, tile_n,
                HAS_TILE, TILE_SEGMENTS, BITS, BLOCK_M, BLOCK_N, VEC)
        block += 1

    partial = partial_ptr + (pid_m * tl.num_programs(1) + pid_n) * P_WIDTH
    if ACCURACY:
        _finish_count(wrong, row_counts_ptr, rows, partial + P_WRONG)
        tl.store(partial + P_NONFINITE, tl.sum(tl.sum(nonfinite, axis=1), axis=0).to(tl.float64))
        if ROW_SCALE:
            row_err = tl.max(max_err, axis=1)
            tl.store(partial + P_MAX_ABS, tl.max(row_err, axis=0).to(tl.float64))
            tl.store(partial + P_MAX_REL, _max_all(_divide(row_err, row_scale)).to(tl.float64))
            row_ref = tl.max(ref_key, axis=1).to(tl.float32, bitcast=True)
            outside = (~(row_ref <= row_scale)).to(tl.int32)  # NaN included
            tl.store(partial + P_OUTSIDE, tl.sum(outside, axis=0).to(tl.float64))
        else:
            tl.store(partial + P_MAX_ABS, tl.max(abs_key, axis=None).to(tl.float32, bitcast=True).to(tl.float64))
            tl.store(partial + P_MAX_REL, tl.max(rel_key, axis=None).to(tl.float32, bitcast=True).to(tl.float64))
            tl.store(partial + P_OUTSIDE, 0.0)
        tl.store(partial + P_ERR_SQ, tl.sum(tl.sum(err_sq, axis=1), axis=0))
        tl.store(partial + P_REF_SQ, tl.sum(tl.sum(ref_sq, axis=1), axis=0))
    if NUM_COPIES > 0:
        _finish_copy(differing0, largest0, diff_scale, row_counts_ptr + M, rows, partial + P_COPIES)
    if NUM_COPIES > 1:
        _finish_copy(differing1, largest1, diff_scale, row_counts_ptr + 2 * M, rows, partial + P_COPIES + 2)
    if NUM_COPIES > 2:
        _finish_copy(differing2, largest2, diff_scale, row_counts_ptr + 3 * M, rows, partial + P_COPIES + 4)
    if NUM_COPIES > 3:
        _finish_copy(differing3, largest3, diff_scale, row_counts_ptr + 4 * M, rows, partial + P_COPIES + 6)


@triton.jit
def _scan_flagged(counts_ptr, size, ids_ptr, BLOCK: tl.constexpr):
    """How many of ``size`` counts are non-zero, the first SAMPLE_IDS of their indices (to
    ``ids_ptr``, ascending, as torch.nonzero gives them) and the largest count."""
    offsets = tl.arange(0, BLOCK)
    found = 0
    largest = 0
    start = 0
    while start < size:
        index = start + offsets
        counts = tl.load(counts_ptr + index, mask=index < size, other=0)
        flagged = (counts > 0).to(tl.int32)
        position = found + tl.cumsum(flagged, axis=0) - 1
        tl.store(ids_ptr + position, index.to(tl.float64), mask=(flagged > 0) & (position < SAMPLE_IDS))
        found += tl.sum(flagged, axis=0)
        largest = tl.maximum(largest, tl.max(counts, axis=0))
        start += BLOCK
    return found, largest


@triton.jit
def _column(partial_ptr, programs, column, LARGEST: tl.constexpr, BLOCK: tl.constexpr):
    """One partial-result column over the programs: its sum, or with LARGEST its largest
    value (NaN if any is NaN)."""
    acc = tl.zeros([BLOCK], tl.float64)
    start = 0
    while start < programs:
        index = start + tl.arange(0, BLOCK)
        values = tl.load(partial_ptr + index * P_WIDTH + column, mask=index < programs, other=0.0)
        acc = _nan_max(acc, values) if LARGEST else acc + values
        start += BLOCK
    return _max_all(acc) if LARGEST else tl.sum(acc, axis=0)


@triton.jit
def _finish_detector(partial_ptr, programs, count_col, worst_col, row_counts_ptr, tile_counts_ptr,
                     M, tile_total, record_ptr, HAS_TILE: tl.constexpr, BLOCK: tl.constexpr):
    """One detector's record: totals over the programs and, when it flagged anything, where."""
    elements = _column(partial_ptr, programs, count_col, False, BLOCK)
    tl.store(record_ptr + D_ELEMENTS, elements)
    tl.store(record_ptr + D_WORST, _column(partial_ptr, programs, worst_col, True, BLOCK))
    tl.store(record_ptr + D_ROWS, 0.0)
    tl.store(record_ptr + D_TILES, 0.0)
    tl.store(record_ptr + D_WORST_TILE, 0.0)
    if elements > 0:
        rows, _ = _scan_flagged(row_counts_ptr, M, record_ptr + D_ROW_IDS, BLOCK)
        tl.store(record_ptr + D_ROWS, rows.to(tl.float64))
        if HAS_TILE:
            tiles, worst_tile = _scan_flagged(tile_counts_ptr, tile_total, record_ptr + D_TILE_IDS, BLOCK)
            tl.store(record_ptr + D_TILES, tiles.to(tl.float64))
            tl.store(record_ptr + D_WORST_TILE, worst_tile.to(tl.float64))


@triton.jit
def _finalize_kernel(partial_ptr, programs, row_counts_ptr, tile_counts_ptr, result_ptr,
                     M, tile_total, num_copies,
                     HAS_TILE: tl.constexpr, BLOCK: tl.constexpr):
    """One program: the partial results of every program reduced into the result vector."""
    tl.store(result_ptr + R_NONFINITE, _column(partial_ptr, programs, P_NONFINITE, False, BLOCK))
    tl.store(result_ptr + R_MAX_ABS, _column(partial_ptr, programs, P_MAX_ABS, True, BLOCK))
    tl.store(result_ptr + R_ERR_SQ, _column(partial_ptr, programs, P_ERR_SQ, False, BLOCK))
    tl.store(result_ptr + R_REF_SQ, _column(partial_ptr, programs, P_REF_SQ, False, BLOCK))
    tl.store(result_ptr + R_OUTSIDE, _column(partial_ptr, programs, P_OUTSIDE, False, BLOCK))
    _finish_detector(partial_ptr, programs, P_WRONG, P_MAX_REL, row_counts_ptr, tile_counts_ptr,
                     M, tile_total, result_ptr + R_RECORDS, HAS_TILE, BLOCK)
    copy = 0
    while copy < num_copies:
        column = P_COPIES + 2 * (copy % PASS_COPIES)
        _finish_detector(partial_ptr + (copy // PASS_COPIES) * programs * P_WIDTH, programs, column, column + 1,
                         row_counts_ptr + (copy + 1) * M, tile_counts_ptr + (copy + 1) * tile_total,
                         M, tile_total, result_ptr + R_RECORDS + (copy + 1) * D_WIDTH, HAS_TILE, BLOCK)
        copy += 1


@triton.jit
def _mix32(x):
    # rng.mix32 (lowbias32) on uint32: products wrap modulo 2**32 as the masked int64 ones do
    x = x ^ (x >> 16)
    x = x * 0x7FEB352D
    x = x ^ (x >> 15)
    x = x * 0x846CA68B
    x = x ^ (x >> 16)
    return x


@triton.jit
def _checksum_kernel(t_ptr, total_ptr, M, N, stride_m, stride_n, blocks_per_program,
                     BITS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VEC: tl.constexpr):
    """check.checksum: sum over elements of bits * weight(flat index), modulo 2**64."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rows64 = rows.to(tl.int64)
    total = tl.zeros([BLOCK_M, BLOCK_N // VEC], tl.uint64)
    first = tl.program_id(1) * blocks_per_program
    last = tl.minimum(first + blocks_per_program, tl.cdiv(N, BLOCK_N))
    block = first
    while block < last:
        cols = block * BLOCK_N + tl.arange(0, BLOCK_N)
        cols64 = cols.to(tl.int64)
        mask = (rows < M)[:, None] & (cols < N)[None, :]
        raw = tl.load(t_ptr + (rows64 * stride_m)[:, None] + (cols64 * stride_n)[None, :], mask=mask, other=0.0)
        if BITS == 16:
            bits = raw.to(tl.uint16, bitcast=True).to(tl.uint64)
        else:
            bits = raw.to(tl.uint32, bitcast=True).to(tl.uint64)
        low = (rows64[:, None] * N + cols64[None, :]).to(tl.uint32)  # the index's low 32 bits
        weight = (_mix32(low).to(tl.uint64) << 32) | _mix32(low ^ 0x5BD1E995).to(tl.uint64) | 1
        total += _fold_sum(bits * weight, BLOCK_M, BLOCK_N, VEC)  # masked elements load as 0: add 0
        block += 1
    # a sum modulo 2**64 does not depend on the order of the additions: atomics keep it exact
    tl.atomic_add(total_ptr, tl.sum(tl.sum(total, axis=1), axis=0).to(tl.int64, bitcast=True), sem="relaxed")


# --------------------------------------------------------------------------------------------
# host side


@dataclass(frozen=True)
class LaunchConfig:
    """Block shape and parallelism of the check kernel. On a GPU the defaults give each thread
    16 bytes of each tensor per step (one vector load) and one output row per warp; the
    interpreter, whose cost is per step and per program, gets tall blocks and one program per
    row block."""

    block_m: int | None = None  # None: 8 rows, 64 in the interpreter
    block_n: int | None = None  # None: 512 bytes of a row (256 bf16/fp16, 128 fp32), 1024 interpreted
    num_warps: int = 8
    programs_per_sm: int = 8  # grid size target, in programs per multiprocessor
    programs: int | None = None  # grid size target; None: programs_per_sm on a GPU, 1 interpreted
    finalize_block: int = 1024


@dataclass(frozen=True)
class _Plan:
    block_m: int
    block_n: int
    vec: int  # consecutive elements per thread: one 16-byte load
    num_warps: int
    grid: tuple[int, int]
    blocks_per_program: int
    tile_segments: int

    @property
    def programs(self) -> int:
        return self.grid[0] * self.grid[1]


@functools.lru_cache(maxsize=None)
def _multiprocessors(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _target_programs(device: torch.device, config: LaunchConfig) -> int:
    if config.programs is not None:
        return config.programs
    if device.type == "cuda" and not INTERPRETED:
        return config.programs_per_sm * _multiprocessors(device)
    return 1  # the interpreter runs programs one after another: fewest is fastest


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _plan(m: int, n: int, element_size: int, tile, config: LaunchConfig, device: torch.device) -> _Plan:
    block_m = config.block_m or (64 if INTERPRETED else 8)
    block_n = config.block_n or (1024 if INTERPRETED else 512 // element_size)
    if not (_power_of_two(block_m) and _power_of_two(block_n) and block_n >= 16):
        raise ValueError(f"block_m={block_m} and block_n={block_n} must be powers of two, block_n >= 16")
    segments = 1
    if tile is not None:
        tile_n = tile[1]
        if tile_n < n and tile_n % block_n:
            # keep a block within few tile columns: the largest power of two dividing tile_n
            # when that is wide enough, else the largest power of two not above it
            divisor = tile_n & -tile_n
            narrower = divisor if divisor >= 32 else max(16, 1 << (tile_n.bit_length() - 1))
            narrower = min(block_n, narrower)
            block_m = block_m * block_n // narrower  # same elements per step
            block_n = narrower
            # columns of tiles a block [c, c + block_n) with c a multiple of block_n can touch
            segments = 1 if tile_n % block_n == 0 else -(-(block_n - 1) // tile_n) + 1
    vec = min(block_n, max(1, 16 // element_size))
    row_blocks = -(-m // block_m)
    col_blocks = -(-n // block_n)
    splits = min(col_blocks, max(1, -(-_target_programs(device, config) // row_blocks)))
    per_program = -(-col_blocks // splits)
    splits = -(-col_blocks // per_program)
    return _Plan(block_m, block_n, vec, config.num_warps, (row_blocks, splits), per_program, segments)


def _require_device(t: torch.Tensor) -> None:
    if t.device.type == "cpu" and not INTERPRETED:
        raise RuntimeError("the fused check runs CPU tensors only in the Triton interpreter: set "
                           "TRITON_INTERPRET=1 before pytest_gemmcheck.gpu.fused_check is imported")


def _validate(out, ref, rowmax, copies) -> None:
    if out.dim() != 2 or tuple(out.shape) != tuple(ref.shape):
        raise ValueError(f"out {list(out.shape)} and ref {list(ref.shape)} must be the same [M, N]")
    if out.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise ValueError(f"out dtype {out.dtype} is not bfloat16, float16 or float32")
    if ref.dtype not in (torch.bfloat16, torch.float16, torch.float32, torch.float64):
        raise ValueError(f"ref dtype {ref.dtype} is not bfloat16, float16, float32 or float64")
    if tuple(rowmax.shape) != (out.shape[0],):
        raise ValueError(f"rowmax {list(rowmax.shape)} must have one value per row of out ({out.shape[0]})")
    for copy in copies:
        if tuple(copy.shape) != tuple(out.shape) or copy.dtype != out.dtype:
            raise ValueError(f"a copy {list(copy.shape)} {copy.dtype} does not match out "
                             f"{list(out.shape)} {out.dtype}")
    devices = {t.device for t in (out, ref, rowmax, *copies)}
    if len(devices) > 1:
        raise ValueError(f"out, ref, rowmax and copies must be on one device, not {sorted(map(str, devices))}")


def check_launch(
    out: torch.Tensor,
    ref: torch.Tensor,
    rowmax: torch.Tensor,
    tol: Tolerance,
    tile: tuple[int, int] | None = None,
    copies=(),
    *,
    config: LaunchConfig | None = None,
) -> tuple[AccuracyStats, list[DiffStats]]:
    """:func:`pytest_gemmcheck.check.check_launch` with fused kernels: same arguments, same
    results, one synchronisation (two when ``rowmax`` turns out not to be ref's row maximum).
    ``config`` tunes the kernel's blocks; the defaults suit current GPUs."""
    copies = list(copies)
    _validate(out, ref, rowmax, copies)
    m, n = out.shape
    if m == 0 or n == 0 or (tile is not None and min(tile[0], m) * min(tile[1], n) > _INT32_MAX):
        # nothing to read; or a tile too large for the int32 counts: the torch path handles both
        return torch_check.check_launch(out, ref, rowmax, tol, tile, copies)
    _require_device(out)
    run = _Run(out, ref, rowmax.to(torch.float32).contiguous(), tol, tile, copies, config or LaunchConfig())
    # floor >= 1 puts every |ref| within its row's scale (rowmax being the row's largest |ref|):
    # then no element needs a division of its own
    values = run.values(row_scale=tol.floor >= 1.0)
    if values[R_OUTSIDE.value] > 0:  # rowmax is not ref's row maximum: check again, in full
        values = run.values(row_scale=False)
    tile_cols = run.tile_cols
    accuracy = AccuracyStats(
        wrong=_locations(values, 0, tile, tile_cols),
        nonfinite=int(values[R_NONFINITE.value]),
        max_abs_err=values[R_MAX_ABS.value],
        max_rel_err=_record(values, 0)[D_WORST.value],
        rel_l2=_rel_l2(values[R_ERR_SQ.value], values[R_REF_SQ.value]),
    )
    diffs = [DiffStats(_locations(values, 1 + j, tile, tile_cols), _record(values, 1 + j)[D_WORST.value])
             for j in range(len(copies))]
    return accuracy, diffs


class _Run:
    """The kernels' launches for one check, over buffers whose size does not depend on N:
    counts per row and per tile, one row of partial results per program, the result vector."""

    def __init__(self, out, ref, rowmax, tol: Tolerance, tile, copies, config: LaunchConfig):
        self.out, self.ref, self.rowmax, self.tol, self.tile, self.copies = out, ref, rowmax, tol, tile, copies
        self.config = config
        m, n = out.shape
        self.plan = _plan(m, n, out.element_size(), tile, config, out.device)
        self.tile_m, self.tile_n = tile if tile is not None else (1, 1)
        self.tile_cols = -(-n // self.tile_n)
        self.tile_total = -(-m // self.tile_m) * self.tile_cols if tile is not None else 0
        detectors = 1 + len(copies)
        self.passes = max(1, -(-len(copies) // COPIES_PER_PASS))
        # every count in one buffer: one fill zeroes them all
        self.counts = torch.empty(detectors * (m + self.tile_total), dtype=torch.int32, device=out.device)
        self.row_counts = self.counts[:detectors * m]
        # without a tile nothing reads or writes tile counts; any valid pointer will do
        self.tile_counts = self.counts[detectors * m:] if tile is not None else self.row_counts
        self.partial = torch.empty(self.passes * self.plan.programs * P_WIDTH.value, dtype=torch.float64,
                                   device=out.device)
        self.result = torch.empty(R_RECORDS.value + detectors * D_WIDTH.value, dtype=torch.float64,
                                  device=out.device)

    def values(self, row_scale: bool) -> list[float]:
        """Launch the check and the reduction; read the result vector (the one synchronisation)."""
        out, plan, m = self.out, self.plan, self.out.shape[0]
        self.counts.zero_()
        for index in range(self.passes):
            group = self.copies[index * COPIES_PER_PASS:(index + 1) * COPIES_PER_PASS]
            slots = group + [out] * (COPIES_PER_PASS - len(group))  # unused pointers: never read
            # pass i's copy j is detector 1 + 4i + j; the pass's slot 0 (accuracy) is pass 0's only
            first_slot = index * COPIES_PER_PASS
            _check_kernel[plan.grid](
                out, self.ref, self.rowmax, *slots,
                self.partial[index * plan.programs * P_WIDTH.value:],
                self.row_counts[first_slot * m:],
                self.tile_counts[first_slot * self.tile_total:] if self.tile is not None else self.row_counts,
                m, out.shape[1], *out.stride(), *self.ref.stride(), *[s for t in slots for s in t.stride()],
                float(self.tol.rtol), float(self.tol.floor),
                self.tile_m, self.tile_n, self.tile_cols, self.tile_total,
                plan.blocks_per_program,
                ACCURACY=index == 0, ROW_SCALE=row_scale, NUM_COPIES=len(group),
                HAS_TILE=self.tile is not None, TILE_SEGMENTS=plan.tile_segments, BITS=8 * out.element_size(),
                BLOCK_M=plan.block_m, BLOCK_N=plan.block_n, VEC=plan.vec, num_warps=plan.num_warps,
            )
        _finalize_kernel[(1,)](
            self.partial, plan.programs, self.row_counts, self.tile_counts, self.result,
            m, self.tile_total, len(self.copies),
            HAS_TILE=self.tile is not None, BLOCK=self.config.finalize_block, num_warps=4,
        )
        return self.result.tolist()


def _rel_l2(err_sq: float, ref_sq: float) -> float:
    return (err_sq / ref_sq) ** 0.5 if ref_sq > 0 else (0.0 if err_sq == 0 else float("inf"))


def _record(values: list[float], detector: int) -> list[float]:
    start = R_RECORDS.value + detector * D_WIDTH.value
    return values[start:start + D_WIDTH.value]


def _locations(values: list[float], detector: int, tile, tile_cols: int) -> Locations:
    """check._LocationAccumulator.result from one detector's record."""
    record = _record(values, detector)
    loc = Locations(elements=int(record[D_ELEMENTS.value]))
    if loc.elements == 0:
        loc.tiles = 0 if tile is not None else None
        return loc
    loc.rows = int(record[D_ROWS.value])
    first_rows = D_ROW_IDS.value
    loc.row_ids = [int(r) for r in record[first_rows:first_rows + min(loc.rows, SAMPLE)]]
    if tile is not None:
        loc.tiles = int(record[D_TILES.value])
        first_tiles = D_TILE_IDS.value
        loc.tile_ids = [divmod(int(t), tile_cols) for t in record[first_tiles:first_tiles + min(loc.tiles, SAMPLE)]]
        loc.worst_tile_elements = int(record[D_WORST_TILE.value])
    return loc


def checksum(t: torch.Tensor) -> int:
    """:func:`pytest_gemmcheck.check.checksum` in one kernel that reads ``t`` once.

    Contiguous tensors of any shape and 2-D strided ones run fused; other layouts, which a
    GEMM output never has, go to the torch version."""
    if t.dtype not in (torch.bfloat16, torch.float16, torch.float32) or t.numel() == 0:
        return torch_check.checksum(t)
    if t.is_contiguous():
        view = t.reshape(-1, t.shape[-1]) if t.dim() >= 2 else t.reshape(1, -1)
    elif t.dim() == 2:
        view = t
    else:
        return torch_check.checksum(t)
    _require_device(t)
    config = LaunchConfig()
    m, n = view.shape
    plan = _plan(m, n, t.element_size(), None, config, t.device)
    total = torch.zeros(1, dtype=torch.int64, device=t.device)
    _checksum_kernel[plan.grid](
        view, total, m, n, *view.stride(), plan.blocks_per_program,
        BITS=8 * t.element_size(), BLOCK_M=plan.block_m, BLOCK_N=plan.block_n, VEC=plan.vec,
        num_warps=plan.num_warps,
    )
    return int(total.item())
