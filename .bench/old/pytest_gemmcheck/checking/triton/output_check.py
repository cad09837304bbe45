"""One output's check on the GPU (:class:`OutputCheck`): its scratch memory, the launches of
the kernels of :mod:`.kernels` over it in order, the copy of the result vector to pinned host
memory, and the reading of that vector back into the check's numbers.
"""

from __future__ import annotations

import array

import torch

from ..rule import SAMPLE, AccuracyStats, DiffStats, Locations, Tolerance
from .facts import reference_facts
from .kernels import (
    COPIES_PER_PASS,
    D_ELEMENTS,
    D_ROW_IDS,
    D_ROWS,
    D_TILE_IDS,
    D_TILES,
    D_WIDTH,
    D_WORST,
    D_WORST_TILE,
    INTERPRETED,
    P_WIDTH,
    R_CHECKSUM,
    R_ERR_SQ,
    R_MAX_ABS,
    R_NONFINITE,
    R_RECORDS,
    R_REF_SQ,
    _check_kernel,
    _finalize_kernel,
    _tile_kernel,
)
from .launch import diagnose, launch
from .plan import LaunchConfig, main_plan, tile_plan
from .runtime import RUNTIME
from .target import PROGRAM_WARPS


class OutputCheck:
    """The kernels' launches for one output's check, over scratch whose size does not depend on N:
    per-row counts per detector and column chunk, per-tile counts, one row of partial results
    per program and pass, and the result vector."""

    def __init__(
        self,
        out,
        ref,
        rowmax,
        tol: Tolerance,
        tile,
        copies,
        config: LaunchConfig,
        *,
        checksum: bool = False,
        accuracy: bool = True,
    ):
        self.out, self.ref, self.rowmax, self.tol, self.tile, self.copies = out, ref, rowmax, tol, tile, copies
        self.config, self.checksum, self.accuracy_on = config, checksum, accuracy
        m, n = out.shape
        device = out.device
        self.plan = main_plan(m, n, out.element_size(), config, device)
        self.tile_plan = tile_plan(m, n, tile, config, device) if tile is not None else None
        self.tile_m, self.tile_n = tile if tile is not None else (1, 1)
        self.tile_cols = -(-n // self.tile_n)
        self.tile_total = -(-m // self.tile_m) * self.tile_cols if tile is not None else 0
        self.detectors = 1 + len(copies)
        self.passes = max(1, -(-len(copies) // COPIES_PER_PASS))
        self.row_slots = self.plan.col_chunks * m  # per detector
        counts = self.detectors * (self.row_slots + self.tile_total)
        self.counts = RUNTIME.allocate(counts, torch.int32, device)
        self.row_counts = self.counts[: self.detectors * self.row_slots]
        # without a tile nothing reads or writes tile counts; any valid pointer will do
        self.tile_counts = self.counts[self.detectors * self.row_slots :] if tile is not None else self.row_counts
        partial_numel = self.passes * self.plan.programs * P_WIDTH.value
        floats = RUNTIME.allocate(
            partial_numel + R_RECORDS.value + self.detectors * D_WIDTH.value, torch.float64, device
        )
        self.partial = floats[:partial_numel]
        self.result = floats[partial_numel:]
        # without accuracy nothing reads the reference's facts; any float64 pair will do
        self.facts = reference_facts(ref, rowmax, tol.floor) if accuracy else floats[:2]
        self._copied = None  # (pinned host copy of the result, event after the copy) once queued

    def enqueue(self, row_scale: bool) -> None:
        """Every kernel of one check, then the copy of its result to the host, on the current
        stream; nothing waits for them."""
        self.launch_kernels(row_scale)
        self.queue_copy()

    def launch_kernels(self, row_scale: bool) -> None:
        out, ref, plan, m, n = self.out, self.ref, self.plan, self.out.shape[0], self.out.shape[1]
        bits = 8 * out.element_size()
        tol = (float(self.tol.rtol), float(self.tol.floor))
        for index in range(self.passes):
            group = self.copies[index * COPIES_PER_PASS : (index + 1) * COPIES_PER_PASS]
            slots = group + [out] * (COPIES_PER_PASS - len(group))  # unused pointers: never read
            strides = [s for t in slots for s in t.stride()]
            accuracy = index == 0 and self.accuracy_on
            # pass i's copy j is detector 1 + 4i + j; detector 0 (accuracy) is pass 0's only
            first_copy = 1 + index * COPIES_PER_PASS
            copy_rows = self.row_counts[first_copy * self.row_slots :] if group else self.row_counts
            first_tile_detector = 0 if index == 0 else first_copy
            zero_count = ((first_copy + len(group)) - first_tile_detector) * self.tile_total
            launch(
                _check_kernel,
                plan.programs,
                (
                    out,
                    ref,
                    self.rowmax,
                    *slots,
                    self.partial[index * plan.programs * P_WIDTH.value :],
                    self.row_counts,
                    copy_rows,
                    self.tile_counts[first_tile_detector * self.tile_total :] if zero_count else self.row_counts,
                    m,
                    n,
                    *out.stride(),
                    *ref.stride(),
                    *strides,
                    *tol,
                    plan.num_tasks,
                    plan.col_chunks,
                    plan.task_blocks,
                    zero_count,
                ),
                dict(
                    ACCURACY=accuracy,
                    ROW_SCALE=row_scale and accuracy,
                    NUM_COPIES=len(group),
                    CHECKSUM=self.checksum and index == 0,
                    BITS=bits,
                    BLOCK_M=plan.block_m,
                    BLOCK_N=plan.block_n,
                    VEC=plan.vec,
                    EVEN=plan.even,
                ),
                plan.num_warps,
                interpreted=INTERPRETED,
            )
            diagnose("_check_kernel", interpreted=INTERPRETED)
            if self.tile_plan is not None and (accuracy or group):
                tiles = self.tile_plan
                launch(
                    _tile_kernel,
                    tiles.programs,
                    (
                        out,
                        ref,
                        self.rowmax,
                        *slots,
                        self.row_counts,
                        copy_rows,
                        self.tile_counts,
                        self.tile_counts[first_copy * self.tile_total :] if group else self.tile_counts,
                        m,
                        n,
                        *out.stride(),
                        *ref.stride(),
                        *strides,
                        *tol,
                        tiles.row_blocks,
                        plan.col_chunks,
                        self.tile_m,
                        self.tile_n,
                        self.tile_cols,
                        self.tile_total,
                        int(accuracy),
                        int(row_scale and accuracy),
                        len(group),
                        int(tiles.row_atomics),
                    ),
                    dict(BITS=bits, BLOCK_M=tiles.block_m, BLOCK_N=tiles.block_n),
                    PROGRAM_WARPS,
                    interpreted=INTERPRETED,
                )
                diagnose("_tile_kernel", interpreted=INTERPRETED)
        launch(
            _finalize_kernel,
            self.detectors,
            (
                self.partial,
                plan.programs,
                self.row_counts,
                self.tile_counts,
                self.facts,
                self.result,
                m,
                plan.col_chunks,
                self.tile_total,
            ),
            dict(
                HAS_TILE=self.tile is not None,
                BLOCK=self.config.finalize_block,
                SCAN_BLOCK=8 * self.config.finalize_block,
            ),
            PROGRAM_WARPS,
            interpreted=INTERPRETED,
        )
        diagnose("_finalize_kernel", interpreted=INTERPRETED)

    def take_copy(self):
        """The copy of the result to the host queued last (None without a GPU), handed over to
        the check that reads it."""
        copied, self._copied = self._copied, None
        return copied

    def read(self, copied) -> list[float]:
        """A check's result vector: the synchronisation. On a GPU the vector was copied to
        pinned host memory behind the kernels (``copied``: the buffer and an event after the
        copy), and the wait is for that copy alone, not for whatever the stream was given since
        (the next launch's poison)."""
        if copied is None:
            return _decode(self.result.view(torch.int64).tolist())
        return _decode(RUNTIME.read_host(copied))

    def queue_copy(self) -> None:
        if self.result.device.type == "cuda":
            self._copied = RUNTIME.copy_to_host(self.result)

    def accuracy(self, values: list[float]) -> AccuracyStats:
        return AccuracyStats(
            wrong=_locations(values, 0, self.tile, self.tile_cols),
            nonfinite=int(values[R_NONFINITE.value]),
            max_abs_err=values[R_MAX_ABS.value],
            max_rel_err=_record(values, 0)[D_WORST.value],
            rel_l2=_rel_l2(values[R_ERR_SQ.value], values[R_REF_SQ.value]),
        )

    def diffs(self, values: list[float]) -> list[DiffStats]:
        return [
            DiffStats(_locations(values, 1 + j, self.tile, self.tile_cols), _record(values, 1 + j)[D_WORST.value])
            for j in range(len(self.copies))
        ]


def _decode(bits: list[int]) -> list:
    """The result vector from its int64 view: floats, except the checksum, kept as its int64."""
    floats = array.array("d", array.array("q", bits).tobytes()).tolist()
    floats[R_CHECKSUM.value] = bits[R_CHECKSUM.value]
    return floats


def _rel_l2(err_sq: float, ref_sq: float) -> float:
    return (err_sq / ref_sq) ** 0.5 if ref_sq > 0 else (0.0 if err_sq == 0 else float("inf"))


def _record(values: list[float], detector: int) -> list[float]:
    start = R_RECORDS.value + detector * D_WIDTH.value
    return values[start : start + D_WIDTH.value]


def _locations(values: list[float], detector: int, tile, tile_cols: int) -> Locations:
    """torch_backend._LocationAccumulator.result from one detector's record."""
    record = _record(values, detector)
    loc = Locations(elements=int(record[D_ELEMENTS.value]))
    if loc.elements == 0:
        loc.tiles = 0 if tile is not None else None
        return loc
    loc.rows = int(record[D_ROWS.value])
    first_rows = D_ROW_IDS.value
    loc.row_ids = [int(r) for r in record[first_rows : first_rows + min(loc.rows, SAMPLE)]]
    if tile is not None:
        loc.tiles = int(record[D_TILES.value])
        first_tiles = D_TILE_IDS.value
        loc.tile_ids = [divmod(int(t), tile_cols) for t in record[first_tiles : first_tiles + min(loc.tiles, SAMPLE)]]
        loc.worst_tile_elements = int(record[D_WORST_TILE.value])
    return loc
