"""The fused check's process-wide state, in one object, :data:`RUNTIME`: the caches that outlive
a check, and the knobs that tests and benchmarks turn. ``RUNTIME.clear()`` gives the state of a
fresh process back.
"""

from __future__ import annotations

from typing import Callable

import torch


def uninitialised_scratch(numel: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Scratch memory, uninitialised: the kernels write every element before reading it. (The
    tests replace it to fill scratch with garbage and fence it with guard regions.)"""
    return torch.empty(numel, dtype=dtype, device=device)


class Runtime:
    """Every cache and knob of the fused check that is kept between calls."""

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        """Empty every cache and set every knob as a fresh process has it."""
        # Pinned host buffers for results, by length and dtype, reused: allocating pinned memory
        # costs far more than a check's host work.
        self.pinned_buffers: dict[tuple, list[torch.Tensor]] = {}
        # Facts of recent references (see facts.reference_facts), newest first: a case checks
        # every launch against one reference.
        self.reference_facts: list[tuple] = []
        # replay.Replay entries by everything their kernels were given, newest last.
        self.replays: dict[tuple, object] = {}
        # repeat.ChecksumFill entries, likewise.
        self.repeats: dict[tuple, object] = {}
        # launch.py's compiled kernels, by everything Triton specialises them on.
        self.compiled_kernels: dict = {}
        # A direct launch was refused once: Triton's own path from then on.
        self.direct_launch_refused = False

        # Off: every launch takes Triton's own path (a switch for comparing the two).
        self.direct_launch = True
        # Diagnosis: wait for each kernel as it is launched, so that a fault is reported by the
        # kernel that caused it rather than at the final read (the tests set it on GPUs).
        self.synchronize_each_kernel = False
        # Where scratch memory comes from: (numel, dtype, device) -> an uninitialised tensor.
        self.allocate: Callable[[int, torch.dtype, torch.device], torch.Tensor] = uninitialised_scratch
        # A stand-in for graphs.capture, (launches, device) -> a graph to replay (the tests'
        # fake); None: graphs.capture itself.
        self.capture: Callable | None = None
        # A stand-in for the target a device's launches are planned for, device -> target.Target
        # (the AMD tests plan an MI300's launches over CPU tensors with it); None: the device's
        # own (target.target_of).
        self.target_for: Callable | None = None

    def kept(self, store: dict, key, make: Callable[[], object], limit: int):
        """``store``'s entry for ``key``, made by ``make()`` at its first use; the store keeps the
        ``limit`` most recently used, newest last."""
        entry = store.pop(key, None)
        if entry is None:
            entry = make()
        store[key] = entry
        while len(store) > limit:
            del store[next(iter(store))]
        return entry

    def capture_graph(self, launches, device):
        """graphs.capture, or the stand-in ``self.capture`` when one is set."""
        from ..graphs import capture

        return (self.capture or capture)(launches, device)

    def copy_to_host(self, result: torch.Tensor):
        """A copy of a GPU ``result`` to pinned host memory queued on the current stream, and an
        event after it: (host buffer, event), for :meth:`read_host`."""
        key = (result.numel(), result.dtype)
        free = self.pinned_buffers.get(key)
        host = free.pop() if free else torch.empty(result.numel(), dtype=result.dtype, pin_memory=True)
        host.copy_(result, non_blocking=True)
        done = torch.cuda.Event()
        done.record(torch.cuda.current_stream(result.device))  # a named device: no lookup through is_available
        return host, done

    def read_host(self, copied) -> list:
        """A queued host copy's values as a list of ints (the int64 view), once its copy is done:
        the wait is for that copy alone, not for whatever the stream was given since. The buffer
        goes back to the pool."""
        host, done = copied
        done.synchronize()
        values = host.view(torch.int64).tolist()
        self.pinned_buffers.setdefault((host.numel(), host.dtype), []).append(host)
        return values


RUNTIME = Runtime()
