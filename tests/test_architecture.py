"""The package's import graph keeps the data flow one way: a folder imports only the folders
below it (records at the floor, the entry points at the top), and the command line and the
plugin's start-up import nothing heavy (docs/architecture.md)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_gemmcheck"

# Lowest first. A module may import its own folder's modules and those of any folder of a lower
# rank; the entry points (top-level modules) may import anything.
LAYERS = (
    ("records", "errors", "jsontext"),
    ("config",),
    ("compiled",),
    ("environment",),
    ("checking",),
    ("history",),
    ("judging",),
    ("sanitize",),
    ("launch",),
    ("case",),
    ("searching",),
    ("reporting",),
    ("bisect",),
    ("pytest_session",),
    ("commands",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
ENTRY_POINTS = {"__init__", "__main__", "api", "cli", "plugin", "hookspecs"}


def _room(module: str) -> str:
    """The folder (or top-level module) a dotted module name below the package belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every package module ``path`` imports (at any depth: a lazy import counts), with its line."""
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    package = parts if path.name == "__init__.py" else parts[:-1]
    if path.name == "__init__.py":
        parts = parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "pytest_gemmcheck" and not node.module:
                found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
            elif target.startswith("pytest_gemmcheck"):
                found.append(
                    (target if node.module or node.level == 0 else target + "." + node.names[0].name, node.lineno)
                )
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.startswith("pytest_gemmcheck")]
    return found


def _violations() -> list[str]:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        room = _room(module)
        if room in ENTRY_POINTS or path.name == "__main__.py":  # python -m's entry, wherever it sits
            continue
        for target, line in _imports(path):
            there = _room(target)
            if there == room or there == "__init__" and target == "pytest_gemmcheck":
                continue
            if there in ENTRY_POINTS and there != "__init__":
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {room}/ imports the entry point {target}")
            elif there in RANK and RANK[there] >= RANK[room]:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {room}/ imports {target}, a higher layer")
    return wrong


def test_every_folder_is_ranked():
    folders = {path.name for path in PACKAGE.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    assert folders - set(RANK) == set(), "a new folder needs its place in LAYERS"
    assert modules - set(RANK) - ENTRY_POINTS == set(), "a new top-level module is an entry point or a layer"


def test_imports_run_one_way():
    assert _violations() == []


def test_the_rule_sees_a_violation(tmp_path, monkeypatch):
    """The check itself: a history module that imports case/ is reported."""
    fake = tmp_path / "pytest_gemmcheck"
    for room in ("history", "case"):
        (fake / room).mkdir(parents=True)
        (fake / room / "__init__.py").write_text("")
    (fake / "history" / "store.py").write_text("from ..case.case import Case\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert _violations() == [
        "pytest_gemmcheck/history/store.py:1: history/ imports pytest_gemmcheck.case.case, a higher layer"
    ]


def _imported_by(code: str, *, whole_names: bool = False) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    names = json.loads(done.stdout.splitlines()[-1])
    return set(names) if whole_names else {name.split(".")[0] for name in names}


@pytest.mark.parametrize(
    "argv", [["--version"], ["--help"], ["history", "--help"], ["lint", "--help"], ["selftest", "--help"]]
)
def test_the_command_line_starts_light(argv):
    """gemmcheck --version and --help (of any command) import no pytest, torch, SQLAlchemy,
    Alembic, Triton or numpy."""
    code = (
        f"import sys; sys.argv = ['gemmcheck', *{argv!r}]\nfrom pytest_gemmcheck.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    heavy = _imported_by(code) & {"pytest", "_pytest", "torch", "sqlalchemy", "alembic", "triton", "numpy"}
    assert heavy == set()


def test_a_history_query_reads_through_sqlalchemy_core_alone(tmp_path):
    """gemmcheck history imports no pytest, torch, Triton or Alembic, nor SQLAlchemy's ORM or the
    store that writes results: what a read pays for is SQLAlchemy Core."""
    database = tmp_path / "history.db"
    _imported_by(f"from pytest_gemmcheck.cli import main\nmain(['--db', {str(database)!r}, 'db', 'upgrade'])")
    imported = _imported_by(
        f"from pytest_gemmcheck.cli import main\nmain(['--db', {str(database)!r}, 'history'])", whole_names=True
    )
    assert "pytest_gemmcheck.history.dashboard" in imported  # the query ran
    heavy = {name for name in imported if name.split(".")[0] in {"pytest", "_pytest", "torch", "triton", "alembic"}}
    assert heavy == set()
    assert {"sqlalchemy.orm", "pytest_gemmcheck.history.store"} & imported == set()


def test_test_files_have_unique_names():
    # the suite runs in pytest's default import mode, where two test modules of one basename collide
    tests = Path(__file__).resolve().parent
    names = [path.name for path in tests.rglob("test_*.py")]
    assert sorted({name for name in names if names.count(name) > 1}) == []


def test_module_names_are_unique():
    # a module's file name says what it is without its folder: engine.py or result.py twice says neither
    names = [path.name for path in PACKAGE.rglob("*.py") if "migrations" not in path.parts]
    assert sorted({name for name in names if names.count(name) > 1} - {"__init__.py", "__main__.py"}) == []
