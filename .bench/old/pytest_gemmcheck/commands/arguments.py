"""The options several commands share (the database, the filters, the output format) and the
parsers of their values."""

from __future__ import annotations

import argparse
import re

from ..config.table import command_argument
from ..history.location import DEFAULT_PATH, ENV_VAR

MAX_LIMIT = 10**9  # rows: more than any database here holds, and within every backend's LIMIT


def run_id(text: str) -> int:
    """--run, --show-run: a run's id, a whole number from 1 to 2**63 - 1 (ASCII digits, as every
    number here: int() would take '٣' and '1_0')."""
    value = int(text) if re.fullmatch(r"\s*[0-9]{1,19}\s*", text) else 0
    if not 1 <= value < 2**63:
        raise argparse.ArgumentTypeError(
            f"expected a run id, a whole number >= 1 (gemmcheck runs lists them), got {text!r}"
        )
    return value


def limit(text: str) -> int:
    """--limit: a whole number of rows, bounded so that every backend takes it."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"expected a whole number of rows from 1 to {MAX_LIMIT:,}, got {text!r}")
    return value


def database_help() -> str:
    return f"database URL or SQLite path (default: ${ENV_VAR}, else the nearest {DEFAULT_PATH})"


def filters() -> argparse.ArgumentParser:
    """The filters every query command takes; repeated options are alternatives."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("filters (globs with * and ?; a repeated option matches any of its values)")
    group.add_argument("--kernel", action="append", metavar="GLOB", help="kernel name")
    group.add_argument("--quant", action="append", metavar="MODE", help="quant mode")
    group.add_argument("--shape", action="append", metavar="MxNxK", help="e.g. 4096x7168x256 or *x7168x*")
    group.add_argument("--tile", action="append", metavar="TILE", help="e.g. 256x128 ('none': no tile)")
    group.add_argument("--param", action="append", metavar="KEY=VALUE", help="a kernel param, e.g. fuse=True")
    group.add_argument("--arch", action="append", metavar="ARCH", help="GPU arch, e.g. sm_90 or gfx9* ('cpu')")
    group.add_argument("--stack", action="append", metavar="FIELD=GLOB", help="a stack field, e.g. torch=2.12*")
    group.add_argument("--tag", action="append", metavar="GLOB", help="the run's --gemmcheck-tag")
    group.add_argument("--revision", action="append", metavar="PREFIX", help="the run's git revision")
    group.add_argument("--run", action="append", type=run_id, metavar="ID", help="a run id")
    group.add_argument("--since", metavar="WHEN", help="runs started since: 7d, 12h, 30m, or 2026-11-01")
    return parent


def output_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    flag, keywords = command_argument("format")
    parent.add_argument(flag, **keywords)
    parent.add_argument("--json", action="store_true", help="the same as --format json")
    return parent


def database_option() -> argparse.ArgumentParser:
    # after the command as well as before it; SUPPRESS keeps a value given before
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--db", default=argparse.SUPPRESS, metavar="URL", help=database_help())
    return parent


def query_options() -> list[argparse.ArgumentParser]:
    """What a query of the history takes: the database, the filters, the output format."""
    return [database_option(), filters(), output_options()]


def add_table_option(parser: argparse.ArgumentParser, name: str, help: str) -> None:
    """An option of config/table.py's (``alpha``, ``scope``), with this command's help."""
    flag, keywords = command_argument(name, help)
    parser.add_argument(flag, **keywords)


def output_form(args) -> str:
    return "json" if getattr(args, "json", False) else args.format
