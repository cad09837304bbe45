"""What else ran on a case's GPU: the other processes at the case's start and end, and the
wait for an idle GPU (``--gemmcheck-wait-idle``).

Launch times are the kernel's own only on a quiet GPU. Each case on a GPU notes, as its first
launches begin and once its last launch is called (both taken by a thread beside the case, the
second while the launches in flight are read), the other processes that hold the GPU, and its
result says whether it was **contended** (``result.contention``; the history's
``result.contended``, which timing comparisons keep only when False). Usage::

    watch = contention.start(device, identity, wait_s=60)  # waits for idle, then the start snapshot
    ...                                                     # the case's load and launches
    watch.end_soon()                                        # the last launch called: the end snapshot begun
    ...                                                     # the launches in flight read
    result.contention = watch.finish(stress="copy")         # the kind of load that ran, or None

**The monitor** is chosen at first use, never at plugin start-up: NVML through ``pynvml`` (the
``nvidia-ml-py`` package) on NVIDIA, ``amdsmi`` on AMD, else none, and then every snapshot says
it knows nothing and why. The GPU is found by its UUID or PCI bus id
(:func:`.gpus.gpu_identity`), never by index: indices move with CUDA_VISIBLE_DEVICES and the
monitors ignore the mask. Anything that speaks :class:`Monitor` can stand in for them: tests
and other tools pass their own to :func:`start` (``monitor=``) and the functions below it.

**Which processes are others.** Every process but this one, whose background load is a thread
of this same process; in a ``--gemmcheck-processes`` child, also its parent, which holds its
own CUDA context but only waits for its children. Inside a container's PID namespace the
drivers give the host's pids, and this process is not found by its own: it holds a context on
the GPU at both snapshots (the case's reference is there), so one listed process is taken to
be this one, and the snapshot says so (``"unmatched": true``).

**Contended** is True when another process held the GPU at the start or the end, when the
case ran under its own background load (``--gemmcheck-stress``: its times are then not the
kernel's own either), or when the wait for an idle GPU gave up; None when nothing is known
(no monitor, not a GPU) and no load ran; False otherwise. Processes that start and end between
the two snapshots go unseen: waiting for idle narrows that, it cannot close it.

**Idle**, for the wait, is no other process and a utilization of at most
:data:`IDLE_UTILIZATION_PERCENT` in :data:`IDLE_SAMPLES` consecutive samples
:data:`SAMPLE_INTERVAL_S` apart, taken after synchronising the device and before anything of
the case is launched. Why these numbers: NVML's utilization is the share of its last sample
period (1/6 s to 1 s, by product) in which any kernel ran, this process's own included, so
samples right after the case's reference was computed can still show this process's work; five
samples a quarter of a second apart span a full second, more than one sample period on every
product, so this process's own recent work has aged out of them and another process running
through them shows in at least one. The threshold is above zero because monitoring agents
and a display compositor blip at a few percent. Processes are the decisive test (utilization
cannot tell this process's work from others'); utilization adds what process lists miss (other
VMs or sandboxes on a shared GPU). Five quiet samples take a second, so a wait, when asked
for, costs a case at least that; the budget never cuts it shorter than those five samples.
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any, Protocol

from .gpus import gpu_identity

IDLE_SAMPLES = 5
SAMPLE_INTERVAL_S = 0.25
IDLE_UTILIZATION_PERCENT = 5
NO_MONITOR = "no nvidia-ml-py or amdsmi"
NAMED_IN_NOTE = 3  # processes named in a note; the record has them all


class MonitorError(Exception):
    """A monitor cannot tell about this GPU; the message says why."""


class Monitor(Protocol):
    """What a snapshot asks of a GPU monitor. ``gpu`` is :func:`.gpus.gpu_identity`'s dict (its
    ``uuid`` and ``pci_bus_id`` find the device); both methods raise :class:`MonitorError` when
    they cannot tell."""

    name: str | None  # "nvml", "amdsmi"; None: nothing is known

    def processes(self, gpu: dict[str, Any]) -> list[dict[str, Any]]:
        """Every process holding the GPU, this one included: ``pid``, ``name`` (or None) and
        ``memory`` (bytes, or None)."""

    def utilization(self, gpu: dict[str, Any]) -> int | None:
        """Percent of the monitor's last sample period in which the GPU ran a kernel (None: not
        reported, as on a MIG slice)."""


class Unavailable:
    """The monitor when there is none: every question is answered with why not."""

    name = None

    def __init__(self, reason: str):
        self.reason = reason

    def processes(self, gpu):
        raise MonitorError(self.reason)

    utilization = processes


class NvmlMonitor:
    """NVIDIA, through ``pynvml`` (the ``nvidia-ml-py`` package)."""

    name = "nvml"

    def __init__(self, nvml):
        self.nvml = nvml
        nvml.nvmlInit()  # reference-counted by NVML; left initialised for the process's later cases
        self._handles: dict[tuple, Any] = {}
        self._own_name: tuple[int, str | None] | None = None  # (pid, name): asked once, listed in every snapshot

    def _handle(self, gpu):
        key = (gpu.get("uuid"), gpu.get("pci_bus_id"))
        if key not in self._handles:
            self._handles[key] = _find_handle(
                gpu,
                self.nvml.NVMLError,
                [
                    ("uuid", "UUID", self.nvml.nvmlDeviceGetHandleByUUID),
                    ("pci_bus_id", "PCI bus id", self.nvml.nvmlDeviceGetHandleByPciBusId),
                ],
                "NVML",
            )
        return self._handles[key]

    def processes(self, gpu):
        nvml, handle = self.nvml, self._handle(gpu)
        memory: dict[int, int | None] = {}
        try:
            # a process that both computes and draws is listed twice; its compute entry comes first
            for query in (nvml.nvmlDeviceGetComputeRunningProcesses, nvml.nvmlDeviceGetGraphicsRunningProcesses):
                for process in query(handle):
                    memory.setdefault(int(process.pid), process.usedGpuMemory)
        except nvml.NVMLError as exc:
            raise MonitorError(f"NVML could not list the GPU's processes: {exc}") from None
        return [{"pid": pid, "name": self._process_name(pid), "memory": used} for pid, used in memory.items()]

    def _process_name(self, pid: int) -> str | None:
        own = pid == os.getpid()
        if own and self._own_name is not None and self._own_name[0] == pid:
            return self._own_name[1]
        try:
            name = os.path.basename(self.nvml.nvmlSystemGetProcessName(pid)) or None
        except self.nvml.NVMLError:  # gone already, or of another PID namespace
            return None
        if own:
            self._own_name = (pid, name)
        return name

    def utilization(self, gpu):
        handle = self._handle(gpu)
        try:
            return int(self.nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except self.nvml.NVMLError:  # not supported (a MIG slice) or not available
            return None


class AmdSmiMonitor:
    """AMD, through ``amdsmi`` (ROCm's AMD SMI)."""

    name = "amdsmi"

    def __init__(self, amdsmi):
        self.amdsmi = amdsmi
        amdsmi.amdsmi_init()
        self._handles: dict[tuple, Any] = {}

    def _handle(self, gpu):
        key = (gpu.get("uuid"), gpu.get("pci_bus_id"))
        if key not in self._handles:
            self._handles[key] = _find_handle(
                gpu,
                self.amdsmi.AmdSmiException,
                [
                    (
                        "pci_bus_id",
                        "PCI bus id",
                        lambda bus: self.amdsmi.amdsmi_get_processor_handle_from_bdf(_amd_bdf(bus)),
                    ),
                    ("uuid", "UUID", self._handle_by_uuid),
                ],
                "amdsmi",
            )
        return self._handles[key]

    def _handle_by_uuid(self, uuid: str):
        amdsmi = self.amdsmi
        for handle in amdsmi.amdsmi_get_processor_handles():
            if _bare_uuid(amdsmi.amdsmi_get_gpu_device_uuid(handle)) == _bare_uuid(uuid):
                return handle
        raise MonitorError(f"no device has UUID {uuid}")

    def processes(self, gpu):
        amdsmi, handle = self.amdsmi, self._handle(gpu)
        found = []
        try:
            for entry in amdsmi.amdsmi_get_gpu_process_list(handle):
                # before ROCm 6.1 the list held process handles, each asked for its information
                info = entry if isinstance(entry, dict) else amdsmi.amdsmi_get_gpu_process_info(handle, entry)
                name = str(info.get("name") or "").strip()
                found.append(
                    {
                        "pid": int(info["pid"]),
                        "name": name if name not in ("", "N/A") else None,
                        "memory": info.get("mem"),
                    }
                )
        except amdsmi.AmdSmiException as exc:
            raise MonitorError(f"amdsmi could not list the GPU's processes: {exc}") from None
        return found

    def utilization(self, gpu):
        handle = self._handle(gpu)
        try:
            activity = self.amdsmi.amdsmi_get_gpu_activity(handle).get("gfx_activity")
        except self.amdsmi.AmdSmiException:
            return None
        return activity if isinstance(activity, int) else None  # "N/A" where not reported


def _find_handle(gpu, library_error, lookups, library: str):
    """The first handle one of ``lookups`` ((identity field, its name, lookup)) finds."""
    tried = []
    for field, what, lookup in lookups:
        if gpu.get(field):
            try:
                return lookup(gpu[field])
            except (library_error, MonitorError) as exc:
                tried.append(f"{what} {gpu[field]} ({exc})")
    if not tried:
        raise MonitorError("the GPU's UUID and PCI bus id are not known")
    raise MonitorError(f"{library} found no GPU by {' or '.join(tried)}")


def _amd_bdf(bus_id: str) -> str:
    """amdsmi's spelling of a PCI bus id: a 4-digit domain ('0000:19:00.0'), lower case."""
    domain, rest = bus_id.split(":", 1) if bus_id.count(":") == 2 else ("0", bus_id)
    return f"{int(domain, 16):04x}:{rest.lower()}"


def _bare_uuid(uuid: str) -> str:
    text = str(uuid).strip().lower()
    return text[4:] if text.startswith("gpu-") else text


@functools.cache
def default_monitor() -> Monitor:
    """NVML, else amdsmi, else :class:`Unavailable` with why; chosen once per process, at the
    first case on a GPU."""
    reasons = []
    for module, monitor in (("pynvml", NvmlMonitor), ("amdsmi", AmdSmiMonitor)):
        try:
            library = __import__(module)
        except ImportError:
            continue
        try:
            return monitor(library)
        except Exception as exc:  # the library's own error: no driver, no device, no permission
            reasons.append(f"{monitor.name} did not start: {exc}")
    return Unavailable("; ".join(reasons) or NO_MONITOR)


# --- snapshots ------------------------------------------------------------------------


def _snapshots():
    """The thread that takes start snapshots, one per process (a forked child makes its own:
    the parent's thread is not in it), made at the first."""
    return _snapshot_thread(os.getpid())


@functools.cache
def _snapshot_thread(pid: int):
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="gemmcheck-contention")


def snapshot(monitor: Monitor, gpu: dict[str, Any], *, also_ours: frozenset[int] = frozenset()) -> dict[str, Any]:
    """The other processes on the GPU and its utilization: ``{"processes": [...],
    "utilization": 12}`` (plus ``"unmatched": True`` when this process was not found by its
    pid, see the module docstring), or ``{"unknown": why}``."""
    try:
        listed = monitor.processes(gpu)
        utilization = monitor.utilization(gpu)
    except MonitorError as exc:
        return {"unknown": str(exc)}
    mine = os.getpid()
    others = sorted((p for p in listed if p["pid"] != mine and p["pid"] not in also_ours), key=lambda p: p["pid"])
    taken = {"processes": others, "utilization": utilization}
    if others and all(p["pid"] != mine for p in listed):
        taken["unmatched"] = True
    return taken


def other_processes(taken: dict[str, Any]) -> int | None:
    """How many processes besides this one a snapshot saw (None: it knows nothing)."""
    if "unknown" in taken:
        return None
    return len(taken["processes"]) - (1 if taken.get("unmatched") else 0)


def is_idle(taken: dict[str, Any], threshold: int = IDLE_UTILIZATION_PERCENT) -> bool:
    utilization = taken.get("utilization")
    return other_processes(taken) == 0 and (utilization is None or utilization <= threshold)


def wait_for_idle(
    monitor: Monitor,
    gpu: dict[str, Any],
    budget_s: float,
    *,
    also_ours: frozenset[int] = frozenset(),
    samples: int = IDLE_SAMPLES,
    interval_s: float = SAMPLE_INTERVAL_S,
    threshold: int = IDLE_UTILIZATION_PERCENT,
) -> tuple[float, bool, dict[str, Any]]:
    """Sample until ``samples`` in a row are idle, or ``budget_s`` has passed (never before
    ``samples`` were taken): (seconds waited, whether idle, the last snapshot). A snapshot that
    knows nothing ends the wait at once."""
    started = time.monotonic()
    deadline = started + budget_s
    quiet = taken_count = 0
    while True:
        taken = snapshot(monitor, gpu, also_ours=also_ours)
        taken_count += 1
        if "unknown" in taken:
            return 0.0, False, taken
        quiet = quiet + 1 if is_idle(taken, threshold) else 0
        if quiet >= samples:
            return time.monotonic() - started, True, taken
        if taken_count >= samples and time.monotonic() + interval_s > deadline:
            return time.monotonic() - started, False, taken
        time.sleep(interval_s)


# --- one case ---------------------------------------------------------------------------


class Watch:
    """A case's contention, from :func:`start` to :meth:`finish`."""

    def __init__(self, monitor: Monitor | None, gpu: dict[str, Any], also_ours: frozenset[int], wait_s: float):
        self.monitor = monitor  # None: not a GPU
        self.gpu = gpu
        self.also_ours = also_ours
        self.wait_s = wait_s
        self.waited_s = 0.0
        self.idle: bool | None = None  # whether the wait found the GPU idle; None: no wait
        self.at_start: dict[str, Any] = {}
        self._at_start = None  # the start snapshot being taken (a Future)
        self._at_end = None  # the end snapshot being taken (a Future), from end_soon

    def _snapshot(self) -> dict[str, Any]:
        if self.monitor is None:
            return {"unknown": f"{self.gpu.get('device', 'the device')} is not a GPU"}
        return snapshot(self.monitor, self.gpu, also_ours=self.also_ours)

    def begin(self, synchronize, **sampling) -> None:
        if self.monitor is None:
            self.at_start = self._snapshot()
            return
        if self.wait_s <= 0:
            # taken beside the case's first launches, by a thread of its own: the driver's answer
            # (0.3-0.4 ms on an H100) waits there, with the GIL released, not in the case
            self._at_start = _snapshots().submit(self._snapshot)
            return
        synchronize()  # the case's own queued work (its reference) must not read as a busy GPU
        self.waited_s, idle, self.at_start = wait_for_idle(
            self.monitor, self.gpu, self.wait_s, also_ours=self.also_ours, **sampling
        )
        self.idle = idle if "unknown" not in self.at_start else None

    def end_soon(self) -> None:
        """The end snapshot begun now, by the thread that takes start snapshots, once the case's
        last launch was called: the driver's answer, 0.26 ms in front of a case's end on an H100,
        then comes while the host reads the launches in flight (0.13-0.19 ms of it still waited
        for at 256^3-1024^3 on an H100, where that reading is short). Called again after more
        launches, it begins another, and :meth:`finish` takes the latest."""
        if self.monitor is not None:
            self._at_end = _snapshots().submit(self._snapshot)

    def finish(self, *, stress: str | None = None) -> dict[str, Any]:
        """The record for ``result.contention``, the end snapshot taken now (or the one
        :meth:`end_soon` began); ``stress``: the kind of background load that ran beside the
        launches, if one did."""
        if self._at_start is not None:
            self.at_start, self._at_start = self._at_start.result(), None
        if self._at_end is not None:
            at_end, self._at_end = self._at_end.result(), None
        else:
            at_end = self._snapshot()
        seen = {
            "the start": (self.at_start, other_processes(self.at_start)),
            "the end": (at_end, other_processes(at_end)),
        }
        counts = [count for _, count in seen.values()]
        if any(counts) or stress or self.idle is False:
            contended = True
        elif None in counts:
            contended = None
        else:
            contended = False
        return {
            "monitor": getattr(self.monitor, "name", None),
            "contended": contended,
            "note": self._note(seen, stress),
            "start": self.at_start,
            "end": at_end,
            "wait_idle_s": self.wait_s,
            "waited_s": round(self.waited_s, 3),
            "stress": stress,
        }

    def _note(self, seen, stress) -> str:
        parts = []
        if self.idle is True:
            parts.append(f"waited {_seconds(self.waited_s)} s for an idle GPU")
        elif self.idle is False:
            given = f"gave up waiting for an idle GPU after {_seconds(max(self.wait_s, self.waited_s))} s"
            # the processes that kept it busy are named next; utilization alone is named here
            parts.append(
                given
                if other_processes(self.at_start)
                else f"{given}: utilization {self.at_start.get('utilization')}% with no other process listed"
            )
        busy = [when for when, (_, count) in seen.items() if count]
        if busy:
            count = max(count for _, count in seen.values() if count)
            last = seen[busy[-1]][0]
            parts.append(
                f"{count} other process{'es' if count > 1 else ''} on the GPU at {' and '.join(busy)}: {_named(last)}"
            )
        unknown = {taken["unknown"] for taken, _ in seen.values() if "unknown" in taken}
        if unknown:
            cannot_wait = "cannot wait for an idle GPU, " if self.wait_s > 0 and self.monitor is not None else ""
            parts.append(f"{cannot_wait}other processes unknown: {'; '.join(sorted(unknown))}")
        elif not busy and self.idle is not False:
            parts.append("no other process on the GPU at the start or the end")
        if stress:
            parts.append(f"its own {stress} load ran beside the launches (--gemmcheck-stress={stress})")
        return "; ".join(parts)


def _seconds(value: float) -> str:
    return f"{round(value, 1):g}"


def _named(taken: dict[str, Any]) -> str:
    processes = taken["processes"]
    text = ", ".join(f"pid {p['pid']}" + (f" {p['name']}" if p.get("name") else "") for p in processes[:NAMED_IN_NOTE])
    if len(processes) > NAMED_IN_NOTE:
        text += f" and {len(processes) - NAMED_IN_NOTE} more"
    if taken.get("unmatched"):
        text += " (host pids: one of them is this process)"
    return text


def start(
    device,
    gpu: dict[str, Any] | None = None,
    *,
    wait_s: float = 0.0,
    parent_waits: bool = False,
    monitor: Monitor | None = None,
    **sampling,
) -> Watch:
    """Wait for an idle GPU when ``wait_s`` > 0, then take the start snapshot of ``device``'s
    contention. ``gpu``: its :func:`.gpus.gpu_identity` where known already; ``parent_waits``:
    this process is a --gemmcheck-processes child, whose parent's context is not another's
    work; ``monitor``: another than :func:`default_monitor`; ``sampling``: the wait's
    ``samples``, ``interval_s`` and ``threshold`` (see :func:`wait_for_idle`)."""
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        watch = Watch(None, {"device": str(device)}, frozenset(), wait_s)
    else:
        gpu = gpu or gpu_identity(device)  # a session gives it, known already
        also_ours = frozenset({os.getppid()}) if parent_waits else frozenset()
        watch = Watch(monitor or default_monitor(), gpu, also_ours, wait_s)
    watch.begin(lambda: torch.cuda.synchronize(device), **sampling)
    return watch
