"""The plain-Python API: the fixture's machinery for scripts and notebooks.

::

    import pytest_gemmcheck as gc

    with gc.session(db=".gemmcheck/history.db", tag="repro") as s:   # or db=None: nothing recorded
        case = s.case("fused_gemm_scatter", m=4096, n=7168, k=256, quant="ptpc", tile="256x256")
        x = case.inputs()
        result = case.run(lambda out: kern(x.a, x.b, out, x.a_scale, x.b_scale), repeat=12)
        print(result.verdict, result.summary())

A session is one recorded run, as one pytest session is: its results are judged against the
goldens, else the history of earlier runs (a second session, in this script or a later one,
judges against the first), else clean, and a failing verdict raises only when asked
(``case.run(..., check=True)``). Options are the ``--gemmcheck-*`` options by their field names
(``repeat=12``, ``rtol=0.05``, ``stress="copy"``...), parsed by the same rules.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .config.table import BY_FIELD, SCRIPT_FIELDS, Settings
from .errors import CaseError, GemmcheckError

if TYPE_CHECKING:  # nothing of searching is imported until a search runs
    from .searching.search_result import SearchResult

_DEFAULT_DB = object()


def _unusable(message: str):
    raise GemmcheckError(f"{message}: start a new process")


def _settings(db, tag, goldens, options: dict[str, Any]) -> Settings:
    values = {}
    for name, value in options.items():
        option = BY_FIELD.get(name)
        if option is None or not option.script:
            known = ", ".join(sorted(SCRIPT_FIELDS))
            raise GemmcheckError(
                f"gemmcheck.session() has no option {name!r}; it takes db, tag, goldens, rootdir, on_result and {known}"
            )
        try:
            values[name] = option.parse(value)
        except ValueError as exc:
            raise GemmcheckError(f"gemmcheck.session({name}={value!r}): {exc} (the option {option.flag})") from None
    if db is None:
        values["no_record"] = True
    elif db is not _DEFAULT_DB:
        values["db"] = str(db)
    if tag is not None:
        try:
            values["tag"] = BY_FIELD["tag"].parse(tag)
        except ValueError as exc:
            raise GemmcheckError(f"gemmcheck.session(tag=...): {exc} (the option {BY_FIELD['tag'].flag})") from None
    if goldens is not None:
        values["goldens"] = str(goldens)
    return Settings(**values)


class Session:
    """One run of a script's cases; a context manager (``with gc.session(...) as s``) that
    writes the run's end on leaving, marked interrupted when an exception left it."""

    def __init__(
        self,
        *,
        db=_DEFAULT_DB,
        tag: str | None = None,
        goldens: str | Path | None = None,
        rootdir: str | Path | None = None,
        on_result: Callable | None = None,
        **options: Any,
    ):
        from .case.sanitized import target_key
        from .launch.rank_group import launcher_rank_not_first
        from .pytest_session.run_history import SessionHistory

        self.sanitizing = target_key() is not None  # a sanitizer child of this script: nothing recorded or read
        if self.sanitizing:
            db = None
        self.settings = _settings(db, tag, goldens, options)
        self.rootdir = Path(rootdir if rootdir is not None else os.getcwd()).resolve()
        # db=None: nothing recorded and no history read, judged against the goldens, else clean
        self.history = SessionHistory(
            self.settings,
            rootdir=self.rootdir,
            start_dir=Path(os.getcwd()),
            command=[Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python", *sys.argv[1:]],
            token=uuid.uuid4().hex,
            # under a launcher, rank 0's session records each collective case once
            owner=not launcher_rank_not_first(),
            reads=db is not None,
        )
        self.on_result = on_result  # called with each judged result before it is recorded
        self.results: list = []
        self._cases = None  # the case host, made at the first case
        self.lost_devices: set[str] = set()  # devices a launch hung on
        self._closed = False

    # --- cases ----------------------------------------------------------------------------
    def case(self, kernel: str, **kwargs: Any):
        """``gemmcheck.case(kernel, m=..., n=..., k=..., ...)``, as the fixture takes it: a
        :class:`~pytest_gemmcheck.Case` whose ``run`` returns its judged
        :class:`~pytest_gemmcheck.CaseResult` (raising only with ``check=True``)."""
        if self._closed:
            raise GemmcheckError("this gemmcheck session has ended; start another with gemmcheck.session()")
        return self._host().case(kernel, **kwargs)

    def search(self, kernel: str, make_launch: Callable, **arguments: Any):
        """``gemmcheck.search(...)`` in this session: each probe is one of its cases, judged and
        recorded in its run; the arguments are the search's, less the session's own (db, tag,
        rootdir, goldens, options). Returns a :class:`~pytest_gemmcheck.SearchResult`."""
        from .searching.entry import search_in_session

        if self._closed:
            raise GemmcheckError("this gemmcheck session has ended; start another with gemmcheck.session()")
        # the example database is written where the history is: not at all with db=None
        rootdir = None if self.settings.no_record else self.rootdir
        return search_in_session(self._host().context, rootdir, kernel, make_launch, **arguments)

    def _host(self):
        if self._cases is None:
            from .case.host import CaseHost, SessionStack

            self.history.prepare()  # the database is opened (and refused) before any launch
            self._cases = CaseHost(
                self.settings,
                record=self._record,
                baseline_for=self.history.baseline_for,
                stack_info=SessionStack(self.settings),
                lost_devices=self.lost_devices,
                unusable=_unusable,
                judge=not self.sanitizing,
                raises=False,
                sanitize=self._sanitize,
            )
        return self._cases

    def _sanitize(self, case) -> list:
        """--gemmcheck-sanitize in a script: the script runs again under each tool, with the case
        named; an interactive session has no script to run again."""
        from .case.sanitized import sanitize

        script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
        child = [sys.executable, *sys.argv] if script is not None and script.is_file() else None
        return sanitize(
            case.key,
            case.device,
            self.settings,
            child=child,
            environ=dict(os.environ),
            cwd=os.getcwd(),
            unavailable="not run: a script's case is sanitized by running the script again, and this "
            "session has no script file (an interactive session or a notebook)",
        )

    def _record(self, result) -> None:
        if self.on_result is not None:
            self.on_result(result)
        self.results.append(result)
        self.history.record(result)

    # --- the end --------------------------------------------------------------------------
    def close(self, *, interrupted: bool = False) -> str:
        """The run's end written (once); the line that says what was recorded, or ""."""
        if self._closed:
            return ""
        self._closed = True
        lines = self.history.accept(self.results) if self.settings.accept and not interrupted else []
        failed = any(result.failed for result in self.results)
        self.history.flush()
        self.history.finish(1 if failed else 0, interrupted)
        lines.insert(0, self.history.summary(judged=bool(self.results))[0])
        return "\n".join(line for line in lines if line)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        line = self.close(interrupted=kind is not None)
        if line and kind is None:
            print(line, file=sys.stderr)


def session(**kwargs: Any) -> Session:
    """A run of cases outside pytest: ``with gemmcheck.session(db=..., tag=...) as s``. Keywords:
    ``db`` (a SQLAlchemy URL or SQLite path; default ``.gemmcheck/history.db`` under ``rootdir``;
    None records nothing), ``tag``, ``goldens`` (a folder; default ``goldens/`` under ``rootdir``),
    ``rootdir`` (default: the current folder), ``on_result`` (a callable given each result before it
    is recorded), and any ``--gemmcheck-*`` option by its field name (``repeat=12``)."""
    return Session(**kwargs)


_SESSION_DEFAULT = object()


def search(
    kernel: str,
    make_launch: Callable,
    *,
    m,
    n,
    k,
    quant="bf16",
    params=None,
    tile=None,
    examples=None,
    repeat=None,
    device=None,
    db=_SESSION_DEFAULT,
    tag=None,
    seed=None,
    budget=None,
    rootdir=None,
    goldens=None,
    out_dtype=None,
    fp8=None,
    deterministic=None,
    rtol=None,
    floor=None,
    reference=None,
    **options,
) -> SearchResult:
    """Search ``kernel`` for its smallest failing configuration, outside pytest.

    ``make_launch(case, inputs)`` returns the launch ``launch(out)`` of one configuration
    (``case.m``, ``case.n``, ``case.k``, ``case.quant``, ``case.params``). ``m``, ``n``, ``k``:
    ``(lo, hi, step)`` (lo and hi multiples of step) or one value; ``quant``: a mode or a list of
    them; ``params``: ``{name: [values]}``, the first value of each the one to prefer; ``tile``:
    every probe's tile. ``examples``: configurations Hypothesis draws at most (default
    ``search_examples``, 100); ``repeat``: launches per probe (default the session's);
    ``budget``: seconds for the whole search; ``seed``: of the search's choices (default the
    session's seed). Runs in a session of its own: ``db`` (None: nothing recorded, and no
    example database), ``tag`` (default ``search:KERNEL``), ``rootdir``, ``goldens`` and any
    session option by its field name. Returns a :class:`SearchResult`; raises nothing on
    failure (print it, or test ``result.minimal``)."""
    from .searching.entry import CASE_KEYWORDS

    unknown = sorted(name for name in options if name not in BY_FIELD)
    if unknown:
        raise CaseError(
            f"gemmcheck.search got unknown argument(s) {', '.join(unknown)}; besides the axes it takes "
            f"examples, repeat, seed, budget, db, tag, rootdir, goldens, the case keywords "
            f"{', '.join(CASE_KEYWORDS)} and gemmcheck.session()'s options"
        )
    session_args = {
        "tag": tag if tag is not None else f"search:{kernel}",
        "rootdir": rootdir,
        "goldens": goldens,
        **options,
    }
    if db is not _SESSION_DEFAULT:
        session_args["db"] = db
    with Session(**session_args) as session:
        return session.search(
            kernel,
            make_launch,
            m=m,
            n=n,
            k=k,
            quant=quant,
            params=params,
            tile=tile,
            examples=examples,
            repeat=repeat,
            device=device,
            seed=seed,
            budget=budget,
            out_dtype=out_dtype,
            fp8=fp8,
            deterministic=deterministic,
            rtol=rtol,
            floor=floor,
            reference=reference,
        )
