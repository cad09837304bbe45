"""The space a search walks: its axes, checked before anything runs, the order in which each
axis's values are preferred, and what "smallest" means for a failing configuration.

Plain Python (no torch, no Hypothesis): a configuration is a small hashable record, and the
quant modes' sizes come in as a function.
"""

from __future__ import annotations

import hashlib
import json
import numbers
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
    """m, n or k: the multiples of ``step`` from ``lo`` to ``hi``."""

    name: str
    lo: int
    hi: int
    step: int

    @property
    def values(self) -> range:
        return range(self.lo, self.hi + 1, self.step)

    @property
    def fixed(self) -> bool:
        return self.lo == self.hi

    def index(self, value: int) -> int:
        return (value - self.lo) // self.step

    def spec(self) -> list[int]:
        return [self.lo, self.hi, self.step]


def parse_axis(name: str, value) -> Axis:
    """``(lo, hi, step)``, or one whole number for an axis that does not vary."""
    if _whole(value):
        value = (value, value, value)
    if not isinstance(value, (tuple, list)) or len(value) != 3 or not all(_whole(v) for v in value):
        raise CaseError(f"{name}={value!r}: expected (lo, hi, step) of whole numbers, or one whole number for a "
                        f"fixed {name}")
    lo, hi, step = (int(v) for v in value)
    if lo < 1 or step < 1:
        raise CaseError(f"{name}={tuple(value)!r}: lo and step must be >= 1")
    if lo > hi:
        raise CaseError(f"{name}={tuple(value)!r}: lo {lo} is above hi {hi}")
    if lo % step or hi % step:
        raise CaseError(f"{name}={tuple(value)!r}: lo and hi must be multiples of the step {step} (every {name} "
                        "the search tries is one)")
    return Axis(name, lo, hi, step)


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
        return {"m": config.m, "n": config.n, "k": config.k, "quant": self.quants[config.quant],
                "params": {name: values[index] for (name, values), index in zip(self.params, config.params)}}

    def from_dict(self, data: dict[str, Any]) -> Config:
        """The configuration ``as_dict`` gave; CaseError for one outside this space."""
        try:
            for name in NUMERIC:
                axis = self.axis(name)
                if data[name] not in axis.values:
                    raise ValueError(f"{name}={data[name]!r} is not one of {name}'s values")
            quant = self.quants.index(data["quant"])
            given = data.get("params") or {}
            if set(given) != {name for name, _ in self.params}:
                raise ValueError(f"params {sorted(given)} are not {[name for name, _ in self.params]}")
            params = tuple(_index_of(values, given[name]) for name, values in self.params)
        except (KeyError, ValueError) as exc:
            raise CaseError(f"{data!r} is not a configuration of this search: {exc}") from None
        return Config(data["m"], data["n"], data["k"], quant, params)

    def replace(self, config: Config, name: str, value) -> Config:
        """``config`` with one axis changed: m, n or k to a value, quant or a param to an index."""
        if name in NUMERIC:
            return Config(**{**_fields(config), name: value})
        if name == "quant":
            return Config(config.m, config.n, config.k, value, config.params)
        position = [param for param, _ in self.params].index(name)
        params = config.params[:position] + (value,) + config.params[position + 1:]
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
        return (config.m * config.n * config.k, self.differing_params(config), memory, config.quant,
                config.m, config.n, config.k, config.params)

    # --- the values each axis prefers ------------------------------------------------------
    def landmarks(self, name: str) -> tuple[int, ...]:
        """The values of m, n or k meaningful to a kernel, ascending: Hypothesis draws from them
        half the time and shrinks toward them. Along m and n, tile edges and one step either
        side (a full last tile, and last tiles one step over or short); along k, the first few K
        blocks (the pipeline's depth and one past it) and powers of two."""
        axis = self.axis(name)
        edges = self._edges(axis)
        if name == "k":
            return tuple(v for v in axis.values if v in edges)
        return tuple(v for v in axis.values if v in edges or v - axis.step in edges or v + axis.step in edges)

    def _edges(self, axis: Axis) -> set[int]:
        """Tile edges along m and n (multiples of the tile; powers of two without one); along k the
        first K blocks of ``step`` and powers of two."""
        top = axis.hi + axis.step  # an edge one step past the last value still marks it
        powers = {1 << bit for bit in range(top.bit_length())}
        if axis.name == "k":
            return {axis.step * blocks for blocks in PIPELINE_BLOCKS} | powers
        if self.tile is None:
            return powers
        edge = self.tile[0] if axis.name == "m" else self.tile[1]
        return set(range(edge, top + 1, edge))

    # --- identity -------------------------------------------------------------------------
    def spec(self) -> dict[str, Any]:
        """The space as plain data (JSON)."""
        return {"m": self.m.spec(), "n": self.n.spec(), "k": self.k.spec(), "quant": list(self.quants),
                "params": {name: list(values) for name, values in self.params},
                "tile": f"{self.tile[0]}x{self.tile[1]}" if self.tile else None}

    def digest(self, kernel: str, extra: dict[str, Any]) -> bytes:
        """A stable key of this search's space (and the case options ``extra``): the example
        database's key, so that a stored example replays only into the search that found it."""
        text = json.dumps({"kernel": kernel, "space": self.spec(), "case": extra},
                          sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).digest()[:16]


def _index_of(values: Iterable, value) -> int:
    text = json.dumps(value, sort_keys=True)
    for index, candidate in enumerate(values):
        if json.dumps(candidate, sort_keys=True) == text:
            return index
    raise ValueError(f"{value!r} is not one of {list(values)!r}")


def _fields(config: Config) -> dict[str, Any]:
    return {"m": config.m, "n": config.n, "k": config.k, "quant": config.quant, "params": config.params}


def parse_space(*, m, n, k, quant, params, tile: tuple[int, int] | None) -> Space:
    """The axes checked, each bad one a CaseError naming it."""
    return Space(parse_axis("m", m), parse_axis("n", n), parse_axis("k", k), parse_quants(quant),
                 parse_params(params), tile)
