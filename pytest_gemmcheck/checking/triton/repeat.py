"""A repeated launch's pass: the output's checksum and, in the same pass, the next output
buffer's poison.

case.run checks a launch in full (accuracy against the reference) only while its output is one
it has not seen: a later launch whose checksum equals that of an output already checked in full
has that output's bits (up to the checksum's collision bound, :func:`..checksum.checksum`), and
so its numbers. Such a launch needs one read of its output and, for the launch after it, one
write of NaN into the other buffer: :func:`_checksum_fill_kernel` does both, so that the GPU
moves 2 x M x N x element bytes per repeated launch and nothing more. The checksum is the same
function the full pass folds in (:func:`.kernels._checksum_fold`, the same blocks and tasks of
:func:`.plan.main_plan`).

Each (output, buffer to poison) pair keeps its scratch and, from its second pass on, a CUDA
graph of the kernel, the partial sums' reduction and the copy of the 8-byte result to pinned
host memory, as :mod:`.replay` keeps for the full check; or (:meth:`ChecksumFill.queue_into`,
what case.run uses) its checksum goes into a tensor of the caller's, which captures the pass in
a graph of its own with the launch's guards and reads the result back with other launches'
(op by op, one entry serves every pair of the same layout on a stream).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .kernels import CHECKSUM_GROUP, INTERPRETED, _checksum_fold, _checksum_lanes, _group_weight
from .launch import diagnose, launch
from .plan import LaunchConfig, main_plan
from .runtime import RUNTIME
from .target import target_of

# entries kept per process, the oldest dropped first: passes queued op by op (case.run's, and
# fused_check.checksum's proofs) use one per layout, its ring's graphs one per position (up to 16)
_KEPT = 48
# The pass reads one tensor and writes another, and prefers taller blocks than the full check:
# 32 rows x 256 bytes took 0.137 ms (82% of copy bandwidth) against 0.156 ms for the full
# check's 16 rows, timed in turn in one run on an H200 (benchmarks/check_speed.py --configs,
# benchmarks/results/h200/2026-12-01-repeat-pass-configs.log).
GPU_CONFIG = LaunchConfig(block_m=32)


@triton.jit
def checksum_tasks(
    out_ptr,
    fill_ptr,
    M,
    N,
    stride_out_m,
    stride_out_n,
    stride_fill_m,
    stride_fill_n,
    num_tasks,
    col_chunks,
    task_blocks,
    index,
    programs,
    FILL: tl.constexpr,
    BITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    VEC: tl.constexpr,
    EVEN: tl.constexpr,
):
    """Program ``index`` of ``programs`` over the tasks of main_plan: its share of the checksum
    of ``out`` (checksum.checksum, summed modulo 2**64, so any split of the tasks adds up to
    the same value) and, with FILL, NaN written to the same elements of ``fill``."""
    FOLDED: tl.constexpr = BLOCK_N // VEC
    slots = tl.arange(0, BLOCK_M)
    total = tl.full([BLOCK_M], 0, tl.uint64)
    if tl.constexpr(BLOCK_N) % CHECKSUM_GROUP == 0:
        lane_weights = _checksum_lanes(tl.arange(0, BLOCK_N), BITS, BLOCK_N)
    if FILL:
        poison = tl.full([BLOCK_M, BLOCK_N], float("nan"), tl.float32).to(fill_ptr.dtype.element_ty)
    task = index
    while task < num_tasks:  # not range(): see kernels._LOOPS
        row_block = task // col_chunks
        chunk = task - row_block * col_chunks
        rows = row_block * BLOCK_M + slots
        row_ok = rows < M
        rows64 = rows.to(tl.int64)
        block = chunk * task_blocks
        last_block = tl.minimum(block + task_blocks, (N + BLOCK_N - 1) // BLOCK_N)
        checksum = tl.full([BLOCK_M, FOLDED], 0, tl.uint64)
        while block < last_block:
            cols64 = (block * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
            at_out = out_ptr + (rows64 * stride_out_m)[:, None] + (cols64 * stride_out_n)[None, :]
            at_fill = fill_ptr + (rows64 * stride_fill_m)[:, None] + (cols64 * stride_fill_n)[None, :]
            if EVEN:
                out_raw = tl.load(at_out, eviction_policy="evict_first")
                if FILL:
                    tl.store(at_fill, poison, eviction_policy="evict_first")
            else:
                inside = row_ok[:, None] & (cols64 < N)[None, :]
                out_raw = tl.load(at_out, mask=inside, other=0.0, eviction_policy="evict_first")
                if FILL:
                    tl.store(at_fill, poison, mask=inside, eviction_policy="evict_first")
            if tl.constexpr(BLOCK_N) % CHECKSUM_GROUP != 0:
                lane_weights = _checksum_lanes(cols64, BITS, BLOCK_N)
            lane_sums = _checksum_fold(
                out_raw, rows, row_ok, cols64, N, lane_weights, BITS, BLOCK_M, BLOCK_N, VEC, EVEN
            )
            groups = (block * BLOCK_N + tl.arange(0, FOLDED) * VEC).to(tl.uint32) // CHECKSUM_GROUP
            checksum += lane_sums * _group_weight(rows[:, None], groups[None, :])
            block += 1
        total += tl.sum(checksum, axis=1)
        task += programs
    return tl.sum(total, axis=0)


@triton.jit(do_not_specialize=["M", "num_tasks", "col_chunks", "task_blocks"])
def _checksum_fill_kernel(
    out_ptr,
    fill_ptr,
    partial_ptr,
    M,
    N,
    stride_out_m,
    stride_out_n,
    stride_fill_m,
    stride_fill_n,
    num_tasks,
    col_chunks,
    task_blocks,
    FILL: tl.constexpr,
    BITS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    VEC: tl.constexpr,
    EVEN: tl.constexpr,
):
    """A persistent program over the tasks of main_plan (:func:`checksum_tasks`), its partial
    sum at ``partial_ptr + pid``."""
    pid = tl.program_id(0)
    total = checksum_tasks(
        out_ptr,
        fill_ptr,
        M,
        N,
        stride_out_m,
        stride_out_n,
        stride_fill_m,
        stride_fill_n,
        num_tasks,
        col_chunks,
        task_blocks,
        pid,
        tl.num_programs(0),
        FILL,
        BITS,
        BLOCK_M,
        BLOCK_N,
        VEC,
        EVEN,
    )
    # a sum modulo 2**64 does not depend on the order of the additions
    tl.store(partial_ptr + pid, total.to(tl.int64, bitcast=True))


class ChecksumFill:
    """The pass for one output and one buffer to poison (or none): :meth:`enqueue` queues it on
    the current stream with the copy of its result to the host, :meth:`read` waits for that
    copy alone. Entries are kept in ``RUNTIME.repeats``: per (layout, stream) for passes queued op
    by op (:func:`queued_pass_for`), per (tensors, stream) for a pass captured in a caller's graph
    (:func:`checksum_fill_for`)."""

    def __init__(self, out: torch.Tensor, fill: torch.Tensor | None, config: LaunchConfig):
        m, n = out.shape
        self.plan = main_plan(m, n, out.element_size(), config, out.device)
        self.partial = RUNTIME.allocate(self.plan.programs, torch.int64, out.device)
        self.result = RUNTIME.allocate(1, torch.int64, out.device)
        self.on_gpu = out.device.type == "cuda" and not INTERPRETED
        # the tensors are lent only while the pass is launched: an entry keeps no output alive
        self._lent: tuple = (None, None)

    def _kernels(self, into: torch.Tensor | None = None) -> None:
        (out, fill), plan = self._lent, self.plan
        filling = fill is not None
        fill = fill if filling else out  # not written without FILL
        launch(
            _checksum_fill_kernel,
            plan.programs,
            (
                out,
                fill,
                self.partial,
                out.shape[0],
                out.shape[1],
                *out.stride(),
                *fill.stride(),
                plan.num_tasks,
                plan.col_chunks,
                plan.task_blocks,
            ),
            dict(
                FILL=filling,
                BITS=8 * out.element_size(),
                BLOCK_M=plan.block_m,
                BLOCK_N=plan.block_n,
                VEC=plan.vec,
                EVEN=plan.even,
            ),
            plan.num_warps,
            interpreted=INTERPRETED,
        )
        diagnose("_checksum_fill_kernel", interpreted=INTERPRETED)
        # int64 sums wrap: modulo 2**64
        torch.sum(self.partial, dim=0, keepdim=True, out=self.result if into is None else into)

    def queue_into(self, out: torch.Tensor, fill: torch.Tensor | None, into: torch.Tensor) -> None:
        """The pass over these tensors (the entry's), its checksum into ``into`` (int64, one
        element), on the current stream, op by op: no copy to the host, no graph of its own (the
        caller may capture it in one of its own)."""
        self._lent = (out, fill)
        try:
            self._kernels(into)
        finally:
            self._lent = (None, None)

    def enqueue(self, out: torch.Tensor, fill: torch.Tensor | None):
        """The pass over these tensors and the copy of its result, on the current stream, op by
        op; what :meth:`read` takes. Each pass's result is copied to a host buffer of its own
        before the next pass on the stream writes the shared scratch."""
        self._lent = (out, fill)
        try:
            self._kernels()
        finally:
            self._lent = (None, None)
        return RUNTIME.copy_to_host(self.result) if self.on_gpu else int(self.result[0])

    @staticmethod
    def read(queued) -> int:
        return queued if isinstance(queued, int) else RUNTIME.read_host(queued)[0]


def pass_config(out: torch.Tensor) -> LaunchConfig:
    """The blocks a checksum pass over ``out`` takes by default: GPU_CONFIG's on a GPU."""
    return LaunchConfig() if target_of(out.device).interpreted else GPU_CONFIG


def _current_stream(device: torch.device):
    """The current stream's handle on ``device`` (None off a GPU), by torch's C call: through
    torch.cuda.current_stream a lookup took 20 us under a profile on an H200, a dozen a case."""
    if device.type != "cuda":
        return None
    return torch._C._cuda_getCurrentRawStream(device.index if device.index is not None else torch.cuda.current_device())


def checksum_fill_for(out: torch.Tensor, fill: torch.Tensor | None, config: LaunchConfig | None = None) -> ChecksumFill:
    """The kept pass of this output and buffer, made at its first use, for capture in a graph of
    these tensors (they are in its key: its scratch is that graph's alone)."""
    config = config or pass_config(out)
    key = tuple(
        (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype) for t in (out, *(() if fill is None else (fill,)))
    ) + (fill is None, config, _current_stream(out.device))
    return RUNTIME.kept(RUNTIME.repeats, key, lambda: ChecksumFill(out, fill, config), _KEPT)


def queued_pass_for(out: torch.Tensor, fill: torch.Tensor | None, config: LaunchConfig | None = None) -> ChecksumFill:
    """A kept pass for :meth:`ChecksumFill.queue_into` or :meth:`ChecksumFill.enqueue` (a
    proof's: op by op, no graph of its own), one per layout of the output and buffer and per
    stream: the addresses are not in its key, so that
    a run's ring of new buffers (a new shape's) makes one where it made one per buffer (13 a
    case at 1024^3, 58 us each under a profile on an H200). Passes queued one after another on
    one stream share its scratch safely: each one's sum reads it before the next pass writes
    it. Being captured into a graph, a pass takes :func:`checksum_fill_for`'s entry of its own
    tensors, whose scratch no other graph shares."""
    config = config or pass_config(out)
    if out.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
        return checksum_fill_for(out, fill, config)
    key = (
        "queued",
        *((tuple(t.shape), tuple(t.stride()), t.dtype) for t in (out, *(() if fill is None else (fill,)))),
        fill is None,
        config,
        out.device,
        _current_stream(out.device),
    )
    return RUNTIME.kept(RUNTIME.repeats, key, lambda: ChecksumFill(out, fill, config), _KEPT)
