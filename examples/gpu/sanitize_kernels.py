"""Kernels for compute-sanitizer on NVIDIA, each with what it should find (docs/sanitize.md).

* ``tail-racy``: the cp.async tail GEMM of racy_gemm.cu, with a window (``slack``) wide enough
  that its launches pass on an idle GPU, 12 of 12 at 512x512x256 on the H200; racecheck still
  reports the RAW hazard of its pre-read (invalid memcpy_async synchronization).
* ``tail-fixed``: its fixed twin: nothing to report.
* ``past-end``: a plain ptpc GEMM whose epilogue stores the last element twice, the second time
  one element past the end of ``out``: the output is right, and memcheck reports an invalid
  __global__ write of 2 bytes, 1 byte after the allocation (with PyTorch's caching allocator
  off, ``PYTORCH_NO_CUDA_MEMORY_CACHING=1``; with it on, the write lands in a pooled block).

Each is a launch ``kernel(a, b, a_scale, b_scale, out)`` on fp8 e4m3fn ``a`` [M, K], ``b``
[N, K], fp32 ``a_scale`` [M], ``b_scale`` [N] and a bf16 ``out`` [M, N] (M and N multiples of
64, K a multiple of 32 and at least 64), for a case's ``run``. By hand, one launch::

    compute-sanitizer --tool racecheck python examples/gpu/sanitize_kernels.py tail-racy
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck \\
        python examples/gpu/sanitize_kernels.py past-end
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import racy_gemm  # noqa: E402
from racy_gemm import unavailable_reason  # noqa: E402,F401  (the same needs: sm_80+, CuPy)

# Spun between the tail's last copy issue and its pre-read: idle, the final tile lands in time
# (benchmarks/sanitize_record.py idle12: 0 of 12 launches differ from the fixed twin at 2,000
# cycles and at 20,000), so only the sanitizer tells the racy variant from the fixed one.
IDLE_SAFE_SLACK = 20000
THREADS = 256

# Appended to racy_gemm.cu, for its fp8 decode and bf16 rounding.
_PAST_END = r"""
extern "C" __global__ void __launch_bounds__(256)
past_end_gemm(const u8* __restrict__ A, const u8* __restrict__ B, const float* __restrict__ a_scale,
              const float* __restrict__ b_scale, u16* __restrict__ out, int M, int N, int K) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long total = (long long)M * N;
    if (i >= total) return;
    const int row = (int)(i / N), column = (int)(i % N);
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)  // in K order: every launch adds in the same order
        acc = fmaf(e4m3fn_to_float(A[(size_t)row * K + k]), e4m3fn_to_float(B[(size_t)column * K + k]), acc);
    const u16 value = float_to_bf16_bits(acc * a_scale[row] * b_scale[column]);
    out[i] = value;
    if (i == total - 1) out[i + 1] = value;  // BUG: the last element stored once more, past the end
}
"""


class TailGemm(racy_gemm.TailGemm):
    """racy_gemm's tail GEMM with the idle-safe window by default."""

    def __call__(self, a, b, a_scale, b_scale, out, *, slack: int = IDLE_SAFE_SLACK) -> None:
        super().__call__(a, b, a_scale, b_scale, out, slack=slack)


@functools.lru_cache(maxsize=None)
def _past_end_kernel(device_index: int):
    import cupy

    with cupy.cuda.Device(device_index):
        module = cupy.RawModule(code=racy_gemm.SOURCE.read_text() + _PAST_END, options=("--std=c++17",))
        return module.get_function("past_end_gemm")


class PastEndGemm:
    """``PastEndGemm()(a, b, a_scale, b_scale, out)``: the right ``out``, and one bf16 element
    written past its end."""

    params = {"variant": "past-end"}

    def __call__(self, a, b, a_scale, b_scale, out) -> None:
        import cupy
        import numpy as np

        m, k = a.shape
        n = b.shape[0]
        if tuple(out.shape) != (m, n) or out.dtype != torch.bfloat16 or not out.is_contiguous():
            raise ValueError(f"out must be a contiguous bf16 [{m}, {n}], got {list(out.shape)} {out.dtype}")
        device_index = out.device.index if out.device.index is not None else torch.cuda.current_device()
        kernel = _past_end_kernel(device_index)
        blocks = (m * n + THREADS - 1) // THREADS
        with cupy.cuda.Device(device_index):
            kernel(
                (blocks,),
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
                ),
                stream=racy_gemm._cupy_stream(torch.cuda.current_stream(out.device), device_index),
            )


# name -> (the launch, the tool that should report it; None: nothing to report)
KERNELS = {
    "tail-racy": (lambda: TailGemm("racy"), "racecheck"),
    "tail-fixed": (lambda: TailGemm("fixed"), None),
    "past-end": (PastEndGemm, "memcheck"),
}


def operands(m: int, n: int, k: int, seed: int = 0):
    """Seeded ptpc operands on the GPU, as benchmarks/sanitize_record.py makes them."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = (torch.randn(m, k, generator=g) * 0.5).to(torch.float8_e4m3fn).cuda()
    b = (torch.randn(n, k, generator=g) * 0.5).to(torch.float8_e4m3fn).cuda()
    a_scale = torch.rand(m, generator=g).cuda() + 0.5
    b_scale = torch.rand(n, generator=g).cuda() + 0.5
    return a, b, a_scale, b_scale


def main() -> None:
    parser = argparse.ArgumentParser(description="One launch of a kernel, to run under compute-sanitizer.")
    parser.add_argument("kernel", choices=sorted(KERNELS))
    parser.add_argument("--shape", type=int, nargs=3, default=(512, 512, 256), metavar=("M", "N", "K"))
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot run here: {reason}")
    m, n, k = args.shape
    a, b, a_scale, b_scale = operands(m, n, k)
    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    KERNELS[args.kernel][0]()(a, b, a_scale, b_scale, out)
    torch.cuda.synchronize()
    print(f"{args.kernel} {m}x{n}x{k}: finite: {bool(torch.isfinite(out.float()).all())}")


if __name__ == "__main__":
    main()
