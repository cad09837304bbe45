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
        # Pinned host buffers for result vectors, by length, reused: allocating pinned memory
        # costs far more than a check's host work.
        self.pinned_buffers: dict[int, list[torch.Tensor]] = {}
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


RUNTIME = Runtime()
