"""The values of the register model: a 32-bit value per lane with what is known of it, exact or
affine in a folded loop's iteration count (:mod:`.affine`), and how two paths' values join.

Values are tracked per lane where they are known exactly (thread ids, constants, LDS bases and
everything computed from them) and marked unknown otherwise (kernel arguments, loaded data,
floating point).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import affine
from .operands import MASK32

U32 = np.int64  # values are kept as non-negative int64 below 2**32
MASK64 = 0xFFFFFFFFFFFFFFFF


def as_u32(a) -> np.ndarray:
    return np.asarray(a, dtype=U32) & MASK32


class Lanes:
    """A 32-bit value per lane with a known-mask. Scalars are one-lane Lanes.

    A lane that is not known may still be *affine*: ``values + step * J`` (mod 2**32) for one
    unknown natural ``J`` named by ``symbol``, the iteration count of a folded loop (see
    :mod:`.affine`). ``fuzz`` low bits of an affine lane are not known (a quotient by a magic
    multiplication whose final shift is still to come).
    """

    __slots__ = ("values", "known", "step", "affine", "symbol", "fuzz")

    def __init__(
        self,
        values: np.ndarray,
        known: np.ndarray,
        step: np.ndarray | None = None,
        affine: np.ndarray | None = None,
        symbol: int = 0,
        fuzz: int = 0,
    ):
        self.values = values
        self.known = known
        self.step = step  # None: no lane is affine
        self.affine = affine
        self.symbol = symbol
        self.fuzz = fuzz

    @staticmethod
    def constant(value: int, width: int) -> "Lanes":
        return Lanes(np.full(width, value & MASK32, dtype=U32), np.ones(width, dtype=bool))

    @staticmethod
    def unknown(width: int) -> "Lanes":
        return Lanes(np.zeros(width, dtype=U32), np.zeros(width, dtype=bool))

    def broadcast(self, width: int) -> "Lanes":
        if len(self.values) == width:
            return self
        if self.step is None:
            return Lanes(np.full(width, self.values[0], dtype=U32), np.full(width, bool(self.known[0])))
        return Lanes(
            np.full(width, self.values[0], dtype=U32),
            np.full(width, bool(self.known[0])),
            np.full(width, self.step[0], dtype=np.int64),
            np.full(width, bool(self.affine[0])),
            self.symbol,
            self.fuzz,
        )

    @property
    def all_known(self) -> bool:
        return bool(self.known.all())

    @property
    def has_affine(self) -> bool:
        return self.step is not None and bool(self.affine.any())

    def scalar(self) -> int | None:
        return int(self.values[0]) if self.known[0] else None

    def lane(self, index: int) -> "Lanes":
        """Lane ``index`` as a one-lane value (a scalar read of it)."""
        one = slice(index, index + 1)
        if self.step is None:
            return Lanes(self.values[one].copy(), self.known[one].copy())
        return Lanes(
            self.values[one].copy(),
            self.known[one].copy(),
            self.step[one].copy(),
            self.affine[one].copy(),
            self.symbol,
            self.fuzz,
        )

    def key(self) -> tuple:
        """A hashable form: equal keys, equal values (unknown lanes compare equal)."""
        values = np.where(self.known, self.values, 0)
        if not self.has_affine:
            return (values.tobytes(), self.known.tobytes())
        return (
            values.tobytes(),
            self.known.tobytes(),
            np.where(self.affine, self.step, 0).tobytes(),
            self.affine.tobytes(),
            self.symbol,
            self.fuzz,
        )


@dataclass(frozen=True)
class Affine:
    """A scalar register's value ``base + step * J`` (mod 2**32) for the folded loop ``symbol``."""

    base: int
    step: int
    symbol: int
    fuzz: int = 0

    def lanes(self) -> Lanes:
        return Lanes(
            np.array([self.base], dtype=U32),
            np.zeros(1, dtype=bool),
            np.array([self.step], dtype=np.int64),
            np.ones(1, dtype=bool),
            self.symbol,
            self.fuzz,
        )


def select_lanes(mask: np.ndarray, new: Lanes, old: Lanes) -> Lanes:
    """``new`` on the lanes of ``mask``, ``old`` elsewhere (affine lanes kept where they are)."""
    values = np.where(mask, as_u32(new.values), old.values)
    known = np.where(mask, new.known, old.known)
    if new.step is None and old.step is None:
        return Lanes(values, known)
    width = len(values)
    zeros, none = np.zeros(width, dtype=np.int64), np.zeros(width, dtype=bool)
    new_step, new_aff = (new.step, new.affine) if new.step is not None else (zeros, none)
    old_step, old_aff = (old.step, old.affine) if old.step is not None else (zeros, none)
    affine = np.where(mask, new_aff, old_aff)
    symbols = {lanes.symbol for lanes, aff in ((new, new_aff & mask), (old, old_aff & ~mask)) if aff.any()}
    if len(symbols) > 1 or (
        affine.any() and new.fuzz != old.fuzz and (new_aff & mask).any() and (old_aff & ~mask).any()
    ):
        affine = np.zeros(width, dtype=bool)  # two loops' symbols, or two fuzz widths: not one affine value
    fuzz = new.fuzz if (new_aff & mask).any() else old.fuzz
    return Lanes(values, known, np.where(mask, new_step, old_step), affine, symbols.pop() if symbols else 0, fuzz)


def join_lanes(a: Lanes, b: Lanes) -> Lanes:
    """What two paths' values have in common: lanes equal on both stay, the others are unknown."""
    same_known = a.known & b.known & (a.values == b.values)
    if not (a.has_affine and b.has_affine and a.symbol == b.symbol and a.fuzz == b.fuzz):
        return Lanes(np.where(same_known, a.values, 0), same_known)
    same_affine = a.affine & b.affine & (a.values == b.values) & (a.step == b.step)
    return Lanes(
        np.where(same_known | same_affine, a.values, 0),
        same_known,
        np.where(same_affine, a.step, 0),
        same_affine,
        a.symbol,
        a.fuzz,
    )


def with_affine(name: str, sources: list[Lanes], exact: Lanes) -> Lanes:
    """``exact`` with the lanes an affine rule resolves added (see :mod:`.affine`)."""
    symbols = {s.symbol for s in sources if s.has_affine}
    if len(symbols) != 1:
        return exact
    parts = []
    for s in sources:
        step = s.step if s.step is not None else np.zeros(len(s.values), dtype=np.int64)
        affine_lanes = s.affine if s.affine is not None else np.zeros(len(s.values), dtype=bool)
        parts.append((s.values.astype(np.int64), np.where(s.known, 0, step), s.known | affine_lanes, s.fuzz))
    result = affine.apply(name, parts)
    if result is None:
        return exact
    base, step, valid, fuzz = result
    step = np.asarray(step, dtype=np.int64)
    exact_now = valid & (step == 0) & (fuzz == 0)
    known = exact.known | exact_now
    values = np.where(exact.known, exact.values, as_u32(base))
    stepped = valid & ~known
    if not stepped.any():
        return Lanes(values, known)
    return Lanes(values, known, np.where(stepped, step, 0), stepped, symbols.pop(), fuzz)


def shifted_value(value: Lanes, shift: int) -> int | Affine:
    base = (int(value.values[0]) + shift) & MASK32
    return base if value.known[0] else Affine(base, int(value.step[0]), value.symbol, value.fuzz)


def value_class(value: int | Affine) -> tuple:
    """Values of one class compare by their bases: exact ints, or one folded loop's with one step."""
    return ("exact",) if isinstance(value, int) else ("affine", value.symbol, value.step, value.fuzz)


def bound_base(value: int | Affine) -> int:
    return value if isinstance(value, int) else value.base


def contradicts(bounds: dict, value: int | Affine | None) -> bool:
    """Whether a register's bounds rule out ``value``, or each other."""
    by_class: dict[tuple, dict[str, int]] = {}
    for (kind, cls), bound in bounds.items():
        by_class.setdefault(cls, {})[kind] = bound_base(bound)
    for cls, sides in by_class.items():
        if "lt" in sides and "ge" in sides and sides["ge"] >= sides["lt"]:
            return True
        if value is not None and value_class(value) == cls:
            if ("lt" in sides and bound_base(value) >= sides["lt"]) or (
                "ge" in sides and bound_base(value) < sides["ge"]
            ):
                return True
    return False


def same_step_bases(a: Lanes, b: Lanes) -> tuple[int | None, int | None]:
    """Two scalars ``x + s*J`` and ``y + s*J`` of one folded loop compare as ``x`` and ``y`` for
    every J (unsigned, no wraparound: the assumption of :mod:`.affine`)."""
    if not (
        a.has_affine
        and b.has_affine
        and a.symbol == b.symbol
        and a.fuzz == b.fuzz == 0
        and int(a.step[0]) == int(b.step[0])
    ):
        return None, None
    return int(a.values[0]), int(b.values[0])


def rearranged(lanes: Lanes, order: np.ndarray) -> Lanes:
    """``lanes`` with lane i holding lane ``order[i]``'s value (affine parts included)."""
    if lanes.step is None:
        return Lanes(lanes.values[order], lanes.known[order])
    return Lanes(
        lanes.values[order], lanes.known[order], lanes.step[order], lanes.affine[order], lanes.symbol, lanes.fuzz
    )
