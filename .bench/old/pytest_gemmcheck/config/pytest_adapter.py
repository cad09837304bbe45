"""The option table (table.py) as pytest sees it: ``--gemmcheck-*`` options and ini keys added to
pytest's parser, resolved into Settings, the marker registered. The only module of config/ that
imports pytest."""

from __future__ import annotations

import argparse
import os

import pytest

from .table import (
    BY_NAME,
    CONFLICTS,
    MARKER_KEYS,
    OPTIONS,
    Option,
    Settings,
    TestOverrides,
    apply_marker,
    help_text,
    settings_from_child,
)

# Where a --gemmcheck-processes parent puts the settings its child runs with (table.child_settings).
CHILD_SETTINGS = "GEMMCHECK_CHILD_SETTINGS"

MARKER_HELP = (
    "gemmcheck(" + ", ".join(f"{key}=..." for key in MARKER_KEYS) + "): per-test overrides of the "
    "--gemmcheck-* options for every case the test runs"
)


def _argparse_type(option: Option):
    def convert(text):
        try:
            return option.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = option.name  # argparse names the type in some messages
    return convert


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("gemmcheck", "GEMM launch checking (pytest-gemmcheck)")
    for option in OPTIONS:
        shown = help_text(option).replace("%", "%%")  # argparse formats help with %
        if option.flag_only:
            group.addoption(option.flag, dest=option.dest, default=None, action="store_true", help=shown)
        else:
            group.addoption(
                option.flag,
                dest=option.dest,
                default=None,
                type=_argparse_type(option),
                metavar=option.metavar,
                help=shown,
            )
        parser.addini(option.ini, help=f"default for {option.flag}: {help_text(option)}", default=None)


def resolved_by_parent(environ=None) -> bool:
    """Whether this session is a --gemmcheck-processes child, whose settings its parent resolved."""
    return bool((os.environ if environ is None else environ).get(CHILD_SETTINGS))


def resolve(config: pytest.Config, environ=None) -> Settings:
    """Settings from the command line, then the environment (where an option has a variable),
    then the ini file, then the defaults; a --gemmcheck-processes child's are its parent's."""
    environ = os.environ if environ is None else environ
    if resolved_by_parent(environ):
        return settings_from_child(environ[CHILD_SETTINGS])
    values = {}
    for option in OPTIONS:
        value = config.getoption(option.dest, default=None)
        sources = []
        if option.env and environ.get(option.env):
            sources.append((environ[option.env], f"environment variable {option.env}"))
        raw = config.getini(option.ini)
        if raw not in (None, "", []):
            sources.append((raw, f"ini option {option.ini} (the default of {option.flag})"))
        if value is None and sources:
            raw, where = sources[0]
            try:
                value = option.parse(raw)
            except ValueError as exc:
                raise pytest.UsageError(f"{where}: {exc}") from None
        if value is not None:
            values[option.field] = value
    for first, second, why in CONFLICTS:
        if values.get(BY_NAME[first].field) and values.get(BY_NAME[second].field):
            raise pytest.UsageError(f"{BY_NAME[first].flag} cannot be used with {BY_NAME[second].flag}: {why}")
    return Settings(**values)


def marker_overrides(settings: Settings, node: pytest.Item) -> TestOverrides:
    """The test's ``@pytest.mark.gemmcheck(...)`` over the session's settings (in a child: its
    parent applied them already). A bad key or value was a usage error at collection; where it
    was not checked then (an xdist worker) it fails the test in one line."""
    marker = node.get_closest_marker("gemmcheck")
    try:
        return apply_marker(settings, dict(marker.kwargs) if marker else {}, resolved=resolved_by_parent())
    except ValueError as exc:
        problem = str(exc)
    pytest.fail(f"{node.nodeid}: {problem}", pytrace=False)
