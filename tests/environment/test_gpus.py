"""A GPU's identity (environment/gpus.py) under a ROCm build of torch: its arch without feature
suffixes, the UUID as ROCm gives it, the PCI bus id from torch's fields or rocm-smi's, and
the fp8 flavour its own instructions take."""

import json
import subprocess
from types import SimpleNamespace

import pytest

from pytest_gemmcheck.environment import gpus

torch = pytest.importorskip("torch")


def mi300x(**fields):
    return SimpleNamespace(
        name="AMD Instinct MI300X",
        gcnArchName="gfx942:sramecc+:xnack-",
        major=9,
        minor=4,
        multi_processor_count=304,
        total_memory=192 << 30,
        warp_size=64,
        **fields,
    )


def identity_on_rocm(monkeypatch, props, smi_json=None, visible=1):
    monkeypatch.setattr(torch.version, "hip", "7.0.51831")
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: visible)
    asked = []

    def run(command, **kwargs):
        asked.append(command[0])
        if smi_json is None or command[0] != "rocm-smi":
            raise FileNotFoundError(command[0])
        return subprocess.CompletedProcess(command, 0, json.dumps(smi_json), "")

    monkeypatch.setattr(gpus.subprocess, "run", run)
    return gpus.gpu_identity(torch.device("cuda", 0)), asked


def test_torchs_own_fields_need_no_smi(monkeypatch):
    props = mi300x(uuid="5a8e3c12-0000-1000-80ff-0123456789ab", pci_bus_id=0x19, pci_device_id=0, pci_domain_id=0)
    identity, asked = identity_on_rocm(monkeypatch, props)
    assert identity["arch"] == "gfx942" and identity["multiprocessors"] == 304
    assert identity["uuid"] == "5a8e3c12-0000-1000-80ff-0123456789ab"  # no NVIDIA "GPU-" prefix on ROCm
    assert identity["pci_bus_id"] == "00000000:19:00.0" and asked == []


def test_rocm_smi_fills_what_torch_lacks(monkeypatch):
    smi = {
        "card0": {"Unique ID": "0x18ad4d6e4e2c7b2f", "PCI Bus": "0000:19:00.0"},
        "card1": {"Unique ID": "0x28ad4d6e4e2c7b2f", "PCI Bus": "0000:2a:00.0"},
    }
    props = mi300x(uuid="", pci_bus_id=0x2A, pci_device_id=0, pci_domain_id=0)
    identity, asked = identity_on_rocm(monkeypatch, props, smi, visible=2)
    assert asked == ["rocm-smi"]
    assert identity["pci_bus_id"] == "00000000:2A:00.0" and identity["uuid"] == "0x28ad4d6e4e2c7b2f"


def test_one_gpu_on_the_host_and_one_visible_are_the_same_device(monkeypatch):
    identity, _ = identity_on_rocm(monkeypatch, mi300x(), {"card0": {"Unique ID": "0x1", "PCI Bus": "0000:05:00.0"}})
    assert (identity["uuid"], identity["pci_bus_id"]) == ("0x1", "00000000:05:00.0")


def test_without_rocm_smi_what_nothing_tells_is_none(monkeypatch):
    identity, asked = identity_on_rocm(monkeypatch, mi300x())
    assert asked == ["rocm-smi"] and identity["uuid"] is None and identity["pci_bus_id"] is None


@pytest.mark.parametrize(
    "arch, flavour",
    [
        ("gfx942", "e4m3fnuz"),
        ("gfx940", "e4m3fnuz"),
        ("gfx950", "e4m3fn"),
        ("sm_90", "e4m3fn"),
        ("sm_100", "e4m3fn"),
        (None, "e4m3fn"),
    ],
)
def test_the_native_fp8_flavour(arch, flavour):
    assert gpus.native_fp8(arch) == flavour
