"""The ``gemmcheck`` command's subcommands, a module each, named after the command; cli.py builds
the parser from them. Every module has one shape: ``add_parser(subparsers)`` adds the command's
parser (its ``func`` default is ``run``), and ``run(args) -> int`` carries it out and returns
the exit status. arguments.py holds the options several commands share, reading.py the one way
a command opens the history to read it and prints its tables.

Importing a module here imports nothing heavy: a command imports its engine (SQLAlchemy, torch,
numpy) when it runs, so that ``gemmcheck --help`` costs an interpreter's start.
"""

EXIT_DATABASE, EXIT_USAGE = 1, 2  # the database or a file cannot be used; a usage error (as argparse's)
