"""``python -m pytest_gemmcheck``: the ``gemmcheck`` command."""

import sys

from .cli import main

sys.exit(main())
