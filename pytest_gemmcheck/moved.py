"""Module names that moved, kept importable: ``import pytest_gemmcheck.quant`` gives the very
module object of ``pytest_gemmcheck.case.quant`` (one module, one registry), and ``python -m``
works on the old names too.

``STABLE`` names are part of the documented API under both spellings; the others warn
(DeprecationWarning) and will go in a later release.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

PACKAGE = "pytest_gemmcheck"
MOVED = {  # old name -> new name, relative to the package; a moved package takes its submodules along
    "quant": "case.quant",
    "cli": "reporting.cli",
    "gpu": "checking.triton",
    "gpu.fused_check": "checking.triton.api",
    "flydsl": "compiled.flydsl",
    "lint": "compiled.lint",
    "lint.checker": "compiled.lint.analysis",
    "lint.report": "compiled.lint.findings",
    "lint.cli": "compiled.lint.command",
}
STABLE = {"quant"}


def new_name(fullname: str) -> str | None:
    """The current name of a moved module's old ``fullname``, or None."""
    if not fullname.startswith(PACKAGE + "."):
        return None
    old = fullname[len(PACKAGE) + 1:]
    for prefix in sorted(MOVED, key=len, reverse=True):
        if old == prefix or old.startswith(prefix + "."):
            return f"{PACKAGE}.{MOVED[prefix]}{old[len(prefix):]}"
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec):
        stem = self.old[len(PACKAGE) + 1:].split(".")[0]
        if stem not in STABLE:
            warnings.warn(f"{self.old} moved to {self.new}; the old name will be removed",
                          DeprecationWarning, stacklevel=2)
        return importlib.import_module(self.new)  # the module itself, registered under the old name too

    def exec_module(self, module) -> None:
        pass

    def get_code(self, fullname):  # python -m OLD.NAME runs the moved module's code
        return importlib.util.find_spec(self.new).loader.get_code(self.new)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        spec = importlib.util.find_spec(new)
        if spec is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(fullname, new),
                                               is_package=spec.submodule_search_locations is not None)


def install() -> None:
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
