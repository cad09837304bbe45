"""A pytest session's gemmcheck state: settings, caches, and the results that reach this
process (every result in a plain run; on an xdist controller, the results its workers send
on their reports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .options import Settings

if TYPE_CHECKING:  # torch-backed modules are imported only when a case is made
    from .result import CaseResult

REPORT_ATTR = "gemmcheck_results"


class GemmcheckSession:
    def __init__(self, config: pytest.Config, settings: Settings):
        self.config = config
        self.settings = settings
        self.results: list[CaseResult] = []
        self._caches = None

    @property
    def caches(self):
        if self._caches is None:
            from .reference import LruCache

            self._caches = (LruCache(), LruCache())
        return self._caches

    def register_quant_modes(self) -> None:
        from .quant import register_all

        for modes in self.config.hook.pytest_gemmcheck_quant_modes():
            register_all(modes or ())

    # --- hooks (this object is registered as a plugin) -----------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Take the results a test report carries (from this process or an xdist worker)."""
        payload = getattr(report, REPORT_ATTR, None)
        if not payload:
            return
        from .result import CaseResult

        self.results.extend(CaseResult.from_dict(data) for data in payload)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminal = terminalreporter
        if not self.results:
            return
        from .report import summary_line

        terminal.write_sep("-", "gemmcheck")
        for result in self.results:
            markup = {"red": True} if result.failed else ({"yellow": True} if result.bad_launches else {"green": True})
            terminal.write_line(summary_line(result) + f"  ({result.nodeid})", **markup)
