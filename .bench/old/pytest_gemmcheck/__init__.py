"""pytest-gemmcheck: catch GEMM kernels that are silently wrong on some launches.

Public names are imported lazily so that loading the pytest plugin costs nothing until a
test uses it (torch is imported on first use).
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "session": "pytest_gemmcheck.api",
    "Session": "pytest_gemmcheck.api",
    "Case": "pytest_gemmcheck.case.case",
    "CaseResult": "pytest_gemmcheck.records.result",
    "LaunchRecord": "pytest_gemmcheck.records.result",
    "Inputs": "pytest_gemmcheck.case.quant",
    "QuantMode": "pytest_gemmcheck.case.quant",
    "register_quant_mode": "pytest_gemmcheck.case.quant",
    "compute_reference": "pytest_gemmcheck.case.reference",
    "named": "pytest_gemmcheck.case.reference_identity",
    "CaseError": "pytest_gemmcheck.errors",
    "GemmcheckFailure": "pytest_gemmcheck.errors",
    "LaunchError": "pytest_gemmcheck.errors",
    "search": "pytest_gemmcheck.api",
    "SearchResult": "pytest_gemmcheck.searching.search_result",
    "SearchWarning": "pytest_gemmcheck.searching.examples",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_gemmcheck' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
