"""The check's Triton kernels, and the layouts of the memory they share with the host: the
per-program partial results (``P_*``) and the result vector (``R_*``, with one ``D_*`` record
per detector). :mod:`.output_check` launches them, :mod:`.facts` the one that reads a reference.

The kernels of one check, on one stream:

* ``_check_kernel`` streams ``out``, ``ref`` and up to four stored copies once. Its programs are
  persistent (a few per multiprocessor) and take tasks in turn: BLOCK_M rows by up to
  MAX_TASK_BLOCKS (:mod:`.plan`) column blocks of BLOCK_N. Counts, maxima and sums stay in registers; a task
  writes one count per row and detector, a program one row of partial results. Per element it
  does only what a clean output needs: with per-row thresholds (below) the largest difference
  and a sum of squares, nothing counted, and a task with a row that may hold a wrong element
  is read again in full; where flagged elements are is worked out afterwards, and only for
  rows that have any.
* ``_tile_kernel`` (with a tile) counts flagged elements per tile, reading again only the rows
  with a flagged element: on a clean output it reads one count per row and stops.
* ``_finalize_kernel``, one program per detector, reduces the partial results and, for a
  detector that flagged anything, counts its rows and tiles and takes the first few of each.

No scratch buffer needs initialising by the host: every element a kernel reads was written
earlier in the same call (the tile counts are zeroed by ``_check_kernel``), so results never
depend on what the memory held before; the tests run with scratch filled with garbage and
fenced by guard regions to hold the kernels to that.

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
* Its denominator, the sum of squared references, and whether rowmax bounds every |ref| of
  its row are facts of the reference alone: worked out once per reference in float64 from
  exact squares (:func:`.facts.reference_facts`, one read of ref by ``_facts_kernel``) and
  reused by every launch checked against it.
* relL2's numerator is the one number that is not bit for bit the torch path's, which sums
  float64 squares. Converting every element to float64 would cost more than reading it, so
  squares are summed in fp32, each row scaled by the power of two that brings its rowmax into
  [1, 2) (exact), and added in float64 per row and task. A task's fp32 sum of non-negative terms passes at most
  VEC + MAX_TASK_BLOCKS + log2(BLOCK_N / VEC) + 1 <= 8 + 32 + 7 + 1 = 48 roundings, so each sum
  is within 48 * 2**-24 = 2.9e-6 of exact, and relL2 = sqrt(err_sq / ref_sq) within 2.9e-6
  relative (the tests allow 1e-5). Scaled squares lost to underflow (errors below 2**-63 of
  the row's scale) move it by at most 1e-15 absolute. A task whose scaled sums reach 2**100
  (only with errors beyond 2**42 times the row's scale) or are not finite (inf or NaN values),
  or that has a wrong element, adds its squares again in float64, as the torch path does:
  overflow and non-finite values give its numbers exactly.

The checksum costs, per 32-bit word (one fp32 element, or two 16-bit neighbours), its place's
key, a lowbias32 and one widening multiply-add (plus a group weight per VEC elements).
"""

from __future__ import annotations

import triton
import triton.language as tl

from .. import checksum as checksums
from ..rule import SAMPLE

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
P_CHECKSUM: tl.constexpr = tl.constexpr(5)  # the int64 checksum's bits
P_COPIES: tl.constexpr = tl.constexpr(6)  # then (differing, worst) for each copy of the pass
P_WIDTH: tl.constexpr = tl.constexpr(16)  # 6 + 2 * COPIES_PER_PASS, padded to a power of two for tl.arange
PASS_COPIES: tl.constexpr = tl.constexpr(COPIES_PER_PASS)

# The result vector the host reads, float64 (the checksum as int64 bits): six scalars, then one
# record per detector (the accuracy detector, then each copy).
R_NONFINITE: tl.constexpr = tl.constexpr(0)
R_MAX_ABS: tl.constexpr = tl.constexpr(1)
R_ERR_SQ: tl.constexpr = tl.constexpr(2)
R_REF_SQ: tl.constexpr = tl.constexpr(3)
R_OUTSIDE: tl.constexpr = tl.constexpr(4)
R_CHECKSUM: tl.constexpr = tl.constexpr(5)
R_RECORDS: tl.constexpr = tl.constexpr(6)
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
CHECKSUM_GROUP: tl.constexpr = tl.constexpr(checksums.CHECKSUM_GROUP)
CHECKSUM_LANE_SEED: tl.constexpr = tl.constexpr(checksums.CHECKSUM_LANE_SEED)
CHECKSUM_ROW_MULTIPLIER: tl.constexpr = tl.constexpr(checksums.CHECKSUM_ROW_MULTIPLIER)
CHECKSUM_GROUP_MULTIPLIER: tl.constexpr = tl.constexpr(checksums.CHECKSUM_GROUP_MULTIPLIER)
CHECKSUM_GROUP_SEED: tl.constexpr = tl.constexpr(checksums.CHECKSUM_GROUP_SEED)
CHECKSUM_GROUP_MIX: tl.constexpr = tl.constexpr(checksums.CHECKSUM_GROUP_MIX)
CHECKSUM_KEY_ROW: tl.constexpr = tl.constexpr(checksums.CHECKSUM_KEY_ROW)
CHECKSUM_KEY_COLUMN: tl.constexpr = tl.constexpr(checksums.CHECKSUM_KEY_COLUMN)
INF_BITS: tl.constexpr = tl.constexpr(0x7F800000)
# A task's scaled fp32 sums of squares at or above this are redone in float64.
SQUARES_LIMIT: tl.constexpr = tl.constexpr(2.0**100)
NO_INDEX: tl.constexpr = tl.constexpr(2**31 - 1)

# Every new combination of the arguments a kernel is specialised on compiles it again (about a
# second each), so only what pays is specialised on: the main pass's N, strides and tensor
# pointers, whose divisibility lets loads be 16-byte vectors. Sizes, scratch pointers, and
# everything of the kernels that run only on the slow path or once per check, are not.
_SCRATCH = ["rowmax_ptr", "partial_ptr", "accuracy_rows_ptr", "copy_rows_ptr", "zero_ptr"]
_TILE_SIZES = [
    "M",
    "N",
    "stride_out_m",
    "stride_out_n",
    "stride_ref_m",
    "stride_ref_n",
    "stride_c0_m",
    "stride_c0_n",
    "stride_c1_m",
    "stride_c1_n",
    "stride_c2_m",
    "stride_c2_n",
    "stride_c3_m",
    "stride_c3_n",
    "row_blocks",
    "col_chunks",
    "tile_m",
    "tile_n",
    "tile_cols",
    "tile_total",
    "accuracy",
    "row_scale",
    "num_copies",
    "row_atomics",
]
_TILE_POINTERS = [
    "out_ptr",
    "ref_ptr",
    "rowmax_ptr",
    "copy0_ptr",
    "copy1_ptr",
    "copy2_ptr",
    "copy3_ptr",
    "accuracy_rows_ptr",
    "copy_rows_ptr",
    "accuracy_tiles_ptr",
    "copy_tiles_ptr",
]

# Kernels build zeros with tl.full rather than tl.zeros, and divide without tl.cdiv: in the
# interpreter every call of a jitted function, the standard library's included, costs about a
# millisecond of re-patching, and the builtins do not.
#
# _LOOPS: kernels loop with `while`, not `for ... in range(runtime bound)`: Triton 3.6's
# interpreter turns a runtime bound into a Python int through a conversion numpy >= 2.4
# refuses (triton-lang/triton#9171, fixed after 3.6). Compiled, the two are the same loop.


# --------------------------------------------------------------------------------------------
# element-wise pieces shared by the kernels


@triton.jit
def _nan_max(a, b):
    # torch.maximum: NaN wins. (tl.maximum's default takes the other operand on GPUs.)
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _magnitude_key(x):
    """|x| as an int32 that orders as |x| does, NaN above +inf: an integer max over keys is a
    NaN-propagating max of magnitudes."""
    return x.to(tl.int32, bitcast=True) & 0x7FFFFFFF


@triton.jit
def _fold_sum(x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VEC: tl.constexpr):
    # each thread holds VEC consecutive elements of a row: fold them in registers, so that an
    # accumulator costs one register per thread and vector, not VEC
    return tl.sum(tl.reshape(x, [BLOCK_M, BLOCK_N // VEC, VEC]), axis=2)


@triton.jit
def _fold_max(x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VEC: tl.constexpr):
    # _fold_sum's maximum (a NaN may be dropped), halves compared elementwise: the
    # interpreter's tl.max warns on slices that are all NaN, and its tl.reduce is slow
    tl.static_assert(VEC == 2 or VEC == 4 or VEC == 8)
    FOLDED: tl.constexpr = BLOCK_N // VEC
    if VEC == 8:
        first, second = tl.split(tl.reshape(x, [BLOCK_M, FOLDED, 4, 2]))
        x = tl.maximum(first, second)
    if VEC >= 4:
        first, second = tl.split(tl.reshape(x, [BLOCK_M, FOLDED, 2, 2]))
        x = tl.maximum(first, second)
    first, second = tl.split(tl.reshape(x, [BLOCK_M, FOLDED, 2]))
    return tl.maximum(first, second)


@triton.jit
def _widen(x):
    """x as fp32. bf16 by moving its bits up: one instruction per element where the compiler's
    own conversion spends two on every other element."""
    if x.dtype == tl.bfloat16:
        wide = (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
    else:
        wide = x.to(tl.float32)
    return wide


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
    """fl(x / scale) as torch_backend.py has it: a zero scale makes any error infinitely relative.
    Exact (div_rn): by monotonicity, dividing a row's largest x gives the row's largest
    quotient, so rows divide once instead of every element."""
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
def _square_scales(rowmax):
    """Per row, a power of two s bringing rowmax into [1, 2) and 1 / s, both exact (1 for a
    zero, subnormal, infinite or NaN rowmax): squares of scaled values neither overflow nor
    underflow in fp32."""
    exponent = (rowmax.to(tl.int32, bitcast=True) >> 23) & 0xFF
    usable = (exponent > 0) & (exponent < 255)
    field = tl.where(usable, tl.minimum(tl.maximum(254 - exponent, 1), 253), 127)
    scale = (field << 23).to(tl.float32, bitcast=True)
    inverse = ((254 - field) << 23).to(tl.float32, bitcast=True)
    return scale, inverse


@triton.jit
def _accuracy_terms(out_val, ref_val, threshold, floor_scale, rtol, ROW_SCALE: tl.constexpr):
    """torch_backend.check_launch's per-element accuracy test: (finite, err, rel, flagged). With
    ROW_SCALE, ``rel`` is not computed (err stands in for it) and ``threshold`` decides."""
    finite = tl.abs(out_val) <= FLT_MAX  # false for NaN and both infinities
    err = tl.where(finite, tl.abs(out_val - ref_val), 0.0)
    if ROW_SCALE:
        rel = err
        flagged = (~finite) | (err > threshold)
    else:
        scale = _nan_max(tl.abs(ref_val), floor_scale)
        rel = _divide(err, scale)
        flagged = (~finite) | (rel > rtol)
    return finite, err, rel, flagged


@triton.jit
def _quick_block(
    out_val, ref_val, square_scale, gap, err_sq, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, VEC: tl.constexpr
):
    """One block of the accuracy detector with per-row thresholds (ROW_SCALE), as cheaply as a
    clean output allows: per lane the largest |out - ref| (NaN propagating, one instruction on
    current GPUs) and the scaled squares. Nothing is counted; a row whose largest difference is
    within its threshold and whose sum is finite has no wrong element, and a task with any
    other row is read again in full (_task_accuracy). Folds are written out rather than
    called: in the interpreter every call of a jitted function costs a millisecond."""
    diff = out_val - ref_val
    gap = tl.maximum(gap, _fold_max(tl.abs(diff), BLOCK_M, BLOCK_N, VEC))
    scaled = diff * square_scale[:, None]
    err_sq += tl.sum(tl.reshape(scaled * scaled, [BLOCK_M, BLOCK_N // VEC, VEC]), axis=2)
    return gap, err_sq


@triton.jit
def _accuracy_block(
    out_val,
    ref_val,
    floor_scale,
    rtol,
    square_scale,
    wrong,
    err_sq,
    err_key,
    rel_key,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    VEC: tl.constexpr,
):
    """One block of the accuracy detector dividing per element (floor < 1, or a rowmax that is
    not ref's row maximum) into its per-lane accumulators: wrong elements, scaled squares, and
    magnitude-key maxima of the error and the relative error."""
    finite, err, rel, flagged = _accuracy_terms(out_val, ref_val, 0.0, floor_scale, rtol, False)
    err_key = tl.maximum(err_key, tl.max(tl.reshape(_magnitude_key(err), [BLOCK_M, BLOCK_N // VEC, VEC]), axis=2))
    rel_key = tl.maximum(rel_key, tl.max(tl.reshape(_magnitude_key(rel), [BLOCK_M, BLOCK_N // VEC, VEC]), axis=2))
    wrong += tl.sum(tl.reshape(flagged.to(tl.int32), [BLOCK_M, BLOCK_N // VEC, VEC]), axis=2)
    scaled_err = err * square_scale[:, None]
    err_sq += tl.sum(tl.reshape(scaled_err * scaled_err, [BLOCK_M, BLOCK_N // VEC, VEC]), axis=2)
    return wrong, err_sq, err_key, rel_key


@triton.jit
def _load_block(ptr, stride_m, stride_n, rows64, cols64, mask):
    offsets = (rows64 * stride_m)[:, None] + (cols64 * stride_n)[None, :]
    return tl.load(ptr + offsets, mask=mask, other=0.0, eviction_policy="evict_first")


@triton.jit
def _differ(out_raw, copy_raw, BITS: tl.constexpr):
    return _bits(out_raw, BITS) != _bits(copy_raw, BITS)


@triton.jit
def _mix32(x):
    # records.mix.mix32 (lowbias32) on uint32: products wrap modulo 2**32 as the masked int64 ones do
    x = x ^ (x >> 16)
    x = x * 0x7FEB352D
    x = x ^ (x >> 15)
    x = x * 0x846CA68B
    x = x ^ (x >> 16)
    return x


@triton.jit
def _lane_weight(lanes):
    # checksum.lane_weight: per column of a group, computed once per program; uint32, widened where
    # it multiplies (a loop-invariant uint64 made the compiler add its zero high word per element)
    return _mix32(lanes.to(tl.uint32) ^ CHECKSUM_LANE_SEED) | 1


@triton.jit
def _word_columns(cols64, BITS: tl.constexpr, BLOCK_N: tl.constexpr):
    # the first column of each checksum word: every column for 32-bit outputs, every other one
    # for 16-bit outputs (a word is two neighbours)
    if BITS == 16:
        first, _ = tl.split(tl.reshape(cols64, [BLOCK_N // 2, 2]))
        return first
    else:
        return cols64


@triton.jit
def _checksum_lanes(cols64, BITS: tl.constexpr, BLOCK_N: tl.constexpr):
    # the lane weight of each word of a block's columns
    return _lane_weight(_word_columns(cols64, BITS, BLOCK_N) % CHECKSUM_GROUP)


@triton.jit
def _checksum_fold(
    out_raw,
    rows,
    row_ok,
    cols64,
    N,
    lane_weights,
    BITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    VEC: tl.constexpr,
    EVEN: tl.constexpr,
):
    # checksum.checksum's terms of one block, mix32(word ^ element_key) * lane weight, folded
    # over the VEC columns a thread holds: [BLOCK_M, BLOCK_N // VEC] uint64, each still to be
    # multiplied by its group's weight. Words past the output's edge add nothing.
    first = _word_columns(cols64, BITS, BLOCK_N)
    if BITS == 16:
        bits = out_raw.to(tl.uint16, bitcast=True).to(tl.uint32)
        low, high = tl.split(tl.reshape(bits, [BLOCK_M, BLOCK_N // 2, 2]))
        word = low | (high << 16)
    else:
        word = out_raw.to(tl.uint32, bitcast=True)
    key = rows.to(tl.uint32)[:, None] * CHECKSUM_KEY_ROW + first.to(tl.uint32)[None, :] * CHECKSUM_KEY_COLUMN
    mixed = _mix32(word ^ key)
    if not EVEN:
        mixed = tl.where(row_ok[:, None] & (first < N)[None, :], mixed, 0)
    terms = mixed.to(tl.uint64) * lane_weights[None, :].to(tl.uint64)
    if BITS == 16:
        return _fold_sum(terms, BLOCK_M, BLOCK_N // 2, VEC // 2)
    else:
        return _fold_sum(terms, BLOCK_M, BLOCK_N, VEC)


@triton.jit
def _group_weight(rows, groups):
    # check.group_weight: per row and group of 128 columns, once per group a thread reads (VEC elements)
    key = rows.to(tl.uint32) * CHECKSUM_ROW_MULTIPLIER + groups.to(tl.uint32) * CHECKSUM_GROUP_MULTIPLIER
    mixed = (key + CHECKSUM_GROUP_SEED) * CHECKSUM_GROUP_MIX
    return ((mixed ^ (mixed >> 16)) | 1).to(tl.uint64)


# --------------------------------------------------------------------------------------------
# the pass over the tensors


@triton.jit
def _task_block(block, rows64, row_ok, N, last_block, BLOCK_N: tl.constexpr):
    # a task's column block: its columns and which of its elements exist
    cols64 = (block * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    return cols64, row_ok[:, None] & ((cols64 < N) & (block < last_block))[None, :]


@triton.jit
def _step_block(ptr, stride_m, stride_n, rows64, cols64, mask, EVEN: tl.constexpr):
    if EVEN:
        block = tl.load(
            ptr + (rows64 * stride_m)[:, None] + (cols64 * stride_n)[None, :], eviction_policy="evict_first"
        )
    else:
        block = _load_block(ptr, stride_m, stride_n, rows64, cols64, mask)
    return block


@triton.jit
def _load_step(
    block,
    out_ptr,
    ref_ptr,
    copy0_ptr,
    copy1_ptr,
    copy2_ptr,
    copy3_ptr,
    stride_out_m,
    stride_out_n,
    stride_ref_m,
    stride_ref_n,
    stride_c0_m,
    stride_c0_n,
    stride_c1_m,
    stride_c1_n,
    stride_c2_m,
    stride_c2_n,
    stride_c3_m,
    stride_c3_n,
    rows64,
    row_ok,
    N,
    last_block,
    ACCURACY: tl.constexpr,
    NUM_COPIES: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EVEN: tl.constexpr,
):
    """A task's column block of every tensor the pass reads (a scalar 0 for those it does not).
    The check loads the next block before working on this one, registers serving as a second
    buffer: twice the bytes in flight per thread, which memory bandwidth needs more than
    programs per multiprocessor. Masked-out elements load as 0, which no detector flags; past
    the task's last block the mask is all false and nothing is read. EVEN (blocks tile the
    output exactly): no masks at all, and past the task's last block that block is loaded
    again, never used, rather than anything beyond the row."""
    if EVEN:
        cols64 = (tl.minimum(block, last_block - 1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
        mask = row_ok[:, None]  # unused
    else:
        cols64, mask = _task_block(block, rows64, row_ok, N, last_block, BLOCK_N)
    out = _step_block(out_ptr, stride_out_m, stride_out_n, rows64, cols64, mask, EVEN)
    ref = tl.full([], 0, tl.int8)
    c0 = tl.full([], 0, tl.int8)
    c1 = tl.full([], 0, tl.int8)
    c2 = tl.full([], 0, tl.int8)
    c3 = tl.full([], 0, tl.int8)
    if ACCURACY:
        ref = _step_block(ref_ptr, stride_ref_m, stride_ref_n, rows64, cols64, mask, EVEN)
    if NUM_COPIES > 0:
        c0 = _step_block(copy0_ptr, stride_c0_m, stride_c0_n, rows64, cols64, mask, EVEN)
    if NUM_COPIES > 1:
        c1 = _step_block(copy1_ptr, stride_c1_m, stride_c1_n, rows64, cols64, mask, EVEN)
    if NUM_COPIES > 2:
        c2 = _step_block(copy2_ptr, stride_c2_m, stride_c2_n, rows64, cols64, mask, EVEN)
    if NUM_COPIES > 3:
        c3 = _step_block(copy3_ptr, stride_c3_m, stride_c3_n, rows64, cols64, mask, EVEN)
    return out, ref, c0, c1, c2, c3


@triton.jit
def _task_largest_difference(
    out_ptr,
    stride_out_m,
    stride_out_n,
    copy_ptr,
    stride_m,
    stride_n,
    rows64,
    row_ok,
    N,
    first_block,
    last_block,
    BITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Per row, a task's largest |out - copy| over differing elements, as a magnitude key:
    read again only for tasks where the copy differs, so that an equal copy costs one
    comparison per element."""
    largest = tl.full([BLOCK_M], 0, tl.int32)
    block = first_block
    while block < last_block:  # not range(): see _LOOPS
        cols64, mask = _task_block(block, rows64, row_ok, N, last_block, BLOCK_N)
        out_raw = _load_block(out_ptr, stride_out_m, stride_out_n, rows64, cols64, mask)
        copy_raw = _load_block(copy_ptr, stride_m, stride_n, rows64, cols64, mask)
        delta = _magnitude_key(out_raw.to(tl.float32) - copy_raw.to(tl.float32))
        largest = tl.maximum(largest, tl.max(tl.where(_differ(out_raw, copy_raw, BITS), delta, 0), axis=1))
        block += 1
    return largest


@triton.jit
def _task_accuracy(
    out_ptr,
    ref_ptr,
    stride_out_m,
    stride_out_n,
    stride_ref_m,
    stride_ref_n,
    rows64,
    row_ok,
    N,
    first_block,
    last_block,
    threshold,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Per row, a task's accuracy numbers in full with per-row thresholds, reading it again:
    wrong and non-finite elements, the largest error (a magnitude key, NaN propagating) and
    the squared errors in float64, as the torch path adds them. For tasks _quick_block found a
    row in that may have a wrong element, and (its wrong count unused) for tasks of the
    per-element path with a wrong element or squares too far from the row's scale for fp32;
    a clean output has none."""
    wrong = tl.full([BLOCK_M], 0, tl.int32)
    nonfinite = tl.full([BLOCK_M], 0, tl.int32)
    err_key = tl.full([BLOCK_M], 0, tl.int32)
    err_sq = tl.full([BLOCK_M], 0, tl.float64)
    block = first_block
    while block < last_block:  # not range(): see _LOOPS
        cols64, mask = _task_block(block, rows64, row_ok, N, last_block, BLOCK_N)
        out_val = _load_block(out_ptr, stride_out_m, stride_out_n, rows64, cols64, mask).to(tl.float32)
        ref_val = _load_block(ref_ptr, stride_ref_m, stride_ref_n, rows64, cols64, mask).to(tl.float32)
        finite, err, _, flagged = _accuracy_terms(out_val, ref_val, threshold[:, None], 0.0, 0.0, True)
        wrong += tl.sum(flagged.to(tl.int32), axis=1)  # masked elements load as 0: finite, no error
        nonfinite += tl.sum((~finite).to(tl.int32), axis=1)
        err_key = tl.maximum(err_key, tl.max(_magnitude_key(err), axis=1))
        err64 = err.to(tl.float64)
        err_sq += tl.sum(err64 * err64, axis=1)
        block += 1
    return wrong, nonfinite, err_key, err_sq


@triton.jit
def _copy_task_end(
    differing,
    out_ptr,
    stride_out_m,
    stride_out_n,
    copy_ptr,
    stride_m,
    stride_n,
    counts_ptr,
    diff_scale,
    rows,
    rows64,
    row_ok,
    N,
    first_block,
    last_block,
    row_total,
    row_worst_key,
    BITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """A task's per-row counts of one copy's differences to their slot; per-row totals and
    worst relative difference (as a magnitude key) carried over the program's tasks."""
    per_row = tl.sum(differing, axis=1)
    tl.store(counts_ptr + rows, per_row, mask=row_ok)
    key = tl.full([BLOCK_M], 0, tl.int32)
    if tl.sum(per_row, axis=0) > 0:
        key = _task_largest_difference(
            out_ptr,
            stride_out_m,
            stride_out_n,
            copy_ptr,
            stride_m,
            stride_n,
            rows64,
            row_ok,
            N,
            first_block,
            last_block,
            BITS,
            BLOCK_M,
            BLOCK_N,
        )
    # torch.nan_to_num(delta, nan=inf) as torch_backend.py has it: NaN -> inf, and +inf -> the largest
    # float. Both maps keep the order of keys, so mapping the row's largest key is enough.
    delta = tl.where(key > INF_BITS, float("inf"), tl.where(key == INF_BITS, FLT_MAX, key.to(tl.float32, bitcast=True)))
    worst = _magnitude_key(tl.math.div_rn(delta, diff_scale))
    return row_total + per_row.to(tl.int64), tl.maximum(row_worst_key, tl.where(row_ok, worst, 0))


@triton.jit
def _store_zeros(row_ptr, first: tl.constexpr, end: tl.constexpr):
    # every program writes its whole row of partial results, zeros for what its pass does not
    # compute: the reduction reads nothing that was not written in this call
    for column in tl.static_range(first, end):
        tl.store(row_ptr + column, 0.0)


@triton.jit(
    do_not_specialize=["M", "num_tasks", "col_chunks", "task_blocks", "zero_count"],
    do_not_specialize_on_alignment=_SCRATCH,
)
def _check_kernel(
    out_ptr,
    ref_ptr,
    rowmax_ptr,
    copy0_ptr,
    copy1_ptr,
    copy2_ptr,
    copy3_ptr,
    partial_ptr,
    accuracy_rows_ptr,
    copy_rows_ptr,
    zero_ptr,
    M,
    N,
    stride_out_m,
    stride_out_n,
    stride_ref_m,
    stride_ref_n,
    stride_c0_m,
    stride_c0_n,
    stride_c1_m,
    stride_c1_n,
    stride_c2_m,
    stride_c2_n,
    stride_c3_m,
    stride_c3_n,
    rtol,
    floor,
    num_tasks,
    col_chunks,
    task_blocks,
    zero_count,
    ACCURACY: tl.constexpr,
    ROW_SCALE: tl.constexpr,
    NUM_COPIES: tl.constexpr,
    CHECKSUM: tl.constexpr,
    BITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    VEC: tl.constexpr,
    EVEN: tl.constexpr,
):
    """A persistent program: tasks pid, pid + programs, ... of BLOCK_M rows by ``task_blocks``
    column blocks (task t: row block t // col_chunks, column chunk t % col_chunks).

    ROW_SCALE: every |ref| is assumed within floor * rowmax (true when floor >= 1 and rowmax is
    the row's largest |ref|), so each element's scale is its row's and the per-element
    division becomes a comparison with a per-row threshold. Per element the pass then keeps
    only the largest |out - ref| and the squares (_quick_block): a row whose largest
    difference is within its threshold and whose sum is finite has no wrong, non-finite or
    NaN element, and a task with any other row is read again in full (_task_accuracy). The
    reference's facts say whether the assumption holds; where it does not, the host checks
    again without it.

    Otherwise, per element, wrong and differing elements are counted. Non-finite elements
    are counted, and copies' differences sized, by reading a task again, only when it has
    wrong or differing elements.

    Per-row counts go to [col_chunks, M] slots, each written by exactly one task:
    ``accuracy_rows_ptr`` for the accuracy detector, ``copy_rows_ptr + j * col_chunks * M`` for
    copy j of this pass. The program also zeroes its share of ``zero_count`` int32 at
    ``zero_ptr`` (this pass's tile counts, which _tile_kernel adds to)."""
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    FOLDED: tl.constexpr = BLOCK_N // VEC
    ZERO_BLOCK: tl.constexpr = 1024

    start = pid * ZERO_BLOCK
    while start < zero_count:  # not range(): see _LOOPS
        index = start + tl.arange(0, ZERO_BLOCK)
        tl.store(zero_ptr + index, tl.full([ZERO_BLOCK], 0, tl.int32), mask=index < zero_count)
        start += programs * ZERO_BLOCK

    # the program's totals, per row slot: no reductions across threads per task; only what
    # this pass computes is carried (registers are what bounds the programs per multiprocessor)
    slots = tl.arange(0, BLOCK_M)
    if ACCURACY:
        wrong_total = tl.full([BLOCK_M], 0, tl.int64)
        nonfinite_total = tl.full([BLOCK_M], 0, tl.int64)
        abs_total = tl.full([BLOCK_M], 0, tl.int32)  # magnitude keys
        rel_total = tl.full([BLOCK_M], 0, tl.int32)
        err_sq_total = tl.full([BLOCK_M], 0, tl.float64)
    if CHECKSUM:  # checksum.checksum: unsigned, sums wrap modulo 2**64
        checksum_total = tl.full([BLOCK_M], 0, tl.uint64)
        if tl.constexpr(BLOCK_N) % CHECKSUM_GROUP == 0:  # every block starts a group: the lanes' weights never change
            lane_weights = _checksum_lanes(tl.arange(0, BLOCK_N), BITS, BLOCK_N)
    if NUM_COPIES > 0:
        diff0_total = tl.full([BLOCK_M], 0, tl.int64)
        worst0_total = tl.full([BLOCK_M], 0, tl.int32)
    if NUM_COPIES > 1:
        diff1_total = tl.full([BLOCK_M], 0, tl.int64)
        worst1_total = tl.full([BLOCK_M], 0, tl.int32)
    if NUM_COPIES > 2:
        diff2_total = tl.full([BLOCK_M], 0, tl.int64)
        worst2_total = tl.full([BLOCK_M], 0, tl.int32)
    if NUM_COPIES > 3:
        diff3_total = tl.full([BLOCK_M], 0, tl.int64)
        worst3_total = tl.full([BLOCK_M], 0, tl.int32)
    copy_stride = col_chunks.to(tl.int64) * M  # between copies' row-count slots

    task = pid
    while task < num_tasks:  # not range(): see _LOOPS
        row_block = task // col_chunks
        chunk = task - row_block * col_chunks
        rows = row_block * BLOCK_M + slots
        row_ok = rows < M
        rows64 = rows.to(tl.int64)
        slot_offset = chunk.to(tl.int64) * M  # this task's row-count slot
        first_block = chunk * task_blocks
        last_block = tl.minimum(first_block + task_blocks, (N + BLOCK_N - 1) // BLOCK_N)
        if ACCURACY:
            rowmax = tl.load(rowmax_ptr + rows, mask=row_ok, other=0.0)
            row_scale = floor * rowmax
            square_scale, square_unscale = _square_scales(rowmax)
            err_sq = tl.full([BLOCK_M, FOLDED], 0, tl.float32)  # scaled by square_scale
            if ROW_SCALE:
                threshold = _row_threshold(row_scale, rtol)
                gap = tl.full([BLOCK_M, FOLDED], 0, tl.float32)  # largest |out - ref|
            else:
                floor_scale = row_scale[:, None]
                wrong = tl.full([BLOCK_M, FOLDED], 0, tl.int32)
                err_key = tl.full([BLOCK_M, FOLDED], 0, tl.int32)  # magnitude keys: NaN-propagating maxima
                rel_key = tl.full([BLOCK_M, FOLDED], 0, tl.int32)
        if CHECKSUM:
            checksum = tl.full([BLOCK_M, FOLDED], 0, tl.uint64)
        if NUM_COPIES > 0:
            diff_scale = tl.load(rowmax_ptr + rows, mask=row_ok, other=0.0)
            diff_scale = tl.where(diff_scale > 0, diff_scale, 1.0)
            differing0 = tl.full([BLOCK_M, FOLDED], 0, tl.int32)
        if NUM_COPIES > 1:
            differing1 = tl.full([BLOCK_M, FOLDED], 0, tl.int32)
        if NUM_COPIES > 2:
            differing2 = tl.full([BLOCK_M, FOLDED], 0, tl.int32)
        if NUM_COPIES > 3:
            differing3 = tl.full([BLOCK_M, FOLDED], 0, tl.int32)

        # each step loads the next block before working on this one (see _load_step)
        next_out, next_ref, next_c0, next_c1, next_c2, next_c3 = _load_step(
            first_block,
            out_ptr,
            ref_ptr,
            copy0_ptr,
            copy1_ptr,
            copy2_ptr,
            copy3_ptr,
            stride_out_m,
            stride_out_n,
            stride_ref_m,
            stride_ref_n,
            stride_c0_m,
            stride_c0_n,
            stride_c1_m,
            stride_c1_n,
            stride_c2_m,
            stride_c2_n,
            stride_c3_m,
            stride_c3_n,
            rows64,
            row_ok,
            N,
            last_block,
            ACCURACY,
            NUM_COPIES,
            BLOCK_N,
            EVEN,
        )
        block = first_block
        while block < last_block:  # not range(): see _LOOPS
            out_raw, ref_raw, c0_raw, c1_raw, c2_raw, c3_raw = next_out, next_ref, next_c0, next_c1, next_c2, next_c3
            next_out, next_ref, next_c0, next_c1, next_c2, next_c3 = _load_step(
                block + 1,
                out_ptr,
                ref_ptr,
                copy0_ptr,
                copy1_ptr,
                copy2_ptr,
                copy3_ptr,
                stride_out_m,
                stride_out_n,
                stride_ref_m,
                stride_ref_n,
                stride_c0_m,
                stride_c0_n,
                stride_c1_m,
                stride_c1_n,
                stride_c2_m,
                stride_c2_n,
                stride_c3_m,
                stride_c3_n,
                rows64,
                row_ok,
                N,
                last_block,
                ACCURACY,
                NUM_COPIES,
                BLOCK_N,
                EVEN,
            )
            cols64 = (block * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)

            if ACCURACY:
                if ROW_SCALE:
                    gap, err_sq = _quick_block(
                        _widen(out_raw), _widen(ref_raw), square_scale, gap, err_sq, BLOCK_M, BLOCK_N, VEC
                    )
                else:
                    wrong, err_sq, err_key, rel_key = _accuracy_block(
                        out_raw.to(tl.float32),
                        ref_raw.to(tl.float32),
                        floor_scale,
                        rtol,
                        square_scale,
                        wrong,
                        err_sq,
                        err_key,
                        rel_key,
                        BLOCK_M,
                        BLOCK_N,
                        VEC,
                    )
            if CHECKSUM:  # per element a key, a mix and one widening multiply-add; per VEC elements (one
                # group) the group's weight
                if tl.constexpr(BLOCK_N) % CHECKSUM_GROUP != 0:
                    lane_weights = _checksum_lanes(cols64, BITS, BLOCK_N)
                lane_sums = _checksum_fold(
                    out_raw, rows, row_ok, cols64, N, lane_weights, BITS, BLOCK_M, BLOCK_N, VEC, EVEN
                )
                groups = (block * BLOCK_N + tl.arange(0, FOLDED) * VEC).to(tl.uint32) // CHECKSUM_GROUP
                checksum += lane_sums * _group_weight(rows[:, None], groups[None, :])
            if NUM_COPIES > 0:  # bits compared, no conversions: the clean path's whole cost per copy
                out_bits = _bits(out_raw, BITS)
                differing0 += _fold_sum((out_bits != _bits(c0_raw, BITS)).to(tl.int32), BLOCK_M, BLOCK_N, VEC)
            if NUM_COPIES > 1:
                differing1 += _fold_sum((out_bits != _bits(c1_raw, BITS)).to(tl.int32), BLOCK_M, BLOCK_N, VEC)
            if NUM_COPIES > 2:
                differing2 += _fold_sum((out_bits != _bits(c2_raw, BITS)).to(tl.int32), BLOCK_M, BLOCK_N, VEC)
            if NUM_COPIES > 3:
                differing3 += _fold_sum((out_bits != _bits(c3_raw, BITS)).to(tl.int32), BLOCK_M, BLOCK_N, VEC)
            block += 1

        # the task's rows: counts to their slots, everything else into the program's totals
        if ACCURACY:
            row_err_sq = tl.sum(err_sq, axis=1)
            unscale = square_unscale.to(tl.float64)
            if ROW_SCALE:
                row_gap = tl.max(gap.to(tl.int32, bitcast=True), axis=1)  # a magnitude key: gap >= 0 or NaN
                # all finite (a NaN or inf difference makes the sum so) and within the threshold
                quiet = (row_gap <= threshold.to(tl.int32, bitcast=True)) & (row_err_sq < SQUARES_LIMIT)
                if tl.sum((~quiet).to(tl.int32), axis=0) == 0:  # the clean output's case
                    per_row = tl.full([BLOCK_M], 0, tl.int32)
                    row_err_key = row_gap
                    err_sq_total += row_err_sq.to(tl.float64) * unscale * unscale
                else:
                    per_row, row_nonfinite, row_err_key, exact_err = _task_accuracy(
                        out_ptr,
                        ref_ptr,
                        stride_out_m,
                        stride_out_n,
                        stride_ref_m,
                        stride_ref_n,
                        rows64,
                        row_ok,
                        N,
                        first_block,
                        last_block,
                        threshold,
                        BLOCK_M,
                        BLOCK_N,
                    )
                    nonfinite_total += row_nonfinite.to(tl.int64)
                    err_sq_total += exact_err
                # the row's largest relative error is its largest error divided once (monotonic)
                row_rel = _divide(row_err_key.to(tl.float32, bitcast=True), row_scale)
                rel_total = tl.maximum(rel_total, tl.where(row_ok, _magnitude_key(row_rel), 0))
            else:
                per_row = tl.sum(wrong, axis=1)
                row_err_key = tl.max(err_key, axis=1)
                rel_total = tl.maximum(rel_total, tl.max(rel_key, axis=1))
                unwieldy = tl.sum((~(row_err_sq < SQUARES_LIMIT)).to(tl.int32), axis=0)
                if (tl.sum(per_row, axis=0) == 0) & (unwieldy == 0):  # the clean output's case
                    err_sq_total += row_err_sq.to(tl.float64) * unscale * unscale
                else:  # non-finite elements are wrong ones; or an error far beyond its row's scale
                    _, row_nonfinite, _, exact_err = _task_accuracy(
                        out_ptr,
                        ref_ptr,
                        stride_out_m,
                        stride_out_n,
                        stride_ref_m,
                        stride_ref_n,
                        rows64,
                        row_ok,
                        N,
                        first_block,
                        last_block,
                        row_scale,
                        BLOCK_M,
                        BLOCK_N,
                    )
                    nonfinite_total += row_nonfinite.to(tl.int64)
                    err_sq_total += exact_err
            tl.store(accuracy_rows_ptr + slot_offset + rows, per_row, mask=row_ok)
            wrong_total += per_row.to(tl.int64)
            abs_total = tl.maximum(abs_total, row_err_key)
        if CHECKSUM:
            checksum_total += tl.sum(checksum, axis=1)
        if NUM_COPIES > 0:
            diff0_total, worst0_total = _copy_task_end(
                differing0,
                out_ptr,
                stride_out_m,
                stride_out_n,
                copy0_ptr,
                stride_c0_m,
                stride_c0_n,
                copy_rows_ptr + slot_offset,
                diff_scale,
                rows,
                rows64,
                row_ok,
                N,
                first_block,
                last_block,
                diff0_total,
                worst0_total,
                BITS,
                BLOCK_M,
                BLOCK_N,
            )
        if NUM_COPIES > 1:
            diff1_total, worst1_total = _copy_task_end(
                differing1,
                out_ptr,
                stride_out_m,
                stride_out_n,
                copy1_ptr,
                stride_c1_m,
                stride_c1_n,
                copy_rows_ptr + copy_stride + slot_offset,
                diff_scale,
                rows,
                rows64,
                row_ok,
                N,
                first_block,
                last_block,
                diff1_total,
                worst1_total,
                BITS,
                BLOCK_M,
                BLOCK_N,
            )
        if NUM_COPIES > 2:
            diff2_total, worst2_total = _copy_task_end(
                differing2,
                out_ptr,
                stride_out_m,
                stride_out_n,
                copy2_ptr,
                stride_c2_m,
                stride_c2_n,
                copy_rows_ptr + 2 * copy_stride + slot_offset,
                diff_scale,
                rows,
                rows64,
                row_ok,
                N,
                first_block,
                last_block,
                diff2_total,
                worst2_total,
                BITS,
                BLOCK_M,
                BLOCK_N,
            )
        if NUM_COPIES > 3:
            diff3_total, worst3_total = _copy_task_end(
                differing3,
                out_ptr,
                stride_out_m,
                stride_out_n,
                copy3_ptr,
                stride_c3_m,
                stride_c3_n,
                copy_rows_ptr + 3 * copy_stride + slot_offset,
                diff_scale,
                rows,
                rows64,
                row_ok,
                N,
                first_block,
                last_block,
                diff3_total,
                worst3_total,
                BITS,
                BLOCK_M,
                BLOCK_N,
            )
        task += programs

    partial = partial_ptr + pid * P_WIDTH
    if ACCURACY:
        tl.store(partial + P_WRONG, tl.sum(wrong_total, axis=0).to(tl.float64))
        tl.store(partial + P_NONFINITE, tl.sum(nonfinite_total, axis=0).to(tl.float64))
        tl.store(partial + P_MAX_ABS, tl.max(abs_total, axis=0).to(tl.float32, bitcast=True).to(tl.float64))
        tl.store(partial + P_MAX_REL, tl.max(rel_total, axis=0).to(tl.float32, bitcast=True).to(tl.float64))
        tl.store(partial + P_ERR_SQ, tl.sum(err_sq_total, axis=0))
    else:
        _store_zeros(partial, P_WRONG, P_CHECKSUM)
    if CHECKSUM:
        # a sum modulo 2**64 does not depend on the order of the additions
        checksum_bits = tl.sum(checksum_total, axis=0).to(tl.int64, bitcast=True)
        tl.store(partial + P_CHECKSUM, checksum_bits.to(tl.float64, bitcast=True))
    else:
        tl.store(partial + P_CHECKSUM, 0.0)
    if NUM_COPIES > 0:
        tl.store(partial + P_COPIES, tl.sum(diff0_total, axis=0).to(tl.float64))
        tl.store(partial + P_COPIES + 1, tl.max(worst0_total, axis=0).to(tl.float32, bitcast=True).to(tl.float64))
    if NUM_COPIES > 1:
        tl.store(partial + P_COPIES + 2, tl.sum(diff1_total, axis=0).to(tl.float64))
        tl.store(partial + P_COPIES + 3, tl.max(worst1_total, axis=0).to(tl.float32, bitcast=True).to(tl.float64))
    if NUM_COPIES > 2:
        tl.store(partial + P_COPIES + 4, tl.sum(diff2_total, axis=0).to(tl.float64))
        tl.store(partial + P_COPIES + 5, tl.max(worst2_total, axis=0).to(tl.float32, bitcast=True).to(tl.float64))
    if NUM_COPIES > 3:
        tl.store(partial + P_COPIES + 6, tl.sum(diff3_total, axis=0).to(tl.float64))
        tl.store(partial + P_COPIES + 7, tl.max(worst3_total, axis=0).to(tl.float32, bitcast=True).to(tl.float64))
    _store_zeros(partial, P_COPIES + 2 * NUM_COPIES, P_WIDTH)  # slots of copies this pass lacks


# --------------------------------------------------------------------------------------------
# per-tile counts, for rows with a flagged element only


@triton.jit
def _rows_flagged(counts_ptr, rows, row_ok, M, col_chunks):
    """Whether each row has a flagged element: any of its col_chunks slots non-zero."""
    flagged = tl.full(rows.shape, 0, tl.int1)
    chunk = 0
    while chunk < col_chunks:  # not range(): see _LOOPS
        counts = tl.load(counts_ptr + chunk.to(tl.int64) * M + rows, mask=row_ok, other=0)
        flagged = flagged | (counts > 0)
        chunk += 1
    return flagged


@triton.jit
def _count_tiles(tile_ptr, flag, rows, row_ok, cols, col0, tile_m, tile_n, tile_cols, row_atomics):
    """Add a block's flagged elements to their tiles' counts: with ``row_atomics`` (the block
    lies in one tile column) one atomic per row that has any, else one per flagged element."""
    tile_rows = (rows // tile_m).to(tl.int64) * tile_cols
    if row_atomics:
        per_row = tl.sum(flag.to(tl.int32), axis=1)
        tl.atomic_add(tile_ptr + tile_rows + col0 // tile_n, per_row, mask=row_ok & (per_row > 0), sem="relaxed")
    else:
        target = tile_rows[:, None] + (cols // tile_n)[None, :]
        tl.atomic_add(tile_ptr + target, tl.full(flag.shape, 1, tl.int32), mask=flag, sem="relaxed")


@triton.jit
def _copy_tiles(
    copy_ptr,
    stride_m,
    stride_n,
    rows_flagged,
    out_raw,
    tile_ptr,
    rows,
    rows64,
    row_ok,
    cols,
    cols64,
    col_ok,
    col0,
    tile_m,
    tile_n,
    tile_cols,
    row_atomics,
    BITS: tl.constexpr,
):
    # one copy's differing elements of a block, in the rows where it differs, to their tiles
    mask = rows_flagged[:, None] & col_ok
    copy_raw = _load_block(copy_ptr, stride_m, stride_n, rows64, cols64, mask)
    _count_tiles(
        tile_ptr,
        _differ(out_raw, copy_raw, BITS) & mask,
        rows,
        row_ok,
        cols,
        col0,
        tile_m,
        tile_n,
        tile_cols,
        row_atomics,
    )


@triton.jit(do_not_specialize=_TILE_SIZES, do_not_specialize_on_alignment=_TILE_POINTERS)
def _tile_kernel(
    out_ptr,
    ref_ptr,
    rowmax_ptr,
    copy0_ptr,
    copy1_ptr,
    copy2_ptr,
    copy3_ptr,
    accuracy_rows_ptr,
    copy_rows_ptr,
    accuracy_tiles_ptr,
    copy_tiles_ptr,
    M,
    N,
    stride_out_m,
    stride_out_n,
    stride_ref_m,
    stride_ref_n,
    stride_c0_m,
    stride_c0_n,
    stride_c1_m,
    stride_c1_n,
    stride_c2_m,
    stride_c2_n,
    stride_c3_m,
    stride_c3_n,
    rtol,
    floor,
    row_blocks,
    col_chunks,
    tile_m,
    tile_n,
    tile_cols,
    tile_total,
    accuracy,
    row_scale,
    num_copies,
    row_atomics,
    BITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Per-tile counts of one pass's detectors, after _check_kernel wrote per-row counts and
    zeroed the tile counts. A program takes row blocks in turn and reads the tensors only for
    rows some detector flagged, with the same per-element tests as _check_kernel. What a pass
    does (accuracy, row_scale, num_copies, row_atomics) is decided at run time: a slow path
    compiled once per dtype rather than once per combination."""
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    copy_stride = col_chunks.to(tl.int64) * M
    tile_stride = tile_total.to(tl.int64)
    row_block = pid
    while row_block < row_blocks:  # not range(): see _LOOPS
        rows = row_block * BLOCK_M + tl.arange(0, BLOCK_M)
        row_ok = rows < M
        rows64 = rows.to(tl.int64)
        nothing = tl.full([BLOCK_M], 0, tl.int1)
        accuracy_flagged = nothing
        flagged0 = nothing
        flagged1 = nothing
        flagged2 = nothing
        flagged3 = nothing
        if accuracy:
            accuracy_flagged = _rows_flagged(accuracy_rows_ptr, rows, row_ok, M, col_chunks)
        if num_copies > 0:
            flagged0 = _rows_flagged(copy_rows_ptr, rows, row_ok, M, col_chunks)
        if num_copies > 1:
            flagged1 = _rows_flagged(copy_rows_ptr + copy_stride, rows, row_ok, M, col_chunks)
        if num_copies > 2:
            flagged2 = _rows_flagged(copy_rows_ptr + 2 * copy_stride, rows, row_ok, M, col_chunks)
        if num_copies > 3:
            flagged3 = _rows_flagged(copy_rows_ptr + 3 * copy_stride, rows, row_ok, M, col_chunks)
        any_row = accuracy_flagged | flagged0 | flagged1 | flagged2 | flagged3
        if tl.sum(any_row.to(tl.int32), axis=0) > 0:
            row_scale_value = floor * tl.load(rowmax_ptr + rows, mask=row_ok & accuracy_flagged, other=0.0)
            floor_scale = row_scale_value[:, None]
            threshold = _row_threshold(row_scale_value, rtol)[:, None]
            block = 0
            while block < (N + BLOCK_N - 1) // BLOCK_N:  # not range(): see _LOOPS
                col0 = block * BLOCK_N
                cols = col0 + tl.arange(0, BLOCK_N)
                cols64 = cols.to(tl.int64)
                col_ok = (cols < N)[None, :]
                out_raw = _load_block(out_ptr, stride_out_m, stride_out_n, rows64, cols64, any_row[:, None] & col_ok)
                if accuracy:
                    mask = accuracy_flagged[:, None] & col_ok
                    ref_val = _load_block(ref_ptr, stride_ref_m, stride_ref_n, rows64, cols64, mask).to(tl.float32)
                    if row_scale:
                        _, _, _, flag = _accuracy_terms(
                            out_raw.to(tl.float32), ref_val, threshold, floor_scale, rtol, True
                        )
                    else:
                        _, _, _, flag = _accuracy_terms(
                            out_raw.to(tl.float32), ref_val, threshold, floor_scale, rtol, False
                        )
                    _count_tiles(
                        accuracy_tiles_ptr,
                        flag & mask,
                        rows,
                        row_ok,
                        cols,
                        col0,
                        tile_m,
                        tile_n,
                        tile_cols,
                        row_atomics,
                    )
                if num_copies > 0:
                    _copy_tiles(
                        copy0_ptr,
                        stride_c0_m,
                        stride_c0_n,
                        flagged0,
                        out_raw,
                        copy_tiles_ptr,
                        rows,
                        rows64,
                        row_ok,
                        cols,
                        cols64,
                        col_ok,
                        col0,
                        tile_m,
                        tile_n,
                        tile_cols,
                        row_atomics,
                        BITS,
                    )
                if num_copies > 1:
                    _copy_tiles(
                        copy1_ptr,
                        stride_c1_m,
                        stride_c1_n,
                        flagged1,
                        out_raw,
                        copy_tiles_ptr + tile_stride,
                        rows,
                        rows64,
                        row_ok,
                        cols,
                        cols64,
                        col_ok,
                        col0,
                        tile_m,
                        tile_n,
                        tile_cols,
                        row_atomics,
                        BITS,
                    )
                if num_copies > 2:
                    _copy_tiles(
                        copy2_ptr,
                        stride_c2_m,
                        stride_c2_n,
                        flagged2,
                        out_raw,
                        copy_tiles_ptr + 2 * tile_stride,
                        rows,
                        rows64,
                        row_ok,
                        cols,
                        cols64,
                        col_ok,
                        col0,
                        tile_m,
                        tile_n,
                        tile_cols,
                        row_atomics,
                        BITS,
                    )
                if num_copies > 3:
                    _copy_tiles(
                        copy3_ptr,
                        stride_c3_m,
                        stride_c3_n,
                        flagged3,
                        out_raw,
                        copy_tiles_ptr + 3 * tile_stride,
                        rows,
                        rows64,
                        row_ok,
                        cols,
                        cols64,
                        col_ok,
                        col0,
                        tile_m,
                        tile_n,
                        tile_cols,
                        row_atomics,
                        BITS,
                    )
                block += 1
        row_block += programs


# --------------------------------------------------------------------------------------------
# facts of the reference, once per reference


@triton.jit(
    do_not_specialize=["M", "N", "stride_m", "stride_n", "floor"],
    do_not_specialize_on_alignment=["ref_ptr", "rowmax_ptr", "row_sq_ptr", "outside_ptr"],
)
def _facts_kernel(
    ref_ptr,
    rowmax_ptr,
    row_sq_ptr,
    outside_ptr,
    M,
    N,
    stride_m,
    stride_n,
    floor,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Per row of ref, read once: the sum of its squares in float64 (each square exact, as the
    torch path's) and whether some |ref| lies beyond floor * rowmax, NaN included (1 or 0).
    Programs take row blocks in turn."""
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    row_block = pid
    while row_block * BLOCK_M < M:  # not range(): see _LOOPS
        rows = row_block * BLOCK_M + tl.arange(0, BLOCK_M)
        row_ok = rows < M
        rows64 = rows.to(tl.int64)
        squares = tl.full([BLOCK_M], 0, tl.float64)
        largest = tl.full([BLOCK_M], 0, tl.int32)  # magnitude key: NaN above inf
        col = 0
        while col < N:  # not range(): see _LOOPS
            cols64 = (col + tl.arange(0, BLOCK_N)).to(tl.int64)
            mask = row_ok[:, None] & (cols64 < N)[None, :]
            value = _load_block(ref_ptr, stride_m, stride_n, rows64, cols64, mask).to(tl.float32)
            wide = value.to(tl.float64)
            squares += tl.sum(wide * wide, axis=1)
            largest = tl.maximum(largest, tl.max(_magnitude_key(value), axis=1))
            col += BLOCK_N
        scale = floor * tl.load(rowmax_ptr + rows, mask=row_ok, other=0.0)
        # torch's ~(|ref| <= scale) for some element: a larger key, a NaN, or a NaN scale
        beyond = (largest > _magnitude_key(scale)) | ((scale != scale) & (N > 0))
        tl.store(row_sq_ptr + rows, squares, mask=row_ok)
        tl.store(outside_ptr + rows, beyond.to(tl.int32), mask=row_ok)
        row_block += programs


# --------------------------------------------------------------------------------------------
# the reduction


@triton.jit
def _reduce_partials(partial_ptr, programs, BLOCK: tl.constexpr):
    """A pass's partial results over its programs, every column at once: column sums,
    column maxima (NaN if any is NaN) and the int64 sum of the checksum column's bits."""
    columns = tl.arange(0, P_WIDTH)
    sums = tl.full([P_WIDTH], 0, tl.float64)
    maxima = tl.full([P_WIDTH], 0, tl.float64)
    nan_seen = tl.full([P_WIDTH], 0, tl.int32)
    checksum = tl.full([P_WIDTH], 0, tl.int64)
    start = 0
    while start < programs:  # not range(): see _LOOPS
        index = start + tl.arange(0, BLOCK)
        values = tl.load(
            partial_ptr + index[:, None] * P_WIDTH + columns[None, :], mask=(index < programs)[:, None], other=0.0
        )
        sums += tl.sum(values, axis=0)
        maxima = tl.maximum(maxima, tl.max(values, axis=0))  # NaN is tracked apart: tl.max may skip it
        nan_seen = nan_seen | tl.max((values != values).to(tl.int32), axis=0)
        checksum += tl.sum(values.to(tl.int64, bitcast=True), axis=0)  # wraps: a sum modulo 2**64
        start += BLOCK
    return sums, tl.where(nan_seen > 0, float("nan"), maxima), checksum


@triton.jit
def _scan_counts(counts_ptr, size, chunks, BLOCK: tl.constexpr):
    """Over ``size`` entries, each the sum of ``chunks`` slots ``size`` apart: how many are
    non-zero, the largest, and the first SAMPLE_IDS indices of non-zero ones in ascending order
    (as torch.nonzero gives them; NO_INDEX where there are fewer)."""
    offsets = tl.arange(0, BLOCK)
    slot_ids = tl.arange(0, SAMPLE_IDS)
    sample = tl.full([SAMPLE_IDS], NO_INDEX, tl.int32)
    found = tl.full([], 0, tl.int32)
    largest = tl.full([], 0, tl.int32)
    start = 0
    while start < size:  # not range(): see _LOOPS
        index = start + offsets
        in_range = index < size
        counts = tl.full([BLOCK], 0, tl.int32)
        chunk = 0
        while chunk < chunks:
            counts += tl.load(counts_ptr + chunk.to(tl.int64) * size + index, mask=in_range, other=0)
            chunk += 1
        flagged = in_range & (counts > 0)
        if found < SAMPLE_IDS:
            # the smallest flagged indices of this block, one at a time, into the free slots
            previous = tl.full([], -1, tl.int32)
            for k in tl.static_range(SAMPLE_IDS):
                following = tl.min(tl.where(flagged & (index > previous), index, NO_INDEX), axis=0)
                sample = tl.where((slot_ids == found + k) & (following < NO_INDEX), following, sample)
                previous = following
        found += tl.sum(flagged.to(tl.int32), axis=0)
        largest = tl.maximum(largest, tl.max(counts, axis=0))
        start += BLOCK
    return found, largest, sample


@triton.jit(
    do_not_specialize=["programs", "M", "col_chunks", "tile_total"],
    do_not_specialize_on_alignment=["partial_ptr", "row_counts_ptr", "tile_counts_ptr", "facts_ptr", "result_ptr"],
)
def _finalize_kernel(
    partial_ptr,
    programs,
    row_counts_ptr,
    tile_counts_ptr,
    facts_ptr,
    result_ptr,
    M,
    col_chunks,
    tile_total,
    HAS_TILE: tl.constexpr,
    BLOCK: tl.constexpr,
    SCAN_BLOCK: tl.constexpr,
):
    """Program d: detector d's record (0: accuracy, 1 + j: copy j); program 0 also the
    scalars, two of them facts of the reference (ref_sq, outside) from ``facts_ptr``. Every
    slot of the result is written once."""
    detector = tl.program_id(0)
    copy = tl.maximum(detector - 1, 0)
    sums, maxima, checksums = _reduce_partials(
        partial_ptr + (copy // PASS_COPIES) * programs * P_WIDTH, programs, BLOCK
    )
    columns = tl.arange(0, P_WIDTH)
    count_col = tl.where(detector == 0, P_WRONG, P_COPIES + 2 * (copy % PASS_COPIES))
    worst_col = tl.where(detector == 0, P_MAX_REL, P_COPIES + 2 * (copy % PASS_COPIES) + 1)

    first = detector == 0  # pass 0's columns: the scalars
    tl.store(result_ptr + R_NONFINITE, tl.sum(tl.where(columns == P_NONFINITE, sums, 0.0), axis=0), mask=first)
    tl.store(result_ptr + R_MAX_ABS, tl.sum(tl.where(columns == P_MAX_ABS, maxima, 0.0), axis=0), mask=first)
    tl.store(result_ptr + R_ERR_SQ, tl.sum(tl.where(columns == P_ERR_SQ, sums, 0.0), axis=0), mask=first)
    tl.store(result_ptr + R_REF_SQ, tl.load(facts_ptr), mask=first)
    tl.store(result_ptr + R_OUTSIDE, tl.load(facts_ptr + 1), mask=first)
    checksum = tl.sum(tl.where(columns == P_CHECKSUM, checksums, 0), axis=0)
    tl.store(result_ptr + R_CHECKSUM, checksum.to(tl.float64, bitcast=True), mask=first)

    record = result_ptr + R_RECORDS + detector * D_WIDTH
    elements = tl.sum(tl.where(columns == count_col, sums, 0.0), axis=0)
    rows = tl.full([], 0, tl.int32)
    row_sample = tl.full([SAMPLE_IDS], NO_INDEX, tl.int32)
    tiles = tl.full([], 0, tl.int32)
    worst_tile = tl.full([], 0, tl.int32)
    tile_sample = tl.full([SAMPLE_IDS], NO_INDEX, tl.int32)
    if elements > 0:
        rows, _, row_sample = _scan_counts(
            row_counts_ptr + detector.to(tl.int64) * col_chunks * M, M, col_chunks, SCAN_BLOCK
        )
        if HAS_TILE:
            tiles, worst_tile, tile_sample = _scan_counts(
                tile_counts_ptr + detector.to(tl.int64) * tile_total, tile_total, 1, SCAN_BLOCK
            )
    tl.store(record + D_ELEMENTS, elements)
    tl.store(record + D_WORST, tl.sum(tl.where(columns == worst_col, maxima, 0.0), axis=0))
    tl.store(record + D_ROWS, rows.to(tl.float64))
    tl.store(record + D_TILES, tiles.to(tl.float64))
    tl.store(record + D_WORST_TILE, worst_tile.to(tl.float64))
    ids = tl.arange(0, SAMPLE_IDS)
    tl.store(record + D_ROW_IDS + ids, tl.where(row_sample < NO_INDEX, row_sample, -1).to(tl.float64))
    tl.store(record + D_TILE_IDS + ids, tl.where(tile_sample < NO_INDEX, tile_sample, -1).to(tl.float64))
