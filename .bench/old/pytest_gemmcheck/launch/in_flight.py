"""Launches queued ahead of their reading: how far ahead (:func:`pipeline_for`), each queued
launch (:class:`Queued`), and the ring they use (:class:`Ring`: the output buffers, a device row
per buffer that the launch's guards and checksum land in, its pinned host copy, the events).

On a GPU with the fused check the host never waits for a single launch: launches, their poison,
guards and checksums are queued up to the ring's size ahead, each launch's row copied to pinned
memory behind its work, and the host reads the rows of several launches whenever the ring is
full, by polling their events under each launch's deadline. On the CPU the work is done as it is
queued and only the reading is deferred, as far as the pipeline says.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from ..records.result import LaunchRecord
from .buffers import OutputBuffers
from .guards import ROW_WIDTH, GuardedBuffer

GPU_RING = 16  # output buffers on a GPU, where they fit: two batches of 8
# A launch's work is captured as graphs (loop.py) only while the run has this many launches still
# to come (graphs_may_repay): a fresh ring's graphs (16 positions at about 165 us a capture, each
# capture first waiting for what is queued) cost a few ms once, and save the host about 0.1 ms a
# launch, so that a run of --gemmcheck-repeat=12 on a new shape never repays them.
GRAPHS_REPAID_AFTER = 32
# A run too short for graphs takes no batches: its ring only sets how far launches run ahead of
# their reading, and this many outputs keep three launches queued behind the one being read.
SHORT_RUN_RING = 4
RING_BYTES = 2 << 30  # at most this much of the GPU's memory for them, and an eighth of what is free
# a ring of at most this share of the GPU's memory is kept for the next run of the same shape,
# its graphs too (2.2 GB of an H200's: every ring the bf16 shapes up to 8192^3 and ptpc make)
CACHED_RING_SHARE = 1 / 64


@dataclass(frozen=True)
class Pipeline:
    """``ring`` output buffers; at most ``guard_depth`` launches whose guards, and ``check_depth``
    whose checks, are still unread when the next launch is called (guard_depth <= check_depth <
    ring); ``batch`` launches at a time into half the ring with nothing between them but each
    one's watch (0: none; see loop.py)."""

    ring: int
    guard_depth: int
    check_depth: int
    batch: int = 0

    def __post_init__(self):
        if self.batch and self.ring != 2 * self.batch:
            raise ValueError(
                f"a pipeline with batches of {self.batch} takes a ring of {2 * self.batch}, not {self.ring}"
            )


# tests set this to run the queued-ahead loop on the CPU
FORCED: Pipeline | None = None


def pipeline_for(device: torch.device, by_checksum: bool, rule, out_bytes: int, each_read: bool = False) -> Pipeline:
    """How far launches run ahead of their reading. A stopping rule that decides on every
    launch's numbers reads each before the next (as does any backend without a checksum pass,
    whose checks are finished at once, and a collective case, ``each_read``, whose ranks meet
    between launches); the fused check on a GPU runs a ring ahead; under Triton's interpreter
    the check of one launch is finished while the next one runs."""
    if each_read or rule.reads_count_before_each_launch or rule.stop_on_bad:
        return Pipeline(2, 0, 0)
    if FORCED is not None:
        return FORCED
    if not by_checksum:
        return Pipeline(2, 0, 0)
    if device.type != "cuda":
        return Pipeline(2, 0, 1)
    free, _ = torch.cuda.mem_get_info(device)
    return gpu_pipeline(gpu_ring_fits(rule.limit, free, out_bytes))


def gpu_ring_fits(launches: int, free_bytes: int, out_bytes: int) -> int:
    """Output buffers for a run of ``launches`` on a GPU with ``free_bytes`` free: up to
    GPU_RING, within RING_BYTES and an eighth of what is free, and no more than the run's
    launches (rounded up to even); SHORT_RUN_RING for a run too short to take graphs and
    batches. A run of 12 on a new shape made 16, whose making was 1.8-2.4 ms of the host's at
    256^3-1024^3 on an H100, the largest piece of what the run paid before its first launch."""
    by_memory = min(RING_BYTES, free_bytes // 8) // max(1, out_bytes)
    # graphs come after a launch was read: the first, at the soonest
    wanted = GPU_RING if graphs_may_repay(launches - 1) else SHORT_RUN_RING
    return max(2, min(wanted, launches + launches % 2, by_memory))


def graphs_may_repay(launches_to_come: int) -> bool:
    """Whether a run with this many launches still to come repays its ring's graphs."""
    return launches_to_come >= GRAPHS_REPAID_AFTER


def gpu_pipeline(fits: int) -> Pipeline:
    """The pipeline of a ring of up to ``fits`` outputs on a GPU: from 4 on, an even ring whose
    two halves take batches in turn (an odd ring's last output would belong to no half)."""
    batch = fits // 2 if fits >= 4 else 0
    ring = 2 * batch if batch else fits
    return Pipeline(ring, ring - 1, ring - 1, batch)


@dataclass
class Queued:
    """A launch queued and not yet read."""

    record: LaunchRecord
    buffer: GuardedBuffer
    position: int
    checked: torch.Tensor | None  # the output to check (None: a bad output)
    values: list[int] | None = None  # its row, once read
    full: object | None = None  # a full check begun right behind the launch
    summed: bool = False  # the pass put the output's checksum in the row
    references: list = field(default_factory=list)  # (copy of the reference, whether it changed)
    started: float = 0.0  # when its call began (monotonic)
    guarded: bool = False  # its guards were read
    marked: bool = False  # its done event was recorded behind its work
    batch: "Batch | None" = None  # the batch it was launched in, if any


@dataclass
class Batch:
    """Launches queued one after another into half the ring, each followed by its watch alone
    (guards and checksum into its row), their rows copied to the host behind the last one."""

    half: int
    entries: list[Queued] = field(default_factory=list)
    done: object | None = None  # an event behind the rows' copy, once closed
    read: bool = False  # the rows came back


# an event's record and two events' elapsed time without torch's Python wrapper (a microsecond
# of every launch each)
_EVENT_BASE = getattr(torch._C, "_CudaEventBase", None)
_RECORD = getattr(_EVENT_BASE, "record", None) or (lambda event, stream: event.record(stream))
_ELAPSED = getattr(_EVENT_BASE, "elapsed_time", None) or (lambda start, stop: start.elapsed_time(stop))


class LaunchTimer:
    """A launch's time: on a GPU between two events on the current stream (so that it is the
    launch's own time, not the poison fill's queued before it, nor the host's), else the
    host's clock."""

    def __init__(self, stream):
        """``stream``: the current stream on a GPU (named once for a ring's timers: Event.record()
        without one looks it up through torch.cuda.is_available(), which took 0.25 ms per call
        beside a busy H200), else None."""
        self._events = None
        if stream is not None:
            self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            self._stream = stream
        self._started = self._stopped = 0.0

    def start(self) -> None:
        self._started = time.perf_counter()
        if self._events is not None:
            _RECORD(self._events[0], self._stream)

    def stop(self) -> None:
        self._stopped = time.perf_counter()
        if self._events is not None:
            _RECORD(self._events[1], self._stream)

    @property
    def stop_event(self):
        """The event right behind the launch (None off the GPU)."""
        return self._events[1] if self._events is not None else None

    def seconds(self) -> float:
        """After the launch was waited for."""
        if self._events is not None:
            try:
                return _ELAPSED(*self._events) / 1000
            except RuntimeError:  # the launch faulted: the events never completed
                pass
        return self._stopped - self._started


class Ring:
    """Per output buffer (ring position): the buffer, its device row of guard counts and
    checksum, that row's pinned host copy and the event after it (GPU), the launch's timer, and
    the position's captured work (loop.py)."""

    def __init__(self, m: int, n: int, dtype: torch.dtype, device: torch.device, size: int, key=None):
        self.key = key
        self.buffers = OutputBuffers(m, n, dtype, device, size)
        positions = len(self.buffers)
        self.on_gpu = device.type == "cuda"
        self.rows = torch.zeros(positions, ROW_WIDTH, dtype=torch.int64, device=device)
        host = torch.zeros(positions, ROW_WIDTH, dtype=torch.int64, pin_memory=True) if self.on_gpu else None
        # one view per position, made once (indexing costs the host a few microseconds a launch)
        self.row = list(self.rows)
        self.host = host if host is not None else self.rows
        self.host_row = list(host) if host is not None else self.row
        self.done = [torch.cuda.Event() for _ in range(positions)] if self.on_gpu else [None] * positions
        stream = torch.cuda.current_stream(device) if self.on_gpu else None
        self.timers = [LaunchTimer(stream) for _ in range(positions)]
        self.occupant: list[Queued | None] = [None] * positions
        self.graphs: dict[int, object] = {}
        self.keep: dict[int, object] = {}  # per position, what its captured work's scratch belongs to
        # kinds of a launch's work queued op by op so far (their kernels are loaded: no wait again)
        self.eager_variants: set[tuple] = set()
        # the batches' work (loop.py): per position its watch, per half its preparation and its
        # rows' close, captured once every kind of it ran op by op
        self.batch_graphs: dict[tuple, object] = {}
        self.batch_eager = False  # the batches' work ran op by op once (its kernels loaded)
        self.batch_refused = False  # CUDA refused to capture it (a debugger, a profiler)
        if self.on_gpu:
            self.batch_done = [torch.cuda.Event(), torch.cuda.Event()]

    @property
    def bytes(self) -> int:
        first = self.buffers.first.block
        return len(self.buffers) * first.numel() * first.element_size()

    def fresh(self) -> None:
        """For another run: nothing in flight, nothing poisoned ahead."""
        self.occupant = [None] * len(self.buffers)
        self.buffers.poisoned_ahead.clear()
        self.buffers.poisoned_returns.clear()
        # a graph captured in an earlier run replays as it was; work not captured yet belonged to
        # that run's loop, and is made again by this one's
        self.graphs = {position: graph for position, graph in self.graphs.items() if graph.graph is not None}


_kept: Ring | None = None


def ring_for(key: tuple, m: int, n: int, dtype: torch.dtype, device: torch.device, size: int) -> Ring:
    """A ring for one run: the kept one when it was made for the same key (shape, device,
    inputs, backend), else a new one, kept for the next run when it is small beside the GPU's
    memory (GPU only: its captured graphs are what is worth keeping, and capturing them waits
    for the launches queued ahead). One ring at most is kept: the next key's replaces it."""
    global _kept
    if _kept is not None and _kept.key == key and len(_kept.buffers) == size:
        _kept.fresh()
        return _kept
    _kept = None
    ring = Ring(m, n, dtype, device, size, key)
    if (
        device.type == "cuda"
        and ring.bytes <= CACHED_RING_SHARE * torch.cuda.get_device_properties(device).total_memory
    ):
        _kept = ring
    return ring
