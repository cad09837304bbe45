"""The space over which correct kernels must have zero wrong elements: shapes, quant modes and two
independent implementations of examples/cpu/kernels.py's tiled GEMM (fp32 accumulation forward in
K, fp64 backward). tests/checking/test_rule.py asserts it; benchmarks.false_positive_sweep
prints how far inside the rule each stays."""

import torch

# (m, n, k): powers of two, odd sizes, skinny and wide, K from 32 to 8192
SHAPES = [
    (64, 64, 32),
    (128, 128, 128),
    (256, 128, 256),
    (128, 256, 512),
    (96, 160, 1024),
    (100, 130, 2048),
    (1, 256, 4096),
    (256, 1, 4096),
    (17, 33, 8192),
    (64, 96, 8192),
    (200, 72, 96),
    (72, 200, 160),
    (129, 127, 384),
    (255, 257, 640),
    (33, 300, 1280),
    (300, 33, 1536),
    (48, 112, 2560),
    (112, 48, 3072),
    (160, 96, 6144),
    (8, 512, 7168),
    (128, 64, 8192),
    (3, 5, 64),
]
MODES = ["bf16", "fp8", "ptpc", "blockscale", "mxfp8"]
IMPLEMENTATIONS = {
    "fp32-forward": dict(acc=torch.float32, reverse_k=False),
    "fp64-reverse": dict(acc=torch.float64, reverse_k=True),
}
