"""Hooks that pytest-gemmcheck calls, for conftest.py files and plugins to implement."""

from __future__ import annotations

import pytest

hookspec = pytest.hookspec


@hookspec
def pytest_gemmcheck_quant_modes():
    """Return quant modes (``pytest_gemmcheck.quant.QuantMode`` instances) to add.

    Called before a case is built, so modes from conftest.py files anywhere are seen. A mode
    whose name is already registered by a different class is refused.
    """
