"""--gemmcheck-sanitize on an AMD GPU under a ROCm build of torch: compute-sanitizer is NVIDIA's,
so every tool is skipped with the reason, and neither the sanitizer nor the child runs, even
where a CUDA toolkit's compute-sanitizer is on PATH."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

from pytest_gemmcheck.case.sanitized import platform_of, sanitize  # noqa: E402
from pytest_gemmcheck.config.table import BY_NAME, Settings  # noqa: E402
from pytest_gemmcheck.records.sanitize import SKIPPED  # noqa: E402
from pytest_gemmcheck.sanitize.locate import NOT_ON_ROCM  # noqa: E402


@pytest.mark.parametrize(
    "hip, device, platform",
    [("7.0.51831", "cuda:0", "rocm"), (None, "cuda:0", "cuda"), ("7.0.51831", "cpu", "cpu"), (None, "cpu", "cpu")],
)
def test_the_platform_is_rocm_for_a_rocm_torchs_gpu(monkeypatch, hip, device, platform):
    monkeypatch.setattr(torch.version, "hip", hip)
    assert platform_of(torch.device(device)) == platform


def test_every_tool_is_skipped_on_rocm_and_nothing_runs(monkeypatch, fake_sanitizer, tmp_path):
    monkeypatch.setattr(torch.version, "hip", "7.0.51831")
    ran = tmp_path / "child ran"
    child = [sys.executable, "-c", f"open({str(ran)!r}, 'w').close()"]
    settings = Settings(sanitize=BY_NAME["sanitize"].parse("racecheck,memcheck"))
    runs = sanitize("3f2a9c", torch.device("cuda", 0), settings, child=child, environ=dict(os.environ), cwd=tmp_path)
    assert [(run.tool, run.status, run.reason) for run in runs] == [
        ("racecheck", SKIPPED, NOT_ON_ROCM),
        ("memcheck", SKIPPED, NOT_ON_ROCM),
    ]
    assert not ran.exists() and not fake_sanitizer.log_path.exists()
    assert runs[0].summary() == f"racecheck: skipped: {NOT_ON_ROCM}"
