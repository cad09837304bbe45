"""The release: ``python -m build`` makes an sdist and a wheel that hold what an installed plugin
needs (the Alembic migrations, py.typed, the license, the entry points), with the metadata PyPI
shows, and ``twine check`` passes on both. The build itself: tests/release_build.py."""

from __future__ import annotations

import configparser
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from release_build import build_dists

import pytest_gemmcheck

pytestmark = pytest.mark.slow  # builds the sdist and the wheel with python -m build

BASE_URL = "https://github.com/pytest-gemmcheck/pytest-gemmcheck"
PACKAGE = "pytest_gemmcheck"


@pytest.fixture(scope="session")
def dists(tmp_path_factory):
    return build_dists(tmp_path_factory)


@pytest.fixture(scope="session")
def wheel_names(dists):
    with zipfile.ZipFile(dists.wheel) as wheel:
        return set(wheel.namelist())


@pytest.fixture(scope="session")
def dist_info(dists):
    return f"{PACKAGE}-{pytest_gemmcheck.__version__}.dist-info"


def wheel_text(dists, name: str) -> str:
    with zipfile.ZipFile(dists.wheel) as wheel:
        return wheel.read(name).decode("utf-8")


@pytest.fixture(scope="session")
def metadata(dists, dist_info):
    return Parser().parsestr(wheel_text(dists, f"{dist_info}/METADATA"))


def package_files(source: Path, *patterns: str) -> set[str]:
    return {path.relative_to(source).as_posix() for pattern in patterns for path in (source / PACKAGE).glob(pattern)}


def test_build_makes_an_sdist_and_a_wheel_outside_the_tree(dists):
    version = pytest_gemmcheck.__version__
    assert dists.sdist.name == f"{PACKAGE}-{version}.tar.gz"
    assert dists.wheel.name == f"{PACKAGE}-{version}-py3-none-any.whl"
    assert dists.left_in_tree == []
    print(f"built in {dists.seconds:.1f}s ({'isolated' if dists.isolation else 'no isolation: offline'})")


def test_wheel_holds_the_package_and_its_migrations(dists, wheel_names):
    modules = package_files(dists.source, "**/*.py")
    assert modules and modules <= wheel_names, f"missing from the wheel: {sorted(modules - wheel_names)}"
    migrations = {
        f"{PACKAGE}/history/migrations/env.py",
        f"{PACKAGE}/history/migrations/script.py.mako",
        *package_files(dists.source, "history/migrations/versions/*.py"),
    }
    assert len(migrations) > 3 and migrations <= wheel_names, f"missing: {sorted(migrations - wheel_names)}"
    assert f"{PACKAGE}/py.typed" in wheel_names
    # only the package and its metadata: no tests, examples or docs installed as top-level names
    assert {name.split("/", 1)[0] for name in wheel_names} == {
        PACKAGE,
        f"{PACKAGE}-{pytest_gemmcheck.__version__}.dist-info",
    }


def test_wheel_holds_the_license(dists, dist_info, wheel_names, metadata):
    assert f"{dist_info}/licenses/LICENSE" in wheel_names
    assert wheel_text(dists, f"{dist_info}/licenses/LICENSE") == (dists.source / "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in wheel_text(dists, f"{dist_info}/licenses/LICENSE")
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]


def test_entry_points(dists, dist_info):
    entry_points = configparser.ConfigParser()
    entry_points.read_string(wheel_text(dists, f"{dist_info}/entry_points.txt"))
    assert dict(entry_points["pytest11"]) == {"gemmcheck": "pytest_gemmcheck.plugin"}
    assert dict(entry_points["console_scripts"]) == {"gemmcheck": "pytest_gemmcheck.cli:main"}


def test_metadata_fields(metadata):
    assert metadata["Name"] == "pytest-gemmcheck"
    assert metadata["Version"] == pytest_gemmcheck.__version__
    assert metadata["Requires-Python"] == ">=3.10"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload().startswith("# pytest-gemmcheck")  # the README is the long description
    urls = dict(line.split(", ", 1) for line in metadata.get_all("Project-URL"))
    assert urls == {
        "Homepage": BASE_URL,
        "Documentation": f"{BASE_URL}/tree/main/docs",
        "Changelog": f"{BASE_URL}/blob/main/CHANGELOG.md",
        "Issues": f"{BASE_URL}/issues",
    }


def test_classifiers(metadata):
    classifiers = metadata.get_all("Classifier")
    assert "Framework :: Pytest" in classifiers
    assert "Topic :: Software Development :: Testing" in classifiers
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    versions = {c.rsplit(" :: ", 1)[1] for c in classifiers if c.startswith("Programming Language :: Python :: 3.")}
    assert {"3.10", "3.11", "3.12"} <= versions
    # The license is the License-Expression: setuptools refuses a "License ::" classifier beside one
    assert not [c for c in classifiers if c.startswith("License ::")]
    trove = pytest.importorskip("trove_classifiers")
    assert not [c for c in classifiers if c not in trove.classifiers], "PyPI rejects unknown classifiers"


def test_requirements_and_extras(metadata):
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def names(extra: str | None) -> set[str]:
        found = set()
        for line in metadata.get_all("Requires-Dist"):
            requirement = Requirement(line)
            in_extra = requirement.marker is not None and "extra" in str(requirement.marker)
            if extra is None and not in_extra:
                found.add(canonicalize_name(requirement.name) + "".join(f"[{e}]" for e in sorted(requirement.extras)))
            elif extra is not None and in_extra and requirement.marker.evaluate({"extra": extra}):
                found.add(canonicalize_name(requirement.name) + "".join(f"[{e}]" for e in sorted(requirement.extras)))
        return found

    assert set(metadata.get_all("Provides-Extra")) == {"postgresql", "gpu", "flydsl", "test"}
    assert names(None) == {"pytest", "torch", "numpy", "sqlalchemy", "alembic", "hypothesis"}
    assert names("postgresql") == {"psycopg[binary]"}
    assert names("gpu") == {"triton", "nvidia-ml-py"}
    assert names("flydsl") == {"flydsl"}
    assert {"build", "twine", "pytest-xdist", "psycopg[binary]", "hypothesis"} <= names("test")


def test_sdist_holds_the_project(dists):
    with tarfile.open(dists.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    expected = {
        "PKG-INFO",
        "pyproject.toml",
        "LICENSE",
        "README.md",
        "CHANGELOG.md",
        f"{PACKAGE}/py.typed",
        f"{PACKAGE}/history/migrations/script.py.mako",
        "tests/conftest.py",
        "tests/test_packaging.py",
        "examples/downstream/pyproject.toml",
        "docs/downstream.md",
        # the benchmarks run from the unpacked sdist as they do from a checkout
        "benchmarks/__init__.py",
        "benchmarks/README.md",
        "gemmcheck_dev/results.py",
    }
    assert expected <= names, f"missing from the sdist: {sorted(expected - names)}"
    assert not [
        n
        for n in names
        if "__pycache__" in n
        or n.startswith((".venv/", ".git/", ".gemmcheck/"))
        or "/.gemmcheck/" in n
        or n.endswith((".pyc", ".db"))
    ]


def test_twine_check_passes(dists):
    pytest.importorskip("twine", reason="twine check needs twine (pip install -e '.[test]')")
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(dists.sdist), str(dists.wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert output.count("PASSED") == 2, output


def test_the_version_has_one_source_shown_by_the_command_and_the_header(pytester, capsys):
    from pytest_gemmcheck.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"gemmcheck {pytest_gemmcheck.__version__}"
    pytester.makepyfile("def test_plain(): pass")
    pytester.runpytest().stdout.fnmatch_lines([f"gemmcheck {pytest_gemmcheck.__version__}: repeat 12, *"])


def test_the_history_folder_ignores_itself_in_git(pytester, examples_dir):
    (pytester.path / "kernels.py").write_text((examples_dir / "cpu" / "kernels.py").read_text())
    pytester.makepyfile(
        test_k="""
        from kernels import tiled_gemm

        def test_k(gemmcheck):
            case = gemmcheck.case("k", m=16, n=16, k=32, device="cpu")
            x = case.inputs()
            case.run(lambda out: tiled_gemm(x, out), repeat=2)
    """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert (pytester.path / ".gemmcheck" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (pytester.path / ".gemmcheck" / "history.db").exists()
