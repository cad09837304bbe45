"""``gemmcheck.search(...)``: its arguments checked before anything runs, its probes made as
gemmcheck cases of the session it runs in, and the search run over them.

A probe is ``case.run`` of one configuration, with the session's settings (repeat, stress,
launch timeout, check backend...) and ``stop_on_bad``: it stops at its first bad launch, as a
probe only asks whether the configuration fails. Its result is judged and recorded as any case
of the session is. ``make_launch(case, inputs)`` gives the launch; when it raises, the probe's
one launch raises the same exception: a failing probe, with the kernel's traceback as its
evidence, since compiling or specialising for a shape is where many kernels fail. A
``pytest.skip()`` (or ``unittest.SkipTest``) from make_launch leaves the configuration out of the
search, as Hypothesis's ``assume`` does, with its reason.

A probe whose result leaves a requirement of the session unmet (``--gemmcheck-require-sanitize``,
and its sanitized launch could not run) stops the search with that failure: a configuration that
could not be checked as required is neither failing nor passing, and no shape is reported.
"""

from __future__ import annotations

import dataclasses
import numbers
import sys
import unittest
from pathlib import Path
from typing import Any, Callable

from ..errors import CaseError, GemmcheckFailure
from .search import Outcome, Search
from .search_result import SearchResult, config_text
from .space import Config, Space, parse_space

# The folder of the example database, under the rootdir's .gemmcheck/ (the history's folder)
EXAMPLES_FOLDER = "search"
CASE_KEYWORDS = ("tile", "out_dtype", "device", "fp8", "deterministic", "rtol", "floor", "reference")


@dataclasses.dataclass
class Request:
    """A search's arguments, checked."""

    kernel: str
    make_launch: Callable
    space: Space
    case_kwargs: dict[str, Any]  # every probe's other case keywords
    examples: int
    repeat: int | str | None
    seed: int
    budget: float | None


def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise CaseError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def request(
    context,
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
    seed=None,
    budget=None,
    **case_kwargs,
) -> Request:
    """The arguments checked, each bad one a CaseError that names it; every quant mode is tried
    on the corners of the space as a case (not run), so that a shape a mode refuses is said
    here rather than half-way through the search."""
    from ..case.case import Case
    from ..case.identity import parse_tile
    from ..config.table import BY_FIELD, parse_repeat

    if not callable(make_launch):
        raise CaseError(f"make_launch must be a callable make_launch(case, inputs) -> launch, got {make_launch!r}")
    unknown = sorted(set(case_kwargs) - set(CASE_KEYWORDS))
    if unknown:
        raise CaseError(
            f"gemmcheck.search got unknown argument(s) {', '.join(unknown)}; besides the axes it takes "
            f"examples, repeat, seed, budget and the case keywords {', '.join(CASE_KEYWORDS)}"
        )
    try:
        tile_edges = parse_tile(tile)
    except ValueError as exc:
        raise CaseError(str(exc)) from None
    space = parse_space(m=m, n=n, k=k, quant=quant, params=params, tile=tile_edges)
    settings = context.settings
    examples = settings.search_examples if examples is None else _count("examples", examples, 1)
    seed = settings.seed if seed is None else _count("seed", seed, 0)
    if repeat is not None:
        try:
            repeat = parse_repeat(repeat)
        except ValueError as exc:
            raise CaseError(f"repeat: {exc}") from None
    if budget is not None:
        try:
            budget = BY_FIELD["budget"].parse(budget)
        except ValueError as exc:
            raise CaseError(f"budget: {exc}") from None
    case_kwargs = {"tile": tile, **{name: value for name, value in case_kwargs.items() if value is not None}}
    for shape in zip(*(_corners(space.axis(name)) for name in ("m", "n", "k"))):
        for quant_name in space.quants:
            Case(
                context,
                kernel,
                m=shape[0],
                n=shape[1],
                k=shape[2],
                quant=quant_name,
                params={name: values[0] for name, values in space.params},
                **case_kwargs,
            )
    return Request(kernel, make_launch, space, case_kwargs, examples, repeat, seed, budget)


def _corners(axis) -> tuple[int, int, int]:
    """The lowest value, the next one and the highest: a quant mode's rules on a shape (K a
    multiple of 32, say) show on them, whatever the step."""
    return axis.lo, axis.values[min(1, len(axis.values) - 1)], axis.hi


def _raising(exc: Exception) -> Callable:
    """A launch that raises what make_launch raised: recorded as the probe's one launch, with
    its traceback."""

    def launch(out):
        raise exc

    return launch


def skip_reason(exc: BaseException) -> str | None:
    """The reason of a skip make_launch raised (``pytest.skip``, ``unittest.SkipTest``), else None.
    pytest's exception is looked up only where pytest is loaded: a script imports no pytest."""
    outcomes = sys.modules.get("_pytest.outcomes")
    if isinstance(exc, unittest.SkipTest) or (outcomes is not None and isinstance(exc, outcomes.Skipped)):
        return str(exc) or type(exc).__name__
    return None


def probe_here(context, req: Request) -> Callable[..., Outcome]:
    """Probes run in this process: ``case.run`` of each configuration, ``launches`` of them
    (default the search's repeat), stopping at the first bad one unless ``stop_on_bad`` is off."""
    from ..case.case import Case

    def probe(config: Config, launches: int | None = None, stop_on_bad: bool = True) -> Outcome:
        values = req.space.as_dict(config)
        settings = dataclasses.replace(context.settings, stop_on_bad=stop_on_bad)
        case = Case(dataclasses.replace(context, settings=settings), req.kernel, **values, **req.case_kwargs)
        inputs = case.inputs()
        note = ""
        try:
            launch = req.make_launch(case, inputs)
        except BaseException as exc:  # pytest's skip is a BaseException
            skipped = skip_reason(exc)
            if skipped is not None:
                return Outcome(None, skipped=skipped)
            if not isinstance(exc, Exception):
                raise
            note = f"make_launch raised {type(exc).__name__}"  # how kernels fail too: compiling for the shape
            launch = _raising(exc)
        else:
            if not callable(launch):
                raise CaseError(
                    f"make_launch(case, inputs) must return the launch, a callable launch(out); for "
                    f"{config_text(values)} it returned {launch!r}"
                )
        result = case.run(launch, repeat=launches if launches is not None else req.repeat, check=False)
        refuse_unmet(req, values, result, context.settings)
        return Outcome(result, note)

    return probe


def refuse_unmet(req: Request, values: dict, result, settings) -> None:
    """A probe whose result leaves a requirement unmet stops the search, with the requirement's
    failure (never a failing configuration)."""
    from ..judging.verdict import unmet_requirements

    unmet = unmet_requirements(result, require_sanitize=settings.require_sanitize)
    if unmet:
        raise GemmcheckFailure(
            f"gemmcheck.search {req.kernel}: stopped at its probe of {config_text(values)}: "
            + "; ".join(unmet)
            + ". A configuration that could not be checked as required is neither failing nor "
            "passing: no shape is reported"
        )


def launches_of(req: Request, settings) -> int:
    """The launches of a probe that runs them all: the search's repeat, else the session's
    (``auto``: the default count)."""
    from ..config.table import DEFAULTS

    repeat = req.repeat if req.repeat is not None else settings.repeat
    return repeat if isinstance(repeat, int) else DEFAULTS.repeat


def case_record(case_kwargs: dict[str, Any], *, identified: bool = False) -> dict[str, Any]:
    """The probes' other case keywords as plain data, for the paste line (a reference by its
    name) or, ``identified``, the example database's key (a reference by what it computes, as
    the case key has it, so two lambdas of one test keep their examples apart); the device is
    where it ran, not what it is."""
    from ..case.identity import dtype_name, out_dtype
    from ..case.reference_identity import reference_identity, reference_name

    record = {}
    for name, value in case_kwargs.items():
        if name == "device" or value is None:
            continue
        if name == "out_dtype":
            value = dtype_name(out_dtype(value))
        elif name == "reference":
            value = reference_identity(value) if identified else reference_name(value)
        elif name == "tile" and not isinstance(value, str):
            value = "x".join(str(int(edge)) for edge in value)
        record[name] = value
    return record


def operand_bytes(quant: str) -> int:
    """A quant mode's operand element size: fp8 modes 1 byte, the others 2."""
    from ..case.quant import quant_mode

    return 1 if quant_mode(quant).uses_fp8 else 2


def example_folder(rootdir: Path) -> Path:
    """The example database's folder, beside the default history under the rootdir (made when
    something is stored: examples.py)."""
    from ..history.location import DEFAULT_PATH

    return Path(rootdir) / DEFAULT_PATH.parent / EXAMPLES_FOLDER


def run(req: Request, probe: Callable[..., Outcome], settings, *, database: Path | None) -> SearchResult:
    return Search(
        kernel=req.kernel,
        space=req.space,
        probe=probe,
        operand_bytes=operand_bytes,
        examples=req.examples,
        seed=req.seed,
        budget=req.budget,
        database=database,
        case=case_record(req.case_kwargs),
        examples_key=case_record(req.case_kwargs, identified=True),
        repeat=launches_of(req, settings),
        alpha=settings.alpha,
    ).run()


def search_in_session(context, rootdir: Path | None, kernel: str, make_launch: Callable, **arguments) -> SearchResult:
    """A script session's search (``Session.search``): its probes are the session's cases;
    ``rootdir``: where the example database lives, None for none (nothing recorded)."""
    req = request(context, kernel, make_launch, **arguments)
    return run(
        req,
        probe_here(context, req),
        context.settings,
        database=example_folder(rootdir) if rootdir is not None else None,
    )
