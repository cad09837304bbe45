"""The reference: an fp32 GEMM of the dequantized inputs (TF32 off), rounded to the output dtype.

Computed in row chunks so that the dequantized fp32 copy of A never has to exist whole; a
session caches it (cache.py), so a case's launches, and every case with the same inputs,
share one reference: the harness's own (:class:`ProtectedReference`), of which tests and
kernels only ever get copies.
"""

from __future__ import annotations

import contextlib

import torch

from ..checking.checksum import checksum
from ..checking.torch_backend import row_max
from ..launch.guards import same_bits
from .quant import Inputs, quant_mode

# Rows of A dequantized at once: bounds the temporary fp32 copy of A to rows x K floats.
CHUNK_ELEMENTS = 1 << 24


@contextlib.contextmanager
def tf32_off():
    """Full fp32 matmuls on GPUs that would otherwise use TF32 (Ampere and later)."""
    cuda_matmul = torch.backends.cuda.matmul.allow_tf32
    cudnn = torch.backends.cudnn.allow_tf32
    precision = torch.get_float32_matmul_precision()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = cuda_matmul
        torch.backends.cudnn.allow_tf32 = cudnn
        torch.set_float32_matmul_precision(precision)


def compute_reference(inputs: Inputs, out_dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """[M, N] reference for ``inputs`` in ``out_dtype``, on the inputs' device."""
    mode = quant_mode(inputs.quant)
    m, k = inputs.a.shape
    n = inputs.b.shape[0]
    rows_per_chunk = max(1, CHUNK_ELEMENTS // max(k, n))
    with tf32_off(), torch.no_grad():
        b_t = mode.dequantize_b(inputs).t()
        if rows_per_chunk >= m:  # one chunk: its product, rounded, is the reference (no copy into another)
            return (mode.dequantize_a(inputs, slice(0, m)) @ b_t).to(out_dtype)
        out = torch.empty((m, n), dtype=out_dtype, device=inputs.a.device)
        for start in range(0, m, rows_per_chunk):
            rows = slice(start, min(m, start + rows_per_chunk))
            a = mode.dequantize_a(inputs, rows)
            out[rows] = (a @ b_t).to(out_dtype)
    return out


class ProtectedReference:
    """The harness's own reference of a case: never handed out (``case.reference()`` gives
    copies), so that it can be proved unchanged before it judges anything. On a GPU by its
    checksum, taken by the check backend's checksum at its first proof (right after it was made:
    the fused one reads it once, where checksum.checksum's torch ops are about 300 small kernels,
    3 ms of the host's at 16384x7168). On the CPU by a comparison of its bytes with a pristine copy
    of its own: a memcmp there costs microseconds, the checksum's torch ops 0.2 ms at 64x64 and
    2.6 ms at 256x256 on one loaded core; its checksum is worked out only for a message."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor
        self._checksum: int | None = None
        self._pristine = tensor.clone() if tensor.device.type == "cpu" else None
        self._rowmax = None
        self._verified: dict[tuple, dict] = {}

    @property
    def checksum(self) -> int:
        """checksum.checksum of the reference as it was made."""
        if self._checksum is None:
            self._checksum = checksum(self._pristine if self._pristine is not None else self.tensor)
        return self._checksum

    def verified(self, *judged_by) -> dict:
        """The outputs checked in full against this reference so far, by every run of its case:
        their checksums to their accuracy, one table per way of judging (``judged_by``: the
        check's backend, tolerance and tile). A later launch with one of these checksums has
        that output's bits, and so its numbers, whichever run it belongs to."""
        return self._verified.setdefault(judged_by, {})

    def rowmax(self) -> torch.Tensor:
        """The largest |ref| of each row (torch_backend.row_max), worked out once."""
        if self._rowmax is None:
            self._rowmax = row_max(self.tensor)
        return self._rowmax

    def nbytes(self) -> int:
        return self.tensor.numel() * self.tensor.element_size() * (1 if self._pristine is None else 2)

    def intact(self, checksum_of=checksum) -> bool:
        """Whether its bits are those it was made with (``checksum_of``: checksum.checksum or an
        implementation of it, as the check's backend has one). The first proof, which follows its
        making with nothing between (Case.judged_reference), takes the checksum it is proved by."""
        if self._pristine is not None:
            return same_bits(self.tensor, self._pristine)
        if self._checksum is None:
            self._checksum = checksum_of(self.tensor)
            return True
        return checksum_of(self.tensor) == self._checksum
