"""Background load on the GPU while a case's launches run (``--gemmcheck-stress``).

Races that hide on an idle GPU show when memory and SMs are busy: a load that lands in time
on an idle GPU lands late when DRAM is saturated and L2 has been evicted. Usage::

    with stress.load("copy", device) as background:
        case.run(launch)
    result_fields = background.describe()   # kind, bytes, iterations done while active, ...

Kinds:

* ``none``: nothing runs; :meth:`BackgroundLoad.describe` says so.
* ``copy``: a device-to-device copy loop between two buffers much larger than L2, so the
  kernel's operands are evicted and its loads queue behind the copy's in DRAM.
* ``compute``: an elementwise loop (fused multiply-adds over a large buffer, in place) that
  takes issue slots on every SM as well as memory bandwidth.

On a CPU device every kind is a no-op, with a description that says why.

Design, and why:

* **A thread of this process, not another process.** Without MPS, kernels of different
  processes are time-sliced on a GPU, never resident together, so a load in another process
  would not overlap the launches it is meant to disturb. A thread shares this process's CUDA
  context, and its stream runs beside the launches'. The GIL is not the limit: the thread
  holds it only to enqueue an iteration (tens of microseconds) and waits on CUDA events with
  it released, while iterations take a fraction of a millisecond of GPU time each and a few
  are kept queued (``in_flight``) to ride over moments when the main thread holds the GIL.
  ``benchmarks/gpu_measure.py`` measures the achieved bandwidth alone and beside launches.
* **Persistent kernels with a small grid** (a few programs per SM, see stress_kernels.py) on a
  **high-priority stream**: the load never owns every SM slot, so launches run concurrently
  with it rather than queue behind it, and its next iteration starts as soon as a slot frees
  instead of waiting for a launch's remaining blocks. Without Triton, torch's own copy and
  elementwise kernels are used at normal priority (their full-size grids would otherwise
  starve the launches), and the description says so.
* **Bounded queue.** At most ``in_flight`` iterations are queued, so stopping waits for at most
  that much GPU work, and so does a device-wide ``torch.cuda.synchronize`` (which ``case.run``
  uses) while the load runs.
* **Clean stop.** Leaving the ``with`` block, normally or by an exception, stops the thread,
  joins it and synchronises the load's stream: nothing of the load runs after the block. A load
  that failed while the block ran makes the block raise (when it did not raise already), so
  that a "stressed" result is never an unstressed one in disguise.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

from ..config.table import BY_NAME, STRESS_KINDS

STRESS_OPTION = BY_NAME["stress"].flag

# Bytes per buffer (copy uses two): many times any GPU's L2 (50 MB on H100/H200), and a
# fraction of a millisecond per pass at HBM speed.
DEFAULT_BUFFER_BYTES = 512 << 20
# Never more than this fraction of the free device memory: the memory belongs to the kernel.
MAX_FREE_FRACTION = 1 / 8
PROGRAMS_PER_SM = 2
IN_FLIGHT = 3
# Joining the thread waits for at most one queued iteration; this bounds a hung device.
JOIN_TIMEOUT_S = 60.0


class Workload:
    """Buffers, a stream and the launch of one iteration of a kind: everything that touches
    the GPU. :class:`BackgroundLoad` only drives it (and tests drive it with a stand-in)."""

    def __init__(self, kind: str, device, buffer_bytes: int | None = None):
        import torch

        self.kind = kind
        self.device = device
        if buffer_bytes is None:
            free, _ = torch.cuda.mem_get_info(device)
            buffer_bytes = min(DEFAULT_BUFFER_BYTES, int(free * MAX_FREE_FRACTION) // (2 if kind == "copy" else 1))
        elements = max(1, buffer_bytes // 4)
        self.buffers = [torch.empty(elements, dtype=torch.float32, device=device)]
        if kind == "copy":
            self.buffers.append(torch.empty_like(self.buffers[0]))
        for buffer in self.buffers:
            buffer.fill_(1.0)
        self.bytes = sum(b.numel() * 4 for b in self.buffers)
        # copy reads one buffer and writes the other; compute reads and writes its one
        self.bytes_per_iteration = 2 * self.buffers[0].numel() * 4
        self.programs = PROGRAMS_PER_SM * torch.cuda.get_device_properties(device).multi_processor_count
        try:
            from . import stress_kernels
        except ImportError:
            stress_kernels = None
        self._kernels = stress_kernels
        if stress_kernels is not None:
            self.engine = f"triton persistent {kind} loop, {self.programs} programs"
            priority = -1  # torch maps it to the highest priority the device has
        else:
            self.engine = f"torch {'copy_' if kind == 'copy' else 'mul_/add_'} (triton unavailable)"
            priority = 0
        self.stream = torch.cuda.Stream(device=device, priority=priority)
        # the buffers were filled on the current stream
        self.stream.wait_stream(torch.cuda.current_stream(device))

    def thread_context(self):
        """Entered by the background thread: this device and stream are current there."""
        import contextlib

        import torch

        stack = contextlib.ExitStack()
        stack.enter_context(torch.cuda.device(self.device))
        stack.enter_context(torch.cuda.stream(self.stream))
        return stack

    def launch(self) -> None:
        """Enqueue one iteration on the current stream."""
        if self._kernels is not None:
            if self.kind == "copy":
                self._kernels.launch_copy(self.buffers[0], self.buffers[1], self.programs)
            else:
                self._kernels.launch_fma(self.buffers[0], self.programs)
        elif self.kind == "copy":
            self.buffers[1].copy_(self.buffers[0])
        else:
            self.buffers[0].mul_(0.999).add_(0.001)

    def mark(self):
        """An event after the iterations enqueued so far; ``.synchronize()`` waits for it."""
        import torch

        done = torch.cuda.Event()
        done.record(self.stream)
        return done

    def drain(self) -> None:
        self.stream.synchronize()

    def warm_up(self) -> None:
        """One iteration in the caller's thread, waited for: compiles the kernel (never in the
        background) and proves the load runs before any launch counts as stressed."""
        with self.thread_context():
            self.launch()
        self.drain()


class BackgroundLoad:
    """A context manager that keeps a load of ``kind`` running on ``device`` while it is
    entered. See the module docstring."""

    def __init__(self, kind: str, device, *, buffer_bytes: int | None = None, in_flight: int = IN_FLIGHT):
        if kind not in STRESS_KINDS:  # the option's parser has normalised what users type
            raise ValueError(f"{STRESS_OPTION}={kind!r} is not a stress kind; choose one of {', '.join(STRESS_KINDS)}")
        self.kind = kind
        self.device = device
        self.buffer_bytes = buffer_bytes
        if in_flight < 1:
            raise ValueError(f"in_flight must be >= 1, got {in_flight}")
        self.in_flight = in_flight
        self.note = ""
        self.error: BaseException | None = None
        self.iterations = 0
        self._workload = None
        self._device_name = ""
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._started: float | None = None
        self._stopped: float | None = None
        self._engine = ""
        self._bytes = 0
        self._bytes_per_iteration = 0

    # --- lifecycle --------------------------------------------------------------------
    def __enter__(self) -> BackgroundLoad:
        if self._started is not None:
            raise RuntimeError("a BackgroundLoad runs once; make a new one for each case")
        self._started = time.perf_counter()
        if self.kind == "none":
            self.note = f"no background load ({STRESS_OPTION}=none)"
            return self
        device = self._resolve_device()
        if device is None:
            return self
        self._start(device)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.stop(raise_errors=exc_type is None)
        return False

    def _resolve_device(self):
        import torch

        device = torch.device(self.device) if self.device is not None else None
        if device is None or device.type != "cuda":
            self.note = f"no background load: {device or 'no device'} is not a GPU"
            return None
        if not torch.cuda.is_available():
            self.note = "no background load: no GPU is available"
            return None
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        return device

    def _start(self, device) -> None:
        workload = Workload(self.kind, device, self.buffer_bytes)
        workload.warm_up()
        self._device_name = str(device)
        self._run(workload)

    def _run(self, workload) -> None:
        """Keep ``workload`` going from a background thread until :meth:`stop`."""
        self._workload = workload
        self._engine = workload.engine
        self._bytes, self._bytes_per_iteration = workload.bytes, workload.bytes_per_iteration
        self._started = time.perf_counter()
        self._thread = threading.Thread(target=self._loop, name=f"gemmcheck-stress-{self.kind}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        workload = self._workload
        try:
            with workload.thread_context():
                pending: collections.deque = collections.deque()
                while not self._stop.is_set():
                    if len(pending) >= self.in_flight:
                        pending.popleft().synchronize()  # waits with the GIL released
                        continue
                    workload.launch()
                    pending.append(workload.mark())
                    self.iterations += 1
        except BaseException as exc:  # reported by stop(); a thread cannot raise to its caller
            self.error = exc

    def stop(self, *, raise_errors: bool = True) -> None:
        """Stop the thread, wait for the queued iterations and free the buffers. Idempotent."""
        thread, self._thread = self._thread, None
        if thread is None:
            if self._stopped is None and self._started is not None:
                self._stopped = time.perf_counter()
            return
        self._stop.set()
        thread.join(JOIN_TIMEOUT_S)
        if thread.is_alive():
            self._stopped = time.perf_counter()
            raise RuntimeError(
                f"the background {self.kind} load did not stop within {JOIN_TIMEOUT_S:.0f} s (is the GPU hung?)"
            )
        try:
            self._workload.drain()
        finally:
            self._stopped = time.perf_counter()
            self._workload = None  # frees the buffers, now that nothing uses them
        if self.error is not None and raise_errors:
            raise RuntimeError(
                f"the background {self.kind} load failed while the launches ran: "
                f"{type(self.error).__name__}: {self.error}"
            ) from self.error

    # --- what it did ------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Whether a load ran (or runs) in the background."""
        return bool(self._engine)

    def describe(self) -> dict[str, Any]:
        """What ran, for the record: kind, device, engine, bytes, iterations done while active,
        seconds active and the bandwidth that implies. Callable while active or after."""
        info: dict[str, Any] = {"kind": self.kind, "active": self.active}
        if not self.active:
            info["note"] = self.note or f"not started ({self.kind})"
            return info
        end = self._stopped if self._stopped is not None else time.perf_counter()
        seconds = max(0.0, end - (self._started or end))
        moved = self.iterations * self._bytes_per_iteration
        info.update(
            {
                "device": self._device_name,
                "engine": self._engine,
                "bytes": self._bytes,
                "bytes_per_iteration": self._bytes_per_iteration,
                "iterations": self.iterations,
                "seconds": round(seconds, 6),
                "gb_per_s": round(moved / seconds / 1e9, 1) if seconds > 0 else 0.0,
                "in_flight": self.in_flight,
            }
        )
        if self.error is not None:
            info["error"] = f"{type(self.error).__name__}: {self.error}"
        return info

    def summary(self) -> str:
        """One line for a report, e.g. 'copy load on cuda:0: 1234 iterations of 1024 MiB,
        3100 GB/s over 0.52 s (triton persistent copy loop, 264 programs)'."""
        info = self.describe()
        if not info["active"]:
            return info["note"]
        return (
            f"{self.kind} load on {info['device']}: {info['iterations']} iterations of "
            f"{info['bytes_per_iteration'] / 2**20:.0f} MiB, {info['gb_per_s']:.0f} GB/s over "
            f"{info['seconds']:.2f} s ({info['engine']})"
        )


def load(kind: str, device, **options) -> BackgroundLoad:
    """``with load(kind, device) as background: ...``: see :class:`BackgroundLoad`."""
    return BackgroundLoad(kind, device, **options)
