"""A real racy GEMM on NVIDIA, and its fixed twin: racy_gemm.cu compiled at run time with CuPy.

The kernel (see racy_gemm.cu for the pipeline and the bug, line by line) is an fp8 ptpc GEMM
whose peeled tail pre-reads the final shared-memory stage after a bare ``__syncthreads`` and
only then runs the ``cp.async.wait_group`` that covers the copies writing it; the fixed twin
waits first. Knobs that move the race between "every launch", "only under load" and "never":

* ``stages``: pipeline depth; the final tile is issued ``stages - 1`` compute steps before the
  pre-read, so more stages give its copies more time to land.
* ``block_k``: K bytes per stage (16, 32, 64, 128); a longer step is more time, too.
* ``slack``: SM clock cycles spun between the tail's last issue and its pre-read (a runtime
  argument, no recompilation): the window in which the final tile must land.
* ``K``: with ``K == 2 * block_k`` the main loop runs zero times and the tail is all there is.

Compiled with NVRTC through ``cupy.RawModule`` (torch's ``load_inline`` needs a host
compiler toolchain that GPU machines often lack), launched on torch's current stream, reading
and writing torch tensors through their data pointers.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import torch

VARIANTS = ("racy", "fixed")
BLOCK_M = BLOCK_N = 64
THREADS = 256
BLOCK_KS = (16, 32, 64, 128)
SOURCE = Path(__file__).with_suffix(".cu")
# Shared memory a block may use without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize).
DEFAULT_SHARED_LIMIT = 48 * 1024


def unavailable_reason() -> str | None:
    """Why this machine cannot run the kernel, or None when it can."""
    if not torch.cuda.is_available():
        return "no CUDA GPU"
    if getattr(torch.version, "hip", None):
        return "the kernel uses NVIDIA's cp.async (PTX); this is a ROCm build of torch"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) < (8, 0):
        return f"cp.async needs sm_80 or newer; this GPU is sm_{major}{minor}"
    try:
        import cupy  # noqa: F401  (only whether it imports)
    except ImportError as exc:
        return f"cupy is not importable ({exc})"
    return None


def shared_bytes(stages: int, block_k: int) -> int:
    """Dynamic shared memory of a block: the fp8 decode table, then ``stages`` A+B tiles."""
    row_bytes = block_k + 16
    return 1024 + stages * 2 * BLOCK_M * row_bytes


@functools.lru_cache(maxsize=None)
def _kernel(variant: str, stages: int, block_k: int, device_index: int):
    import cupy

    with cupy.cuda.Device(device_index):
        module = cupy.RawModule(
            code=SOURCE.read_text(),
            options=("--std=c++17", f"-DSTAGES={stages}", f"-DBLOCK_K={block_k}", f"-DFIXED={int(variant == 'fixed')}"),
        )
        kernel = module.get_function("tail_gemm")
        needed = shared_bytes(stages, block_k)
        if needed > DEFAULT_SHARED_LIMIT:
            with warnings.catch_warnings():  # some CuPy releases deprecate the attribute's spelling
                warnings.simplefilter("ignore", DeprecationWarning)
                kernel.max_dynamic_shared_size_bytes = needed
    return kernel


def _cupy_stream(stream: torch.cuda.Stream, device_index: int):
    """torch's stream as CuPy sees it: through the CUDA stream protocol where both sides have
    it (CuPy 14 deprecates ExternalStream), else by its raw handle."""
    import cupy

    if hasattr(cupy.cuda.Stream, "from_external") and hasattr(stream, "__cuda_stream__"):
        return cupy.cuda.Stream.from_external(stream)
    return cupy.cuda.ExternalStream(stream.cuda_stream, device_index)


class TailGemm:
    """``TailGemm(variant, stages=2, block_k=32)(a, b, a_scale, b_scale, out, slack=0)`` writes
    ``out[M, N] = bf16((a @ b.T) * a_scale[:, None] * b_scale[None, :])`` for fp8 e4m3fn ``a``
    [M, K] and ``b`` [N, K] and fp32 scales; M and N multiples of 64, K of ``block_k`` and at
    least two ``block_k``."""

    def __init__(self, variant: str, *, stages: int = 2, block_k: int = 32):
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if stages < 2:
            raise ValueError(f"stages must be >= 2, got {stages}")
        if block_k not in BLOCK_KS:
            raise ValueError(f"block_k must be one of {BLOCK_KS}, got {block_k}")
        self.variant, self.stages, self.block_k = variant, stages, block_k

    @property
    def params(self) -> dict:
        """The knobs that make it the kernel it is (for a case's ``params``)."""
        return {"variant": self.variant, "stages": self.stages, "block_k": self.block_k}

    def __call__(self, a, b, a_scale, b_scale, out, *, slack: int = 0) -> None:
        import cupy
        import numpy as np

        m, k = a.shape
        n = b.shape[0]
        self._check(a, b, a_scale, b_scale, out, m, n, k)
        device_index = out.device.index if out.device.index is not None else torch.cuda.current_device()
        kernel = _kernel(self.variant, self.stages, self.block_k, device_index)
        stream = torch.cuda.current_stream(out.device)
        with cupy.cuda.Device(device_index):
            kernel(
                (n // BLOCK_N, m // BLOCK_M),
                (THREADS,),
                (
                    np.uint64(a.data_ptr()),
                    np.uint64(b.data_ptr()),
                    np.uint64(a_scale.data_ptr()),
                    np.uint64(b_scale.data_ptr()),
                    np.uint64(out.data_ptr()),
                    np.int32(m),
                    np.int32(n),
                    np.int32(k),
                    np.int64(slack),
                ),
                shared_mem=shared_bytes(self.stages, self.block_k),
                stream=_cupy_stream(stream, device_index),
            )

    def _check(self, a, b, a_scale, b_scale, out, m, n, k) -> None:
        if a.dtype != torch.float8_e4m3fn or b.dtype != torch.float8_e4m3fn:
            raise ValueError(f"a and b must be float8_e4m3fn, got {a.dtype} and {b.dtype}")
        if b.shape[1] != k or tuple(out.shape) != (m, n) or out.dtype != torch.bfloat16:
            raise ValueError(
                f"expected a [M, K], b [N, K], out [M, N] bf16; got {list(a.shape)}, "
                f"{list(b.shape)}, {list(out.shape)} {out.dtype}"
            )
        if (
            a_scale.shape != (m,)
            or b_scale.shape != (n,)
            or a_scale.dtype != torch.float32
            or b_scale.dtype != torch.float32
        ):
            raise ValueError("a_scale must be fp32 [M] and b_scale fp32 [N] (ptpc)")
        if m % BLOCK_M or n % BLOCK_N or k % self.block_k or k < 2 * self.block_k:
            raise ValueError(
                f"M and N must be multiples of {BLOCK_M}, K a multiple of block_k={self.block_k} "
                f"and at least {2 * self.block_k}; got {m}x{n}x{k}"
            )
        for name, t in (("a", a), ("b", b), ("a_scale", a_scale), ("b_scale", b_scale), ("out", out)):
            if not t.is_contiguous() or not t.is_cuda or t.device != out.device:
                raise ValueError(f"{name} must be a contiguous tensor on {out.device}")
        if a.data_ptr() % 16 or b.data_ptr() % 16:
            raise ValueError("a and b must be 16-byte aligned (cp.async copies 16 bytes at a time)")
