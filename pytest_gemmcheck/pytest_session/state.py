"""A pytest session's gemmcheck state: settings, caches, this process's GPU and stack, the
results that reach this process (every result in a plain run; on an xdist controller, those
its workers send on their reports), and its history (history.py). Registered as a plugin: its
hook methods take the reports and write the summary.

Every hook returns at once while no gemmcheck case has run or reported: a session without
cases imports nothing heavy and touches no database.
"""

from __future__ import annotations

import os
import sys
import uuid
import weakref
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import pytest

from ..config.table import BY_NAME, Settings
from ..launch.rank_group import launcher_rank_not_first
from .run_history import SQLALCHEMY_MISSING, SessionHistory

if TYPE_CHECKING:  # torch-backed modules are imported only when a case is made
    from ..records.result import CaseResult

REPORT_ATTR = "gemmcheck_results"  # an xdist worker's test report's attribute carrying its results
CASE_SETUP_ATTR = "gemmcheck_case_setup"  # set on an xdist worker's setup report of a gemmcheck test
WORKER_TOKEN = "gemmcheck_run_token"  # the controller's run token, in an xdist worker's workerinput
CHILD_OUTPUT = "GEMMCHECK_CHILD_OUTPUT"  # where a --gemmcheck-processes child writes its results


def carried(results: list[dict]) -> str:
    """A test's results as they ride on its report: one JSON text, whatever they hold (execnet,
    which carries an xdist worker's reports, refuses integers below -2**31, and a checksum is one)."""
    import json

    return json.dumps(results)


def is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def is_child() -> bool:
    """Whether this process is a --gemmcheck-processes child or a rank of --gemmcheck-world-size
    (its parent judges and records)."""
    return bool(os.environ.get(CHILD_OUTPUT))


class GemmcheckSession:
    def __init__(self, config: pytest.Config, settings: Settings):
        self.config = config
        self.settings = settings
        self.results: list[CaseResult] = []
        worker = is_xdist_worker(config)
        # the run's id, known before its row exists; an xdist worker has its controller's
        token = config.workerinput.get(WORKER_TOKEN) if worker else None
        numprocesses = getattr(config.option, "numprocesses", None)
        self.history = SessionHistory.for_config(
            config,
            settings,
            token=token or uuid.uuid4().hex,
            owner=not worker and not is_child() and not launcher_rank_not_first(),
            workers=numprocesses if isinstance(numprocesses, int) else 0,
        )
        self._caches = None
        self._stack = None
        self._started = False
        self._unusable: str | None = None  # why this worker cannot read the history
        self.lost_devices: set[str] = set()  # GPUs a launch hung on: no later work there can finish
        self.accepted: list[str] = []  # what --gemmcheck-accept wrote, or could not, a line each
        self.started_at = datetime.now(timezone.utc)
        self.outputs: list[tuple[str, bool]] = []  # --gemmcheck-summary/-json: a line each, and whether it failed
        self.exit_status: int | None = None  # a spawned rank's, kept for its end (pytest_unconfigure)
        self.failures: list[str] = []  # a child's: why its tests failed, a line each, for its parent
        # a test's results by its report, from this process's tests, for pytest_runtest_logreport
        self._arrived: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    # --- before a case ----------------------------------------------------------------------
    def start_cases(self) -> None:
        """Before every case (cheap after the first): the history is opened, this process's
        GPU chosen and plugins' quant modes registered. A history that cannot be used stops
        the session (exit status 4) with one line, before any launch; an xdist worker, which
        cannot stop its controller (pytest-xdist#1239), fails each case's test with it instead."""
        from ..errors import GemmcheckError

        if self._unusable is not None:
            pytest.fail(self._unusable, pytrace=False)
        if self._started:
            return
        if not is_child():  # a child neither judges nor records
            try:
                self.history.prepare()
            except GemmcheckError as exc:
                self._unusable = f"{BY_NAME['db'].flag}: {exc}"
            except ImportError as exc:
                self._unusable = SQLALCHEMY_MISSING.format(error=exc)
            if self._unusable is not None:  # outside the except: the one line, no chained traceback
                if self.history.owner:
                    pytest.exit(self._unusable, returncode=pytest.ExitCode.USAGE_ERROR)
                pytest.fail(self._unusable, pytrace=False)
        self._started = True
        self._select_device()
        self._register_quant_modes()

    def _select_device(self) -> None:
        """This process's GPU (an xdist worker takes its own, round-robin over
        --gemmcheck-devices). Imports torch, so never at start-up."""
        import torch

        from ..config.devices import device_for_worker
        from ..errors import CaseError
        from .processes import CHILD_DEVICE

        worker = self.config.workerinput.get("workerid") if is_xdist_worker(self.config) else None
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        try:
            if os.environ.get(CHILD_DEVICE):  # a --gemmcheck-processes child: its parent chose
                index = int(os.environ[CHILD_DEVICE]) if count else None
            else:
                index = device_for_worker(worker, self.settings.devices, count)
        except ValueError as exc:
            raise CaseError(str(exc)) from None
        if index is not None:
            torch.cuda.set_device(index)

    def _register_quant_modes(self) -> None:
        from ..case.quant import register_all

        for modes in self.config.hook.pytest_gemmcheck_quant_modes():
            register_all(modes or ())

    @property
    def caches(self):
        """(inputs, references) shared by the session's cases."""
        if self._caches is None:
            from ..case.cache import LruCache

            self._caches = (LruCache(), LruCache())
        return self._caches

    @property
    def stack_info(self):
        """This process's stack, collected at the first case that asks (case/host.py)."""
        if self._stack is None:
            from ..case.host import SessionStack

            self._stack = SessionStack(self.settings, self.config.hook)
        return self._stack

    # --- hooks (this object is registered as a plugin) ---------------------------------------
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Every test's ``@pytest.mark.gemmcheck(...)`` checked as it is collected: a bad key or
        value is a usage error naming the test and the key, as a bad option value names the
        option, before any test runs. An xdist worker, which cannot stop its controller
        (pytest-xdist#1239: a usage error there is an INTERNALERROR), leaves it to the test's
        setup, which fails in one line (pytest_adapter.marker_overrides)."""
        from ..config.table import apply_marker

        if is_xdist_worker(self.config):
            return
        for item in items:
            marker = item.get_closest_marker("gemmcheck")
            if marker is None:
                continue
            try:
                apply_marker(self.settings, dict(marker.kwargs))
            except ValueError as exc:
                raise pytest.UsageError(f"{item.nodeid}: {exc}") from None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """A rank spawned by --gemmcheck-world-size: its group initialised before the fixtures and
        the test body, on this process's GPU."""
        if not is_child() or "gemmcheck" not in getattr(item, "fixturenames", ()):
            return
        from ..launch.rank_group import init_spawned_rank, spawned_rank

        if spawned_rank():
            self.start_cases()
            init_spawned_rank(self.settings)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call):
        """An xdist worker's setup report of a gemmcheck test says so: its controller, which runs
        no case, writes the run row then."""
        outcome = yield
        if call.when == "setup" and is_xdist_worker(self.config) and "gemmcheck" in getattr(item, "fixturenames", ()):
            setattr(outcome.get_result(), CASE_SETUP_ATTR, True)

    def carry(self, report: pytest.TestReport, results: list[CaseResult]) -> None:
        """A test's results, with its report: an xdist worker's ride on it to the controller as
        JSON text; this process's own are kept by the report as they are (their plain form and
        its JSON there and back cost 0.7 ms a test of 12 launches on one core here)."""
        if is_xdist_worker(self.config):
            setattr(report, REPORT_ATTR, carried([result.to_dict() for result in results]))
        else:
            self._arrived[report] = list(results)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Take a test's results (this process's, or an xdist worker's on its report) and hand
        them to the recorder now: a session killed later keeps every test that finished."""
        if getattr(report, CASE_SETUP_ATTR, False) and not is_xdist_worker(self.config):
            self.history.open_for_workers()
        if report.failed and is_child():
            crash = getattr(report.longrepr, "reprcrash", None)
            self.failures.append(crash.message if crash is not None else str(report.longrepr).strip().splitlines()[-1])
        results = self._arrived.pop(report, None)
        if results is None:
            payload = getattr(report, REPORT_ATTR, None)
            if not payload:
                return
            import json

            from ..records.result import CaseResult

            results = [CaseResult.from_dict(data) for data in json.loads(payload)]
        for result in results:
            self.results.append(result)
            self.history.record(result)
        self.history.flush()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        if is_child():
            from .processes import write_child_results

            write_child_results(self.results, self.failures)
            self.exit_status = int(exitstatus)
            return
        if not self.history.owner:
            return
        # a run that stopped short (^C, or an internal error that lost the cases still to run) is
        # never recorded complete
        cut_short = exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
        ending = self.history.finish(int(exitstatus), interrupted=cut_short)
        if ending != exitstatus:  # --gemmcheck-require-record, and a result was not recorded
            session.exitstatus = ending
        if self.settings.accept and self.results:
            self.accepted = self.history.accept(self.results)
        if self.results and (self.settings.summary or self.settings.json):
            self._write_outputs(session, ending, cut_short)

    def _write_outputs(self, session: pytest.Session, exit_status: int, interrupted: bool) -> None:
        """--gemmcheck-summary and --gemmcheck-json, by the process that owns the session. A file
        that cannot be written is one line in the summary; it changes the exit status only under
        --gemmcheck-require-record, as a result that could not be recorded does."""
        from .. import __version__
        from ..reporting.ci_output import write_files

        recorder = self.history.recorder
        history = recorder.summary() if recorder is not None else ""
        run = {
            "token": self.history.token,
            "id": recorder.run_id if recorder is not None else None,
            "tag": self.settings.tag,
            "started_at": self.started_at.isoformat(),
            "finished_at": datetime.now(timezone.utc).isoformat(),
            "exit_status": int(exit_status),
            "interrupted": interrupted,
            "history": history.removeprefix("gemmcheck: ") or None,
        }
        self.outputs = write_files(
            self.settings,
            self.config.invocation_params.dir,
            self.results,
            run,
            __version__,
            history=history.removeprefix("gemmcheck: "),
        )
        failed = any(failed for _, failed in self.outputs)
        if failed and self.settings.require_record and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR  # as Recorder.finish: the status 4 of what was not kept

    def pytest_terminal_summary(self, terminalreporter) -> None:
        recorded, failed = self.history.summary(judged=bool(self.results))
        if not self.results and not recorded:
            return
        from ..reporting.terminal import write_summary

        write_summary(terminalreporter, self.results, recorded, failed, self.accepted, self.outputs)

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        """One line: what gemmcheck will do (from the settings; nothing heavy, no database)."""
        if is_xdist_worker(config) or is_child():
            return None
        from .. import __version__
        from ..reporting.header import header_line

        return header_line(self.settings, __version__)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config) -> None:
        """After everything else: a process whose GPU a kernel hung on would wait for that kernel
        at exit, forever; it ends here instead (a test failed: status 1)."""
        if self.lost_devices and not is_xdist_worker(config):
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(pytest.ExitCode.TESTS_FAILED)
        if self.exit_status is None:
            return
        from ..launch.rank_group import spawned_rank

        if spawned_rank():
            # its results are written: the process ends without tearing its groups down, which
            # aborts in gloo where another rank's process ended first (torch 2.13: "terminate
            # called without an active exception")
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(self.exit_status)
