"""The command line for one tool, and the child's environment."""

import re

import pytest

from pytest_gemmcheck.sanitize.invocation import build_command, child_environment

CHILD = ["python3", "child.py", "--case", "3f2a9c"]


def documented_options(data_dir) -> set[str]:
    """The options compute-sanitizer 2025.3.1's --help lists."""
    return set(re.findall(r"^\s+(?:-\w \[ )?(--[\w-]+)", (data_dir / "help.txt").read_text(), re.MULTILINE))


def test_the_plain_command():
    assert build_command("/cuda/bin/compute-sanitizer", "memcheck", "/tmp/r/memcheck.xml", CHILD) == [
        "/cuda/bin/compute-sanitizer",
        "--tool",
        "memcheck",
        "--xml",
        "--save",
        "/tmp/r/memcheck.xml",
        *CHILD,
    ]


def test_every_option(data_dir):
    command = build_command(
        "cs",
        "racecheck",
        "/tmp/r.xml",
        CHILD,
        racecheck_report="all",
        print_limit=3,
        backtraces=False,
        exclude_kernels=("_gemmcheck_check", "vectorized_elementwise_kernel"),
    )
    assert command == [
        "cs",
        "--tool",
        "racecheck",
        "--xml",
        "--save",
        "/tmp/r.xml",
        "--racecheck-report",
        "all",
        "--print-limit",
        "3",
        "--show-backtrace",
        "no",
        "--kernel-name-exclude",
        "kns=_gemmcheck_check",
        "--kernel-name-exclude",
        "kns=vectorized_elementwise_kernel",
        *CHILD,
    ]
    # each one is an option of the recorded release
    assert {word for word in command[: -len(CHILD)] if word.startswith("--")} <= documented_options(data_dir)
    assert {"--tool", "--xml", "--save", "--print-limit"} <= documented_options(data_dir)


def test_the_racecheck_report_mode_is_racecheck_s_alone():
    assert "--racecheck-report" not in build_command("cs", "initcheck", "r.xml", CHILD, racecheck_report="all")


def test_a_percent_in_the_save_path_is_literal():
    # --save expands %p and %q{VAR}; any other % is an error
    assert build_command("cs", "memcheck", "/tmp/100%/r%p.xml", CHILD)[5] == "/tmp/100%%/r%%p.xml"


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(tool="helgrind"), "tool must be one of racecheck, memcheck, synccheck, initcheck, got 'helgrind'"),
        (dict(racecheck_report="some"), "racecheck_report must be one of analysis, hazard, all, got 'some'"),
        (dict(print_limit=-1), "print_limit must be a whole number >= 0, got -1"),
        (dict(print_limit=True), "print_limit must be a whole number >= 0, got True"),
        (dict(exclude_kernels=["a,b"]), "a kernel to exclude must be a name without ',' or '=', got 'a,b'"),
        (dict(exclude_kernels=[""]), "a kernel to exclude must be a name without ',' or '=', got ''"),
        (dict(child=[]), "the child command is empty"),
    ],
)
def test_bad_arguments(options, message):
    arguments = dict(tool="racecheck", child=CHILD)
    arguments.update(options)
    with pytest.raises(ValueError) as raised:
        build_command("cs", arguments.pop("tool"), "r.xml", arguments.pop("child"), **arguments)
    assert str(raised.value) == message


def test_the_child_runs_without_torch_s_caching_allocator():
    environment = child_environment({"PATH": "/bin", "PYTORCH_NO_CUDA_MEMORY_CACHING": "0"})
    assert environment == {"PATH": "/bin", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
