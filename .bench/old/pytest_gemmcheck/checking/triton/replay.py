"""Checking the same tensors again and again, as case.run checks its output buffers: each set
of tensors keeps its :class:`~.output_check.OutputCheck` and, captured at its second check, a CUDA graph of its
kernels, replayed instead of launching them one by one, so that the host launches one graph
rather than each kernel. The entries are kept in ``RUNTIME.replays``.
"""

from __future__ import annotations

import torch

from ..graphs import GraphAtSecondUse
from ..rule import Tolerance
from .facts import reference_facts
from .output_check import OutputCheck
from .plan import LaunchConfig
from .runtime import RUNTIME

_REPLAYS_KEPT = 24  # entries kept per process (case.run uses one per output buffer, up to 8), the oldest dropped first


class Replay:
    """One set of tensors' check kept for checking again: its OutputCheck (scratch included) and,
    from the second check on, a CUDA graph of its kernels. The graph reads the tensors'
    memory when it is replayed, so the output may change between checks; the entry is keyed
    by everything the kernels were given (addresses, shapes, strides, dtypes, the reference's
    facts, tolerance, tile, configuration, stream). Checks of one entry on one stream follow
    each other in stream order, each copying its result to its own host buffer, so two may
    be in flight at once. The entry holds no reference to the checked tensors: they are
    lent to its OutputCheck only while it launches."""

    def __init__(self, check: OutputCheck, device: torch.device | None = None):
        self.check = check
        self.recorded = GraphAtSecondUse(lambda: self.check.launch_kernels(True), device, RUNTIME.capture_graph)
        self._lend(None, None, None)

    @property
    def graph(self):
        return self.recorded.graph

    def _lend(self, out, ref, rowmax) -> None:
        self.check.out, self.check.ref, self.check.rowmax = out, ref, rowmax

    def enqueue(self, out, ref, rowmax) -> None:
        """The check's kernels and the copy of its result, on the current stream."""
        self._lend(out, ref, rowmax)
        try:
            self.recorded.run()
        finally:
            self._lend(None, None, None)
        self.check.queue_copy()

    def eager_check(self, out, ref, rowmax) -> OutputCheck:
        """An OutputCheck of its own for these tensors (a check that runs again without the
        per-row thresholds), so that the entry's scratch is left to the graph."""
        check = self.check
        return OutputCheck(out, ref, rowmax, check.tol, check.tile, [], check.config, checksum=check.checksum)


def replay_for(out, ref, rowmax, tol: Tolerance, tile, config: LaunchConfig, checksum: bool) -> Replay:
    """The kept entry of these tensors' check, made at its first check."""
    facts = reference_facts(ref, rowmax, tol.floor)
    key = tuple((t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype) for t in (out, ref, rowmax, facts)) + (
        float(tol.rtol),
        float(tol.floor),
        tile,
        config,
        checksum,
        torch.cuda.current_stream(out.device).cuda_stream,
    )
    return RUNTIME.kept(
        RUNTIME.replays,
        key,
        lambda: Replay(OutputCheck(out, ref, rowmax, tol, tile, [], config, checksum=checksum), out.device),
        _REPLAYS_KEPT,
    )
