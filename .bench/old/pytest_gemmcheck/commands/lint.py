"""``gemmcheck lint``: check AMDGPU assembly, or a FlyDSL kernel compiled for it, for LDS races
(the lint is compiled/lint/). ``python -m pytest_gemmcheck.compiled.lint`` runs the same command
(:func:`main`)."""

from __future__ import annotations

import argparse
import sys

from . import EXIT_USAGE

DESCRIPTION = (
    "Static check of AMDGPU assembly for LDS races with global->LDS DMA loads. "
    "Exit status: 1 when there are error findings (or latent ones, with --fail-on-latent); else 3 when "
    "something was not checked (an unresolved LDS address, an unfollowed branch, the time limit, a file "
    "with no kernel in it); "
    "0 otherwise; 2 for usage errors."
)


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


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
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
    parser.add_argument(
        "--time-limit",
        type=float,
        default=30.0,
        help="seconds for one assembly file (default 30); kernels not finished by then are unchecked",
    )
    parser.add_argument(
        "--fail-on-latent",
        action="store_true",
        help="exit 1 on latent findings too (reads ordered only by elapsed time across a barrier-phase offset)",
    )
    parser.add_argument(
        "--engine",
        choices=("dataflow", "paths"),
        default="dataflow",
        help="dataflow (default: a fixed point over barrier phases) or paths (the path-enumerating "
        "simulation, bounded by --loop-unroll and --max-scenarios)",
    )
    parser.add_argument(
        "--loop-unroll", type=int, default=3, help="paths engine: iterations of loops with an unknown trip count"
    )
    parser.add_argument(
        "--max-scenarios", type=int, default=16, help="paths engine: branch scenarios to explore per kernel"
    )
    parser.add_argument("--param", "-D", type=_param, action="append", default=[], help="KEY=VALUE for a FlyDSL spec")
    parser.add_argument("--arch", default="gfx950", help="target arch for FlyDSL specs (default: gfx950)")
    parser.add_argument("--keep-asm", default=None, help="directory to keep the compiled assembly of FlyDSL specs in")
    return parser


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "lint", help="static check of AMDGPU assembly for LDS races with global->LDS DMA loads", description=DESCRIPTION
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def _usage_errors(args) -> list[str]:
    return [
        f"{flag} must be {rule}, got {value!r}"
        for flag, value, ok, rule in (
            ("--loop-unroll", args.loop_unroll, args.loop_unroll >= 1, "at least 1"),
            ("--max-scenarios", args.max_scenarios, args.max_scenarios >= 1, "at least 1"),
            (
                "--time-limit",
                args.time_limit,
                args.time_limit > 0 and args.time_limit != float("inf"),
                "a number of seconds above 0",
            ),
        )
        if not ok
    ]


def run(args) -> int:
    """Lint the targets; print the report; return the exit status."""
    from ..compiled.lint.analysis import Options, is_flydsl_spec, lint_file, lint_flydsl_spec
    from ..compiled.lint.findings import LintReport, exit_status, format_json, format_text
    from ..compiled.lint.paths import Limits

    bad = _usage_errors(args)
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
            if is_flydsl_spec(target):
                reports.extend(
                    lint_flydsl_spec(
                        target, options, args.kernel, params=dict(args.param), arch=args.arch, keep_dir=args.keep_asm
                    )
                )
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


def main(argv: list[str] | None = None) -> int:
    """``python -m pytest_gemmcheck.compiled.lint``: the command on its own."""
    parser = add_arguments(argparse.ArgumentParser(prog="python -m pytest_gemmcheck.compiled.lint"))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    return run(args)
