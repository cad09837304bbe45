"""A kernel repository adopts the released plugin: examples/downstream (its own pyproject, kernels
package and tests, no conftest.py) runs ``pytest`` in a fresh virtual environment that has the
built wheel installed, not this source tree, and torch==2.13.0 from the machine's local wheel.

It passes, its summary shows the case's PASS line, and its ``.gemmcheck/history.db`` is written
in that repository; the wheel's ``gemmcheck`` command reads it back. Skips, saying why, only
where no virtual environment can be made, no torch==2.13.0 wheel is on local disk (this test
never downloads torch: on a GPU machine that would be a CUDA build of gigabytes), or there is no
network for the small dependencies that are not cached.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from release_build import ROOT, build_dists

import pytest_gemmcheck

pytestmark = pytest.mark.slow  # builds the wheel and a fresh environment that installs it

TORCH = "torch==2.13.0"  # the Makefile's CPU build
DOWNSTREAM = ROOT / "examples" / "downstream"
# pip's words for a package it could not fetch because there is no network
NO_NETWORK = (
    "NewConnectionError",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Failed to establish a new connection",
)


@pytest.fixture(scope="session")
def dists(tmp_path_factory):
    return build_dists(tmp_path_factory)


def clean_env(venv: Path) -> dict[str, str]:
    """The environment of a shell that activated ``venv``: nothing of this session's Python,
    pytest or gemmcheck settings leaks in (PYTHONPATH could put this tree on sys.path)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "PYTEST_", "GEMMCHECK_", "COV_CORE_", "VIRTUAL_ENV", "CONDA"))
    }
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    return env


def run(command, *, cwd, env, timeout=600):
    return subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def tail(done, lines=40) -> str:
    return "\n".join((done.stdout + done.stderr).strip().splitlines()[-lines:])


def test_downstream_repo_runs_against_the_wheel(dists, tmp_path):
    timings = {"build (session, shared)": dists.seconds}
    started = time.monotonic()

    def lap(step):
        nonlocal started
        now = time.monotonic()
        timings[step] = now - started
        started = now

    venv, repo = tmp_path / "venv", tmp_path / "repo"
    shutil.copytree(
        DOWNSTREAM,
        repo,
        ignore=shutil.ignore_patterns("__pycache__", ".gemmcheck", "build", "*.egg-info", ".pytest_cache"),
    )
    assert not (repo / "conftest.py").exists() and not list(repo.rglob("conftest.py"))

    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300)
    if made.returncode != 0:
        pytest.skip(f"cannot make a virtual environment here: {tail(made, 3)}")
    python, env = venv / "bin" / "python", clean_env(venv)
    lap("venv")

    # torch from local disk only (PIP_FIND_LINKS or a pip.conf find-links), never from an index
    torch_only = run([python, "-m", "pip", "install", "--no-index", "--no-deps", TORCH], cwd=tmp_path, env=env)
    if torch_only.returncode != 0:
        pytest.skip(f"no {TORCH} wheel on local disk (pip find-links) to install offline: {tail(torch_only, 2)}")
    lap("torch (local wheel)")

    # the wheel, not the source tree, and the downstream repo with its test extra (pytest-gemmcheck,
    # which the wheel file satisfies); torch's own small dependencies come from the index
    installed = run([python, "-m", "pip", "install", TORCH, dists.wheel, f"{repo}[test]"], cwd=tmp_path, env=env)
    if installed.returncode != 0 and any(word in installed.stdout + installed.stderr for word in NO_NETWORK):
        pytest.skip(f"no network for the dependencies pip has no copy of: {tail(installed, 3)}")
    assert installed.returncode == 0, tail(installed)
    lap("wheel and downstream repo")

    # the plugin comes from the venv's site-packages, installed from the wheel file
    probe = run(
        [
            python,
            "-c",
            "import json, importlib.metadata as m, pytest_gemmcheck as g; "
            "d = m.distribution('pytest-gemmcheck'); "
            "print(json.dumps([g.__file__, g.__version__, d.read_text('direct_url.json')]))",
        ],
        cwd=repo,
        env=env,
    )
    assert probe.returncode == 0, tail(probe)
    module_file, version, direct_url = json.loads(probe.stdout)
    site_packages = Path(
        run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=repo, env=env
        ).stdout.strip()
    )
    assert Path(module_file).is_relative_to(site_packages), module_file
    assert not Path(module_file).resolve().is_relative_to(ROOT), module_file
    assert version == pytest_gemmcheck.__version__
    origin = json.loads(direct_url)
    assert origin["url"].endswith(dists.wheel.name) and "archive_info" in origin, origin  # a wheel, not editable
    shown = run([python, "-m", "pip", "show", "pytest-gemmcheck"], cwd=repo, env=env)
    assert f"Location: {site_packages}" in shown.stdout, shown.stdout

    # the downstream repo's own `pytest`, found through the wheel's pytest11 entry point
    tested = run([venv / "bin" / "pytest", "-rs"], cwd=repo, env=env)
    lap("pytest in the downstream repo")
    output = tested.stdout + tested.stderr
    assert tested.returncode == 0, output[-6000:]
    assert f"gemmcheck-{pytest_gemmcheck.__version__}" in output  # pytest's "plugins:" header line
    assert re.search(r"^-+ gemmcheck -+$", output, re.M), output[-6000:]
    for shape in ("256x512x256", "512x256x512"):
        assert re.search(
            rf"^PASS +torch_ptpc_gemm ptpc {shape} tile 128x128: 0/12 launches bad\n"
            r" +rate < 22\.1% \(95%\)",
            output,
            re.M,
        ), output[-6000:]
    assert re.search(r"\b2 passed\b", output), output[-3000:]
    assert "failed" not in output.splitlines()[-1], output[-3000:]
    database = repo / ".gemmcheck" / "history.db"
    assert database.is_file() and database.stat().st_size > 0

    # and the wheel's console script reads the history back
    history = run([venv / "bin" / "gemmcheck", "history", "--format", "json"], cwd=repo, env=env)
    lap("gemmcheck history")
    assert history.returncode == 0, tail(history)
    rows = {(row["kernel"], row["shape"]): row for row in json.loads(history.stdout)}
    for shape in ("256x512x256", "512x256x512"):
        row = rows[("torch_ptpc_gemm", shape)]
        assert (row["quant"], row["runs"], row["launches"], row["bad_launches"]) == ("ptpc", 1, 12, 0)

    print("downstream: " + ", ".join(f"{step} {seconds:.1f}s" for step, seconds in timings.items()))
