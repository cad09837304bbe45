"""The fixture's ``gemmcheck.search(...)``: the search in a test, its probes the test's cases
(judged, recorded in the session's run, on the test's report), and the test failed with the
smallest failing configuration and its evidence.

Under ``--gemmcheck-processes=N`` each probe is spread over N fresh processes, as a case's
launches are: the test runs here, and each probe runs the test again in N children, which
find the configuration to probe in an environment variable and run only that one (a child
whose make_launch skips it writes the reason to a file named there). The test is therefore not
handed to the children as a whole (``calls_search``).

A search whose every configuration was skipped by make_launch checked nothing: its test is
skipped, with the first reason.
"""

from __future__ import annotations

import dis
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from ..errors import CaseError, GemmcheckFailure
from ..searching.entry import Request, example_folder, probe_here, refuse_unmet, request, run
from ..searching.search import Outcome
from ..searching.search_result import Probe, SearchResult, config_text
from ..searching.space import Config

PROBE_ENV = "GEMMCHECK_SEARCH_PROBE"  # in a probe's child: which search and configuration to probe
SESSION = object()  # db and tag: the pytest session's


def calls_search(function, fixture: str = "gemmcheck") -> bool:
    """Whether the test function itself calls ``gemmcheck.search`` (the fixture's name loaded,
    then its attribute ``search``): such a test runs in this process under
    --gemmcheck-processes, and spreads its probes instead."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    before = None
    for instruction in dis.get_instructions(code):
        if (
            instruction.opname in ("LOAD_ATTR", "LOAD_METHOD")
            and instruction.argval == "search"
            and before is not None
            and before.opname.startswith(("LOAD_FAST", "LOAD_DEREF"))
            and before.argval == fixture
        ):
            return True
        before = instruction
    return False


def _digest(req: Request) -> str:
    from ..searching.entry import case_record

    return req.space.digest(req.kernel, case_record(req.case_kwargs, identified=True)).hex()


def search_in_test(
    session, context, kernel: str, make_launch: Callable, *, db=SESSION, tag=SESSION, **arguments: Any
) -> SearchResult:
    """``gemmcheck.search`` of a test. ``db`` and ``tag`` are the session's (--gemmcheck-db,
    --gemmcheck-tag); ``db=None`` records nothing."""
    __tracebackhide__ = True
    from .state import is_child

    settings = context.settings
    if tag is not SESSION and tag != settings.tag:
        raise CaseError(
            f"gemmcheck.search(tag={tag!r}) under pytest: the probes are cases of the session's run, "
            "which --gemmcheck-tag names"
        )
    if db is not SESSION and db is not None:
        raise CaseError(
            f"gemmcheck.search(db={db!r}) under pytest: the probes are recorded where the session's "
            "are (--gemmcheck-db), or nowhere with db=None"
        )
    if db is None:  # judged against the history and goldens, kept off the report and so out of the database
        context = _unrecorded(context)
    # the example database is written where the history is: not under --gemmcheck-no-record
    examples_kept = db is not None and not settings.no_record
    req = request(context, kernel, make_launch, **arguments)
    if is_child():
        return _probe_in_child(context, req)
    probe = _spread(session, context, req) if settings.processes > 1 else probe_here(context, req)
    result = run(req, probe, settings, database=example_folder(session.config.rootpath) if examples_kept else None)
    if result.minimal is not None and not settings.accept:  # accepting: this run's results become the goldens
        raise GemmcheckFailure(result.summary())
    if result.skipped and not result.probes:
        import pytest

        pytest.skip(
            f"gemmcheck.search {kernel}: make_launch skipped every configuration tried "
            f"({len(result.skipped)}), the first: {result.skipped[0]['reason']}"
        )
    return result


def _unrecorded(context):
    import dataclasses

    return dataclasses.replace(context, record=lambda result: None)


def _probe_in_child(context, req: Request) -> SearchResult:
    """In a probe's child: the one configuration its parent asked for, launched here with the
    settings its parent gave (its share of the launches, stopping at a bad one or not) and left
    unjudged (the parent judges the processes' launches together)."""
    import dataclasses

    asked = os.environ.get(PROBE_ENV)
    if asked is None:
        raise CaseError(
            "gemmcheck.search spreads each probe over --gemmcheck-processes itself, and the test that "
            "calls it is run in this process: call gemmcheck.search in the test function itself, not "
            "through a helper"
        )
    asked = json.loads(asked)
    result = SearchResult(
        kernel=req.kernel,
        space=req.space.spec(),
        case={},
        seed=req.seed,
        examples=req.examples,
        stopped="a probe's process: one configuration, launched for the parent to judge",
    )
    if asked["search"] != _digest(req):  # another search of the same test
        return result
    config = req.space.from_dict(asked["config"])
    probe = probe_here(context, dataclasses.replace(req, repeat=None))  # its share: --gemmcheck-repeat
    outcome = probe(config, stop_on_bad=context.settings.stop_on_bad)
    if outcome.skipped is not None:
        Path(asked["skipped"]).write_text(outcome.skipped)
        return result
    result.probes.append(
        Probe(
            config=req.space.as_dict(config),
            result=outcome.result,
            failing=bool(outcome.result.bad_launches),
            seconds=0.0,
            phase="search",
            note=outcome.note,
        )
    )
    return result


def _spread(session, context, req: Request) -> Callable[..., Outcome]:
    """Probes over --gemmcheck-processes fresh processes: the children's launches merged into
    one result, judged and recorded here, as a spread case's are."""
    import dataclasses

    from ..case.case import Case
    from ..judging.conclude import conclude
    from .processes import ChildFailure, aggregate, child_command, child_devices, run_children

    settings = context.settings if req.repeat is None else dataclasses.replace(context.settings, repeat=req.repeat)
    devices = child_devices(settings)
    config = session.config
    search = _digest(req)

    def probe(configuration: Config, launches: int | None = None, stop_on_bad: bool = True) -> Outcome:
        values = req.space.as_dict(configuration)
        key = Case(context, req.kernel, **values, **req.case_kwargs).key
        asked = dataclasses.replace(
            settings, stop_on_bad=stop_on_bad, repeat=launches if launches is not None else settings.repeat
        )
        with tempfile.TemporaryDirectory(prefix="gemmcheck-probe-") as folder:
            skipped = Path(folder) / "skipped"
            env = {PROBE_ENV: json.dumps({"search": search, "config": values, "skipped": str(skipped)})}
            try:
                children, _ = run_children(
                    context.nodeid,
                    asked,
                    command=child_command(config, context.nodeid),
                    invocation_dir=config.invocation_params.dir,
                    devices=devices,
                    env=env,
                )
            except ChildFailure as exc:
                raise GemmcheckFailure(
                    f"gemmcheck: --gemmcheck-processes={settings.processes}: probing {config_text(values)}: {exc}"
                ) from None
            if skipped.exists():
                return Outcome(None, skipped=skipped.read_text())
        merged = [result for result in aggregate(children) if result.key == key]
        if not merged:
            raise GemmcheckFailure(
                f"gemmcheck: --gemmcheck-processes={settings.processes}: the processes probing "
                f"{config_text(values)} ran no such case"
            )
        result = merged[0]
        result.nodeid = context.nodeid
        conclude(result, asked, context.baseline_for)
        context.record(result)
        refuse_unmet(req, values, result, asked)
        return Outcome(result)

    return probe
