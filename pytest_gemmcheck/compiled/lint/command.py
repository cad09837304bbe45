"""``gemmcheck lint``: check AMDGPU assembly, or a FlyDSL kernel compiled for it, for LDS races."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine (numpy) loads when a lint runs, not when the parser is built
    from .analysis import Options
    from .findings import LintReport

EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE, EXIT_UNCHECKED = 0, 1, 2, 3


def _workgroup(text: str) -> tuple[int, int, int]:
    parts = [int(p) for p in text.replace("x", ",").split(",") if p]
    if not 1 <= len(parts) <= 3 or any(p <= 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected X[,Y[,Z]], got {text!r}")
    return tuple(parts + [1] * (3 - len(parts)))  # type: ignore[return-value]


def _param(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "targets",
        nargs="+",
        metavar="TARGET",
        help="assembly files (.s), or a FlyDSL kernel spec FILE.py:FUNCTION (or module:FUNCTION) that "
        "returns (launcher, args); it is compiled for --arch without a GPU and its assembly linted",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--kernel", action="append", default=None, help="lint only this kernel (repeatable)")
    parser.add_argument("--workgroup-size", type=_workgroup, default=None, help="X[,Y[,Z]] when the metadata has none")
    parser.add_argument("--time-limit", type=float, default=30.0,
                        help="seconds for one assembly file (default 30); kernels not finished by then are unchecked")
    parser.add_argument("--fail-on-latent", action="store_true",
                        help="exit 1 on latent findings too (reads ordered only by elapsed time across a barrier-phase offset)")
    parser.add_argument("--engine", choices=("dataflow", "paths"), default="dataflow",
                        help="dataflow (default: a fixed point over barrier phases) or paths (the path-enumerating "
                        "simulation, bounded by --loop-unroll and --max-scenarios)")
    parser.add_argument("--loop-unroll", type=int, default=3, help="paths engine: iterations of loops with an unknown trip count")
    parser.add_argument("--max-scenarios", type=int, default=16, help="paths engine: branch scenarios to explore per kernel")
    parser.add_argument("--param", "-D", type=_param, action="append", default=[], help="KEY=VALUE for a FlyDSL spec")
    parser.add_argument("--arch", default="gfx950", help="target arch for FlyDSL specs (default: gfx950)")
    parser.add_argument("--keep-asm", default=None, help="directory to keep the compiled assembly of FlyDSL specs in")
    return parser


def add_lint_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``lint`` sub-command on an argparse sub-parser set; it runs :func:`run_lint`."""
    parser = subparsers.add_parser(
        "lint",
        help="static check of AMDGPU assembly for LDS races with global->LDS DMA loads",
        description="Static check of AMDGPU assembly for LDS races with global->LDS DMA loads. "
        "Exit status: 1 when there are error findings (or latent ones, with --fail-on-latent); else 3 when "
        "something was not checked (an unresolved LDS address, an unfollowed branch, the time limit, a file "
        "with no kernel in it); "
        "0 otherwise; 2 for usage errors.",
    )
    configure_parser(parser)
    parser.set_defaults(func=run_lint)
    return parser


def _is_flydsl_spec(target: str) -> bool:
    if os.path.exists(target):
        return False
    source, sep, function = target.rpartition(":")
    return bool(sep and source and function.isidentifier())


def _lint_flydsl(target: str, args, options: Options) -> list[LintReport]:
    from ..flydsl.compile import CompileError, compile_spec
    from .analysis import lint_text

    try:
        result = compile_spec(target, dict(args.param), arch=args.arch, keep_dir=args.keep_asm)
    except CompileError as exc:
        raise ValueError(str(exc)) from exc
    if not result.ok:
        raise ValueError(result.error)
    return [lint_text(asm.text, asm.path, options, args.kernel) for asm in result.assembly]


def run_lint(args) -> int:
    """Run the lint for parsed arguments; print the report; return the exit status."""
    from .analysis import Options, lint_file
    from .findings import format_json, format_text
    from .paths import Limits

    bad = [f"{flag} must be {rule}, got {value!r}" for flag, value, ok, rule in (
        ("--loop-unroll", args.loop_unroll, args.loop_unroll >= 1, "at least 1"),
        ("--max-scenarios", args.max_scenarios, args.max_scenarios >= 1, "at least 1"),
        ("--time-limit", args.time_limit, args.time_limit > 0 and args.time_limit != float("inf"), "a number of seconds above 0"),
    ) if not ok]
    if bad:
        print(f"gemmcheck lint: {'; '.join(bad)}", file=sys.stderr)
        return EXIT_USAGE
    options = Options(
        workgroup_size=args.workgroup_size,
        limits=Limits(loop_unroll=args.loop_unroll),
        max_scenarios=args.max_scenarios,
        engine=args.engine,
        time_limit=args.time_limit,
    )
    reports: list[LintReport] = []
    for target in args.targets:
        try:
            if _is_flydsl_spec(target):
                reports.extend(_lint_flydsl(target, args, options))
            else:
                reports.append(lint_file(target, options, args.kernel))
        except OSError as exc:
            print(f"gemmcheck lint: {target}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
        except (ValueError, ImportError) as exc:  # an unusable spec or a failed compile
            print(f"gemmcheck lint: {target}: {exc}", file=sys.stderr)
            return EXIT_USAGE
    print(format_json(reports) if args.format == "json" else format_text(reports))
    return exit_status(reports, fail_on_latent=args.fail_on_latent)


def exit_status(reports: list[LintReport], *, fail_on_latent: bool = False) -> int:
    """1 for errors (and latent findings on request), else 3 for anything unchecked (a target
    with no kernel in it among them: nothing checked is never a pass), else 0."""
    if any(r.errors or (fail_on_latent and r.latent) for r in reports):
        return EXIT_ERRORS
    if any(r.unchecked or r.unfinished or not r.kernels for r in reports):
        return EXIT_UNCHECKED
    return EXIT_CLEAN


def main(argv: list[str] | None = None) -> int:
    parser = configure_parser(argparse.ArgumentParser(prog="python -m pytest_gemmcheck.compiled.lint"))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    return run_lint(args)
