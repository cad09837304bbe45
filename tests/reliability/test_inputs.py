"""Inputs from users, fuzzed: every --gemmcheck-* option's parser, the marker, real sessions
with bad values, and the ``gemmcheck`` command. Each gives a value or one line that names what
was wrong, never a traceback."""

import contextlib
import io
import os
import re

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pytest_gemmcheck.config.table import MARKER_KEYS, OPTIONS, Settings, apply_marker

NUMERIC = [
    option for option in OPTIONS if isinstance(option.default, (int, float)) and not isinstance(option.default, bool)
]
# what the option table documents: ASCII digits, a sign, and for reals a decimal point and an exponent
ASCII_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")

# text that looks like a number in some script, beside any text at all
NUMBERISH = st.text(alphabet="0123456789+-.eE_ \t٣３٠۱१²⁵½", max_size=12)
ANY_TEXT = st.text(max_size=40) | NUMBERISH
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reads_well(message: str, option) -> bool:
    """One line that says what was expected, in the plugin's words, not Python's."""
    return (
        bool(message)
        and "\n" not in message
        and ("expected" in message or option.flag in message)
        and not any(words in message for words in ("invalid literal", "could not convert", "object has no"))
    )


# --- the parsers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("option", NUMERIC, ids=lambda option: option.name)
@pytest.mark.parametrize("text", ["٣", "３", "1_000", "1_0.5", "٣.٥", "0x10", "1e", "", " "])
def test_numbers_are_ascii_decimals_only(option, text):
    with pytest.raises(ValueError, match="expected"):
        option.parse(text)


@pytest.mark.parametrize("option", NUMERIC, ids=lambda option: option.name)
def test_plain_numbers_are_accepted(option):
    default = option.default  # a valid value
    whole = isinstance(default, int)
    texts = (
        [str(default), f"+{default}", f" {default} "]
        if whole
        else [repr(default), f"+{default!r}", f"{default:e}", f"{default:E} "]
    )
    for text in texts:
        value = option.parse(text)
        assert value == default and type(value) is type(default), text


@pytest.mark.parametrize("value", [True, 3.7, "3.0", [3]])
def test_whole_numbers_from_a_marker_are_whole_numbers(value):
    with pytest.raises(ValueError, match="expected a whole number"):
        apply_marker(Settings(), {"repeat": value})
    assert apply_marker(Settings(), {"repeat": 3, "rtol": 1}).settings.rtol == 1.0


@pytest.mark.parametrize("text", ["٣", "０-３", "²", "1,٣"])
def test_devices_are_ascii_indices(text):
    devices = next(option for option in OPTIONS if option.name == "devices")
    with pytest.raises(ValueError, match="--gemmcheck-devices"):
        devices.parse(text)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.name)
@FUZZ
@given(text=ANY_TEXT)
def test_every_parser_gives_a_value_or_a_value_error_that_reads_well(option, text):
    try:
        value = option.parse(text)
    except ValueError as exc:
        assert reads_well(str(exc), option), str(exc)
        return
    if option in NUMERIC and value != "auto":
        assert ASCII_NUMBER.fullmatch(text.strip(" \t\n\r\f\v")), f"{option.flag} took {text!r} for {value!r}"


VALUES = (
    st.text(max_size=12)
    | NUMBERISH
    | st.integers()
    | st.floats()
    | st.booleans()
    | st.none()
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)


@FUZZ
@given(st.dictionaries(st.sampled_from(MARKER_KEYS) | st.text(max_size=8), VALUES, max_size=4))
def test_the_marker_gives_overrides_or_a_value_error(kwargs):
    try:
        overrides = apply_marker(Settings(), kwargs)
    except ValueError as exc:
        assert str(exc).startswith("@pytest.mark.gemmcheck") and "\n" not in str(exc)
        return
    assert overrides.deterministic in (None, True, False)
    shape = overrides.sanitize_shape
    assert shape is None or (len(shape) == 3 and all(type(size) is int and size >= 1 for size in shape))
    for key in set(kwargs) - {"deterministic", "sanitize_shape"}:
        assert type(getattr(overrides.settings, key)) in (int, float, str), (key, kwargs[key])


# --- real sessions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,ini,named",
    [
        (["--gemmcheck-repeat=٣"], "", "argument --gemmcheck-repeat: expected a whole number of launches"),
        (
            ["--gemmcheck-seed=1_000"],
            "",
            "argument --gemmcheck-seed: expected a whole number >= 0 and < 2**63, got '1_000'",
        ),
        (["--gemmcheck-rtol=０.05"], "", "argument --gemmcheck-rtol: expected a relative tolerance"),
        (["--gemmcheck-budget=1e"], "", "argument --gemmcheck-budget: expected a number of seconds"),
        (["--gemmcheck-devices=٣"], "", "argument --gemmcheck-devices: --gemmcheck-devices='٣'"),
        (["--gemmcheck-stress=loud"], "", "argument --gemmcheck-stress: expected one of none, copy, compute"),
        (
            [],
            "gemmcheck_processes = ３",
            "ini option gemmcheck_processes (the default of --gemmcheck-processes): expected",
        ),
        (
            [],
            "gemmcheck_wait_idle = 1_0",
            "ini option gemmcheck_wait_idle (the default of --gemmcheck-wait-idle): expected",
        ),
        ([], "gemmcheck_alpha = ٠.٠٥", "ini option gemmcheck_alpha (the default of --gemmcheck-alpha): expected"),
    ],
)
def test_a_session_with_a_bad_value_is_a_usage_error_naming_the_option(pytester, args, ini, named):
    pytester.makepyfile("def test_nothing(): pass")
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest(*args, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert any(named in line for line in result.stderr.lines), result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


# --- the gemmcheck command ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def history_db(tmp_path_factory):
    """A small real SQLite history: one run of two cases, one with bad launches; and a folder
    to run the command in (what it writes, it writes there)."""
    from pytest_gemmcheck.history.engine import open_database, resolve_url
    from pytest_gemmcheck.history.store import HistoryStore, RunInfo
    from pytest_gemmcheck.records.result import CaseResult, LaunchRecord

    folder = tmp_path_factory.mktemp("cli")
    engine = open_database(resolve_url(str(folder / "history.db"), folder), auto_upgrade=True)
    store = HistoryStore(engine)
    stack = {"gpu_arch": None, "fingerprint": "fcpu"}
    run = store.begin_run(RunInfo(tag="main", revision="abc123"), stack)
    results = []
    for key, kernel, bad in (("k1", "fused", 0), ("k2", "gemm/v1", 3)):
        launches = [
            LaunchRecord(
                index=i + 1,
                pid=1,
                host="h",
                device="cpu",
                kinds=["wrong"] if i < bad else [],
                wrong=9 if i < bad else 0,
                elapsed_s=0.001,
            )
            for i in range(12)
        ]
        results.append(
            CaseResult(
                key=key,
                kernel=kernel,
                m=16,
                n=16,
                k=32,
                quant="ptpc",
                tile="8x8",
                out_dtype="bfloat16",
                params={"fuse": False},
                fp8="e4m3fn",
                seed=0,
                device="cpu",
                deterministic=True,
                rtol=0.05,
                floor=1.0,
                launches=launches,
                stack=stack,
                verdict="regression" if bad else "pass",
            )
        )
    store.add_results(run, results)
    store.finish_run(run, "passed", 0)
    engine.dispose()
    return folder


FILTERS = [
    "--kernel",
    "--quant",
    "--shape",
    "--tile",
    "--param",
    "--arch",
    "--stack",
    "--tag",
    "--revision",
    "--run",
    "--since",
]
OUTPUT = ["--format"]
COMMANDS = [  # (the command, its options that take a value, its switches)
    (["history"], FILTERS + OUTPUT + ["--case", "--limit"], ["--json"]),
    (["runs"], FILTERS + OUTPUT + ["--limit"], ["--json"]),
    (["coverage"], FILTERS + OUTPUT, ["--json"]),
    (
        ["compare", "--side", "tag:main", "--side", "run:1"],
        FILTERS + OUTPUT + ["--side", "--alpha"],
        ["--json", "--timing"],
    ),
    (["report", "--html", "page.html"], FILTERS + ["--show-run", "--html"], []),
    (["db", "current"], [], []),
    (["db", "upgrade"], [], []),
    (["goldens", "export"], FILTERS + ["--scope", "--dir"], ["--include-bad"]),
    (
        ["lint", "missing.s"],
        ["--format", "--kernel", "--workgroup-size", "--loop-unroll", "--max-scenarios", "--time-limit", "--engine"],
        ["--fail-on-latent"],
    ),
    (["explain", "k1"], OUTPUT + ["--alpha"], []),
]
VALUES_SEEN = [
    "fused",
    "gemm*",
    "ptpc",
    "16x16x32",
    "*x16x*",
    "8x8",
    "none",
    "fuse=False",
    "cpu",
    "torch=*",
    "main",
    "abc",
    "1",
    "-1",
    "0",
    "7d",
    "12h",
    "2026-11-01",
    "k1",
    "json",
    "csv",
    "markdown",
    "table",
    "text",
    "tag:main",
    "run:1",
    "rev:abc",
    "0.05",
    "nan",
    "page.html",
    "out",
    "any",
    "stack",
    "",
    "=",
]
# paths stay inside the command's folder: no separators, no drive or module specs, no other database
ARG = st.sampled_from(VALUES_SEEN) | st.text(max_size=10).filter(
    lambda arg: not any(c in arg for c in "/\\:\0") and not arg.startswith("--d")
)


@st.composite
def command_lines(draw):
    """Mostly a real command with some of its own options, each with a value seen in use or any
    text; sometimes any words at all."""
    if draw(st.integers(0, 4)) == 0:
        words = [word for command, valued, switches in COMMANDS for word in command + valued + switches]
        return draw(st.lists(st.sampled_from(words) | ARG, max_size=6))
    command, valued, switches = draw(st.sampled_from(COMMANDS))
    argv = list(command)
    for _ in range(draw(st.integers(0, 4))):
        if switches and draw(st.integers(0, 3)) == 0:
            argv.append(draw(st.sampled_from(switches)))
        elif valued:
            argv += [draw(st.sampled_from(valued)), draw(ARG)]
    return argv


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argv=command_lines())
def test_the_command_returns_0_1_or_2_and_never_raises(history_db, argv):
    from pytest_gemmcheck.cli import main

    before = os.getcwd()
    os.chdir(history_db)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            try:
                status = main(["--db", str(history_db / "history.db"), *argv])
            except SystemExit as exc:  # argparse: usage (2) or --help (0)
                status = exc.code
    finally:
        os.chdir(before)
    event(f"exit status {status}, {argv[0] if argv else 'no command'}")  # --hypothesis-show-statistics
    assert status in (0, 1, 2), (argv, status)
    assert "Traceback" not in err.getvalue()


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--gemmcheck-repeat=99999999999999999999999"],
            "*--gemmcheck-repeat: expected a whole number of launches from 1 to 1,000,000*",
        ),
        (
            ["--gemmcheck-repeat=1000001"],
            "*--gemmcheck-repeat: expected a whole number of launches from 1 to 1,000,000*",
        ),
        (
            ["--gemmcheck-processes=100000"],
            "*--gemmcheck-processes: expected a whole number of processes from 1 to 256*",
        ),
    ],
)
def test_repeat_and_processes_are_bounded(pytester, args, message):
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
