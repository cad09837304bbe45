"""cli.py: the gemmcheck parser is built from commands/, a module per subcommand, each in one
shape (add_parser(subparsers), run(args) -> int), and listed in --help in a fixed order."""

import importlib

from pytest_gemmcheck.cli import build_parser

COMMANDS = {
    "history": "history",
    "compare": "compare",
    "coverage": "coverage",
    "explain": "explain",
    "report": "report",
    "runs": "runs",
    "db": "db",
    "goldens": "goldens_export",
    "bisect": "bisect",
    "selftest": "selftest",
    "lint": "lint",
}


def _subcommands(parser):
    [action] = parser._subparsers._group_actions
    return action.choices


def test_every_subcommand_is_a_module_of_commands_run_by_its_run():
    commands = _subcommands(build_parser())
    assert list(commands) == list(COMMANDS)  # the order --help lists them in
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"pytest_gemmcheck.commands.{module_name}")
        parser = commands[name]
        if name == "goldens":  # an action below it: goldens export
            parser = _subcommands(parser)["export"]
        run = parser.get_default("func")  # by name: another test may have imported the module afresh
        assert (run.__module__, run.__name__) == (module.__name__, "run"), name
        assert callable(module.add_parser), name
