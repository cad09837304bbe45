"""The package's own functions (checking/triton/__init__.py): Triton's cache key worked out by a
thread of its own, once a process, and never under the interpreter; a session starts it at its
first case only on a machine with a GPU."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_gemmcheck.checking import triton as gpu

ROOT = Path(__file__).resolve().parents[3]


def run_python(code: str, **env) -> str:
    import os

    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.skipif(not gpu.triton_importable(), reason="needs triton installed")
def test_the_key_is_worked_out_by_one_thread_once_a_process():
    printed = run_python(
        """
        from pytest_gemmcheck.checking.triton import warm_up_key
        thread = warm_up_key()
        assert thread is not None and thread.name == "gemmcheck-triton-key" and thread.daemon
        assert warm_up_key() is thread  # once a process
        thread.join(240)
        from triton.runtime.cache import triton_key
        print(triton_key.cache_info().currsize, triton_key.cache_info().misses)
        triton_key()
        print(triton_key.cache_info().hits)
        """,
        TRITON_INTERPRET="0",
    )
    assert printed.split() == ["1", "1", "1"]  # worked out by the thread; the next call finds it


def test_the_interpreter_needs_no_key():
    printed = run_python(
        """
        import sys
        from pytest_gemmcheck.checking.triton import warm_up_key
        print(warm_up_key(), "triton" in sys.modules)
        """,
        TRITON_INTERPRET="1",
    )
    assert printed == "None False"


@pytest.mark.parametrize("has_gpu", [True, False])
def test_a_sessions_first_case_warms_the_key_only_on_a_machine_with_a_gpu(monkeypatch, has_gpu):
    import torch

    from pytest_gemmcheck.pytest_session import state

    started = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: has_gpu)
    monkeypatch.setattr(gpu, "warm_up_key", lambda: started.append(True))
    state.GemmcheckSession._warm_up_gpu_compiler()
    assert started == ([True] if has_gpu else [])
