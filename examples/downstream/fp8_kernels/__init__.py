"""fp8 GEMMs with per-token, per-channel (ptpc) scales.

``out[M, N] = bf16((A[M, K] * a_scale[M, None]) @ (B[N, K] * b_scale[N, None]).T)``

* :mod:`fp8_kernels.tail_gemm`: a FlyDSL kernel for gfx950 with a two-stage global->LDS pipeline
  and a peeled K tail, the kernel shape of the tail race this repository's test guards against;
* :mod:`fp8_kernels.torch_gemm`: the same GEMM in plain torch (dequantize, then matmul), which runs
  on any device: the stand-in where the FlyDSL kernel cannot run.
"""
