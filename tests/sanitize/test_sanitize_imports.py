"""sanitize/ imports no pytest, torch or SQLAlchemy (which layers it may import of the package,
tests/test_architecture.py says)."""

import subprocess
import sys
from pathlib import Path

import pytest_gemmcheck

PACKAGE = Path(pytest_gemmcheck.__file__).parent


def test_nothing_heavy_is_imported():
    code = (
        "import sys\n"
        "import pytest_gemmcheck.sanitize.tool_launch, pytest_gemmcheck.records.sanitize\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'pytest', '_pytest', 'sqlalchemy'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
