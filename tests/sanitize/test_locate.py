"""Finding compute-sanitizer (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin) and its version, and the
reason when there is none to use."""

import os
import stat

import pytest

from pytest_gemmcheck.sanitize import locate as locate_module
from pytest_gemmcheck.sanitize.locate import SanitizerUnavailable, find_binary, locate, read_version


@pytest.fixture
def no_default_toolkit(monkeypatch, tmp_path):
    """/usr/local/cuda as an empty folder, whatever this machine has there."""
    monkeypatch.setattr(locate_module, "DEFAULT_CUDA_HOME", str(tmp_path / "no-cuda"))
    return tmp_path / "no-cuda"


def executable(path, text="#!/bin/sh\necho 'Version 2024.1.0 (build 1)'\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_on_path_with_its_recorded_version(fake_sanitizer):
    found = locate()
    assert found.path == str(fake_sanitizer.path)
    assert found.version == "2025.3.1.0"  # "Version 2025.3.1.0 (build 36400806) (public-release)"
    assert found.stack_info() == {"compute_sanitizer": "2025.3.1.0"}


def test_cuda_home_then_usr_local_cuda(tmp_path, no_default_toolkit):
    home = executable(tmp_path / "toolkit" / "bin" / "compute-sanitizer")
    default = executable(no_default_toolkit / "bin" / "compute-sanitizer")
    environ = {"PATH": str(tmp_path / "empty"), "CUDA_HOME": str(tmp_path / "toolkit")}
    assert find_binary(environ) == str(home)
    assert find_binary({"PATH": str(tmp_path / "empty")}) == str(default)
    assert locate(environ=environ).version == "2024.1.0"


def test_a_file_that_cannot_be_executed_is_not_a_binary(tmp_path, no_default_toolkit):
    plain = tmp_path / "toolkit" / "bin" / "compute-sanitizer"
    plain.parent.mkdir(parents=True)
    plain.write_text("not a program")
    assert find_binary({"PATH": "", "CUDA_HOME": str(tmp_path / "toolkit")}) is None


def test_no_toolkit_is_a_reason(tmp_path, no_default_toolkit):
    with pytest.raises(SanitizerUnavailable) as raised:
        locate(environ={"PATH": str(tmp_path), "CUDA_HOME": str(tmp_path / "nowhere")})
    assert str(raised.value) == (
        "no compute-sanitizer on PATH, in $CUDA_HOME/bin or in "
        f"{no_default_toolkit}/bin (it comes with the CUDA toolkit)"
    )


@pytest.mark.parametrize(
    "platform, reason",
    [
        ("cpu", "the case runs on the CPU; compute-sanitizer checks kernels on NVIDIA GPUs"),
        (
            "rocm",
            "compute-sanitizer is NVIDIA's and ROCm has no racecheck; the static lint (gemmcheck lint) "
            "covers FlyDSL kernels there",
        ),
    ],
)
def test_cpu_and_rocm_devices_are_reasons_even_with_a_binary(fake_sanitizer, platform, reason):
    with pytest.raises(SanitizerUnavailable) as raised:
        locate(platform)
    assert str(raised.value) == reason


def test_an_unknown_platform_is_a_programming_error():
    with pytest.raises(ValueError, match="platform must be one of cuda, rocm, cpu"):
        locate("metal")


@pytest.mark.parametrize(
    "script, reason",
    [
        ("#!/bin/sh\nexit 3\n", "--version exited with status 3"),
        ("#!/bin/sh\nsleep 30\n", "--version did not answer within 0.5 s"),
        ("no shebang, not a program\n", "cannot be run: Exec format error"),
    ],
)
def test_a_binary_that_does_not_answer_is_a_reason(tmp_path, script, reason):
    path = executable(tmp_path / "compute-sanitizer", script)
    with pytest.raises(SanitizerUnavailable) as raised:
        read_version(str(path), timeout=0.5)
    assert str(raised.value) == f"{path} {reason}"


def test_a_version_line_it_does_not_know_is_no_version(tmp_path):
    path = executable(tmp_path / "compute-sanitizer", "#!/bin/sh\necho 'NVIDIA (R) Compute Sanitizer'\n")
    assert read_version(str(path)) is None
    assert locate(environ={"PATH": str(tmp_path)}).stack_info() == {"compute_sanitizer": "unknown version"}
    assert os.access(path, os.X_OK)
