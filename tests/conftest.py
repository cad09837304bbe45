import os
import sys
from pathlib import Path

import pytest
# Imported before any in-process pytester run: pytester restores sys.modules after each run,
# and torch's C extension cannot be imported a second time in one process.
import torch  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# the example kernels double as independent implementations for the plugin's own tests
sys.path.insert(0, str(EXAMPLES / "cpu"))


@pytest.fixture
def make_case():
    """Build a Case outside a pytest session: what the fixture does, minus the session."""
    from pytest_gemmcheck.case import Case, CaseContext
    from pytest_gemmcheck.options import Settings

    def make(kernel="kern", *, repeat=12, settings=None, record=None, **kwargs):
        context = CaseContext(settings or Settings(repeat=repeat))
        if record is not None:
            context.record = record
        return Case(context, kernel, **kwargs)

    return make


@pytest.fixture
def examples_dir():
    return EXAMPLES
