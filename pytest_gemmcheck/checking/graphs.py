"""CUDA graphs of small fixed work repeated on every launch (a check's kernels, a launch's guard
counts): the host then launches one graph instead of each kernel or torch op, which is what
bounds a harness on a GPU that finishes each launch in a fraction of a millisecond."""

from __future__ import annotations

import gc

import torch

_STREAMS: dict[torch.device, torch.cuda.Stream] = {}  # the side stream per device graphs are captured on


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
