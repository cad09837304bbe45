"""Filling a launch's record: what it raised, the output it produced (or why there is none), its
accuracy, what it touched that it may not, and its consistency with the other launches. Each
function writes one part of a :class:`~pytest_gemmcheck.records.result.LaunchRecord` from what
the launch loop measured."""

from __future__ import annotations

import torch

from ..checking.rule import AccuracyStats
from ..errors import LaunchHung
from ..records.printable import dtype_name
from ..records.result import (
    BAD_OUTPUT,
    CHANGED_INPUT,
    HUNG,
    INCONSISTENT,
    NONFINITE,
    RAISED,
    UNWRITTEN,
    WRONG,
    WROTE_OUTSIDE,
    CaseResult,
    LaunchRecord,
)
from .guards import layout


def raised(record: LaunchRecord, exc: BaseException, elapsed_s: float) -> None:
    """A launch that raised, or (LaunchHung) did not finish in time."""
    record.add_kind(HUNG if isinstance(exc, LaunchHung) else RAISED)
    record.error = str(exc) if isinstance(exc, LaunchHung) else f"{type(exc).__name__}: {exc}".strip()
    record.elapsed_s = elapsed_s


def output_to_check(
    record: LaunchRecord,
    out: torch.Tensor,
    identity,
    returned,
    *,
    expected: tuple[int, int],
    dtype: torch.dtype,
    device: torch.device,
    poisoned,
) -> torch.Tensor | None:
    """The tensor this launch produced, or None (recorded as bad output) when there is none.
    ``poisoned(tensor)``: whether a tensor the kernel returned was poisoned before this launch."""
    if layout(out) != identity:
        record.add_kind(BAD_OUTPUT)
        record.error = (
            f"the kernel replaced or reshaped `out` (now shape {list(out.shape)}, "
            f"dtype {dtype_name(out.dtype)}, stride {out.stride()}); it must write into it in place"
        )
        return None
    if not isinstance(returned, torch.Tensor) and hasattr(returned, "__array__") and hasattr(returned, "shape"):
        # an array of another library (numpy, cupy): its values are not what the case checks
        record.add_kind(BAD_OUTPUT)
        record.error = (
            f"returned a {type(returned).__module__}.{type(returned).__name__} of shape "
            f"{list(returned.shape)}; a kernel writes into `out` or returns a torch tensor"
        )
        return None
    if isinstance(returned, torch.Tensor) and returned.data_ptr() != out.data_ptr():
        if tuple(returned.shape) != expected or returned.dtype != dtype or returned.device != device:
            record.add_kind(BAD_OUTPUT)
            record.error = (
                f"returned a tensor of shape {list(returned.shape)}, dtype "
                f"{dtype_name(returned.dtype)} on {returned.device}; expected "
                f"{list(expected)}, {dtype_name(dtype)} on {device}"
            )
            return None
        # its own allocation: checked as returned, poisoned only if it returned it before
        record.poisoned = poisoned(returned)
        return returned
    return out


def fill_accuracy(record: LaunchRecord, accuracy: AccuracyStats, checked: torch.Tensor) -> None:
    """``accuracy`` onto ``record``, in lists of the record's own: the numbers of an output
    checked once go onto every launch with its bits."""
    wrong = accuracy.wrong
    record.wrong = wrong.elements
    record.nonfinite = accuracy.nonfinite
    record.max_abs_err = accuracy.max_abs_err
    record.max_rel_err = accuracy.max_rel_err
    record.rel_l2 = accuracy.rel_l2
    record.wrong_rows = wrong.rows
    record.wrong_tiles = wrong.tiles
    record.worst_tile_wrong = wrong.worst_tile_elements
    record.wrong_row_ids = list(wrong.row_ids)
    record.wrong_tile_ids = [list(t) for t in wrong.tile_ids]
    if accuracy.nonfinite == checked.numel() and record.poisoned:
        record.add_kind(UNWRITTEN)
    elif accuracy.nonfinite:
        record.add_kind(NONFINITE)
    if wrong.elements > accuracy.nonfinite:
        record.add_kind(WRONG)


def wrote_outside(record: LaunchRecord, before: int, after: int) -> None:
    """Elements changed in the guard regions before and after ``out``."""
    record.add_kind(WROTE_OUTSIDE)
    places = [
        f"{count:,} elements {where} the {side} of out"
        for count, where, side in ((before, "before", "start"), (after, "past", "end"))
        if count
    ]
    record.wrote_outside = "wrote " + " and ".join(places)


def wrote_into_other_buffer(record: LaunchRecord, spoiled: int, until: str) -> None:
    """``record``'s launch wrote into the other output buffer, which held launch ``spoiled``'s output."""
    record.add_kind(WROTE_OUTSIDE)
    record.wrote_outside = f"wrote into the other output buffer, which held launch {spoiled}'s output {until}"


def changed_input(record: LaunchRecord, name: str, rows: int) -> None:
    record.add_kind(CHANGED_INPUT)
    record.changed_inputs[name] = rows


def fill_consistency(result: CaseResult, agreements: dict, size: int, note: str) -> None:
    """The consensus's verdict on each launch (consensus.Consensus.finish) onto the records."""
    result.consensus_size = size
    result.consensus_note = note
    for record in result.launches:
        agreement = agreements.get(record.index)
        if agreement is None or agreement.in_consensus:
            continue
        record.add_kind(INCONSISTENT)
        if agreement.differing is None:
            record.differing = None
            continue
        diff = agreement.differing.differing
        record.differing = diff.elements
        record.differing_rows = diff.rows
        record.differing_tiles = diff.tiles
        record.differing_row_ids = diff.row_ids
        record.max_diff_rel = agreement.differing.max_diff_rel
