"""``python -m pytest_gemmcheck``: the ``gemmcheck`` command."""

import sys

from .reporting.cli import main

sys.exit(main())
