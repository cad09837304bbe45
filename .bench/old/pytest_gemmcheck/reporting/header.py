"""The line gemmcheck adds to pytest's header: what this session will do, as pytest-benchmark's
says. Built from the settings alone: it imports nothing heavy and opens no database."""

from __future__ import annotations

from ..config.table import AUTO, Settings, hide_passwords
from ..history.location import DEFAULT_PATH


def _seconds(value: float) -> str:
    return f"{value:g} s"


def header_line(settings: Settings, version: str) -> str:
    """'gemmcheck 0.1.0: repeat 12, history .gemmcheck/history.db (opened at the first case),
    scope arch, check backend auto'; options left at their defaults are not named (but these)."""
    if settings.repeat == AUTO:
        parts = [f"repeat auto (until rate < {100 * settings.target_rate:g}% or {_seconds(settings.budget)})"]
    else:
        parts = [f"repeat {settings.repeat}"]
    if settings.processes > 1:
        parts.append(f"{settings.processes} processes per case")
    if settings.stress != "none":
        parts.append(f"stress {settings.stress}")
    if settings.devices:
        parts.append(f"devices {settings.devices}")
    where = hide_passwords(settings.db) if settings.db else DEFAULT_PATH.as_posix()
    if settings.no_record:
        parts.append(f"no record (baselines read from {where} if it exists)")
    else:
        required = "; recording required" if settings.require_record else ""
        parts.append(f"history {where} (opened at the first case{required})")
    parts += [f"scope {settings.scope}", f"check backend {settings.check_backend}"]
    if settings.tag:
        parts.append(f"tag {settings.tag}")
    if settings.accept:
        parts.append("accepting results as goldens")
    if settings.summary:
        parts.append(f"summary to {settings.summary}")
    if settings.json:
        parts.append(f"json to {settings.json}")
    return f"gemmcheck {version}: " + ", ".join(parts)
