"""Background load (stress.py) and GPU-per-worker choice (devices.py), on the CPU: the no-op
paths, the thread's lifecycle driven by a stand-in workload, option parsing and worker
assignment. The GPU paths run in benchmarks/gpu_run.sh."""

import os
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest

from pytest_gemmcheck.config import devices
from pytest_gemmcheck.config.table import BY_NAME
from pytest_gemmcheck.environment import gpus, stress


def stress_threads():
    return [t for t in threading.enumerate() if t.name.startswith("gemmcheck-stress")]


# --- stress: option values -------------------------------------------------------------


@pytest.mark.parametrize("text,kind", [("none", "none"), ("copy", "copy"), ("COMPUTE", "compute"), (" copy ", "copy")])
def test_stress_option_values(text, kind):
    assert BY_NAME["stress"].parse(text) == kind


@pytest.mark.parametrize("text", ["memory", "", "copy,compute"])
def test_a_bad_stress_kind_lists_the_kinds(text):
    with pytest.raises(ValueError) as info:
        BY_NAME["stress"].parse(text)
    assert "none, copy, compute" in str(info.value)


def test_bad_kind_fails_before_anything_runs():
    with pytest.raises(ValueError, match="--gemmcheck-stress"):
        stress.load("heat", "cpu")


# --- stress: no-op paths ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["copy", "compute"])
def test_cpu_device_is_a_noop_that_says_why(kind):
    with stress.load(kind, "cpu") as background:
        assert not stress_threads()
    info = background.describe()
    assert info == {"kind": kind, "active": False, "note": "no background load: cpu is not a GPU"}
    assert background.summary() == info["note"]


def test_kind_none_is_a_noop_on_any_device():
    with stress.load("none", "cuda:0") as background:  # never looks at the device
        pass
    assert background.describe() == {
        "kind": "none",
        "active": False,
        "note": "no background load (--gemmcheck-stress=none)",
    }


def test_a_load_runs_once():
    background = stress.load("copy", "cpu")
    with background:
        pass
    with pytest.raises(RuntimeError, match="runs once"):
        with background:
            pass


# --- stress: the background thread, driven by a stand-in for the GPU ----------------------


class FakeEvent:
    def __init__(self, workload):
        self.workload = workload

    def synchronize(self):
        time.sleep(0.0005)  # an iteration's GPU time
        self.workload.completed += 1


class FakeWorkload:
    """What BackgroundLoad needs of a workload, without a GPU."""

    engine = "fake loop"
    bytes = 2048
    bytes_per_iteration = 1024

    def __init__(self, fail_after=None):
        self.launched = 0
        self.completed = 0
        self.drained = False
        self.in_context = False
        self.fail_after = fail_after

    def thread_context(self):
        workload = self

        class Context:
            def __enter__(self):
                workload.in_context = True

            def __exit__(self, *exc):
                workload.in_context = False

        return Context()

    def launch(self):
        assert self.in_context, "launched outside the thread's device/stream context"
        if self.fail_after is not None and self.launched >= self.fail_after:
            raise RuntimeError("out of memory")
        self.launched += 1

    def mark(self):
        return FakeEvent(self)

    def drain(self):
        self.drained = True

    def warm_up(self):
        with self.thread_context():
            self.launch()
        self.launched = 0


@pytest.fixture
def started(monkeypatch):
    """Enter a BackgroundLoad on "cuda:0" whose GPU side is a FakeWorkload."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)

    def start(workload, in_flight=2):
        monkeypatch.setattr(stress, "Workload", lambda kind, device, buffer_bytes: workload)
        background = stress.BackgroundLoad("copy", "cuda:0", in_flight=in_flight)
        return background.__enter__()

    return start


def wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_thread_runs_until_stopped_and_is_joined(started):
    workload = FakeWorkload()
    background = started(workload)
    wait_for(lambda: workload.launched >= 5)
    assert [t.name for t in stress_threads()] == ["gemmcheck-stress-copy"]
    background.stop()
    assert not stress_threads()
    assert workload.drained
    assert background.iterations == workload.launched
    # the queue never held more than in_flight iterations that had not completed
    assert workload.launched - workload.completed <= background.in_flight


def test_describe_reports_iterations_bytes_and_bandwidth(started):
    workload = FakeWorkload()
    background = started(workload)
    wait_for(lambda: workload.launched >= 3)
    background.stop()
    info = background.describe()
    assert info["kind"] == "copy" and info["active"] is True
    assert info["device"] == "cuda:0" and info["engine"] == "fake loop"
    assert info["bytes"] == 2048 and info["bytes_per_iteration"] == 1024
    assert info["iterations"] == background.iterations >= 3
    assert info["seconds"] > 0
    assert info["gb_per_s"] == pytest.approx(info["iterations"] * 1024 / info["seconds"] / 1e9, abs=0.1)
    assert "error" not in info
    assert "iterations of" in background.summary()


def test_stop_is_idempotent(started):
    background = started(FakeWorkload())
    background.stop()
    background.stop()
    assert not stress_threads()


def test_body_that_raises_still_stops_the_thread(monkeypatch):
    import torch

    workload = FakeWorkload()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(stress, "Workload", lambda kind, device, buffer_bytes: workload)
    with pytest.raises(KeyError):
        with stress.load("compute", "cuda:1") as background:
            wait_for(lambda: workload.launched >= 2)
            assert [t.name for t in stress_threads()] == ["gemmcheck-stress-compute"]
            raise KeyError("the launches failed")
    assert not stress_threads()
    assert workload.drained
    assert background.describe()["iterations"] >= 2


def test_failed_load_fails_the_block_that_ran_beside_it(started):
    workload = FakeWorkload(fail_after=3)
    background = started(workload)
    wait_for(lambda: background.error is not None)
    with pytest.raises(RuntimeError, match="background copy load failed.*out of memory"):
        background.__exit__(None, None, None)
    assert not stress_threads()
    assert background.describe()["error"] == "RuntimeError: out of memory"


def test_load_that_cannot_start_raises_on_entry_and_leaves_no_thread(started):
    with pytest.raises(RuntimeError, match="out of memory"):
        started(FakeWorkload(fail_after=0))  # the warm-up iteration fails
    assert not stress_threads()


def test_failed_load_does_not_mask_the_body_exception(started):
    background = started(FakeWorkload(fail_after=1))
    wait_for(lambda: background.error is not None)
    assert background.__exit__(ValueError, ValueError("kernel"), None) is False  # the body's error propagates
    assert not stress_threads()


def test_in_flight_must_be_positive():
    with pytest.raises(ValueError, match="in_flight"):
        stress.BackgroundLoad("copy", "cpu", in_flight=0)


def test_stress_kernels_in_the_triton_interpreter():
    """The persistent loops cover every element whatever the grid (run in a fresh process:
    Triton picks the interpreter at import)."""
    pytest.importorskip("triton")
    code = (
        "import torch\n"
        "from pytest_gemmcheck.environment import stress_kernels as k\n"
        "src = torch.arange(3 * k.BLOCK + 5, dtype=torch.float32)\n"
        "dst = torch.zeros_like(src)\n"
        "k.launch_copy(src, dst, programs=2)\n"
        "assert torch.equal(src, dst), 'copy'\n"
        "buf = torch.full((k.BLOCK + 7,), 3.0)\n"
        "k.launch_fma(buf, programs=5, rounds=2)\n"
        "x = torch.tensor(3.0)\n"
        "for _ in range(2): x = x * 0.999 + 0.001\n"
        "assert torch.allclose(buf, torch.full_like(buf, float(x))), 'fma'\n"
        "print('ok')\n"
    )
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_workload_on_an_amd_gpu_runs_the_triton_loops():
    """--gemmcheck-stress on a ROCm torch: its GPU is a "cuda" device whose compute units size
    the grid, and the load is the Triton persistent loops (compiled for gfx942 and gfx950 by
    tests/checking/triton/test_amd_compile.py), on a stream of the highest priority. Run with
    torch.cuda's device calls standing in for an MI300X, and the loops in Triton's
    interpreter."""
    pytest.importorskip("triton")
    code = (
        "import torch\n"
        "from types import SimpleNamespace\n"
        "from pytest_gemmcheck.environment import stress\n"
        "torch.version.hip = '7.0.51831'\n"
        "mi300x = SimpleNamespace(name='AMD Instinct MI300X', gcnArchName='gfx942:sramecc+:xnack-',\n"
        "                         multi_processor_count=304, warp_size=64)\n"
        "streams = []\n"
        "class Stream:\n"
        "    def __init__(self, device, priority): streams.append(priority)\n"
        "    def wait_stream(self, other): pass\n"
        "    def synchronize(self): pass\n"
        "torch.cuda.get_device_properties = lambda device: mi300x\n"
        "torch.cuda.mem_get_info = lambda device: (192 << 30, 192 << 30)\n"
        "torch.cuda.Stream = Stream\n"
        "torch.cuda.current_stream = lambda device=None: None\n"
        "work = stress.Workload('copy', torch.device('cpu'), buffer_bytes=4 << 20)\n"
        "assert work.engine == 'triton persistent copy loop, 608 programs', work.engine\n"
        "assert streams == [-1], streams\n"
        "work.buffers[0].copy_(torch.arange(work.buffers[0].numel(), dtype=torch.float32))\n"
        "work.launch()\n"
        "assert torch.equal(work.buffers[0], work.buffers[1]), 'copy'\n"
        "print('ok')\n"
    )
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


# --- devices: choosing a GPU per worker ----------------------------------------------------


@pytest.mark.parametrize(
    "spec,expected",
    [
        (None, None),
        ("all", None),
        (" ALL ", None),
        ("", None),
        ("0", (0,)),
        ("0,1,3", (0, 1, 3)),
        ("3,1", (3, 1)),
        ("0-3", (0, 1, 2, 3)),
        ("0-1, 5", (0, 1, 5)),
    ],
)
def test_parse_devices(spec, expected):
    assert devices.parse_devices(spec) == expected


@pytest.mark.parametrize(
    "spec,message",
    [
        ("gpu0", "is not a GPU index"),
        ("0,,1", "empty item"),
        ("-1", "is not a GPU index"),
        ("1,1", "named twice"),
        ("0-2,1", "named twice"),
        ("3-1", "runs backwards"),
        ("1.5", "is not a GPU index"),
    ],
)
def test_parse_devices_errors_name_the_option(spec, message):
    with pytest.raises(ValueError, match=message) as info:
        devices.parse_devices(spec)
    assert str(info.value).startswith(f"--gemmcheck-devices={spec!r}")


@pytest.mark.parametrize(
    "worker,spec,count,device",
    [
        (None, None, 4, 0),
        ("master", None, 4, 0),
        (None, "2,3", 4, 2),
        ("gw0", None, 4, 0),
        ("gw3", None, 4, 3),
        ("gw5", None, 4, 1),  # more workers than GPUs: round-robin
        ("gw0", "1,3", 4, 1),
        ("gw1", "1,3", 4, 3),
        ("gw2", "1,3", 4, 1),
        ("gw3", "all", 2, 1),
        ("gw12", "0-7", 8, 4),
    ],
)
def test_device_for_worker(worker, spec, count, device):
    assert devices.device_for_worker(worker, spec, count) == device


def test_eight_workers_on_eight_gpus_each_get_their_own():
    chosen = [devices.device_for_worker(f"gw{i}", None, 8) for i in range(8)]
    assert sorted(chosen) == list(range(8))


def test_no_visible_gpu_means_cpu():
    assert devices.device_for_worker("gw1", None, 0) is None
    assert devices.device_for_worker("gw1", "0,1", 0) is None  # a shared ini file still works on CPU hosts


def test_bad_spec_is_an_error_even_without_a_gpu():
    with pytest.raises(ValueError, match="--gemmcheck-devices"):
        devices.device_for_worker("gw0", "zero", 0)


def test_device_that_is_not_visible():
    with pytest.raises(
        ValueError, match=r"--gemmcheck-devices='0,2': GPU 2 is not visible \(this process sees GPUs 0-1"
    ):
        devices.device_for_worker("gw0", "0,2", 2)
    with pytest.raises(ValueError, match="sees GPU 0;"):
        devices.device_for_worker(None, "1", 1)


@pytest.mark.parametrize("worker", ["gw", "worker3", "gw-1", "3"])
def test_malformed_worker_id(worker):
    with pytest.raises(ValueError, match="not a pytest-xdist worker id"):
        devices.device_for_worker(worker, None, 2)


# --- devices: identity -----------------------------------------------------------------


def test_gpu_identity_of_the_cpu():
    assert gpus.gpu_identity("cpu") == {"device": "cpu"}


def test_parse_nvidia_smi():
    text = (
        "0, GPU-5b1c0d2e-aaaa-bbbb-cccc-0123456789ab, 00000000:19:00.0, NVIDIA H200\n"
        "1, GPU-77f0e3b4-aaaa-bbbb-cccc-0123456789ab, 00000000:3B:00.0, NVIDIA H200\n"
    )
    rows = gpus.parse_nvidia_smi(text)
    assert rows[1] == {
        "index": "1",
        "uuid": "GPU-77f0e3b4-aaaa-bbbb-cccc-0123456789ab",
        "pci_bus_id": "00000000:3B:00.0",
        "name": "NVIDIA H200",
    }
    assert gpus.parse_nvidia_smi("No devices were found\n") == []


def test_parse_rocm_smi():
    text = (
        '{"card0": {"Unique ID": "0x18f68e602b8a790f", "PCI Bus": "0000:0C:00.0"},'
        ' "card1": {"Unique ID": "0x4a1b", "PCI Bus": "0000:22:00.0"}, "system": {}}'
    )
    rows = gpus.parse_rocm_smi(text)
    assert [row["index"] for row in rows] == ["0", "1"]
    assert rows[0]["uuid"] == "0x18f68e602b8a790f" and rows[0]["pci_bus_id"] == "00000000:0C:00.0"
    assert gpus.parse_rocm_smi("not json") == []


@pytest.mark.parametrize(
    "text,expected",
    [
        ("0000:3b:00.0", "00000000:3B:00.0"),
        ("00000000:3B:00.0", "00000000:3B:00.0"),
        ("3b:00.0", "00000000:3B:00.0"),
        (None, None),
        ("", None),
    ],
)
def test_normalise_bus_id(text, expected):
    assert gpus.normalise_bus_id(text) == expected


def test_smi_rows_are_matched_by_uuid_or_bus_never_by_index():
    rows = [
        {"index": "0", "uuid": "GPU-a", "pci_bus_id": "00000000:19:00.0"},
        {"index": "1", "uuid": "GPU-b", "pci_bus_id": "00000000:3B:00.0"},
    ]
    assert gpus.match_smi_row(rows, uuid="gpu-b", bus_id=None)["index"] == "1"
    assert gpus.match_smi_row(rows, uuid=None, bus_id="00000000:19:00.0")["index"] == "0"
    assert gpus.match_smi_row(rows, uuid="GPU-c", bus_id=None) is None


def test_identity_fields_from_torch_properties():
    props = SimpleNamespace(pci_bus_id=0x3B, pci_device_id=0, pci_domain_id=0)
    assert gpus._bus_id_from_properties(props) == "00000000:3B:00.0"
    assert gpus._bus_id_from_properties(SimpleNamespace()) is None
    assert gpus._normalise_uuid("5b1c0d2e-aaaa", is_hip=False) == "GPU-5b1c0d2e-aaaa"
    assert gpus._normalise_uuid("GPU-5b1c0d2e-aaaa", is_hip=False) == "GPU-5b1c0d2e-aaaa"
    assert gpus._normalise_uuid("0x18f6", is_hip=True) == "0x18f6"
    assert gpus._normalise_uuid("", is_hip=False) is None


def test_a_device_range_beyond_any_host_is_refused_at_once():
    with pytest.raises(ValueError, match="beyond any host's GPUs"):
        devices.parse_devices("0-10000000")  # once a quadratic expansion that hung at start-up
