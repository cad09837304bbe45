"""Static checker for LDS hazards between global->LDS DMA loads and LDS reads in AMDGPU assembly.

``lint_text`` / ``lint_file`` return a :class:`LintReport`; ``gemmcheck lint`` (see
:mod:`pytest_gemmcheck.commands.lint`) is the command line, also run as ``python -m
pytest_gemmcheck.compiled.lint``. Nothing here imports FlyDSL or torch.
The names below load on first use: importing the package imports no numpy.
"""

from __future__ import annotations

import importlib

_HOMES = {
    "Options": "analysis",
    "lint_file": "analysis",
    "lint_text": "analysis",
    "is_flydsl_spec": "analysis",
    "lint_flydsl_spec": "analysis",
    "Finding": "findings",
    "LintReport": "findings",
    "LoadRef": "findings",
    "exit_status": "findings",
    "format_json": "findings",
    "format_text": "findings",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
