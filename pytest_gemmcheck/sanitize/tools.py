"""The tool names a user may ask for, parsed from a comma list."""

from __future__ import annotations

from typing import Iterable

from ..records.sanitize import TOOLS


def parse_tools(value: str | Iterable[str]) -> tuple[str, ...]:
    """``"racecheck, memcheck"`` (or a list of names) as the tools, in the order given, each
    once; case and spaces do not matter. Raises ValueError naming the words that are no tool."""
    try:
        words = value.split(",") if isinstance(value, str) else list(value)
    except TypeError:
        words = [value]
    if not all(isinstance(word, str) for word in words):
        raise ValueError(f"expected tool names ({', '.join(TOOLS)}), got {value!r}")
    names = [word.strip().lower() for word in words]
    bad = [word.strip() for word, name in zip(words, names) if name not in TOOLS]
    if bad or not any(names):
        shown = ", ".join(repr(word) for word in bad) if bad else "nothing"
        raise ValueError(f"expected a comma list of {', '.join(TOOLS)}, got {shown}")
    return tuple(dict.fromkeys(names))
