"""Hooks that pytest-gemmcheck calls, for conftest.py files and plugins to implement."""

from __future__ import annotations

import pytest

hookspec = pytest.hookspec


@hookspec
def pytest_gemmcheck_quant_modes():
    """Return quant modes (``pytest_gemmcheck.case.quant.QuantMode`` instances) to add.

    Called before a case is built, so modes from conftest.py files anywhere are seen. A mode
    whose name is already registered by a different class is refused.
    """


@hookspec
def pytest_gemmcheck_stack_info(info):
    """Add fields to the stack fingerprint of the process that runs the cases.

    ``info`` is a dict to update in place (e.g. ``info["rocm_smi"] = "6.3.1"``, ``info["ccl"] =
    "rccl 2.21"``). Values should be short strings or numbers: they are part of the stack's
    fingerprint and stored in the ``stack.extra`` column.
    """


@hookspec
def pytest_gemmcheck_result(result):
    """Called with each judged result (a ``CaseResult``, or a ``CompiledResult`` for a compiled
    kernel) just before it is recorded, in the process that judged it: for a repo's own
    dashboards or logs. ``result.to_dict()`` is its plain form. Changes to it are recorded."""
