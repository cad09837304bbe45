"""A pytest session's gemmcheck state: settings, caches, the results that reach this process
(every result in a plain run; on an xdist controller, those its workers send on their
reports), and the recorder that writes them to the history."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from ..config.options import Settings

if TYPE_CHECKING:  # torch-backed modules are imported only when a case is made
    from ..history.recorder import Recorder
    from ..case.result import CaseResult

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
        self._goldens = None
        self._history = None  # engine for reading baselines; False: there is no history
        self.accepted: list[str] = []  # golden files written by --gemmcheck-accept

    @property
    def caches(self):
        if self._caches is None:
            from ..case.reference import LruCache

            self._caches = (LruCache(), LruCache())
        return self._caches

    def stack_info(self) -> dict:
        if self._stack is None:
            from ..environment.stack import collect

            self._stack = collect(self.config.hook)
        return self._stack

    def select_device(self) -> None:
        """Once per process, before the first case: this process's GPU (an xdist worker takes
        its own, round-robin over --gemmcheck-devices). Imports torch, so never at start-up."""
        if self._device_chosen:
            return
        self._device_chosen = True
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

    def device_identity(self, device) -> dict:
        key = str(device)
        if key not in self._identities:
            from ..config.devices import gpu_identity

            self._identities[key] = gpu_identity(device) if getattr(device, "type", "cpu") == "cuda" else {}
        return self._identities[key]

    # --- baselines -----------------------------------------------------------------------
    @property
    def goldens(self):
        if self._goldens is None:
            from pathlib import Path

            from ..judging.goldens import GoldenStore

            folder = Path(self.settings.goldens) if self.settings.goldens else self.config.rootpath / "goldens"
            if not folder.is_absolute():
                folder = self.config.invocation_params.dir / folder
            self._goldens = GoldenStore(folder)
        return self._goldens

    def _history_engine(self):
        """The history database for reading baselines, or None when there is none yet (this
        never creates one: a worker reads, only the controller's recorder writes)."""
        if self._history is None:
            from pathlib import Path

            from ..history.location import sqlite_file

            path = sqlite_file(self.settings.db, self._database_base())
            if path is not None and not path.exists():
                return None  # no history yet, known without importing SQLAlchemy; checked again next time
            try:
                from ..history.engine import is_sqlite, open_database
            except ImportError:  # no SQLAlchemy (only possible with --gemmcheck-no-record): no history
                self._history = False
                return None

            url = self.database_url()
            if is_sqlite(url) and not Path(url.database).exists():
                return None  # checked again next time: the recorder may create it meanwhile
            self._history = open_database(url, auto_upgrade=is_sqlite(url))
        return self._history or None

    def database_url(self):
        """--gemmcheck-db (relative to where pytest was started), else the default under the rootdir."""
        from ..history.engine import resolve_url

        return resolve_url(self.settings.db, self._database_base())

    def _database_base(self):
        # a given path is relative to where pytest was started; the default file lives under the rootdir
        return self.config.invocation_params.dir if self.settings.db else self.config.rootpath

    def baseline_for(self, result):
        """The golden, else the history on a compatible stack, else clean."""
        from ..judging.baseline import Baseline, choose
        from ..errors import CaseError, GemmcheckError

        try:
            golden = self.goldens.lookup(result)
            history = None
            static = None
            if result.static:
                engine = self._history_engine()
                if engine is not None:
                    from ..history.queries import latest_static

                    static = latest_static(engine, result.key, result.static.get("source", ""),
                                           exclude_run=self.recorder.run_id if self.recorder is not None else None)
            if golden is None:
                engine = self._history_engine()
                if engine is not None:
                    from ..history.queries import history_evidence

                    stack = result.stack or {}
                    run_id = self.recorder.run_id if self.recorder is not None else None
                    evidence, runs, stacks = history_evidence(
                        engine, result.key, scope=self.settings.scope, gpu_arch=stack.get("gpu_arch"),
                        fingerprint=stack.get("fingerprint"), exclude_run=run_id)
                    if evidence.launches:
                        scope = {"arch": f"on {stack.get('gpu_arch') or 'cpu'}", "stack": "on this stack",
                                 "any": "on any stack"}[self.settings.scope]
                        where = f"history: {runs} earlier run{'s' if runs != 1 else ''} {scope} ({'; '.join(stacks[:3])})"
                        history = Baseline(source="history", description=where, evidence=evidence)
        except GemmcheckError as exc:
            raise CaseError(f"cannot find the baseline of {result.label}: {exc}") from None
        return choose(result, golden=golden, history=history, static=static)

    def run_in_processes(self, item: pytest.Function, overrides, sink: list) -> bool:
        """--gemmcheck-processes=N for one test: run it in N children, judge and record the
        aggregate here. False when the test runs here as usual."""
        from .processes import is_child

        settings = overrides.settings
        if settings.processes <= 1 or is_child() or "gemmcheck" not in item.fixturenames:
            return False
        from ..case.case import conclude
        from ..config.devices import parse_devices
        from ..errors import GemmcheckFailure, LaunchError
        from .processes import ChildFailure, aggregate, run_children

        devices: list[int | None] = [None]  # the child's default device
        if settings.devices is not None:  # spread the children over the named (or all) GPUs
            named = parse_devices(settings.devices)
            devices = list(named) if named is not None else (list(range(self._visible_gpus())) or [None])
        try:
            # a plugin loaded with -p (not installed through its entry point) must be loaded so in the children too
            plugin_args = [] if self.config.pluginmanager.has_plugin("gemmcheck") else ["-p", "pytest_gemmcheck.plugin"]
            children = run_children(item.nodeid, settings, rootdir=self.config.rootpath,
                                    invocation_dir=self.config.invocation_params.dir, devices=devices,
                                    plugin_args=plugin_args)
        except ChildFailure as exc:
            raise GemmcheckFailure(f"gemmcheck: --gemmcheck-processes={settings.processes}: {exc}") from None
        failures = []
        for result in aggregate(children):
            result.nodeid = item.nodeid
            verdict = conclude(result, settings, self.baseline_for)
            sink.append(result.to_dict())
            if any("raised" in launch.kinds for launch in result.launches):
                failures.append((LaunchError, result.message))
            elif verdict.failed and not settings.accept:
                failures.append((GemmcheckFailure, result.message))
        if failures:
            kind = LaunchError if any(k is LaunchError for k, _ in failures) else GemmcheckFailure
            raise kind("\n".join(message for _, message in failures))
        return True

    def _visible_gpus(self) -> int:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0

    def accept_results(self) -> None:
        """--gemmcheck-accept: this run's results become the goldens of their cases."""
        if not self.settings.accept or not self.results:
            return
        from ..history.recorder import git_state

        revision, dirty = git_state(self.config.rootpath)
        note = "accepted" + (f" at {revision[:10]}{'+' if dirty else ''}" if revision else "")
        if self.settings.tag:
            note += f" ({self.settings.tag})"
        kernels = set()
        for result in self.results:
            self.goldens.accept(result, self.settings.scope, note)
            kernels.add(result.kernel)
        self.accepted = [str(self.goldens.write(kernel)) for kernel in sorted(kernels)]

    def register_quant_modes(self) -> None:
        from ..case.quant import register_all

        for modes in self.config.hook.pytest_gemmcheck_quant_modes():
            register_all(modes or ())

    def start_recording(self) -> None:
        """In the process that owns the session: set up the recorder, and check a database
        that was named or already exists (a bad one is a usage error before anything runs)."""
        if self.settings.no_record or is_xdist_worker(self.config):
            return
        from ..errors import GemmcheckError
        from ..config.options import BY_NAME
        from ..history.recorder import Recorder, masked_command

        params = self.config.invocation_params
        numprocesses = getattr(self.config.option, "numprocesses", None)
        options = {name: value for name, value in vars(self.settings).items() if name not in ("db",)}
        options["nondeterministic"] = list(self.settings.nondeterministic)
        try:
            self.recorder = Recorder(
                url=self.database_url(), explicit=self.settings.db is not None,
                rootdir=self.config.rootpath, tag=self.settings.tag,
                command=masked_command(["pytest", *params.args]), options=options,
                workers=numprocesses if isinstance(numprocesses, int) else 0,
            )
            self.recorder.check_early()
        except GemmcheckError as exc:
            raise pytest.UsageError(f"{BY_NAME['db'].flag}: {exc}") from None
        except ImportError as exc:  # a declared dependency, but environments get pruned
            raise pytest.UsageError(f"pytest-gemmcheck records into a database through SQLAlchemy and Alembic, and "
                                    f"cannot import them ({exc}): install them, or pass --gemmcheck-no-record") from None

    # --- hooks (this object is registered as a plugin) -----------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Take the results a test report carries (from this process or an xdist worker)."""
        payload = getattr(report, REPORT_ATTR, None)
        if not payload:
            return
        from ..case.result import CaseResult

        for data in payload:
            result = CaseResult.from_dict(data)
            self.results.append(result)
            if self.recorder is not None:
                self.recorder.add(result)

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        if self.recorder is not None:
            self.recorder.flush()  # nothing pending while the next test runs

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        from .processes import is_child, write_child_results

        if is_child():
            write_child_results(self.results)
            return
        if is_xdist_worker(self.config):
            return
        if self.recorder is not None:
            self.recorder.finish(int(exitstatus), interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
        self.accept_results()
        if self._history:
            self._history.dispose()

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminal = terminalreporter
        recorded = self.recorder.summary() if self.recorder is not None else ""
        if not self.results and not recorded:
            return
        from ..judging.message import summary_line

        terminal.write_sep("-", "gemmcheck")
        for result in self.results:
            markup = {"red": True} if result.failed else ({"yellow": True} if result.bad_launches else {"green": True})
            terminal.write_line(summary_line(result) + f"  ({result.nodeid})", **markup)
        if recorded:
            failed = self.recorder.failure is not None
            terminal.write_line(recorded, **({"red": True, "bold": True} if failed else {}))
        for path in self.accepted:
            terminal.write_line(f"gemmcheck: accepted as goldens: {path}")
