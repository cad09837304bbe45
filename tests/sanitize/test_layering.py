"""sanitize/ imports no pytest, torch or SQLAlchemy, and of the package only records/; records/
imports nothing of the package."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest_gemmcheck

PACKAGE = Path(pytest_gemmcheck.__file__).parent


def package_imports(path: Path) -> set[str]:
    """The package's modules a file imports, as dotted names under pytest_gemmcheck."""
    tree = ast.parse(path.read_text())
    here = path.parent.relative_to(PACKAGE.parent).parts
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[:len(here) - node.level + 1]
            names.add(".".join(base + tuple(filter(None, [node.module]))))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pytest_gemmcheck"):
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names if alias.name.startswith("pytest_gemmcheck"))
    return names


def test_sanitize_imports_records_alone():
    for path in (PACKAGE / "sanitize").glob("*.py"):
        assert all(name.startswith(("pytest_gemmcheck.sanitize", "pytest_gemmcheck.records"))
                   for name in package_imports(path)), path


def test_records_import_nothing_of_the_package():
    for path in (PACKAGE / "records").glob("*.py"):
        assert package_imports(path) <= {"pytest_gemmcheck.records"}, path


def test_nothing_heavy_is_imported():
    code = ("import sys\n"
            "import pytest_gemmcheck.sanitize.tool_run, pytest_gemmcheck.records.sanitize\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'pytest', '_pytest', 'sqlalchemy'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
