"""Contention on a case's GPU (environment/contention.py): the wait for an idle GPU, the
contended verdict in each situation and its note, the monitors' thin backends against
stand-ins of their libraries, --gemmcheck-wait-idle, and what a CPU session records. One test
asks the real NVML and needs a GPU."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import types

import pytest

from pytest_gemmcheck.config.table import BY_NAME, Settings, apply_marker, parse_wait_idle
from pytest_gemmcheck.environment import contention

GPU = {"device": "cuda:0", "uuid": "GPU-0000aaaa", "pci_bus_id": "00000000:19:00.0"}
OTHER = {"pid": 4242, "name": "python", "memory": 1 << 30}
FAST = {"samples": 3, "interval_s": 0.001}  # the wait's sampling, shrunk


class FakeMonitor:
    """A monitor that plays back GPU states, one per sample: (other processes, utilization).
    The last state holds from then on; this process is listed in each, as NVML lists it."""

    name = "fake"

    def __init__(self, *states, own=True):
        self.states = list(states) or [([], 0)]
        self.own = own
        self.samples = 0

    def _state(self):
        return self.states[min(self.samples - 1, len(self.states) - 1)]

    def processes(self, gpu):
        assert gpu["uuid"] == GPU["uuid"]
        self.samples += 1
        mine = [{"pid": os.getpid(), "name": "pytest", "memory": 1 << 28}] if self.own else []
        return mine + list(self._state()[0])

    def utilization(self, gpu):
        return self._state()[1]


def watch(monitor, *, wait_s=0.0, also_ours=frozenset()):
    """A watch begun as ``contention.start`` begins one on a GPU, with fast sampling."""
    begun = contention.Watch(monitor, GPU, frozenset(also_ours), wait_s)
    begun.begin(lambda: None, **FAST)
    return begun


# --- waiting for idle -------------------------------------------------------------------


def test_the_wait_ends_after_several_idle_samples_in_a_row():
    busy, idle = ([OTHER], 0), ([], 0)
    monitor = FakeMonitor(busy, idle, idle, busy, idle, idle, idle)
    waited, found_idle, last = contention.wait_for_idle(monitor, GPU, 5.0, **FAST)
    assert found_idle and monitor.samples == 7  # the busy sample in between started the count again
    assert last == {"processes": [], "utilization": 0}
    assert 0 < waited < 1


def test_a_gpu_busy_by_utilization_alone_is_not_idle():
    monitor = FakeMonitor(([], 80), ([], 5), ([], 3), ([], 0))
    assert contention.wait_for_idle(monitor, GPU, 5.0, **FAST)[1]
    assert monitor.samples == 4  # 80% was not idle; 5% (the threshold) and below were
    assert not contention.is_idle({"processes": [], "utilization": 6})
    assert contention.is_idle({"processes": [], "utilization": None})  # not reported (a MIG slice)


def test_the_wait_gives_up_after_its_budget_and_the_note_says_who_was_there():
    monitor = FakeMonitor(([OTHER], 0))
    record = watch(monitor, wait_s=0.02).finish()
    assert record["contended"] is True and 0.015 <= record["waited_s"] < 1  # stops before a sample past the budget
    assert record["note"] == (
        "gave up waiting for an idle GPU after 0 s; 1 other process on the GPU at the start "
        "and the end: pid 4242 python"
    )


def test_the_wait_takes_its_samples_even_with_a_budget_shorter_than_they_take():
    monitor = FakeMonitor(([], 0))
    waited, found_idle, _ = contention.wait_for_idle(monitor, GPU, 0.0001, **FAST)
    assert found_idle and monitor.samples == FAST["samples"]


def test_giving_up_on_utilization_alone_is_contended_and_says_so():
    record = watch(FakeMonitor(([], 90)), wait_s=0.01).finish()
    assert record["contended"] is True
    assert record["note"] == "gave up waiting for an idle GPU after 0 s: utilization 90% with no other process listed"


def test_a_wait_that_found_the_gpu_idle_is_in_the_record():
    record = watch(FakeMonitor(([OTHER], 0), ([], 0)), wait_s=5.0).finish()
    assert record["contended"] is False and record["wait_idle_s"] == 5.0 and record["waited_s"] > 0
    assert record["note"].startswith("waited 0 s for an idle GPU; no other process on the GPU")


def test_a_wait_synchronises_the_device_first_and_no_wait_does_not():
    synchronised = []
    contention.Watch(FakeMonitor(), GPU, frozenset(), 1.0).begin(lambda: synchronised.append(1), **FAST)
    contention.Watch(FakeMonitor(), GPU, frozenset(), 0.0).begin(lambda: synchronised.append(0), **FAST)
    assert synchronised == [1]


# --- contended or not -------------------------------------------------------------------


@pytest.mark.parametrize(
    "states,stress,contended,note",
    [
        ([([], 0)], None, False, "no other process on the GPU at the start or the end"),
        ([([OTHER], 0), ([], 0)], None, True, "1 other process on the GPU at the start: pid 4242 python"),
        (
            [([], 0), ([OTHER, {"pid": 77, "name": None, "memory": None}], 0)],
            None,
            True,
            "2 other processes on the GPU at the end: pid 77, pid 4242 python",
        ),
        (
            [([], 0)],
            "copy",
            True,
            "no other process on the GPU at the start or the end; its own copy load ran beside "
            "the launches (--gemmcheck-stress=copy)",
        ),
    ],
)
def test_contended_from_other_processes_and_from_the_cases_own_load(states, stress, contended, note):
    record = watch(FakeMonitor(*states)).finish(stress=stress)
    assert (record["contended"], record["note"], record["stress"]) == (contended, note, stress)
    assert record["monitor"] == "fake" and record["waited_s"] == 0
    json.dumps(record)  # a plain record: it goes to the history as JSON


def test_without_a_monitor_nothing_is_known_unless_the_case_ran_its_own_load():
    unavailable = contention.Unavailable(contention.NO_MONITOR)
    record = watch(unavailable).finish()
    assert record["contended"] is None and record["monitor"] is None
    assert record["note"] == "other processes unknown: no nvidia-ml-py or amdsmi"
    assert record["start"] == record["end"] == {"unknown": "no nvidia-ml-py or amdsmi"}
    assert watch(unavailable).finish(stress="compute")["contended"] is True


def test_without_a_monitor_there_is_nothing_to_wait_for():
    record = watch(contention.Unavailable(contention.NO_MONITOR), wait_s=30.0).finish()
    assert record["contended"] is None and record["waited_s"] == 0
    assert record["note"] == "cannot wait for an idle GPU, other processes unknown: no nvidia-ml-py or amdsmi"


def test_a_cpu_case_is_not_on_a_gpu_and_asks_no_monitor():
    monitor = FakeMonitor(([OTHER], 100))
    record = contention.start("cpu", {}, wait_s=30.0, monitor=monitor).finish()
    assert monitor.samples == 0
    assert record["contended"] is None and record["waited_s"] == 0
    assert record["note"] == "other processes unknown: cpu is not a GPU"


def test_start_on_a_gpu_takes_the_snapshot_through_the_monitor_given():
    record = contention.start("cuda:0", GPU, monitor=FakeMonitor(([OTHER], 0))).finish()
    assert record["contended"] is True and record["start"]["processes"] == [OTHER]


def test_this_process_is_never_another():
    record = watch(FakeMonitor(([], 100))).finish()  # its own stressor thread is in this process
    assert record["contended"] is False and record["start"]["processes"] == []


def test_a_processes_childs_parent_is_not_another():
    parent = {"pid": os.getppid(), "name": "pytest", "memory": 1 << 28}
    assert watch(FakeMonitor(([parent], 0)), also_ours={os.getppid()}).finish()["contended"] is False
    assert watch(FakeMonitor(([parent], 0))).finish()["contended"] is True


def test_in_a_pid_namespace_one_listed_process_is_taken_to_be_this_one():
    host_pid = {"pid": 900001, "name": None, "memory": 1 << 28}  # this process, as the host numbers it
    alone = watch(FakeMonitor(([host_pid], 0), own=False)).finish()
    assert alone["contended"] is False and alone["start"]["unmatched"] is True
    shared = watch(FakeMonitor(([host_pid, OTHER], 0), own=False)).finish()
    assert shared["contended"] is True
    assert shared["note"] == (
        "1 other process on the GPU at the start and the end: pid 4242 python, pid 900001 "
        "(host pids: one of them is this process)"
    )


def test_an_end_snapshot_begun_early_is_the_one_finish_records_and_the_latest_wins():
    monitor = FakeMonitor(([], 0), ([OTHER], 0), ([], 0))  # start, first end_soon, second end_soon
    begun = watch(monitor)
    begun.end_soon()
    begun.end_soon()  # more launches ran after the first: the later snapshot is the end
    record = begun.finish()
    assert monitor.samples == 3  # finish took no snapshot of its own
    assert record["end"] == {"processes": [], "utilization": 0}
    assert record["contended"] is False


def test_an_end_snapshot_begun_early_counts_who_was_there():
    begun = watch(FakeMonitor(([], 0), ([OTHER], 7)))
    begun.end_soon()
    record = begun.finish()
    assert record["end"] == {"processes": [OTHER], "utilization": 7}
    assert record["contended"] is True


def test_a_cpu_watch_begins_no_end_snapshot():
    begun = contention.start("cpu", {})
    begun.end_soon()
    assert begun.finish()["end"] == {"unknown": "cpu is not a GPU"}


def test_a_monitor_that_fails_on_one_snapshot_leaves_that_one_unknown():
    class FailingAtTheEnd(FakeMonitor):
        def processes(self, gpu):
            if self.samples == 1:
                raise contention.MonitorError("NVML could not list the GPU's processes: Unknown Error")
            return super().processes(gpu)

    record = watch(FailingAtTheEnd(([], 0))).finish()
    assert record["contended"] is None
    assert record["end"] == {"unknown": "NVML could not list the GPU's processes: Unknown Error"}
    record = watch(FailingAtTheEnd(([OTHER], 0))).finish()  # what the start saw still counts
    assert record["contended"] is True
    assert record["note"] == (
        "1 other process on the GPU at the start: pid 4242 python; other processes unknown: "
        "NVML could not list the GPU's processes: Unknown Error"
    )


def test_a_note_names_a_few_processes_and_counts_the_rest():
    crowd = [{"pid": pid, "name": "worker", "memory": None} for pid in range(10, 15)]
    note = watch(FakeMonitor((crowd, 0))).finish()["note"]
    assert note == (
        "5 other processes on the GPU at the start and the end: pid 10 worker, pid 11 worker, pid 12 worker and 2 more"
    )


# --- the monitors, against stand-ins of their libraries ---------------------------------


class NVMLError(Exception):
    pass


def fake_pynvml(*, uuids=(), buses=(), compute=(), graphics=(), utilization=None, init_error=None):
    process = types.SimpleNamespace

    def by(known, what):
        def lookup(key):
            if key not in known:
                raise NVMLError("Not Found")
            return f"handle of {what} {key}"

        return lookup

    def get_utilization(handle):
        if utilization is None:
            raise NVMLError("Not Supported")
        return process(gpu=utilization, memory=0)

    def init():
        if init_error:
            raise NVMLError(init_error)

    def name(pid):
        if pid == 77:
            raise NVMLError("Not Found")
        return "/usr/bin/python3"

    return types.SimpleNamespace(
        NVMLError=NVMLError,
        nvmlInit=init,
        nvmlDeviceGetHandleByUUID=by(uuids, "UUID"),
        nvmlDeviceGetHandleByPciBusId=by(buses, "bus"),
        nvmlDeviceGetComputeRunningProcesses=lambda handle: [process(pid=p, usedGpuMemory=m) for p, m in compute],
        nvmlDeviceGetGraphicsRunningProcesses=lambda handle: [process(pid=p, usedGpuMemory=m) for p, m in graphics],
        nvmlDeviceGetUtilizationRates=get_utilization,
        nvmlSystemGetProcessName=name,
    )


def test_nvml_finds_the_gpu_by_uuid_then_by_bus_id_never_by_index():
    by_uuid = contention.NvmlMonitor(fake_pynvml(uuids=[GPU["uuid"]]))
    assert by_uuid._handle(GPU) == f"handle of UUID {GPU['uuid']}"
    by_bus = contention.NvmlMonitor(fake_pynvml(buses=[GPU["pci_bus_id"]]))
    assert by_bus._handle(GPU) == f"handle of bus {GPU['pci_bus_id']}"
    with pytest.raises(
        contention.MonitorError,
        match=r"NVML found no GPU by UUID GPU-0000aaaa \(Not Found\) or "
        r"PCI bus id 00000000:19:00.0 \(Not Found\)",
    ):
        contention.NvmlMonitor(fake_pynvml()).processes(GPU)
    with pytest.raises(contention.MonitorError, match="UUID and PCI bus id are not known"):
        by_uuid.processes({"device": "cuda:0"})


def test_nvml_lists_compute_and_graphics_processes_once_each():
    nvml = contention.NvmlMonitor(
        fake_pynvml(uuids=[GPU["uuid"]], compute=[(10, 100), (77, None)], graphics=[(10, 5), (11, 7)], utilization=42)
    )
    assert nvml.processes(GPU) == [
        {"pid": 10, "name": "python3", "memory": 100},
        {"pid": 77, "name": None, "memory": None},
        {"pid": 11, "name": "python3", "memory": 7},
    ]
    assert nvml.utilization(GPU) == 42
    assert contention.NvmlMonitor(fake_pynvml(uuids=[GPU["uuid"]])).utilization(GPU) is None  # a MIG slice


def test_nvml_asks_this_process_its_name_once_and_others_every_time():
    import os

    library = fake_pynvml(uuids=[GPU["uuid"]], compute=[(os.getpid(), 100), (10, 5)])
    asked = []
    name = library.nvmlSystemGetProcessName
    library.nvmlSystemGetProcessName = lambda pid: asked.append(pid) or name(pid)
    nvml = contention.NvmlMonitor(library)
    for _ in range(3):
        assert [p["name"] for p in nvml.processes(GPU)] == ["python3", "python3"]
    assert asked == [os.getpid(), 10, 10, 10]


class AmdSmiException(Exception):
    pass


def fake_amdsmi(*, bdfs=(), uuids=(), processes=(), activity=None):
    def from_bdf(bdf):
        if bdf not in bdfs:
            raise AmdSmiException("AMDSMI_STATUS_NOT_FOUND")
        return f"handle of {bdf}"

    return types.SimpleNamespace(
        AmdSmiException=AmdSmiException,
        amdsmi_init=lambda: None,
        amdsmi_get_processor_handle_from_bdf=from_bdf,
        amdsmi_get_processor_handles=lambda: [f"handle {u}" for u in uuids],
        amdsmi_get_gpu_device_uuid=lambda handle: handle.split(" ", 1)[1],
        amdsmi_get_gpu_process_list=lambda handle: list(processes),
        amdsmi_get_gpu_process_info=lambda handle, entry: {"pid": entry, "name": "old", "mem": 1},
        amdsmi_get_gpu_activity=lambda handle: {"gfx_activity": activity if activity is not None else "N/A"},
    )


def test_amdsmi_finds_the_gpu_by_bus_id_in_its_own_spelling_then_by_uuid():
    bus = contention.AmdSmiMonitor(fake_amdsmi(bdfs=["0000:19:00.0"]))
    assert bus._handle(GPU) == "handle of 0000:19:00.0"
    uuid = contention.AmdSmiMonitor(fake_amdsmi(uuids=["0000AAAA"]))
    assert uuid._handle(GPU) == "handle 0000AAAA"
    with pytest.raises(contention.MonitorError, match="amdsmi found no GPU by PCI bus id"):
        contention.AmdSmiMonitor(fake_amdsmi()).processes(GPU)


def test_amdsmi_reads_process_lists_old_and_new():
    new = contention.AmdSmiMonitor(
        fake_amdsmi(
            bdfs=["0000:19:00.0"],
            activity=12,
            processes=[{"pid": 5, "name": "python", "mem": 10}, {"pid": 6, "name": "N/A", "mem": 0}],
        )
    )
    assert new.processes(GPU) == [{"pid": 5, "name": "python", "memory": 10}, {"pid": 6, "name": None, "memory": 0}]
    assert new.utilization(GPU) == 12
    old = contention.AmdSmiMonitor(fake_amdsmi(bdfs=["0000:19:00.0"], processes=[8]))  # handles, before ROCm 6.1
    assert old.processes(GPU) == [{"pid": 8, "name": "old", "memory": 1}]
    assert old.utilization(GPU) is None


# --- amdsmi as ROCm documents it: tests/environment/amdsmi_standin.py -------------------------


def amd_gpu(processes=(), activity=3):
    """An MI300X as the stand-in reports it; this process holds it, as amdsmi lists it."""
    return {
        "bdf": "0000:19:00.0",
        "serial": 0x18AD4D6E4E2C7B2F,
        "device_id": 0x74A1,
        "gfx_activity": activity,
        "processes": processes
        if callable(processes)
        else [{"pid": os.getpid(), "name": "pytest", "mem": 1 << 28}, *processes],
    }


# what gpus.gpu_identity gives on ROCm: torch's PCI fields spelled as nvidia-smi spells them
ROCM_GPU = {"device": "cuda:0", "uuid": None, "pci_bus_id": "00000000:19:00.0"}


def test_amdsmi_finds_the_gpu_by_torchs_bus_id_in_the_libraries_spelling():
    import amdsmi_standin

    monitor = contention.AmdSmiMonitor(amdsmi_standin.make([amd_gpu(), {**amd_gpu(), "bdf": "0000:2a:00.0"}]))
    handle = monitor._handle(ROCM_GPU)
    assert isinstance(handle, amdsmi_standin.amdsmi_processor_handle)
    assert monitor.amdsmi.amdsmi_get_gpu_device_bdf(handle) == "0000:19:00.0"


def test_amdsmi_finds_the_gpu_by_its_uuid_when_the_bus_id_is_not_known_or_not_its_spelling():
    import amdsmi_standin

    library = amdsmi_standin.make([{**amd_gpu(), "bdf": "0000:05:00.0", "serial": 7}, amd_gpu()])
    library.amdsmi_init()
    uuid = library.amdsmi_get_gpu_device_uuid(library.amdsmi_get_processor_handles()[1])
    monitor = contention.AmdSmiMonitor(library)
    assert monitor._handle({"uuid": uuid.upper(), "pci_bus_id": None})._device["bdf"] == "0000:19:00.0"
    # a domain beyond the 4 hex digits amdsmi parses: its format error, then the UUID
    far = {"uuid": uuid, "pci_bus_id": "00010000:19:00.0"}
    assert contention.AmdSmiMonitor(library)._handle(far)._device["bdf"] == "0000:19:00.0"
    with pytest.raises(
        contention.MonitorError,
        match=r"amdsmi found no GPU by PCI bus id 00010000:19:00.0 "
        r"\(Wrong BDF format: 10000:19:00.0.\) or UUID GPU-9",
    ):
        contention.AmdSmiMonitor(library).processes({"uuid": "GPU-9", "pci_bus_id": "00010000:19:00.0"})


def test_amdsmi_snapshots_leave_this_process_out_and_read_unknown_names_and_activity():
    import amdsmi_standin

    others = [{"pid": 4242, "name": "N/A", "mem": 1 << 30}, {"pid": 4243, "name": "vllm", "mem": 5}]
    monitor = contention.AmdSmiMonitor(amdsmi_standin.make([amd_gpu(others, activity=None)]))
    taken = contention.snapshot(monitor, ROCM_GPU)
    assert taken == {
        "processes": [{"pid": 4242, "name": None, "memory": 1 << 30}, {"pid": 4243, "name": "vllm", "memory": 5}],
        "utilization": None,
    }
    alone = contention.AmdSmiMonitor(amdsmi_standin.make([amd_gpu(activity=2)]))
    assert contention.snapshot(alone, ROCM_GPU) == {"processes": [], "utilization": 2}
    assert contention.is_idle(contention.snapshot(alone, ROCM_GPU))


def test_amdsmi_errors_leave_the_snapshot_unknown_and_say_why():
    import amdsmi_standin

    denied = amdsmi_standin.make(
        [amd_gpu()], failing={"amdsmi_get_gpu_process_list": amdsmi_standin.AMDSMI_STATUS_NO_PERM}
    )
    taken = contention.snapshot(contention.AmdSmiMonitor(denied), ROCM_GPU)
    assert taken == {
        "unknown": "amdsmi could not list the GPU's processes: Error code:\n\t10 | "
        "AMDSMI_STATUS_NO_PERM - Permission Denied"
    }
    no_activity = amdsmi_standin.make(
        [amd_gpu()], failing={"amdsmi_get_gpu_activity": amdsmi_standin.AMDSMI_STATUS_NOT_FOUND}
    )
    assert contention.snapshot(contention.AmdSmiMonitor(no_activity), ROCM_GPU)["utilization"] is None


def test_a_rocm_host_with_nvidia_ml_py_installed_gets_amdsmi(monkeypatch):
    """pip's [gpu] extra installs nvidia-ml-py everywhere; on a ROCm host NVML does not start and
    amdsmi is the monitor. amdsmi that cannot start either is named with NVML in the reason."""
    import amdsmi_standin

    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(init_error="NVML Shared Library Not Found"))
    monkeypatch.setitem(sys.modules, "amdsmi", amdsmi_standin.make([amd_gpu()]))
    contention.default_monitor.cache_clear()
    try:
        assert contention.default_monitor().name == "amdsmi"
        contention.default_monitor.cache_clear()
        monkeypatch.setitem(
            sys.modules,
            "amdsmi",
            amdsmi_standin.make([amd_gpu()], init_error=amdsmi_standin.AMDSMI_STATUS_DRIVER_NOT_LOADED),
        )
        assert contention.default_monitor().reason == (
            "nvml did not start: NVML Shared Library Not Found; amdsmi did not start: Error code:\n\t34 | "
            "AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded"
        )
    finally:
        contention.default_monitor.cache_clear()


def test_a_case_on_an_amd_gpu_waits_for_idle_and_records_who_was_there(monkeypatch):
    """contention.start and finish with amdsmi: another process leaves during the wait; one
    starts before the end."""
    import amdsmi_standin
    import torch

    states = [[{"pid": 4242, "name": "train", "mem": 1}]] * 2 + [[]] * 4 + [[{"pid": 4300, "name": "late", "mem": 1}]]
    taken = []

    def processes():
        state = states[min(len(taken), len(states) - 1)]
        taken.append(state)
        return [{"pid": os.getpid(), "name": "pytest", "mem": 1}, *state]

    monitor = contention.AmdSmiMonitor(amdsmi_standin.make([amd_gpu(processes, activity=0)]))
    synchronized = []
    monkeypatch.setattr(torch.cuda, "synchronize", synchronized.append)
    watch = contention.start(torch.device("cuda", 0), ROCM_GPU, wait_s=5, monitor=monitor, **FAST)
    assert synchronized == [torch.device("cuda", 0)] and watch.idle is True
    taken.extend([None] * 10)  # the end snapshot sees the late process
    record = watch.finish()
    assert record["monitor"] == "amdsmi" and record["contended"] is True
    assert record["note"].startswith("waited ")
    assert "1 other process on the GPU at the end: pid 4300 late" in record["note"]


def test_the_default_monitor_says_why_there_is_none(monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", None)  # None in sys.modules: the import fails
    monkeypatch.setitem(sys.modules, "pynvml", None)
    contention.default_monitor.cache_clear()
    try:
        assert contention.default_monitor().reason == "no nvidia-ml-py or amdsmi"
        contention.default_monitor.cache_clear()
        monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(init_error="Driver Not Loaded"))
        assert contention.default_monitor().reason == "nvml did not start: Driver Not Loaded"
        contention.default_monitor.cache_clear()
        monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(uuids=[GPU["uuid"]]))
        assert contention.default_monitor().name == "nvml"
    finally:
        contention.default_monitor.cache_clear()


def test_loading_the_plugin_imports_no_monitor():
    code = (
        "import sys, pytest_gemmcheck.plugin; "
        "loaded = {'pytest_gemmcheck.environment.contention', 'pynvml', 'amdsmi'} & set(sys.modules); "
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the option ---------------------------------------------------------------------------


def test_wait_idle_takes_seconds_and_zero_means_do_not_wait():
    assert Settings().wait_idle == 0
    assert (parse_wait_idle("2.5"), parse_wait_idle("0"), parse_wait_idle(60)) == (2.5, 0.0, 60.0)
    for bad in ("-1", "soon", "nan", "inf", ""):
        with pytest.raises(ValueError, match="expected a number of seconds >= 0"):
            parse_wait_idle(bad)
    assert BY_NAME["wait-idle"].ini == "gemmcheck_wait_idle"
    assert apply_marker(Settings(), {"wait_idle": "3"}).settings.wait_idle == 3.0
    with pytest.raises(ValueError, match=r"gemmcheck\(wait_idle=...\): expected a number of seconds"):
        apply_marker(Settings(), {"wait_idle": -2})


def test_a_bad_wait_idle_is_a_usage_error_naming_the_option_or_key(pytester):
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest("--gemmcheck-wait-idle=-5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*argument --gemmcheck-wait-idle: expected a number of seconds >= 0 (0: do not wait), got '-5'*"]
    )
    pytester.makeini("[pytest]\ngemmcheck_wait_idle = a minute\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option gemmcheck_wait_idle (the default of --gemmcheck-wait-idle): expected a number*"]
    )


# --- a session ----------------------------------------------------------------------------


def test_a_cpu_case_records_contended_as_unknown_and_why(pytester, examples_dir):
    shutil.copy(examples_dir / "cpu" / "kernels.py", pytester.path / "kernels.py")
    pytester.makepyfile(
        textwrap.dedent("""
        import pytest
        from kernels import bf16_matmul

        def test_quiet(gemmcheck):
            case = gemmcheck.case("quiet_gemm", m=32, n=32, k=64)
            x = case.inputs()
            result = case.run(lambda out: bf16_matmul(x, out))
            assert result.contended is None

        @pytest.mark.gemmcheck(wait_idle=600, stress="copy")
        def test_marked(gemmcheck):
            case = gemmcheck.case("marked_gemm", m=32, n=32, k=64)
            x = case.inputs()
            case.run(lambda out: bf16_matmul(x, out))
    """)
    )
    db = pytester.path / "history.db"
    result = pytester.runpytest(
        f"--gemmcheck-db={db}", "--gemmcheck-repeat=2", "--gemmcheck-wait-idle=600", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2)
    assert result.duration < 300  # nothing waited for a CPU
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT c.kernel, r.contended, r.contention FROM result r "
            'JOIN "case" c ON c.id = r.case_id ORDER BY c.kernel'
        ).fetchall()
    assert [(kernel, contended) for kernel, contended, _ in rows] == [("marked_gemm", None), ("quiet_gemm", None)]
    for _, _, stored in rows:
        record = json.loads(stored)
        assert record["note"] == "other processes unknown: cpu is not a GPU"
        assert (record["monitor"], record["contended"], record["waited_s"], record["stress"]) == (None, None, 0, None)
        assert record["start"] == {"unknown": "cpu is not a GPU"}


# --- the real NVML ------------------------------------------------------------------------


@pytest.mark.gpu
def test_real_nvml_sees_another_process_on_the_gpu_and_not_this_one():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or getattr(torch.version, "hip", None):
        pytest.skip("needs an NVIDIA GPU")
    pytest.importorskip("pynvml", reason="needs nvidia-ml-py")
    from pytest_gemmcheck.environment.gpus import gpu_identity

    device = torch.device("cuda", torch.cuda.current_device())
    torch.ones(1, device=device)  # this process holds a context on the GPU, as a case does
    identity = gpu_identity(device)
    alone = contention.start(device, identity, wait_s=5.0).finish()
    assert alone["monitor"] == "nvml", alone
    assert "unknown" not in alone["start"] and "unknown" not in alone["end"], alone
    assert os.getpid() not in [p["pid"] for p in alone["start"]["processes"]]
    assert isinstance(alone["start"]["utilization"], (int, type(None)))

    # another process with a context on the same GPU (by UUID: its indices may differ)
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys, time, torch
        torch.ones(1, device="cuda:{device.index}")
        print("ready", flush=True)
        sys.stdin.read()
    """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout.readline().strip() == "ready"
        shared = contention.start(device, identity, wait_s=0.3).finish()
    finally:
        other.communicate("")
    assert shared["contended"] is True, shared
    assert shared["note"].startswith("gave up waiting for an idle GPU after 1 s; "), shared["note"]
    if not shared["start"].get("unmatched"):
        assert other.pid in [p["pid"] for p in shared["start"]["processes"]], shared
    print(json.dumps({"alone": alone, "shared": shared}, indent=1))


def test_children_of_gemmcheck_processes_merge_into_one_record():
    """--gemmcheck-processes: the aggregate is contended when any child was, unknown when any
    could not tell (and none was contended), quiet only when every child was."""
    from pytest_gemmcheck.pytest_session.processes import _merged_contention

    quiet, busy = {"contended": False, "note": "quiet"}, {"contended": True, "note": "pid 9"}
    unknown = {"contended": None}
    assert _merged_contention([quiet, quiet])["contended"] is False
    assert _merged_contention([quiet, busy, unknown])["contended"] is True
    merged = _merged_contention([quiet, unknown])
    assert merged["contended"] is None and merged["note"] == "process 1: quiet" and len(merged["processes"]) == 2
