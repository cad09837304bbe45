"""The accuracy rule and the numbers a check gives.

An element is wrong when it is not finite, or when

    |out - ref| > rtol * max(|ref|, floor * rowmax)

where ``rowmax`` is the largest |ref| in the element's row. Plain ``|ref|`` is not a usable
scale: outputs near zero come from cancellation, and a correct fp8 kernel that accumulates
in another order (or in reduced precision, as Hopper's fp8 tensor cores do) is off on them by
far more than 5% of themselves. What a correct kernel never exceeds is about one bf16 ulp of
the row's largest value (0.4%-0.8% of rowmax, measured on correct bf16 and fp8 kernels up to
K=16384; see docs/checking.md). With the default ``floor=1`` the rule is "off by more than
5% of the row's largest |ref|", a 6x margin over that. ``max_rel_err`` is reported on the
same scale, so an element is wrong exactly when its relative error exceeds ``rtol``.

Consistency compares outputs bit for bit (see consensus.py); its differences are counted and
located the same way. Both backends (torch_backend.py, triton/) compute these records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config.table import DEFAULTS

# How many row indices / tile coordinates a result keeps for its message.
SAMPLE = 8


@dataclass(frozen=True)
class Tolerance:
    rtol: float = DEFAULTS.rtol
    floor: float = DEFAULTS.floor  # fraction of the row's largest |ref| below which |ref| is not trusted


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

    def copy(self) -> AccuracyStats:
        """The same numbers in lists of their own (a later launch with the same bits gets them)."""
        w = self.wrong
        return AccuracyStats(
            Locations(w.elements, w.rows, w.tiles, list(w.row_ids), list(w.tile_ids), w.worst_tile_elements),
            self.nonfinite,
            self.max_abs_err,
            self.max_rel_err,
            self.rel_l2,
        )


@dataclass
class DiffStats:
    """Bitwise differences between an output and one stored output."""

    differing: Locations
    max_diff_rel: float  # largest |difference| as a fraction of the row's largest |ref|
