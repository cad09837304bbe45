"""The stack fingerprint (environment/stack.py) as a ROCm build of torch on an AMD GPU gives it:
torch.version.hip set and cuda None, the arch from gcnArchName without its feature suffixes,
the driver from rocm-smi when there is no nvidia-smi, and the ROCm release; and an NVIDIA
stack's fields as they were (no ROCm field, so its fingerprint is unchanged)."""

import subprocess
import sys
from types import SimpleNamespace

import pytest

from pytest_gemmcheck.environment import stack

torch = pytest.importorskip("torch")

MI355X = SimpleNamespace(
    name="AMD Instinct MI355X",
    gcnArchName="gfx950:sramecc+:xnack-",
    major=9,
    minor=5,
    multi_processor_count=256,
    warp_size=64,
)
H200 = SimpleNamespace(
    name="NVIDIA H200", gcnArchName="NVIDIA H200", major=9, minor=0, multi_processor_count=132, warp_size=32
)
# rocm-smi --showdriverversion --csv
ROCM_SMI_DRIVER = "name, value\nDriver version,6.12.12\n"


def on_gpu(monkeypatch, props, *, hip, cuda, smi):
    """torch as a ROCm or CUDA build with 8 GPUs of ``props``; ``smi``: the command that answers
    (the other one is not installed)."""
    monkeypatch.setattr(torch.version, "hip", hip)
    monkeypatch.setattr(torch.version, "cuda", cuda)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)

    def run(command, **kwargs):
        if command[0] != smi[0]:
            raise FileNotFoundError(command[0])
        return subprocess.CompletedProcess(command, 0, smi[1], "")

    monkeypatch.setattr(stack.subprocess, "run", run)
    # FlyDSL's fields join the stack only where FlyDSL was imported (another test in this process)
    monkeypatch.delitem(sys.modules, "flydsl", raising=False)
    return stack._base_info.__wrapped__()


@pytest.mark.parametrize(
    "suffixed, arch", [("gfx950:sramecc+:xnack-", "gfx950"), ("gfx942:sramecc-:xnack+", "gfx942"), ("gfx942", "gfx942")]
)
def test_the_arch_of_a_rocm_gpu_has_no_feature_suffixes(monkeypatch, suffixed, arch):
    monkeypatch.setattr(torch.version, "hip", "7.0.51831")
    assert stack.gpu_arch(SimpleNamespace(gcnArchName=suffixed, major=9, minor=4)) == arch


def test_a_cuda_torchs_gcn_arch_name_is_not_an_arch(monkeypatch):
    monkeypatch.setattr(torch.version, "hip", None)
    assert stack.gpu_arch(H200) == "sm_90"


def test_a_rocm_stack(monkeypatch, tmp_path):
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("7.0.2-56\n")
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    info = on_gpu(monkeypatch, MI355X, hip="7.0.51831-a3e329ad8", cuda=None, smi=("rocm-smi", ROCM_SMI_DRIVER))
    assert info["hip"] == "7.0.51831-a3e329ad8" and info["cuda"] is None and info["rocm"] == "7.0.2-56"
    assert (info["gpu_name"], info["gpu_arch"], info["gpu_count"]) == ("AMD Instinct MI355X", "gfx950", 8)
    assert info["driver"] == "6.12.12"
    columns, extra = stack.split({**info, "fingerprint": "x"})
    assert columns["hip"] == info["hip"] and extra == {"rocm": "7.0.2-56"}


def test_a_rocm_stack_without_the_version_file_says_none(monkeypatch, tmp_path):
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    info = on_gpu(monkeypatch, MI355X, hip="6.4.43482", cuda=None, smi=("rocm-smi", ROCM_SMI_DRIVER))
    assert info["rocm"] is None and info["gpu_arch"] == "gfx950"


def test_an_nvidia_stack_has_no_rocm_field(monkeypatch):
    info = on_gpu(monkeypatch, H200, hip=None, cuda="12.8", smi=("nvidia-smi", "570.124.06\n"))
    assert "rocm" not in info
    assert (info["cuda"], info["hip"], info["gpu_arch"], info["driver"]) == ("12.8", None, "sm_90", "570.124.06")


def test_the_fingerprint_travels_as_plain_values(monkeypatch, tmp_path):
    """torch's TorchVersion and the like become str: xdist's serializer refuses subclasses."""
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    on_gpu(monkeypatch, MI355X, hip="7.0.51831", cuda=None, smi=("rocm-smi", ROCM_SMI_DRIVER))
    uncached = stack._base_info.__wrapped__
    monkeypatch.setattr(stack, "_base_info", uncached)
    info = stack.collect()
    assert all(value is None or type(value) in (str, int, float, bool) for value in info.values())
    assert info["fingerprint"] == stack.fingerprint(info)
