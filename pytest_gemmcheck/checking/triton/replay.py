"""Checking the same tensors again and again, as case.run checks its output buffers: each set
of tensors keeps its :class:`~.run.Run` and, captured at its second check, a CUDA graph of its
kernels, replayed instead of launching them one by one, so that the host launches one graph
rather than each kernel. The entries are kept in ``RUNTIME.replays``.
"""

from __future__ import annotations

import torch

from ..graphs import GraphAtSecondUse
from ..rule import Tolerance
from .facts import reference_facts
from .plan import LaunchConfig
from .run import Run
from .runtime import RUNTIME

_REPLAYS_KEPT = 24  # entries kept per process (case.run uses one per output buffer, up to 8), the oldest dropped first


class Replay:
    """One set of tensors' check kept for checking again: its Run (scratch included) and,
    from the second check on, a CUDA graph of its kernels. The graph reads the tensors'
    memory when it is replayed, so the output may change between checks; the entry is keyed
    by everything the kernels were given (addresses, shapes, strides, dtypes, the reference's
    facts, tolerance, tile, configuration, stream). Checks of one entry on one stream follow
    each other in stream order, each copying its result to its own host buffer, so two may
    be in flight at once. The entry holds no reference to the checked tensors: they are
    lent to its Run only while it launches."""

    def __init__(self, run: Run, device: torch.device | None = None):
        self.run = run
        self.recorded = GraphAtSecondUse(lambda: self.run.launch_kernels(True), device, RUNTIME.capture_graph)
        self._lend(None, None, None)

    @property
    def graph(self):
        return self.recorded.graph

    def _lend(self, out, ref, rowmax) -> None:
        self.run.out, self.run.ref, self.run.rowmax = out, ref, rowmax

    def enqueue(self, out, ref, rowmax) -> None:
        """The check's kernels and the copy of its result, on the current stream."""
        self._lend(out, ref, rowmax)
        try:
            self.recorded.run()
        finally:
            self._lend(None, None, None)
        self.run.queue_copy()

    def eager_run(self, out, ref, rowmax) -> Run:
        """A Run of its own for these tensors (a check that runs again without the per-row
        thresholds), so that the entry's scratch is left to the graph."""
        run = self.run
        return Run(out, ref, rowmax, run.tol, run.tile, [], run.config, checksum=run.checksum)


def replay_for(out, ref, rowmax, tol: Tolerance, tile, config: LaunchConfig, checksum: bool) -> Replay:
    """The kept entry of these tensors' check, made at its first check."""
    facts = reference_facts(ref, rowmax, tol.floor)
    key = tuple((t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype) for t in (out, ref, rowmax, facts)) + (
        float(tol.rtol), float(tol.floor), tile, config, checksum, torch.cuda.current_stream(out.device).cuda_stream)
    return RUNTIME.kept(RUNTIME.replays, key, lambda: Replay(Run(out, ref, rowmax, tol, tile, [], config,
                                                                 checksum=checksum), out.device), _REPLAYS_KEPT)
