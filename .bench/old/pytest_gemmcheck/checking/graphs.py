"""CUDA graphs of small fixed work repeated on every launch (a check's kernels, a launch's guard
counts): the host then launches one graph instead of each kernel or torch op, which is what
bounds a harness on a GPU that finishes each launch in a fraction of a millisecond."""

from __future__ import annotations

import gc
from typing import Callable

import torch

_STREAMS: dict[torch.device, torch.cuda.Stream] = {}  # the side stream per device graphs are captured on
# A graph's replay without torch's Python wrapper around it, which looks devices and streams up
# on every call: a replay on every launch is what bounds a harness on a fast GPU.
_REPLAY = getattr(getattr(torch._C, "_CUDAGraph", None), "replay", None)


def capture(launches, device: torch.device) -> torch.cuda.CUDAGraph:
    """A CUDA graph of ``launches``, captured on a side stream ordered after the current one.
    Not torch.cuda.graph: it waits for the whole device and empties the allocator's cache,
    costs a harness does not want mid-case. What ``launches`` allocates comes from the graph's
    own memory pool and stays with the graph."""
    graph = torch.cuda.CUDAGraph()
    current = torch.cuda.current_stream(device)
    stream = _STREAMS.get(device)
    if stream is None:
        stream = _STREAMS[device] = torch.cuda.Stream(device)
    stream.wait_stream(current)
    # no garbage collection while capturing: collecting an unreachable CUDA graph (a finished
    # case's) destroys it, which CUDA refuses mid-capture, leaving an error behind for whatever
    # runs next; torch.cuda.graph collects before it captures for the same reason
    collecting = gc.isenabled()
    gc.disable()
    try:
        with torch.cuda.stream(stream):
            # thread_local: a stressor's thread may keep using the GPU meanwhile
            graph.capture_begin(capture_error_mode="thread_local")
            try:
                launches()
            finally:
                graph.capture_end()
    finally:
        if collecting:
            gc.enable()
    current.wait_stream(stream)
    return graph


def replay(graph) -> None:
    """``graph.replay()``, without torch's wrapper where it can."""
    if _REPLAY is not None and isinstance(graph, torch._C._CUDAGraph):
        _REPLAY(graph)
    else:
        graph.replay()


class GraphAtSecondUse:
    """Work repeated unchanged (a check's kernels, a launch's guards, a repeat pass): :meth:`run`
    does it op by op the first time, so that what it launches is compiled outside any capture,
    captures it as a CUDA graph the second time and replays that from then on. Where CUDA
    refuses the capture (a debugger, a profiler, CUDA_LAUNCH_BLOCKING) it stays op by op.
    ``capture_with``: a stand-in for :func:`capture` (the tests' fake). ``settle``, when given,
    is called before the first two uses: loading kernels and capturing a graph are driver calls
    that wait for whatever runs on the device, so a caller with work queued ahead (which may
    never end) waits for it there, under its own deadline."""

    def __init__(
        self,
        work: Callable[[], None],
        device: torch.device,
        capture_with: Callable | None = None,
        settle: Callable[[], None] | None = None,
    ):
        self.work = work
        self.device = device
        self.capture_with = capture_with
        self.settle = settle
        self.uses = 0
        self.graph = None
        self.refused = False

    def run(self) -> None:
        if self.settle is not None and self.uses < 2:
            self.settle()
        self.uses += 1
        if self.graph is None and not self.refused and self.uses >= 2:
            try:
                self.graph = (self.capture_with or capture)(self.work, self.device)
            except RuntimeError:
                self.refused = True
        if self.graph is None:
            self.work()
        else:
            replay(self.graph)

    def capture_now(self) -> None:
        """Captured now without being done (work whose kernels an earlier use, of this or of like
        work, already loaded): every later use replays it. A caller with several such pieces
        captures them one after the other, so that only the first capture's settle waits."""
        if self.graph is not None or self.refused:
            return
        if self.settle is not None:
            self.settle()
        self.uses = max(self.uses, 2)
        try:
            self.graph = (self.capture_with or capture)(self.work, self.device)
        except RuntimeError:
            self.refused = True
