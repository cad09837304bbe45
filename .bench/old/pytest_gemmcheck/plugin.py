"""The pytest entry point: options, fixtures and hooks. Thin: each job lives in its own module, and
nothing heavy is imported, nor any database opened, until a test asks for a gemmcheck fixture."""

from __future__ import annotations

import pytest

from .config import pytest_adapter
from .config.table import TestOverrides
from .pytest_session.state import REPORT_ATTR, GemmcheckSession, carried

SESSION_KEY = pytest.StashKey[GemmcheckSession]()
RESULTS_KEY = pytest.StashKey[list]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    pytest_adapter.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", pytest_adapter.MARKER_HELP)
    session = GemmcheckSession(config, pytest_adapter.resolve(config))
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "gemmcheck-session")  # it takes the reports, writes the summary
    if config.pluginmanager.hasplugin("xdist"):  # as pytest-randomly: xdist's hooks only with xdist
        from .pytest_session.xdist import XdistHooks

        config.pluginmanager.register(XdistHooks(session), "gemmcheck-xdist")


def _session(config: pytest.Config) -> GemmcheckSession:
    return config.stash[SESSION_KEY]


def _overrides(config: pytest.Config, node: pytest.Item) -> TestOverrides:
    return pytest_adapter.marker_overrides(_session(config).settings, node)


def _results_sink(item: pytest.Item) -> list:
    return item.stash.setdefault(RESULTS_KEY, [])


@pytest.fixture
def gemmcheck(request: pytest.FixtureRequest):
    """Case factory: ``gemmcheck.case(kernel, m=, n=, k=, quant=, tile=, ...)``; then
    ``case.inputs()`` and ``case.run(lambda out: kernel(..., out))``."""
    from .pytest_session.fixtures import GemmcheckFixture

    return GemmcheckFixture(
        _session(request.config),
        _overrides(request.config, request.node),
        request.node.nodeid,
        _results_sink(request.node),
    )


@pytest.fixture
def poisoned_output():
    """``poisoned_output(m, n, dtype=torch.bfloat16, device=None)``: a NaN-filled output."""
    from .pytest_session.fixtures import PoisonedOutput

    return PoisonedOutput()


@pytest.fixture
def bf16_reference():
    """``bf16_reference(inputs)`` or ``bf16_reference(a, b, a_scale=, b_scale=, quant=)``: the
    fp32 reference (TF32 off) rounded to bf16 (or ``out_dtype=``)."""
    from .pytest_session.fixtures import bf16_reference as reference

    return reference


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """--gemmcheck-processes: the test's launches run in fresh child processes instead."""
    if "gemmcheck" not in pyfuncitem.fixturenames:
        return None
    from .pytest_session.processes import run_in_processes

    config = pyfuncitem.config
    handled = run_in_processes(_session(config), pyfuncitem, _overrides(config, pyfuncitem), _results_sink(pyfuncitem))
    return True if handled else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    payload = item.stash.get(RESULTS_KEY, None) if call.when == "call" else None
    if payload:  # JUnit XML properties, pytest's way: the item's reports (an xdist worker's too) carry them
        from .reporting.ci_output import junit_properties

        item.user_properties.extend(junit_properties(payload))
    outcome = yield
    if payload:  # rides on the report: under xdist it reaches the controller with it
        setattr(outcome.get_result(), REPORT_ATTR, carried(payload))
