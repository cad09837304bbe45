"""How a case checks its launches' outputs: with torch_backend.py's torch ops, or with the fused
Triton pass (:mod:`pytest_gemmcheck.checking.triton.fused_check`) for outputs on a GPU.

A check is *prepared* while the GPU still runs its launch (validated, planned, scratch
allocated), *started* once the launch is waited for, and *finished* later (case.run finishes it
once the next launch's poison is queued). The fused check's kernels run behind the launch on
the stream, and the host reads their few numbers back while the GPU fills the next output, so
the GPU rarely waits for the host. The torch path computes its numbers when started.

The two backends judge consistency differently, with the same results:

* torch: each output is compared bit for bit with the outputs kept so far, in the same pass;
* fused: each output's :func:`pytest_gemmcheck.checking.checksum.checksum` comes out of the accuracy
  pass (a product and an add per element), outputs are grouped by it, and kept outputs are
  compared only where the groups differ. No stored copy is read per launch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from ..errors import CaseError
from . import torch_backend
from .checksum import checksum
from .rule import AccuracyStats, DiffStats


@dataclass
class Outcome:
    """One launch's check: accuracy, differences from the copies it was given (torch path),
    and the output's checksum (fused path, when consistency is judged)."""

    accuracy: AccuracyStats
    diffs: list[DiffStats]
    checksum: int | None = None


class _TorchCheck:
    def __init__(self, *arguments):
        self._arguments = arguments
        self._outcome: Outcome | None = None

    def start(self) -> None:
        if self._outcome is None:
            accuracy, diffs = torch_backend.check_launch(*self._arguments)
            self._outcome = Outcome(accuracy, diffs)

    def result(self) -> Outcome:
        self.start()
        return self._outcome


class _FusedCheck:
    def __init__(self, pending):
        self._pending = pending

    def start(self) -> None:
        self._pending.start()

    def result(self) -> Outcome:
        accuracy, diffs, total = self._pending.result()
        return Outcome(accuracy, diffs, total)


@dataclass(frozen=True)
class Checker:
    """A backend: ``prepare(out, ref, rowmax, tol, tile, copies, consistency)`` returns a check
    to ``start()`` and whose ``result()`` is the :class:`Outcome`; ``checksum`` and ``compare``
    as torch_backend.py and checksum.py have them. ``queue_checksum(out, fill, into)``, where
    the backend has one, queues a launch's pass on the current stream: out's checksum alone (no
    reference read) into ``into`` (int64, one element, read back by the caller) and NaN into
    ``fill`` (the next output buffer, or None); nothing is waited for or copied to the host. It
    returns what owns the pass's scratch: a caller that captures the pass in a graph keeps it
    as long as the graph."""

    name: str
    by_checksum: bool  # consistency from checksums (copies are never passed to prepare)
    prepare: Callable
    checksum: Callable[[torch.Tensor], int]
    compare: Callable
    queue_checksum: Callable | None = None


def _torch_prepare(out, ref, rowmax, tol, tile, copies, consistency: bool):
    return _TorchCheck(out, ref, rowmax, tol, tile, list(copies))


TORCH = Checker("torch", by_checksum=False, prepare=_torch_prepare, checksum=checksum, compare=torch_backend.compare)


def _fused() -> Checker:
    from .triton import fused_check

    def prepare(out, ref, rowmax, tol, tile, copies, consistency: bool):
        # case.run checks its output buffers again and again: replayed as a CUDA graph
        return _FusedCheck(fused_check.prepare_check(out, ref, rowmax, tol, tile, checksum=consistency, replay=True))

    def compare(a, b, rowmax, tile):
        return fused_check.compare_copies(a, [b], rowmax, tile)[0]

    def queue_checksum(out, fill, into):
        return fused_check.queue_checksum_and_fill(out, fill, into)

    return Checker(
        "triton",
        by_checksum=True,
        prepare=prepare,
        checksum=fused_check.checksum,
        compare=compare,
        queue_checksum=queue_checksum,
    )


def select_checker(backend: str, out: torch.Tensor) -> Checker:
    """The chosen backend (--gemmcheck-check-backend) for tensors like ``out``."""
    from . import triton as gpu

    if backend == "triton" or (backend == "auto" and out.device.type == "cuda" and gpu.available(out)):
        if not gpu.available(out):
            raise CaseError(
                "--gemmcheck-check-backend=triton needs triton installed and the output on a GPU "
                "(or TRITON_INTERPRET=1)"
            )
        # Consistency by checksum: on an H200 at 16384x7168 bf16 the pass that also reads a kept
        # copy moves 1.5x the bytes of the one that folds a checksum in.
        return _fused()
    return TORCH
