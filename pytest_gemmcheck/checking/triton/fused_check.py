"""The check of one launch as Triton kernels: :func:`pytest_gemmcheck.checking.torch_backend.check_launch`'s
numbers (its docstring defines them), reading each tensor once.

Up to three kernels on one stream, then a copy of the result vector to pinned host memory and
one synchronisation (on an event after that copy, so later work on the stream is not waited
for). What each kernel does, and why their numbers are the torch path's, is told in
:mod:`.kernels`.

Besides :func:`check_launch`: :func:`check_launch_and_checksum`, the accuracy half and the
output's :func:`pytest_gemmcheck.checking.checksum.checksum` from one read of ``out`` and ``ref``, for
judging consistency by checksum rather than by reading a stored copy (what case.run does);
:func:`compare_copies`, the consistency half, for when the checksums differ; and
:func:`prepare_check` / :func:`start_check`, which return a :class:`PendingCheck` to start
and read later, so that the host's work overlaps the GPU's. The kernels are launched through
:mod:`pytest_gemmcheck.checking.triton.launch`.

Triton decides when it is imported, and again on the first launch, whether kernels run in
its interpreter (``TRITON_INTERPRET=1``: CPU tensors, numpy) or compile for the GPU; set the
flag before importing triton for the interpreter.

The other modules, each with one job: :mod:`.kernels` (the kernels and the layouts they share
with the host), :mod:`.target` (the GPU or interpreter launches are planned for), :mod:`.plan`
(blocks, tasks and grid), :mod:`.output_check` (one output's check: scratch, launches and
result), :mod:`.facts` (what is worked out once per reference), :mod:`.replay` (checks replayed
as CUDA graphs), :mod:`.launch` (launching compiled kernels directly) and :mod:`.runtime` (the
process-wide caches and knobs, ``RUNTIME``).
"""

from __future__ import annotations

import torch

from .. import checksum as checksums
from .. import torch_backend as torch_check
from ..rule import AccuracyStats, DiffStats, Tolerance
from .kernels import INTERPRETED, R_CHECKSUM, R_OUTSIDE
from .output_check import OutputCheck
from .plan import LaunchConfig
from .replay import Replay, replay_for
from .target import target_of

__all__ = [
    "LaunchConfig",
    "PendingCheck",
    "prepare_check",
    "start_check",
    "check_launch",
    "check_launch_and_checksum",
    "compare_copies",
    "checksum",
    "start_checksum_and_fill",
    "queue_checksum_and_fill",
]

_INT32_MAX = 2**31 - 1


def _require_device(t: torch.Tensor) -> None:
    target_of(t.device)  # raises for a CPU tensor outside the interpreter


def _validate(out, ref, rowmax, copies) -> None:
    if out.dim() != 2 or tuple(out.shape) != tuple(ref.shape):
        raise ValueError(f"out {list(out.shape)} and ref {list(ref.shape)} must be the same [M, N]")
    if out.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise ValueError(f"out dtype {out.dtype} is not bfloat16, float16 or float32")
    if ref.dtype not in (torch.bfloat16, torch.float16, torch.float32, torch.float64):
        raise ValueError(f"ref dtype {ref.dtype} is not bfloat16, float16, float32 or float64")
    if tuple(rowmax.shape) != (out.shape[0],):
        raise ValueError(f"rowmax {list(rowmax.shape)} must have one value per row of out ({out.shape[0]})")
    for copy in copies:
        if tuple(copy.shape) != tuple(out.shape) or copy.dtype != out.dtype:
            raise ValueError(f"a copy {list(copy.shape)} {copy.dtype} does not match out {list(out.shape)} {out.dtype}")
    devices = {t.device for t in (out, ref, rowmax, *copies)}
    if len(devices) > 1:
        raise ValueError(f"out, ref, rowmax and copies must be on one device, not {sorted(map(str, devices))}")


def _too_large(m: int, n: int, tile, detectors: int) -> bool:
    # counts and their offsets are int32: no tile may hold more elements, nor the tile counts of
    # all detectors have more entries
    return tile is not None and (
        min(tile[0], m) * min(tile[1], n) > _INT32_MAX or detectors * -(-m // tile[0]) * -(-n // tile[1]) > _INT32_MAX
    )


class PendingCheck:
    """A check made ready (validated, planned, scratch allocated), then started: its kernels
    queued on the current stream (:meth:`start`), not waited for. :meth:`result` reads its
    numbers back: the one synchronisation (a second only when the per-row thresholds turned out
    not to apply and the check runs again dividing per element). The tensors must stay
    unchanged until then."""

    def __init__(self, check: OutputCheck | None, done=None, replay: Replay | None = None, tensors=()):
        self._check = check
        self._done = done  # the torch path's numbers, for what the kernels leave to it
        self._replay = replay
        self._tensors = tensors  # (out, ref, rowmax) of a replayed check: its OutputCheck keeps none
        self._copied = None  # the result's copy to the host: (pinned buffer, event after it)
        self._started = False
        # floor >= 1 puts every |ref| within its row's scale (rowmax being the row's largest
        # |ref|): then no element needs a division of its own
        self._row_scale = check is not None and check.tol.floor >= 1.0 and check.accuracy_on

    def start(self) -> PendingCheck:
        if self._check is not None and not self._started:
            self._started = True
            if self._replay is not None and self._row_scale:
                self._replay.enqueue(*self._tensors)
            else:
                self._check.enqueue(self._row_scale)
            self._copied = self._check.take_copy()
        return self

    def result(self) -> tuple[AccuracyStats, list[DiffStats], int | None]:
        """(accuracy, differences from each copy, checksum of out or None); starts the check
        if it was not started."""
        if self._done is None:
            self.start()
            check = self._check
            values = check.read(self._copied)
            if self._row_scale and values[R_OUTSIDE.value] > 0:  # rowmax is not ref's row maximum: again, in full
                if self._replay is not None:
                    check = self._replay.eager_check(*self._tensors)
                check.enqueue(False)
                values = check.read(check.take_copy())
            self._done = (
                check.accuracy(values) if check.accuracy_on else None,
                check.diffs(values),
                int(values[R_CHECKSUM.value]) if check.checksum else None,
            )
            self._check = None  # its scratch can go
        return self._done


def prepare_check(
    out: torch.Tensor,
    ref: torch.Tensor,
    rowmax: torch.Tensor,
    tol: Tolerance,
    tile: tuple[int, int] | None = None,
    copies=(),
    *,
    checksum: bool = False,
    config: LaunchConfig | None = None,
    replay: bool = False,
) -> PendingCheck:
    """:func:`check_launch` (and with ``checksum``, :func:`pytest_gemmcheck.checking.checksum.checksum` of
    ``out`` from the same read) made ready to start: nothing is queued yet, so this may run
    while the GPU is still writing ``out``.

    ``replay``: the same tensors (the same memory, written anew in between) will be checked
    again and again, as case.run checks its output buffers. On a GPU the check's kernels are
    then captured in a CUDA graph at the second check and replayed from then on, which costs
    the host one graph launch instead of one launch per kernel; their scratch memory stays
    with the graph (see :class:`~.replay.Replay`)."""
    copies = list(copies)
    _validate(out, ref, rowmax, copies)
    m, n = out.shape
    if m == 0 or n == 0 or _too_large(m, n, tile, 1 + len(copies)):
        # nothing to read; or a tile too large for the int32 counts: the torch path handles both
        accuracy, diffs = torch_check.check_launch(out, ref, rowmax, tol, tile, copies)
        return PendingCheck(None, (accuracy, diffs, checksums.checksum(out) if checksum else None))
    _require_device(out)
    rowmax = rowmax.to(torch.float32).contiguous()
    config = config or LaunchConfig()
    if replay and not copies and out.device.type == "cuda" and not INTERPRETED:
        entry = replay_for(out, ref, rowmax, tol, tile, config, checksum)
        return PendingCheck(entry.check, replay=entry, tensors=(out, ref, rowmax))
    return PendingCheck(OutputCheck(out, ref, rowmax, tol, tile, copies, config, checksum=checksum))


def start_check(
    out: torch.Tensor,
    ref: torch.Tensor,
    rowmax: torch.Tensor,
    tol: Tolerance,
    tile: tuple[int, int] | None = None,
    copies=(),
    *,
    checksum: bool = False,
    config: LaunchConfig | None = None,
    replay: bool = False,
) -> PendingCheck:
    """:func:`prepare_check`, started: its kernels queued on the current stream, not waited for."""
    return prepare_check(out, ref, rowmax, tol, tile, copies, checksum=checksum, config=config, replay=replay).start()


def check_launch(
    out: torch.Tensor,
    ref: torch.Tensor,
    rowmax: torch.Tensor,
    tol: Tolerance,
    tile: tuple[int, int] | None = None,
    copies=(),
    *,
    config: LaunchConfig | None = None,
) -> tuple[AccuracyStats, list[DiffStats]]:
    """:func:`pytest_gemmcheck.checking.torch_backend.check_launch` with fused kernels: same arguments, same
    results (relL2 within the bound :mod:`.kernels` gives), one synchronisation (two when
    ``rowmax`` turns out not to be ref's row maximum). ``config`` tunes the kernels' blocks;
    the defaults suit current GPUs."""
    accuracy, diffs, _ = prepare_check(out, ref, rowmax, tol, tile, copies, config=config).result()
    return accuracy, diffs


def check_launch_and_checksum(
    out: torch.Tensor,
    ref: torch.Tensor,
    rowmax: torch.Tensor,
    tol: Tolerance,
    tile: tuple[int, int] | None = None,
    *,
    config: LaunchConfig | None = None,
) -> tuple[AccuracyStats, int]:
    """The accuracy half of :func:`check_launch` and, from the same read of ``out``,
    :func:`pytest_gemmcheck.checking.checksum.checksum` of ``out``: for judging consistency by comparing
    checksums instead of reading a stored copy, with :func:`compare_copies` only for outputs
    whose checksums differ."""
    accuracy, _, total = prepare_check(out, ref, rowmax, tol, tile, checksum=True, config=config).result()
    return accuracy, total


def compare_copies(
    out: torch.Tensor,
    copies,
    rowmax: torch.Tensor,
    tile: tuple[int, int] | None = None,
    *,
    config: LaunchConfig | None = None,
) -> list[DiffStats]:
    """The consistency half of :func:`check_launch`: ``out`` compared bitwise with each of
    ``copies`` (:func:`pytest_gemmcheck.checking.torch_backend.compare` for each), reading ``out`` once per
    four copies and not reading a reference."""
    copies = list(copies)
    _validate(out, out, rowmax, copies)
    m, n = out.shape
    if not copies:
        return []
    if m == 0 or n == 0 or _too_large(m, n, tile, 1 + len(copies)):
        return [torch_check.compare(out, copy, rowmax, tile) for copy in copies]
    _require_device(out)
    check = OutputCheck(
        out,
        out,
        rowmax.to(torch.float32).contiguous(),
        Tolerance(),
        tile,
        copies,
        config or LaunchConfig(),
        accuracy=False,
    )
    return PendingCheck(check).result()[1]


def checksum(t: torch.Tensor) -> int:
    """:func:`pytest_gemmcheck.checking.checksum.checksum` with the fused kernels, reading ``t`` once.

    Contiguous tensors of any shape and 2-D strided ones run fused; other layouts, which a
    GEMM output never has, go to the torch version."""
    view = checksums.checksum_view(t)
    if t.dtype not in (torch.bfloat16, torch.float16, torch.float32) or t.numel() == 0 or view is None:
        return checksums.checksum(t)
    _require_device(t)
    # the repeat pass without a fill: the same checksum from one read, op by op. A graph captured
    # at a tensor's second proof repays its capture (which waits for the device) only over many
    # more, where a suite of new shapes proves each reference twice (before and after its run).
    return start_checksum_and_fill(view).result()


class PendingChecksum:
    """:func:`start_checksum_and_fill`'s pass, queued; :meth:`result` waits for its 8 bytes."""

    def __init__(self, queued):
        self._queued = queued
        self._value: int | None = None

    def result(self) -> int:
        if self._value is None:
            from .repeat import ChecksumFill

            self._value, self._queued = ChecksumFill.read(self._queued), None
        return self._value


def _validate_pass(out: torch.Tensor, fill: torch.Tensor | None) -> None:
    if out.dim() != 2 or out.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise ValueError(f"out {list(out.shape)} {out.dtype}: the pass takes a 2-D bfloat16, float16 or float32 tensor")
    if fill is not None and (
        tuple(fill.shape) != tuple(out.shape) or fill.dtype != out.dtype or fill.device != out.device
    ):
        raise ValueError(
            f"fill {list(fill.shape)} {fill.dtype} on {fill.device} does not match out "
            f"{list(out.shape)} {out.dtype} on {out.device}"
        )


def queue_checksum_and_fill(
    out: torch.Tensor, fill: torch.Tensor | None, into: torch.Tensor, *, config: LaunchConfig | None = None
):
    """:func:`start_checksum_and_fill`'s pass with its checksum into ``into`` (int64, one
    element, on out's device) and nothing copied to the host or waited for: for a caller that
    captures its own graph of a launch's work and reads many launches' results at once. Returns
    the pass's kept entry, which owns its scratch (None for an empty output)."""
    from .repeat import queued_pass_for

    _validate_pass(out, fill)
    if out.numel() == 0:
        into.zero_()
        return None
    _require_device(out)
    entry = queued_pass_for(out, fill, config)
    entry.queue_into(out, fill, into)
    return entry


def start_checksum_and_fill(
    out: torch.Tensor, fill: torch.Tensor | None = None, *, config: LaunchConfig | None = None
) -> PendingChecksum:
    """:func:`pytest_gemmcheck.checking.checksum.checksum` of a 2-D ``out`` queued on the current
    stream and, with ``fill`` (a tensor of out's shape and dtype), NaN written into every
    element of ``fill`` in the same pass: a repeated launch's whole check when its output has
    a checksum already checked in full (:mod:`.repeat`). Queued op by op, its scratch kept per
    layout."""
    from .repeat import queued_pass_for

    _validate_pass(out, fill)
    if out.numel() == 0:
        return PendingChecksum(0)
    _require_device(out)
    return PendingChecksum(queued_pass_for(out, fill, config).enqueue(out, fill))
