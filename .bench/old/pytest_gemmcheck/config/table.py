"""The one option table: every ``--gemmcheck-*`` option, ini key, marker key, script keyword
and ``gemmcheck`` command option, with its parser, default and where it applies. No pytest here:
the CLI, the script API and a ``--gemmcheck-processes`` child read it without loading pytest;
pytest_adapter.py beside it adds the options to pytest and resolves them.

Every option is ``--gemmcheck-NAME`` with the ini key ``gemmcheck_NAME``. The command line
wins over the environment variable (where an option has one), that over the ini file, and a
test's ``@pytest.mark.gemmcheck(...)`` wins over all. A bad value is a usage error (exit 4)
that names the option, the variable or the ini key it came from.

Numbers are ASCII decimals: digits with an optional sign, and for real numbers a decimal point
and an exponent ("12", "+3", "0.05", ".5", "5e-2"); a marker may give them as numbers.
"""

from __future__ import annotations

import fnmatch
import json
import math
import numbers
import re
from dataclasses import dataclass, field, make_dataclass, replace
from typing import Any, Callable

from ..records.sanitize import TOOLS as SANITIZER_TOOLS

# --- value parsers: raise ValueError with a message that stands alone -------------------

AUTO = "auto"


# int() and float() also read other scripts' digits ("٣", "３") and underscores ("1_000"): text
# that is one number to Python and another, or none, to whoever typed it. Only these forms count.
_WHOLE = re.compile(r"[+-]?[0-9]+")
_REAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_ASCII_SPACE = " \t\n\r\f\v"


def _number(value, form: re.Pattern, convert: Callable, kind: type):
    """``value`` as a number: text of ``form`` (ASCII space around it allowed), or a number of
    ``kind`` (a marker's, never a bool); None when it is neither."""
    if isinstance(value, str):
        text = value.strip(_ASCII_SPACE)
        if not form.fullmatch(text):
            return None
        try:
            return convert(text)
        except ValueError:  # more digits than int() converts
            return None
    if isinstance(value, kind) and not isinstance(value, bool):
        return convert(value)
    return None


def _parse_whole(text, what: str, minimum: int, maximum: int | None = None) -> int:
    value = _number(text, _WHOLE, int, numbers.Integral)
    if value is None or value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"expected {what}, got {text!r}")
    return value


# Upper bounds, far past any real use: a typo's extra digits are refused, not run until killed.
MAX_REPEAT = 1_000_000  # launches of one case, --gemmcheck-repeat=auto's cap too
MAX_PROCESSES = 256  # fresh processes per case, each one a Python, torch and a CUDA context


def parse_repeat(text: str | int) -> int | str:
    if isinstance(text, str) and text.strip().lower() == AUTO:
        return AUTO
    return _parse_whole(text, f"a whole number of launches from 1 to {MAX_REPEAT:,} or 'auto'", 1, MAX_REPEAT)


def parse_processes(text) -> int:
    return _parse_whole(text, f"a whole number of processes from 1 to {MAX_PROCESSES}", 1, MAX_PROCESSES)


MAX_WORLD_SIZE = 256  # ranks one test spawns: a process each, as --gemmcheck-processes' children


def parse_world_size(text) -> int:
    return _parse_whole(text, f"a whole number of ranks from 1 to {MAX_WORLD_SIZE}", 1, MAX_WORLD_SIZE)


def parse_search_examples(text) -> int:
    return _parse_whole(text, "a whole number of examples >= 1", 1)


def _choice(choices: tuple[str, ...]):
    """A parser for one of a few words, case-insensitive."""

    def parse(text) -> str:
        value = str(text).strip().lower()
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
        return value

    return parse


# Choice lists, named once: the option table and every other user of them (the stressors, the
# baseline scopes, the command line) take them from here.
SCOPES = ("arch", "stack", "any")
STRESS_KINDS = ("none", "copy", "compute")
CHECK_BACKENDS = ("auto", "torch", "triton")
REPEAT_CHECKS = ("checksum", "full")
STATIC_POLICIES = ("report", "fail", "latent")
COLLECTIVE_SYNCS = ("launch", "free")


def _parse_fraction(text, what: str) -> float:
    value = _parse_positive_float(text, what)
    if value >= 1.0:
        raise ValueError(f"expected {what}, got {text!r}")
    return value


def parse_alpha(text) -> float:
    return _parse_fraction(text, "a significance level between 0 and 1 (e.g. 0.05)")


def parse_target_rate(text) -> float:
    return _parse_fraction(text, "a bad-launch rate between 0 and 1 (e.g. 0.01 for 1%)")


def parse_budget(text) -> float:
    return _parse_positive_float(text, "a number of seconds > 0")


def parse_launch_timeout(text) -> float:
    return _parse_positive_float(text, "a number of seconds >= 0 (0: no deadline)", allow_zero=True)


def parse_wait_idle(text) -> float:
    return _parse_positive_float(text, "a number of seconds >= 0 (0: do not wait)", allow_zero=True)


def parse_worst_factor(text) -> float:
    value = _parse_positive_float(text, "a factor >= 1 (e.g. 2)")
    if value < 1:
        raise ValueError(f"expected a factor >= 1 (e.g. 2), got {text!r}")
    return value


def _parse_positive_float(text: str | float, what: str, allow_zero: bool = False) -> float:
    value = _number(text, _REAL, float, numbers.Real)
    if value is None or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"expected {what}, got {text!r}")
    return value


def parse_rtol(text: str | float) -> float:
    return _parse_positive_float(text, "a relative tolerance > 0 (e.g. 0.05 for 5%)")


def parse_floor(text: str | float) -> float:
    return _parse_positive_float(text, "a fraction of the row's largest |ref| >= 0 (e.g. 1.0)", allow_zero=True)


def parse_seed(text: str | int) -> int:
    value = _parse_whole(text, "a whole number >= 0 and < 2**63", 0)
    if value >= 1 << 63:  # stored as a signed 64-bit number
        raise ValueError(f"expected a whole number >= 0 and < 2**63, got {text!r}")
    return value


def parse_text(text: str) -> str | None:
    value = str(text).strip()
    return value or None


# A label, not a document: 512 characters of up to 4 bytes each stay within the 2704 bytes of
# PostgreSQL's btree index entry on run.tag, where a longer tag fails the run's first write.
MAX_TAG = 512


def parse_tag(text) -> str | None:
    """A run's label: printable text (no control, bidi or other invisible character: it is shown
    in terminals and tables) of at most MAX_TAG characters; empty is none."""
    value = parse_text(text)
    if value is None:
        return None
    shown = f"{value[:40]!r}{'...' if len(value) > 40 else ''}"
    if len(value) > MAX_TAG:
        raise ValueError(f"expected a label of at most {MAX_TAG} characters, got {len(value):,}: {shown}")
    unprintable = next((char for char in value if not char.isprintable()), None)
    if unprintable is not None:
        raise ValueError(
            f"expected a label of printable characters, got {shown}: U+{ord(unprintable):04X} is a "
            "control, bidi or other invisible character"
        )
    return value


def parse_flag(value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def parse_devices(text) -> str | None:
    """Checked for syntax here (no torch at start-up); against the visible GPUs when a case
    first needs one."""
    from .devices import parse_devices as check_syntax

    value = str(text).strip()
    if not value.isascii():  # str.isdigit() takes other scripts' digits, and '²', for GPU indices
        raise ValueError(
            f"--gemmcheck-devices={text!r}: GPU indices are ASCII digits; use e.g. '0,1,3', '0-3' or 'all'"
        )
    check_syntax(value)  # ValueError names the option
    return value or None


def parse_patterns(text: str | list[str]) -> tuple[str, ...]:
    items = text if isinstance(text, (list, tuple)) else str(text).replace(",", " ").split()
    return tuple(item.strip() for item in items if item.strip())


NO_TOOL = "none"
_SANITIZE_WORDS = f"{NO_TOOL} (off) or a comma list of {', '.join(SANITIZER_TOOLS)}"


def parse_sanitize(value) -> tuple[str, ...]:
    """``"racecheck, memcheck"`` (or a list of names) as the compute-sanitizer tools, in the order
    given, each once; case and spaces do not matter; "none" alone: no tool. Raises ValueError
    saying what is wrong with the value as given."""
    try:
        words = value.split(",") if isinstance(value, str) else list(value)
    except TypeError:
        words = [value]
    if not all(isinstance(word, str) for word in words):
        raise ValueError(f"expected {_SANITIZE_WORDS}, got {value!r}")
    names = [word.strip().lower() for word in words]
    if names == [NO_TOOL]:
        return ()
    if NO_TOOL in names:
        problem = f"'{NO_TOOL}' turns the sanitizer off, so it stands alone"
    elif not any(names):
        problem = "no tool name"
    elif "" in names:
        problem = "an empty name in the list"
    else:
        bad = [word.strip() for word, name in zip(words, names) if name not in SANITIZER_TOOLS]
        problem = (
            f"{', '.join(repr(word) for word in bad)} {'is no tool' if len(bad) == 1 else 'are no tools'}"
            if bad
            else ""
        )
    if problem:
        raise ValueError(f"expected {_SANITIZE_WORDS}, got {value!r}: {problem}")
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Option:
    name: str  # --gemmcheck-<name>, ini gemmcheck_<name with _>, Settings.<name with _>
    parse: Callable[[Any], Any] | None  # None: one of ``choices``
    default: Any
    help: str
    metavar: str = "VALUE"
    flag_only: bool = False  # a switch: --gemmcheck-NAME takes no value
    env: str | None = None  # environment variable between the command line and the ini file
    choices: tuple[str, ...] | None = None
    marker: bool = False  # also a keyword of @pytest.mark.gemmcheck(...)
    script: bool = True  # also a keyword of gemmcheck.session() (else a pytest session's own)
    child: bool = True  # a --gemmcheck-processes child runs with its parent's resolved value

    def __post_init__(self):
        if self.parse is None:
            object.__setattr__(self, "parse", _choice(self.choices))

    @property
    def flag(self) -> str:
        return f"--gemmcheck-{self.name}"

    @property
    def ini(self) -> str:
        return "gemmcheck_" + self.field

    @property
    def field(self) -> str:
        return self.name.replace("-", "_")

    @property
    def dest(self) -> str:
        return self.ini


OPTIONS: tuple[Option, ...] = (
    Option(
        "repeat",
        parse_repeat,
        12,
        "launches per case, each into a freshly NaN-poisoned output (12: the "
        "protocol that caught the tail race); 'auto' launches until the rate's 95% upper bound is below "
        "--gemmcheck-target-rate (a pass), its lower bound above it (a failure), or --gemmcheck-budget "
        "seconds pass",
        "N|auto",
        marker=True,
    ),
    Option(
        "target-rate",
        parse_target_rate,
        0.01,
        "with --gemmcheck-repeat=auto: stop once the bad-launch rate is shown below this",
        "RATE",
    ),
    Option(
        "budget", parse_budget, 60.0, "with --gemmcheck-repeat=auto: seconds of launching per case at most", "SECONDS"
    ),
    Option(
        "stop-on-bad",
        parse_flag,
        False,
        "stop a case's launches at its first bad launch and, with --gemmcheck-processes, start no "
        "more processes after one that had one: a probe that only asks whether the kernel fails "
        "(gemmcheck bisect's)",
        flag_only=True,
    ),
    Option(
        "processes",
        parse_processes,
        1,
        "spread each case's launches over N fresh processes (spawned, never forked), aggregated "
        "into one result: races decided per process need several (1: in this process)",
        "N",
        marker=True,
        script=False,
        child=False,
    ),
    Option(
        "rtol",
        parse_rtol,
        0.05,
        "an element is wrong when off by more than RTOL of max(|ref|, FLOOR x its row's largest |ref|)",
        "RTOL",
        marker=True,
    ),
    Option(
        "floor",
        parse_floor,
        1.0,
        "the magnitude below which |ref| is not trusted, as a fraction of the row's largest "
        "|ref| (lower is stricter on small outputs)",
        "FRACTION",
        marker=True,
    ),
    Option("seed", parse_seed, 0, "seed of every case's inputs unless the case names one", "SEED", marker=True),
    Option(
        "nondeterministic",
        parse_patterns,
        (),
        "kernel names (comma-separated, glob patterns) that are nondeterministic by design "
        "(split-K with atomics): only the accuracy check applies to them",
        "KERNELS",
    ),
    Option(
        "stress",
        None,
        "none",
        "background load on the same GPU while a case's launches run: none, copy (a large "
        "device-to-device copy loop) or compute (an elementwise kernel loop)",
        "KIND",
        choices=STRESS_KINDS,
        marker=True,
    ),
    Option(
        "wait-idle",
        parse_wait_idle,
        0.0,
        "before each case on a GPU, wait up to SECONDS (never less than the 1 s its five samples "
        "take) until no other process holds the GPU and it is idle, else give up with a note; 0: do "
        "not wait. Every result records whether other work shared its GPU",
        "SECONDS",
        marker=True,
    ),
    Option(
        "launch-timeout",
        parse_launch_timeout,
        60.0,
        "a launch (the call and its GPU work) that has not finished after SECONDS fails its test as "
        "hung; on a GPU, whose kernel cannot be stopped, that GPU's later cases are skipped; 0: no "
        "deadline",
        "SECONDS",
        marker=True,
    ),
    Option(
        "search-examples",
        parse_search_examples,
        100,
        "configurations each gemmcheck.search draws at most, unless it names its own examples=: few in CI, "
        "many at night",
        "N",
        marker=True,
    ),
    Option(
        "world-size",
        parse_world_size,
        1,
        "run each test that uses gemmcheck as W ranks of a torch.distributed group, in W fresh processes "
        "(gloo on the CPU; NCCL, a GPU per rank, where there are W GPUs; gloo over CUDA tensors where ranks "
        "share a GPU), for collective cases (gemmcheck.case(..., collective=...)); a test already running as "
        "a rank (torchrun) uses its group and spawns nothing. In a script: the size its group must have "
        "(1: no ranks)",
        "W",
        marker=True,
    ),
    Option(
        "collective-sync",
        None,
        "launch",
        "how the ranks of a collective case launch: 'launch' starts launch i on every rank together (a "
        "rendezvous before each launch), 'free' lets each rank launch at its own pace",
        "HOW",
        choices=COLLECTIVE_SYNCS,
        marker=True,
    ),
    Option(
        "devices",
        parse_devices,
        None,
        "GPUs to use (e.g. 0,1,3 or 0-3; default all visible): each pytest-xdist worker takes its own, round-robin",
        "LIST",
        script=False,
        child=False,
    ),
    Option(
        "check-backend",
        None,
        "auto",
        "how outputs are checked: triton (one fused pass on the GPU), torch (chunked torch "
        "ops, any device) or auto (triton for GPU outputs when it is installed)",
        "BACKEND",
        choices=CHECK_BACKENDS,
    ),
    Option(
        "repeat-check",
        None,
        "checksum",
        "how the fused check takes a launch after the first: 'checksum' reads only its output for a "
        "checksum and, when that equals the checksum of an output already checked in full, takes that "
        "output's numbers without reading the reference; 'full' checks every launch in full",
        "HOW",
        choices=REPEAT_CHECKS,
    ),
    Option(
        "scope",
        None,
        "arch",
        "history a result is judged against: the same GPU arch, the same stack, or any",
        "SCOPE",
        choices=SCOPES,
    ),
    Option("alpha", parse_alpha, 0.05, "significance of the one-sided test that a bad-launch rate got worse", "ALPHA"),
    Option(
        "worst-factor",
        parse_worst_factor,
        2.0,
        "the worst launch's wrong elements (or wrong tiles) regress when they grow by more than "
        "this factor over the baseline's",
        "FACTOR",
    ),
    Option(
        "static",
        None,
        "report",
        "compiled kernels (case.compile_flydsl, case.check_assembly): 'report' lint errors, unchecked "
        "reads and changed static metrics (spills, LDS bytes, registers), 'fail' the test on them, or "
        "'latent' fail on latent lint findings too",
        "POLICY",
        choices=STATIC_POLICIES,
    ),
    Option(
        "sanitize",
        parse_sanitize,
        (),
        "run each case's launch once more per tool under NVIDIA compute-sanitizer, in a spawned child with "
        "the same inputs (a comma list of racecheck, memcheck, synccheck, initcheck; none: off): one launch "
        "shows shared-memory races and bad accesses that repeated launches miss; an error-severity report "
        "fails the case",
        "TOOLS",
        marker=True,
        child=False,
    ),
    Option(
        "sanitize-timeout",
        parse_budget,
        600.0,
        "seconds one tool's sanitized launch may take, its child's start included (the grid sets the cost: "
        "racecheck took 13 s at 512x512x256 and 97 s at 4096x7168x256 on an H200; see sanitize_shape)",
        "SECONDS",
        marker=True,
        child=False,
    ),
    Option(
        "require-sanitize",
        parse_flag,
        False,
        "fail a case whose sanitized launch was skipped (no compute-sanitizer, a CPU or ROCm device), "
        "timed out or failed, instead of reporting why",
        flag_only=True,
        child=False,
    ),
    Option(
        "goldens",
        parse_text,
        None,
        "directory of golden files (default goldens/ under the rootdir)",
        "DIR",
        script=False,
        child=False,
    ),
    Option(
        "accept",
        parse_flag,
        False,
        "accept this run's results as goldens (written to the goldens directory); the run does not fail on regressions",
        flag_only=True,
        child=False,
    ),
    Option(
        "db",
        parse_text,
        None,
        "history database: a SQLAlchemy URL or a SQLite file path (default "
        ".gemmcheck/history.db under the rootdir; env GEMMCHECK_DB)",
        "URL|PATH",
        env="GEMMCHECK_DB",
        script=False,
        child=False,
    ),
    Option(
        "tag",
        parse_tag,
        None,
        f"a label stored with this run (a branch, a PR, a machine): printable, at most {MAX_TAG} characters",
        "TAG",
        script=False,
        child=False,
    ),
    Option(
        "no-record",
        parse_flag,
        False,
        "check and judge, but write nothing to the history database",
        flag_only=True,
        script=False,
        child=False,
    ),
    Option(
        "require-record",
        parse_flag,
        False,
        "end with exit status 4 when any result could not be recorded (without it, a session that "
        "cannot record says so and keeps its tests' exit status)",
        flag_only=True,
        child=False,
    ),
    Option(
        "summary",
        parse_text,
        None,
        "append the session's results to FILE as a markdown table (one row per case), e.g. "
        '--gemmcheck-summary="$GITHUB_STEP_SUMMARY"; nothing is written when no case ran',
        "FILE",
        script=False,
        child=False,
    ),
    Option(
        "json",
        parse_text,
        None,
        'write the session\'s results to FILE as JSON for scripts ({"format": 1, "version", "run", '
        '"totals", "results"}, a result as CaseResult.to_dict() gives it), replacing the file; nothing is '
        "written when no case ran",
        "FILE",
        script=False,
        child=False,
    ),
)
BY_NAME = {option.name: option for option in OPTIONS}
BY_FIELD = {option.field: option for option in OPTIONS}
# Options that contradict each other when both are on, and why
CONFLICTS = (("require-record", "no-record", "nothing is recorded, so nothing can be required to be"),)


def _is_nondeterministic(self, kernel: str) -> bool:
    return any(fnmatch.fnmatchcase(kernel, pattern) for pattern in self.nondeterministic)


# user:password@ after a URL's scheme, the password up to the last @ (SQLAlchemy reads it up to
# the first; taking more never shows a part of one that holds an unencoded @)
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]*):.*@")


def hide_passwords(text) -> str:
    """``text`` with the password of every URL in it shown as ``***``: what may be printed or
    stored of a URL, a command line or a message that names one (no SQLAlchemy needed)."""
    return _URL_PASSWORD.sub(lambda found: found["head"] + ":***@", str(text))


def _masked_repr(self) -> str:
    # `pytest -l` prints the locals of a failing test, its settings among them
    fields = (f"{option.field}={hide_passwords(repr(getattr(self, option.field)))}" for option in OPTIONS)
    return f"Settings({', '.join(fields)})"


# The resolved settings of a session (and, after marker overrides, of one test): a frozen
# dataclass with a field per option, its default the option's.
Settings = make_dataclass(
    "Settings",
    [(option.field, Any, field(default=option.default)) for option in OPTIONS],
    frozen=True,
    namespace={
        "__doc__": "The resolved --gemmcheck-* settings; a field per option, defaulting as the option does.",
        "__module__": __name__,
        "is_nondeterministic": _is_nondeterministic,
        "__repr__": _masked_repr,
    },
)


# What the environment variable of an option is called, named once (the CLI and the bisect
# probes read the database's too).
DB_ENV = BY_NAME["db"].env
DEFAULTS = Settings()


def help_text(option: Option) -> str:
    """The option's help with its default, as the table has it."""
    if option.flag_only or option.default is None:
        return option.help
    if isinstance(option.default, tuple):
        default = ",".join(option.default) or "none"
    else:
        default = f"{option.default:g}" if isinstance(option.default, float) else option.default
    return f"{option.help} (default {default})"


# --- where else an option applies: scripts and --gemmcheck-processes children ---------------

SCRIPT_FIELDS = tuple(option.field for option in OPTIONS if option.script)


def child_settings(settings: Settings, **changes: Any) -> str:
    """The resolved settings a --gemmcheck-processes child runs with, as JSON (``changes`` are
    its own share: repeat, budget): the options that apply to a child, nothing recorded, one
    process. A child takes them as they are and resolves nothing again (no command line, ini
    file or marker of its own wins over them)."""
    values = {option.field: getattr(settings, option.field) for option in OPTIONS if option.child}
    values.update(changes, no_record=True, processes=1)
    return json.dumps(
        {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in values.items()
            if value is not None
        }
    )


def settings_from_child(text: str) -> Settings:
    """The settings :func:`child_settings` wrote, each value parsed again by its option's parser
    (JSON has no tuples, and a value must be one the option takes)."""
    values = json.loads(text)
    return Settings(**{name: BY_FIELD[name].parse(value) for name, value in values.items()})


# --- options of the gemmcheck command that are not pytest options -----------------------------

FORMATS = ("table", "markdown", "json", "csv")
COMMAND_OPTIONS: tuple[Option, ...] = (
    Option(
        "format",
        None,
        "table",
        "output form: table (the terminal), markdown, json (typed records) or csv (one table, plain numbers)",
        "FORMAT",
        choices=FORMATS,
    ),
)
COMMAND_BY_NAME = {option.name: option for option in COMMAND_OPTIONS}


def command_argument(name: str, help: str | None = None) -> tuple[str, dict[str, Any]]:
    """``(flag, argparse keywords)`` for the gemmcheck command's ``--NAME``: the table's parser,
    default and help, so that ``gemmcheck compare --alpha 2`` is refused as ``--gemmcheck-alpha=2``
    is. ``help`` replaces the table's where the command means something more specific."""
    option = COMMAND_BY_NAME.get(name) or BY_NAME[name]

    def convert(text):
        try:
            return option.parse(text)
        except ValueError as exc:
            import argparse  # only the command line gets here

            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name  # argparse names the type in some messages
    shown = dict(option.__dict__, help=help) if help else option.__dict__
    return f"--{name}", {
        "type": convert,
        "default": option.default,
        "metavar": option.metavar,
        "help": help_text(Option(**shown)).replace("%", "%%"),
    }


# The marker takes the options marked for it, plus per-test knobs with no session-wide option.
MARKER_KEYS = tuple(option.field for option in OPTIONS if option.marker) + ("deterministic", "sanitize_shape")


# An edge of a sanitized launch's shape: a smaller launch than the case's, so within what GPU
# kernels index with 32-bit integers; a larger value is a typo, refused before anything runs.
MAX_EDGE = 2**31 - 1


def parse_shape(value) -> tuple[int, int, int]:
    """``(m, n, k)``: three whole numbers from 1 to MAX_EDGE (a sanitized launch's smaller shape)."""
    try:
        m, n, k = value
    except (TypeError, ValueError):
        raise ValueError(f"expected (m, n, k), got {value!r}") from None
    for size in (m, n, k):
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or not 1 <= size <= MAX_EDGE:
            raise ValueError(f"expected (m, n, k) of whole numbers from 1 to 2**31 - 1, got {value!r}")
    return int(m), int(n), int(k)


@dataclass(frozen=True)
class TestOverrides:
    settings: Settings
    deterministic: bool | None = None
    sanitize_shape: tuple[int, int, int] | None = None


def apply_marker(settings: Settings, marker_kwargs: dict[str, Any], *, resolved: bool = False) -> TestOverrides:
    """Overrides from ``@pytest.mark.gemmcheck(...)``; a bad key or value raises ValueError.
    ``resolved``: the settings already hold the marker's values (a --gemmcheck-processes child
    runs with its parent's), so only its per-test ``deterministic`` is taken."""
    unknown = sorted(set(marker_kwargs) - set(MARKER_KEYS))
    if unknown:
        shown = ", ".join(key if key.isidentifier() else repr(key) for key in unknown)
        raise ValueError(f"@pytest.mark.gemmcheck got unknown argument(s) {shown}; it takes {', '.join(MARKER_KEYS)}")
    changes = {}
    for key, value in marker_kwargs.items():
        if key in ("deterministic", "sanitize_shape"):
            continue
        try:
            changes[key] = BY_FIELD[key].parse(value)
        except ValueError as exc:
            raise ValueError(f"@pytest.mark.gemmcheck({key}=...): {exc}") from None
    deterministic = marker_kwargs.get("deterministic")
    if deterministic is not None and not isinstance(deterministic, bool):
        raise ValueError(f"@pytest.mark.gemmcheck(deterministic=...): expected True or False, got {deterministic!r}")
    shape = marker_kwargs.get("sanitize_shape")
    try:
        shape = None if shape is None else parse_shape(shape)
    except ValueError as exc:
        raise ValueError(f"@pytest.mark.gemmcheck(sanitize_shape=...): {exc}") from None
    return TestOverrides(settings if resolved else replace(settings, **changes), deterministic, shape)
