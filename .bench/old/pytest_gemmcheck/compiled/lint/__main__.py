"""``python -m pytest_gemmcheck.compiled.lint``: ``gemmcheck lint`` under the lint's own name."""

import sys

from ...commands.lint import main

sys.exit(main())
