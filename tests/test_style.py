"""The tree passes ruff: its lint (pycodestyle, pyflakes, import order) and its formatter, as
configured in pyproject.toml. The version is pinned in the test extra: a newer ruff may judge
the same code otherwise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_the_tree_passes_ruff(command):
    pytest.importorskip("ruff", reason="ruff is in the test extra: pip install -e '.[test]'")
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
