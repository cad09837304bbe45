"""A session's use of the history: where the database is, the recorder that writes this run
(in the process that owns the session only), the reads that find each result's baseline (in
every process that runs cases), and the goldens.

Nothing here opens a database, or imports SQLAlchemy, until a gemmcheck case needs it: a
session with no case touches no database. With --gemmcheck-no-record nothing is written, and a
history that cannot be read is said once in the summary while the results are judged against
their goldens, else clean.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..config.table import Settings

if TYPE_CHECKING:  # SQLAlchemy-backed modules load when a case first needs them
    from ..history.recorder import Recorder
    from ..judging.baseline import Baseline
    from ..judging.goldens import GoldenStore
    from ..records.result import CaseResult

SQLALCHEMY_MISSING = (
    "pytest-gemmcheck records into a database through SQLAlchemy and Alembic, and cannot import "
    "them ({error}): install them, or pass --gemmcheck-no-record"
)


def _database_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is the database's (SQLAlchemy's or its driver's), not the plugin's."""
    try:
        from sqlalchemy.exc import SQLAlchemyError
    except ImportError:
        return False
    return isinstance(exc, SQLAlchemyError)


class SessionHistory:
    def __init__(
        self,
        settings: Settings,
        *,
        rootdir: Path,
        start_dir: Path,
        command: list[str],
        token: str,
        owner: bool,
        workers: int = 0,
        reads: bool = True,
    ):
        self.rootdir = rootdir  # where the default database and goldens live
        self.start_dir = start_dir  # what a given relative path is relative to
        self.command = command  # stored with the run, passwords masked
        self.settings = settings
        self.token = token  # this run's id: its own results never count as its history
        self.owner = owner  # the process that writes (not an xdist worker)
        self.workers = workers
        self.recorder: Recorder | None = None
        # engine for reading baselines; False: no history can be read (or none is to be: a script's db=None)
        self._reader = None if reads else False
        self.unread: str | None = None  # --gemmcheck-no-record: why the history could not be read
        self._goldens: GoldenStore | None = None

    @classmethod
    def for_config(cls, config: pytest.Config, settings: Settings, **kwargs) -> SessionHistory:
        params = config.invocation_params
        return cls(settings, rootdir=config.rootpath, start_dir=params.dir, command=["pytest", *params.args], **kwargs)

    # --- where ----------------------------------------------------------------------------
    def _base_dir(self) -> Path:
        # a given path is relative to where pytest was started; the default file lives under the rootdir
        return self.start_dir if self.settings.db else self.rootdir

    def database_url(self):
        from ..history.location import database_url

        return database_url(self.settings.db, self._base_dir())

    @property
    def records(self) -> bool:
        return self.owner and not self.settings.no_record

    # --- before the first case --------------------------------------------------------------
    def prepare(self) -> None:
        """Before this process's first case: open the database this session will write, checked
        and with its run row written (or, where it only reads, the one it reads), so that one
        that cannot be used is refused before any launch. Raises GemmcheckError (one line) or
        ImportError."""
        if self.records:
            self._recorder().open()
        else:
            self._reading_engine()

    def open_for_workers(self) -> None:
        """An xdist controller, when a worker starts its first case: the run row is written then
        (the controller runs no case to open it at). A database that cannot be used is said in the
        summary, and the results go to the fallback file."""
        if self.records:
            try:
                self._recorder().open()
            except Exception:  # each result's write tries again, and the summary says why it failed
                pass

    def _recorder(self) -> Recorder:
        if self.recorder is None:
            from ..config.table import hide_passwords
            from ..history.recorder import Recorder, masked_command

            options = {
                name: hide_passwords(value) if isinstance(value, str) else value
                for name, value in vars(self.settings).items()
                if name != "db"
            }
            options["nondeterministic"] = list(self.settings.nondeterministic)
            self.recorder = Recorder(
                url=self.database_url(),
                rootdir=self.rootdir,
                tag=self.settings.tag,
                command=masked_command(self.command),
                options=options,
                workers=self.workers,
                token=self.token,
                require=self.settings.require_record,
            )
        return self.recorder

    # --- writing --------------------------------------------------------------------------
    def record(self, result: CaseResult) -> None:
        """A result to write. An xdist controller's first result makes its recorder; a database it
        cannot open then is said in the summary, and the results go to the fallback file."""
        if self.records:
            self._recorder().add(result)

    def flush(self) -> None:
        if self.recorder is not None:
            self.recorder.flush()

    def finish(self, exit_status: int, interrupted: bool) -> int:
        """The run's end written; the exit status the session ends with (see Recorder.finish)."""
        if self.recorder is not None:
            exit_status = self.recorder.finish(exit_status, interrupted=interrupted)
        if self._reader:
            self._reader.dispose()
        return exit_status

    def summary(self, judged: bool) -> tuple[str, bool]:
        """The summary's line about the history, and whether it is a failure. ``judged``: this
        session judged results (an xdist controller with --gemmcheck-no-record tries the history
        here, as its workers did, to say whether they could read it)."""
        if self.recorder is not None:
            line = self.recorder.summary()
            if self.unread:  # a read that failed on a fresh connection too, once at least
                line = "; ".join(
                    filter(
                        None,
                        (
                            line,
                            f"gemmcheck: {self.unread} for some baselines: those were "
                            "judged against goldens, else clean",
                        ),
                    )
                )
            return line, self.recorder.failed
        if judged and self.settings.no_record and self.owner and self._reader is None:
            engine = self._reading_engine()
            if engine is not None:
                engine.dispose()
        if self.unread is None:
            return "", False
        return (
            f"gemmcheck: history not read (--gemmcheck-no-record): {self.unread}; judged against goldens, else clean"
        ), False

    # --- reading: baselines -----------------------------------------------------------------
    @property
    def goldens(self) -> GoldenStore:
        if self._goldens is None:
            from ..judging.goldens import GoldenStore

            folder = Path(self.settings.goldens) if self.settings.goldens else self.rootdir / "goldens"
            if not folder.is_absolute():
                folder = self.start_dir / folder
            self._goldens = GoldenStore(folder)
        return self._goldens

    def _reading_engine(self):
        """The history database for reading baselines, or None when there is none yet. Never
        creates one: only the owner's recorder writes. With --gemmcheck-no-record nothing is
        migrated either, and a database that cannot be read is no history (self.unread says why)."""
        if self.recorder is not None and self.recorder.store is not None:
            return self.recorder.store.engine
        if self._reader is None:
            from ..errors import GemmcheckError
            from ..history.location import sqlite_file

            try:
                path = sqlite_file(self.settings.db, self._base_dir())
                if path is not None and not path.exists():
                    return None  # no history yet, known without importing SQLAlchemy; checked again next time
                try:
                    url = self.database_url()
                except ImportError:  # no SQLAlchemy (only possible with --gemmcheck-no-record): no history
                    self._reader = False
                    return None
                from ..history.location import open_history

                self._reader = open_history(url, read_only=self.settings.no_record)
            except GemmcheckError as exc:
                if not self.settings.no_record:
                    raise
                self.unread, self._reader = str(exc), False
        return self._reader or None

    def baseline_for(self, result: CaseResult) -> Baseline:
        """The golden, else the history on a compatible stack, else clean."""
        from ..errors import CaseError, GemmcheckError
        from ..judging.baseline import choose, from_history
        from ..records.result import CompiledResult

        try:
            golden = self.goldens.lookup(result)
            static = history = None
            if isinstance(result, CompiledResult):
                engine = self._reading_engine()
                if engine is not None:
                    from ..history.queries import latest_static

                    static = latest_static(
                        engine, result.key, result.static.get("source", ""), exclude_token=self.token
                    )
            if golden is None:
                engine = self._reading_engine()
                if engine is not None:
                    from ..history.queries import case_history

                    stack = result.stack or {}
                    rows = case_history(
                        engine,
                        result.key,
                        scope=self.settings.scope,
                        gpu_arch=stack.get("gpu_arch"),
                        fingerprint=stack.get("fingerprint"),
                        exclude_token=self.token,
                    )
                    history = from_history(rows, self.settings.scope, stack.get("gpu_arch"))
        except GemmcheckError as exc:
            raise CaseError(f"cannot find the baseline of {result.label}: {exc}") from None
        except Exception as exc:  # the database failed again on a fresh connection: no test fails for it
            if not _database_fault(exc):
                raise
            from ..history.location import one_line

            self.unread = f"the history could not be read ({one_line(exc)})"
            history = None
        return choose(result, golden=golden, history=history, static=static)

    # --- goldens ----------------------------------------------------------------------------
    def accept(self, results: list[CaseResult]) -> list[str]:
        """--gemmcheck-accept: these results become the goldens of their cases; a line per kernel
        (the file written, or why it was not). A result whose launch raised or hung is no
        baseline to accept: it is left out, and said so."""
        from ..environment.git import git_state
        from ..judging.goldens import GoldenError
        from ..records.result import HUNG, RAISED

        revision, dirty = git_state(self.rootdir)
        note = "accepted" + (f" at {revision[:10]}{'+' if dirty else ''}" if revision else "")
        if self.settings.tag:
            note += f" ({self.settings.tag})"
        kernels, lines = set(), []
        for result in results:
            if {RAISED, HUNG} & set(result.kinds):
                lines.append(
                    f"not accepted as a golden: {result.label}: a launch "
                    f"{'raised' if RAISED in result.kinds else 'hung'}"
                )
                continue
            try:
                self.goldens.accept(result, self.settings.scope, note)
            except GoldenError as exc:
                lines.append(f"not accepted as a golden: {result.label}: {exc}")
                continue
            kernels.add(result.kernel)
        for kernel in sorted(kernels):
            try:
                lines.append(f"accepted as goldens: {self.goldens.write(kernel)}")
            except (GoldenError, OSError) as exc:
                lines.append(f"goldens of {kernel} not written: {exc}")
        return lines
