"""Probes for optional packages are not fooled by a folder of the same name on sys.path, which
importlib takes for a namespace package (this repository's tests/compiled/flydsl is one; a kernel repo's
triton/ folder would be another)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def probe(tmp_path, name: str, call: str) -> str:
    """``call`` in a Python without site-packages (so without the real package) where a bare
    folder ``name`` comes first on sys.path; what it printed."""
    (tmp_path / name).mkdir()
    code = (
        f"import sys; sys.path[:0] = [{str(tmp_path)!r}, {str(ROOT)!r}]; "
        f"import importlib.util; assert importlib.util.find_spec({name!r}) is not None; {call}"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_folder_named_flydsl_is_not_flydsl(tmp_path):
    """Else the FlyDSL tests run, and fail, on a fresh clone without FlyDSL."""
    call = "from pytest_gemmcheck.compiled.flydsl.compile import flydsl_installed; print(flydsl_installed())"
    assert probe(tmp_path, "flydsl", call) == "False"


def test_a_folder_named_triton_is_not_triton(tmp_path):
    """Else the fused check is chosen for GPU outputs and fails to import its kernels."""
    call = "from pytest_gemmcheck.checking.triton import triton_importable; print(triton_importable())"
    assert probe(tmp_path, "triton", call) == "False"
