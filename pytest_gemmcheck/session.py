"""A pytest session's gemmcheck state: settings, caches, the results that reach this process
(every result in a plain run; on an xdist controller, those its workers send on their
reports), and the recorder that writes them to the history."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .options import Settings

if TYPE_CHECKING:  # torch-backed modules are imported only when a case is made
    from .recorder import Recorder
    from .result import CaseResult

REPORT_ATTR = "gemmcheck_results"


def is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


class GemmcheckSession:
    def __init__(self, config: pytest.Config, settings: Settings):
        self.config = config
        self.settings = settings
        self.results: list[CaseResult] = []
        self.recorder: Recorder | None = None
        self._caches = None
        self._stack = None
        self._device_chosen = False
        self._identities: dict[str, dict] = {}

    @property
    def caches(self):
        if self._caches is None:
            from .reference import LruCache

            self._caches = (LruCache(), LruCache())
        return self._caches

    def stack_info(self) -> dict:
        if self._stack is None:
            from .stack import collect

            self._stack = collect(self.config.hook)
        return self._stack

    def select_device(self) -> None:
        """Once per process, before the first case: this process's GPU (an xdist worker takes
        its own, round-robin over --gemmcheck-devices). Imports torch, so never at start-up."""
        if self._device_chosen:
            return
        self._device_chosen = True
        import torch

        from .devices import device_for_worker
        from .errors import CaseError

        worker = self.config.workerinput.get("workerid") if is_xdist_worker(self.config) else None
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        try:
            index = device_for_worker(worker, self.settings.devices, count)
        except ValueError as exc:
            raise CaseError(str(exc)) from None
        if index is not None:
            torch.cuda.set_device(index)

    def device_identity(self, device) -> dict:
        key = str(device)
        if key not in self._identities:
            from .devices import gpu_identity

            self._identities[key] = gpu_identity(device) if getattr(device, "type", "cpu") == "cuda" else {}
        return self._identities[key]

    def register_quant_modes(self) -> None:
        from .quant import register_all

        for modes in self.config.hook.pytest_gemmcheck_quant_modes():
            register_all(modes or ())

    def start_recording(self) -> None:
        """In the process that owns the session: set up the recorder, and check a database
        that was named or already exists (a bad one is a usage error before anything runs)."""
        if self.settings.no_record or is_xdist_worker(self.config):
            return
        from .errors import GemmcheckError
        from .options import BY_NAME
        from .recorder import Recorder, masked_command

        params = self.config.invocation_params
        numprocesses = getattr(self.config.option, "numprocesses", None)
        options = {name: value for name, value in vars(self.settings).items() if name not in ("db",)}
        options["nondeterministic"] = list(self.settings.nondeterministic)
        try:
            self.recorder = Recorder(
                url_value=self.settings.db, explicit=self.settings.db is not None,
                rootdir=self.config.rootpath, invocation_dir=params.dir, tag=self.settings.tag,
                command=masked_command(["pytest", *params.args]), options=options,
                workers=numprocesses if isinstance(numprocesses, int) else 0,
            )
            self.recorder.check_early()
        except GemmcheckError as exc:
            raise pytest.UsageError(f"{BY_NAME['db'].flag}: {exc}") from None

    # --- hooks (this object is registered as a plugin) -----------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Take the results a test report carries (from this process or an xdist worker)."""
        payload = getattr(report, REPORT_ATTR, None)
        if not payload:
            return
        from .result import CaseResult

        for data in payload:
            result = CaseResult.from_dict(data)
            self.results.append(result)
            if self.recorder is not None:
                self.recorder.add(result)

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        if self.recorder is not None:
            self.recorder.flush()  # nothing pending while the next test runs

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        if self.recorder is not None:
            self.recorder.finish(int(exitstatus), interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminal = terminalreporter
        recorded = self.recorder.summary() if self.recorder is not None else ""
        if not self.results and not recorded:
            return
        from .report import summary_line

        terminal.write_sep("-", "gemmcheck")
        for result in self.results:
            markup = {"red": True} if result.failed else ({"yellow": True} if result.bad_launches else {"green": True})
            terminal.write_line(summary_line(result) + f"  ({result.nodeid})", **markup)
        if recorded:
            failed = self.recorder.failure is not None
            terminal.write_line(recorded, **({"red": True, "bold": True} if failed else {}))
