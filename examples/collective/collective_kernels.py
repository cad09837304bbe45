"""CPU stand-ins for GEMMs fused with a collective, one launch each, on the ranks of the default
torch.distributed group (gloo): correct ones for each collective, and broken ones of the kinds
the collective suites catch. Each takes a rank's shards (``case.inputs()``) and returns
``launch(out)``. Operands are dequantized by hand (bf16 and ptpc), as a kernel's epilogue would."""

from __future__ import annotations

import torch
import torch.distributed as dist


def dequantized(x) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 a_r [rows, K] and b_r [cols, K] of a rank's shards (bf16, or ptpc's fp8 and scales)."""
    a, b = x.a.float(), x.b.float()
    if x.quant == "ptpc":
        a, b = a * x.a_scale[:, None], b * x.b_scale[:, None]
    elif x.quant != "bf16":
        raise ValueError(f"these stand-ins take bf16 and ptpc shards, not {x.quant}")
    return a, b


def gemm_all_reduce(x):
    """Row-parallel GEMM, then all_reduce: every rank's out [M, N] is the sum of the ranks' products."""
    a, b = dequantized(x)

    def launch(out):
        partial = a @ b.T
        dist.all_reduce(partial)
        out.copy_(partial)

    return launch


def gemm_reduce_scatter(x):
    """Row-parallel GEMM, then reduce_scatter: rank r's out [M/W, N] is its rows of the sum."""
    a, b = dequantized(x)

    def launch(out):
        partial = a @ b.T
        mine = torch.empty(out.shape, dtype=torch.float32)
        dist.reduce_scatter_tensor(mine, partial)
        out.copy_(mine)

    return launch


def all_gather_gemm(x):
    """all_gather of A, then column-parallel GEMM: rank r's out [M, N/W] is the gathered A times b_rᵀ."""
    a, b = dequantized(x)

    def launch(out):
        gathered = torch.empty((a.shape[0] * dist.get_world_size(), a.shape[1]), dtype=a.dtype)
        dist.all_gather_into_tensor(gathered, a)
        out.copy_(gathered @ b.T)

    return launch


CORRECT = {"all_reduce": gemm_all_reduce, "reduce_scatter": gemm_reduce_scatter, "all_gather": all_gather_gemm}


def fused_gemm_scatter(x, *, fuse: bool):
    """The background's kernel on the CPU: the GEMM and the all-reduce of its partial, fused
    (one call) or not (the GEMM alone into a workspace, then the collective)."""
    a, b = dequantized(x)
    workspace = torch.empty((a.shape[0], b.shape[0]), dtype=torch.float32)

    def launch(out):
        torch.matmul(a, b.T, out=workspace)
        if fuse:
            dist.all_reduce(workspace)
            out.copy_(workspace)
        else:
            out.copy_(workspace)
            reduced = out.float()
            dist.all_reduce(reduced)
            out.copy_(reduced)

    return launch


def async_all_reduce_read_early(x, *, rank: int, every: int, at: int):
    """An all_reduce overlapped with the epilogue: the partial is reduced with ``async_op=True``
    and copied out after ``wait()``, except on ``rank``'s launches number ``at`` modulo ``every``,
    where the copy is made before it: it races with gloo's thread, which is still sending and
    summing the buffer, and gets the partial, or a partly reduced one, instead of the sum."""
    a, b = dequantized(x)
    launches = [0]
    mine = dist.get_rank() == rank

    def launch(out):
        launches[0] += 1
        buffer = a @ b.T
        work = dist.all_reduce(buffer, async_op=True)
        if mine and launches[0] % every == at:
            out.copy_(buffer)  # read before the reduction was waited for
            work.wait()
        else:
            work.wait()
            out.copy_(buffer)

    return launch


def stale_workspace(x, *, rank: int, launch_number: int):
    """A rank that sends a stale shard: on its launch ``launch_number`` ``rank`` skips writing its
    partial into the workspace it reduces, which still holds the last launch's reduced sum."""
    a, b = dequantized(x)
    workspace = torch.empty((a.shape[0], b.shape[0]), dtype=torch.float32)
    launches = [0]
    mine = dist.get_rank() == rank

    def launch(out):
        launches[0] += 1
        if not (mine and launches[0] == launch_number):
            torch.matmul(a, b.T, out=workspace)
        dist.all_reduce(workspace)
        out.copy_(workspace)

    return launch


def reduce_in_own_order(x, *, reversed_on: int):
    """Each rank gathers every rank's partial and sums them itself in bf16, rank ``reversed_on``
    from the last rank down, the others from rank 0 up: each is accurate, but bf16 sums in another
    order round otherwise, and that rank's bits differ from the others'."""
    a, b = dequantized(x)
    order = -1 if dist.get_rank() == reversed_on else 1

    def launch(out):
        partials = [torch.empty((a.shape[0], b.shape[0]), dtype=torch.float32) for _ in range(dist.get_world_size())]
        dist.all_gather(partials, a @ b.T)
        total = torch.zeros(out.shape, dtype=torch.bfloat16)
        for partial in partials[::order]:
            total = total + partial.to(torch.bfloat16)
        out.copy_(total)

    return launch
