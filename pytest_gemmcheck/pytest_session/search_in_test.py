"""The fixture's ``gemmcheck.search(...)``: the search in a test, its probes the test's cases
(judged, recorded in the session's run, on the test's report), and the test failed with the
smallest failing configuration and its evidence.

Under ``--gemmcheck-processes=N`` each probe is spread over N fresh processes, as a case's
launches are: the test runs here, and each probe runs the test again in N children, which
find the configuration to probe in an environment variable and run only that one. The test
is therefore not handed to the children as a whole (``calls_search``).
"""

from __future__ import annotations

import dis
import json
import os
from typing import Any, Callable

from ..errors import CaseError, GemmcheckFailure
from ..searching.engine import Outcome
from ..searching.entry import Request, example_folder, probe_here, probing, request, run
from ..searching.result import Probe, SearchResult, config_text
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
        if (instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and instruction.argval == "search" and before is not None
                and before.opname.startswith(("LOAD_FAST", "LOAD_DEREF")) and before.argval == fixture):
            return True
        before = instruction
    return False


def _digest(req: Request) -> str:
    from ..searching.entry import case_record

    return req.space.digest(req.kernel, case_record(req.case_kwargs)).hex()


def search_in_test(session, context, kernel: str, make_launch: Callable, *, db=SESSION,
                   tag=SESSION, **arguments: Any) -> SearchResult:
    """``gemmcheck.search`` of a test. ``db`` and ``tag`` are the session's (--gemmcheck-db,
    --gemmcheck-tag); ``db=None`` records nothing."""
    __tracebackhide__ = True
    from .state import is_child

    settings = context.settings
    if tag is not SESSION and tag != settings.tag:
        raise CaseError(f"gemmcheck.search(tag={tag!r}) under pytest: the probes are cases of the session's run, "
                        "which --gemmcheck-tag names")
    if db is not SESSION and db is not None:
        raise CaseError(f"gemmcheck.search(db={db!r}) under pytest: the probes are recorded where the session's "
                        "are (--gemmcheck-db), or nowhere with db=None")
    if db is None:  # judged against the history and goldens, kept off the report and so out of the database
        context = _unrecorded(context)
    # the example database is written where the history is: not under --gemmcheck-no-record
    examples_kept = db is not None and not settings.no_record
    context = probing(context)
    req = request(context, kernel, make_launch, **arguments)
    if is_child():
        return _probe_in_child(context, req)
    probe = _spread(session, context, req) if settings.processes > 1 else probe_here(context, req)
    result = run(req, probe, database=example_folder(session.config.rootpath) if examples_kept else None)
    if result.minimal is not None and not settings.accept:  # accepting: this run's results become the goldens
        raise GemmcheckFailure(result.summary())
    return result


def _unrecorded(context):
    import dataclasses

    return dataclasses.replace(context, record=lambda result: None)


def _probe_in_child(context, req: Request) -> SearchResult:
    """In a probe's child: the one configuration its parent asked for, launched here and left
    unjudged (the parent judges the processes' launches together)."""
    import dataclasses

    asked = os.environ.get(PROBE_ENV)
    if asked is None:
        raise CaseError("gemmcheck.search spreads each probe over --gemmcheck-processes itself, and the test that "
                        "calls it is run in this process: call gemmcheck.search in the test function itself, not "
                        "through a helper")
    asked = json.loads(asked)
    result = SearchResult(kernel=req.kernel, space=req.space.spec(), case={}, seed=req.seed, examples=req.examples,
                          stopped="a probe's process: one configuration, launched for the parent to judge")
    if asked["search"] != _digest(req):  # another search of the same test
        return result
    config = req.space.from_dict(asked["config"])
    outcome = probe_here(context, dataclasses.replace(req, repeat=None))(config)  # its share: --gemmcheck-repeat
    result.probes.append(Probe(config=req.space.as_dict(config), result=outcome.result,
                               failing=bool(outcome.result.bad_launches), seconds=0.0, phase="search",
                               note=outcome.note))
    return result


def _spread(session, context, req: Request) -> Callable[[Config], Outcome]:
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

    def probe(configuration: Config) -> Outcome:
        values = req.space.as_dict(configuration)
        key = Case(context, req.kernel, **values, **req.case_kwargs).key
        env = {PROBE_ENV: json.dumps({"search": search, "config": values})}
        try:
            children, _ = run_children(context.nodeid, settings, command=child_command(config, context.nodeid),
                                       invocation_dir=config.invocation_params.dir, devices=devices, env=env)
        except ChildFailure as exc:
            raise GemmcheckFailure(f"gemmcheck: --gemmcheck-processes={settings.processes}: probing "
                                   f"{config_text(values)}: {exc}") from None
        merged = [result for result in aggregate(children) if result.key == key]
        if not merged:
            raise GemmcheckFailure(f"gemmcheck: --gemmcheck-processes={settings.processes}: the processes probing "
                                   f"{config_text(values)} ran no such case")
        result = merged[0]
        result.nodeid = context.nodeid
        conclude(result, settings, context.baseline_for)
        context.record(result)
        return Outcome(result)

    return probe
