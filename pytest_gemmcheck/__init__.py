"""pytest-gemmcheck: catch GEMM kernels that are silently wrong on some launches.

Public names are imported lazily so that loading the pytest plugin costs nothing until a
test uses it (torch is imported on first use).
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "Case": "pytest_gemmcheck.case",
    "CaseResult": "pytest_gemmcheck.result",
    "LaunchRecord": "pytest_gemmcheck.result",
    "Inputs": "pytest_gemmcheck.quant",
    "QuantMode": "pytest_gemmcheck.quant",
    "register_quant_mode": "pytest_gemmcheck.quant",
    "compute_reference": "pytest_gemmcheck.reference",
    "CaseError": "pytest_gemmcheck.errors",
    "GemmcheckFailure": "pytest_gemmcheck.errors",
    "LaunchError": "pytest_gemmcheck.errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_gemmcheck' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
