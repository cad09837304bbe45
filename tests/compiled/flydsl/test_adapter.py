import sys
import types

import pytest

from pytest_gemmcheck.compiled.flydsl import adapter
from pytest_gemmcheck.compiled.flydsl.adapter import OUT, bind_launch


def test_bind_launch_puts_out_in_place_and_passes_the_stream():
    calls = []

    def launcher(*args):
        calls.append(args)

    launch = bind_launch(launcher, "a", "b", OUT, 7, stream="s0")
    launch("out-tensor")
    assert calls == [("a", "b", "out-tensor", 7, "s0")]


def test_bind_launch_on_the_cpu_passes_no_stream():
    torch = pytest.importorskip("torch")
    calls = []
    out = torch.empty(4)
    bind_launch(lambda *args: calls.append(args), OUT)(out)
    assert calls[0][0] is out and calls[0][1] is None


def test_bind_launch_needs_exactly_one_out():
    with pytest.raises(ValueError, match="exactly one OUT"):
        bind_launch(print, 1, 2)
    with pytest.raises(ValueError):
        bind_launch(print, OUT, OUT)


def test_device_arch_never_takes_the_flydsl_guess(monkeypatch):
    # FlyDSL's helper answers gfx942 when no device does; the stack must not record that
    fake = types.ModuleType("flydsl.runtime.device")
    fake.get_rocm_arch = lambda: "gfx942"
    monkeypatch.setitem(sys.modules, "flydsl.runtime.device", fake)
    monkeypatch.setattr(adapter.shutil, "which", lambda name: None)
    torch = pytest.importorskip("torch")
    if getattr(torch.version, "hip", None) and torch.cuda.is_available():
        pytest.skip("a ROCm GPU is present: its arch is a fact here")
    assert adapter.device_arch() is None


def test_stack_fields_without_flydsl(monkeypatch):
    monkeypatch.setattr(adapter, "flydsl_version", lambda: None)
    assert adapter.stack_fields() == {}


def test_stack_fields_with_flydsl():
    # by its distribution: `import flydsl` alone finds this test folder as a namespace package
    if adapter.flydsl_version() is None:
        pytest.skip("FlyDSL is not installed (ci/install-flydsl.sh installs it)")
    fields = adapter.stack_fields()
    assert fields["flydsl"] == adapter.flydsl_version()
    assert set(fields) == {"flydsl", "hip", "gpu_arch", "flydsl_compile_arch", "flydsl_toolkit"}
    assert fields["gpu_arch"] == adapter.device_arch()
    assert fields["flydsl_toolkit"] is None or fields["flydsl_toolkit"].startswith("rocm-bitcode:")


def test_capture_assembly_restores_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FLYDSL_DUMP_DIR", "/elsewhere")
    monkeypatch.delenv("FLYDSL_DEBUG_DUMP_ASM", raising=False)
    with adapter.capture_assembly(str(tmp_path)) as captured:
        import os

        assert os.environ["FLYDSL_DEBUG_DUMP_ASM"] == "1" and os.environ["FLYDSL_DUMP_DIR"] == str(tmp_path)
        (tmp_path / "kern_0").mkdir()
        (tmp_path / "kern_0" / "22_final_isa.s").write_text("")
    assert os.environ["FLYDSL_DUMP_DIR"] == "/elsewhere" and "FLYDSL_DEBUG_DUMP_ASM" not in os.environ
    assert captured.files == [str(tmp_path / "kern_0" / "22_final_isa.s")]
