"""The space a search walks: its axes, checked before anything runs, the order in which each
axis's values are preferred, and what "smallest" means for a failing configuration.

Plain Python (no torch, no Hypothesis): a configuration is a small hashable record, and the
quant modes' sizes come in as a function.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..errors import CaseError

NUMERIC = ("m", "n", "k")
# The first K-block counts: kernels pipeline 2 to 4 K blocks, and a K of fewer blocks than
# stages (or exactly as many) runs the prologue and epilogue without a steady state in between.
PIPELINE_BLOCKS = (1, 2, 3, 4, 5)


def _whole(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class Axis:
    """m, n or k: its values, ascending. A range (``(lo, hi, step)``: the multiples of ``step``
    from ``lo`` to ``hi``) is never listed: an axis of 10^8 values costs what one of ten does,
    each value found from its index. A list is the values given."""

    name: str
    values: range | tuple[int, ...]

    @property
    def lo(self) -> int:
        return self.values[0]

    @property
    def hi(self) -> int:
        return self.values[-1]

    @property
    def step(self) -> int | None:
        """The step of a range; None for a list of values."""
        return self.values.step if isinstance(self.values, range) else None

    @property
    def fixed(self) -> bool:
        return len(self.values) == 1

    def holds(self, value) -> bool:
        """Whether ``value`` is one of the axis's values (a whole number, never 128.0 or True)."""
        return _whole(value) and value in self.values

    def index(self, value: int) -> int:
        return self.values.index(value)

    def spec(self) -> list[int] | dict[str, list[int]]:
        if isinstance(self.values, range):
            return [self.lo, self.hi, self.step]
        return {"values": list(self.values)}


def parse_axis(name: str, value) -> Axis:
    """``(lo, hi, step)``, a list of values, or one whole number for an axis that does not vary."""
    if _whole(value):
        value = (value, value, value)
    if isinstance(value, list):
        return Axis(name, _listed(name, value))
    if not isinstance(value, tuple) or len(value) != 3 or not all(_whole(v) for v in value):
        raise CaseError(
            f"{name}={value!r}: expected (lo, hi, step) of whole numbers, a list of the values to try, "
            f"or one whole number for a fixed {name}"
        )
    lo, hi, step = (int(v) for v in value)
    if lo < 1 or step < 1:
        raise CaseError(f"{name}={tuple(value)!r}: lo and step must be >= 1")
    if lo > hi:
        raise CaseError(f"{name}={tuple(value)!r}: lo {lo} is above hi {hi}")
    if lo % step or hi % step:
        raise CaseError(
            f"{name}={tuple(value)!r}: lo and hi must be multiples of the step {step} (every {name} "
            "the search tries is one)"
        )
    return Axis(name, range(lo, hi + 1, step))


def _listed(name: str, values: list) -> range | tuple[int, ...]:
    """A list of values: whole numbers >= 1, none twice, tried in ascending order."""
    if not values:
        raise CaseError(f"{name}=[]: expected a non-empty list of the values to try")
    for value in values:
        if not _whole(value) or value < 1:
            raise CaseError(f"{name}: {value!r} is not a whole number >= 1")
    if len(set(values)) != len(values):
        raise CaseError(f"{name} lists {next(v for v in values if values.count(v) > 1)!r} twice")
    if len(values) == 1:
        return range(int(values[0]), int(values[0]) + 1, int(values[0]))  # one value: a fixed axis
    return tuple(sorted(int(v) for v in values))


class Residues(Sequence):
    """The values ``q * period + r`` (``r`` one of ``residues``) from ``lo`` to ``hi``, ascending,
    found from their index: the tile edges of an axis and a step either side of each, without
    listing them (an axis of 10^8 values has millions)."""

    def __init__(self, period: int, residues: Iterable[int], lo: int, hi: int):
        self.period, self.residues = period, tuple(sorted(set(residues)))
        self.first, self.lo, self.hi = self._count_below(lo), lo, hi
        self.length = max(0, self._count_below(hi + 1) - self.first)

    def _count_below(self, value: int) -> int:
        """How many values of the whole sequence, from 0 up, are below ``value``."""
        quotient, remainder = divmod(value, self.period)
        return quotient * len(self.residues) + sum(1 for r in self.residues if r < remainder)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self.length)))
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError(index)
        quotient, position = divmod(self.first + index, len(self.residues))
        return quotient * self.period + self.residues[position]

    def __contains__(self, value) -> bool:
        return _whole(value) and self.lo <= value <= self.hi and value % self.period in self.residues


def parse_choices(name: str, values) -> tuple:
    """A non-empty list of distinct JSON values (a param's, or quant's names)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise CaseError(f"{name}={values!r}: expected a non-empty list of values to try")
    if not values:
        raise CaseError(f"{name}=[]: expected a non-empty list of values to try")
    seen = []
    for value in values:
        try:
            text = json.dumps(value, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise CaseError(f"{name}: {value!r} is not a JSON value ({exc}); values are part of the case key") from None
        if text in seen:
            raise CaseError(f"{name} lists {value!r} twice")
        seen.append(text)
    return tuple(values)


def parse_quants(quant) -> tuple[str, ...]:
    quants = parse_choices("quant", [quant] if isinstance(quant, str) else quant)
    for name in quants:
        if not isinstance(name, str):
            raise CaseError(f"quant: {name!r} is not a quant mode's name")
    return quants


def parse_params(params) -> tuple[tuple[str, tuple], ...]:
    """``{name: [values]}`` as ((name, values), ...), in the order given."""
    if params is None:
        return ()
    if not isinstance(params, dict):
        raise CaseError(f"params={params!r}: expected a dict of {{name: [values to try]}}")
    parsed = []
    for name, values in params.items():
        if not isinstance(name, str) or not name:
            raise CaseError(f"params: {name!r} is not a parameter name (a non-empty string)")
        parsed.append((name, parse_choices(f"params[{name!r}]", values)))
    return tuple(parsed)


@dataclass(frozen=True)
class Config:
    """One configuration: m, n, k, and the index of its quant and of each param's value."""

    m: int
    n: int
    k: int
    quant: int
    params: tuple[int, ...]


@dataclass(frozen=True)
class Space:
    m: Axis
    n: Axis
    k: Axis
    quants: tuple[str, ...]
    params: tuple[tuple[str, tuple], ...]
    tile: tuple[int, int] | None = None

    def axis(self, name: str) -> Axis:
        return getattr(self, name)

    @property
    def size(self) -> int:
        total = len(self.m.values) * len(self.n.values) * len(self.k.values) * len(self.quants)
        for _, values in self.params:
            total *= len(values)
        return total

    # --- configurations -------------------------------------------------------------------
    def as_dict(self, config: Config) -> dict[str, Any]:
        """What ``gemmcheck.case`` takes: m, n, k, quant and params."""
        return {
            "m": config.m,
            "n": config.n,
            "k": config.k,
            "quant": self.quants[config.quant],
            "params": {name: values[index] for (name, values), index in zip(self.params, config.params)},
        }

    def from_dict(self, data: dict[str, Any]) -> Config:
        """The configuration ``as_dict`` gave; CaseError for one outside this space."""
        try:
            for name in NUMERIC:
                if not self.axis(name).holds(data[name]):
                    raise ValueError(f"{name}={data[name]!r} is not one of {name}'s values")
            quant = self.quants.index(data["quant"])
            given = data.get("params") or {}
            if set(given) != {name for name, _ in self.params}:
                raise ValueError(f"params {sorted(given)} are not {[name for name, _ in self.params]}")
            params = tuple(index_of(values, given[name]) for name, values in self.params)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CaseError(f"{data!r} is not a configuration of this search: {exc}") from None
        return Config(data["m"], data["n"], data["k"], quant, params)

    def replace(self, config: Config, name: str, value) -> Config:
        """``config`` with one axis changed: m, n or k to a value, quant or a param to an index."""
        if name in NUMERIC:
            return Config(**{**_fields(config), name: value})
        if name == "quant":
            return Config(config.m, config.n, config.k, value, config.params)
        position = [param for param, _ in self.params].index(name)
        params = config.params[:position] + (value,) + config.params[position + 1 :]
        return Config(config.m, config.n, config.k, config.quant, params)

    def differing_params(self, config: Config) -> int:
        """How many params are not at their first value."""
        return sum(1 for index in config.params if index)

    def size_key(self, config: Config, operand_bytes: Callable[[str], int]) -> tuple:
        """Smaller is smaller: least m·n·k, then fewest params away from their first value, then
        the least memory (operands in their quant mode's element size, and the output, the same
        for every configuration), then the order of the axes as given."""
        quant = self.quants[config.quant]
        memory = (config.m + config.n) * config.k * operand_bytes(quant)
        return (
            config.m * config.n * config.k,
            self.differing_params(config),
            memory,
            config.quant,
            config.m,
            config.n,
            config.k,
            config.params,
        )

    # --- the values each axis prefers ------------------------------------------------------
    def landmarks(self, name: str) -> Sequence[int]:
        """The values of m, n or k meaningful to a kernel, ascending: Hypothesis draws from them
        half the time and shrinks toward them. Along m and n, tile edges and one step either
        side (a full last tile, and last tiles one step over or short; powers of two without a
        tile); along k, the first few K blocks (the pipeline's depth and one past it) and powers
        of two. A list of values has none: each value was chosen."""
        axis = self.axis(name)
        step = axis.step
        if step is None:
            return ()
        top = axis.hi + step  # an edge one step past the last value still marks it
        powers = [1 << bit for bit in range(top.bit_length())]
        if name == "k":
            return tuple(
                sorted({v for v in (*(step * blocks for blocks in PIPELINE_BLOCKS), *powers) if v in axis.values})
            )
        if self.tile is None:
            return tuple(sorted({v for p in powers for v in (p - step, p, p + step) if v in axis.values}))
        # a value is a multiple of the tile's edge, or a step from one, exactly when it is one
        # of these residues modulo lcm(edge, step): every value is a multiple of the step
        edge = self.tile[0] if name == "m" else self.tile[1]
        period = math.lcm(edge, step)
        return Residues(period, (0, step % period, (period - step) % period), max(axis.lo, period - step), axis.hi)

    # --- identity -------------------------------------------------------------------------
    def spec(self) -> dict[str, Any]:
        """The space as plain data (JSON)."""
        return {
            "m": self.m.spec(),
            "n": self.n.spec(),
            "k": self.k.spec(),
            "quant": list(self.quants),
            "params": {name: list(values) for name, values in self.params},
            "tile": f"{self.tile[0]}x{self.tile[1]}" if self.tile else None,
        }

    def digest(self, kernel: str, extra: dict[str, Any]) -> bytes:
        """A stable key of this search's space (and the case options ``extra``): the example
        database's key, so that a stored example replays only into the search that found it."""
        text = json.dumps({"kernel": kernel, "space": self.spec(), "case": extra}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).digest()[:16]


def index_of(values: Iterable, value) -> int:
    """The index of ``value`` among ``values``, compared as JSON (so that 1 is not True)."""
    text = json.dumps(value, sort_keys=True)
    for index, candidate in enumerate(values):
        if json.dumps(candidate, sort_keys=True) == text:
            return index
    raise ValueError(f"{value!r} is not one of {list(values)!r}")


def _fields(config: Config) -> dict[str, Any]:
    return {"m": config.m, "n": config.n, "k": config.k, "quant": config.quant, "params": config.params}


def parse_space(*, m, n, k, quant, params, tile: tuple[int, int] | None) -> Space:
    """The axes checked, each bad one a CaseError naming it."""
    return Space(
        parse_axis("m", m), parse_axis("n", n), parse_axis("k", k), parse_quants(quant), parse_params(params), tile
    )
