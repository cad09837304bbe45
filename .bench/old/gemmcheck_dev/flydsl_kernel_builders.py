"""Compile-only entry points for the kernels of a FlyDSL checkout, one default configuration each.

Each builder takes nothing and returns ``(launcher, args)`` as ``gemmcheck lint`` and
``pytest_gemmcheck.compiled.flydsl.compile`` expect: the launcher is called once with the
arguments under ``COMPILE_ONLY=1``, which traces and compiles the kernel(s) and launches nothing,
so CPU tensors and ``stream=None`` are enough. The configurations follow the shapes FlyDSL's own
tests and benchmarks use (``tests/kernels/test_*.py``), kept small where a size is a runtime value.

The FlyDSL checkout (the directory holding ``kernels/``) is named by ``root``; its modules are
imported from there. Nothing of FlyDSL is copied here: only calls of its public builders.

    python -m pytest_gemmcheck.compiled.flydsl.compile gemmcheck_dev/flydsl_kernel_builders.py:spec \\
        --param kernel=fp8_gemm_8wave --param root=/path/to/FlyDSL
"""

# No `from __future__ import annotations`: FlyDSL reads annotations of what it traces as types.

import os
import sys

ARCHS = ("gfx950", "gfx942")


def _torch():
    import torch

    return torch


def _zeros(n, dtype=None):
    torch = _torch()
    return torch.zeros(int(n), dtype=dtype or torch.uint8)


def _ptr(tensor, elem=None):
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    return flyc.from_c_void_p(elem or fx.Uint8, tensor.data_ptr())


# ---------------------------------------------------------------- GEMMs


def _fp8_rowscale(module, func, M=256, N=256, K=1024, **kw):
    """FlyDSL's fp8/fp4 row-scale GEMMs: launch(A, B_T, C, A_scale, B_scale, M, N, stream)."""
    import importlib

    torch = _torch()
    build = getattr(importlib.import_module(module), func)
    launcher = build(K=K, **kw)
    fp4 = "fp4" in module
    a_bytes = M * K // 2 if fp4 else M * K
    b_bytes = N * K // 2 if fp4 else N * K
    scale_a = _zeros(M * K // 32) if fp4 else torch.ones(M, dtype=torch.float32)
    scale_b = _zeros(N * K // 32) if fp4 else torch.ones(N, dtype=torch.float32)
    args = (_zeros(a_bytes), _zeros(b_bytes), _zeros(M * N, torch.bfloat16), scale_a, scale_b, M, N, None)
    return launcher, args


def fp8_gemm_8wave():
    return _fp8_rowscale("kernels.gemm.fp8_gemm_8wave", "compile_fp8_gemm_8w", BLOCK_M=256, BLOCK_N=256)


def fp8_gemm_8wave_preshuffle_b():
    return _fp8_rowscale("kernels.gemm.fp8_gemm_8wave", "compile_fp8_gemm_8w", b_preshuffled=True)


def fp8_gemm_4wave():
    return _fp8_rowscale("kernels.gemm.fp8_gemm_4wave", "compile_fp8_gemm_4w", BLOCK_M=256, BLOCK_N=256)


def fp4_gemm_4wave():
    M = N = 256
    return _fp8_rowscale("kernels.gemm.fp4_gemm_4wave", "compile_fp4_gemm_4w", M=M, N=N, K=2048, MN=(M, N))


def _a16w16(M=512, N=512, K=1024, **kwargs):
    """gemm_a16w16_gfx950 as its host wrapper calls it (layout nt, bf16), one config."""
    import flydsl.compiler as flyc
    from kernels.gemm import gemm_a16w16_gfx950 as g

    torch = _torch()
    a = torch.zeros((M, K), dtype=torch.bfloat16)
    b = torch.zeros((N, K), dtype=torch.bfloat16).t()  # [K, N], column-major: layout "nt"
    out = torch.zeros((M, N), dtype=torch.bfloat16)
    params = dict(
        block_m=256,
        block_n=256,
        block_k=64,
        stages=2,
        split_k=1,
        m_waves=2,
        n_waves=4,
        k_waves=1,
        group_m=0,
        use_half_tile_interleaved=False,
    )
    params.update(kwargs)
    params.update(
        a_is_transposed=False,
        b_is_transposed=True,
        in_dtype_id=g.GEMM_A16W16_DTYPE_BF16,
        out_dtype_id=g.GEMM_A16W16_DTYPE_BF16,
        has_bias=False,
    )
    g.make_gemm_a16w16_gfx950_param(**params)  # raises with the reason a configuration is refused
    param = g.make_gemm_a16w16_param_and_validate(M, N, K, params)
    if param is None:
        raise ValueError(f"gemm_a16w16_gfx950 refuses M={M} N={N} K={K} for {params}")
    semaphore = torch.zeros(256, dtype=torch.int32)
    signal = torch.zeros(256, dtype=torch.int32)

    def dyn(t, leading):
        return flyc.from_dlpack(t).mark_layout_dynamic(leading_dim=leading)

    a_arg, b_arg, out_arg = dyn(a, 1), dyn(b, 0), dyn(out, 1)
    return g.gemm_a16w16_gfx950, (out_arg, a_arg, b_arg, a_arg, semaphore, signal, 1, param, None)


def a16w16():
    return _a16w16()


def a16w16_hti():
    return _a16w16(use_half_tile_interleaved=True)


def a16w16_3stage():
    return _a16w16(block_m=128, block_n=128, stages=3, m_waves=2, n_waves=2)


def _preshuffle(use_async_copy, M=32, N=1024, K=2048, tile_m=32, tile_n=64, tile_k=512, in_dtype="fp8"):
    from kernels.gemm.preshuffle_gemm import compile_preshuffle_gemm

    torch = _torch()
    launcher = compile_preshuffle_gemm(
        N=N,
        K=K,
        tile_m=tile_m,
        tile_n=tile_n,
        tile_k=tile_k,
        in_dtype=in_dtype,
        out_dtype="bf16",
        use_async_copy=use_async_copy,
    )
    args = (
        _zeros(M * N, torch.bfloat16),
        _zeros(M * K),
        _zeros(N * K),
        torch.ones(M, dtype=torch.float32),
        torch.ones(N, dtype=torch.float32),
        _zeros(N, torch.bfloat16),
        M,
        N,
        None,
    )
    return launcher, args


def preshuffle_sync():
    return _preshuffle(False)


def preshuffle_async():
    return _preshuffle(True)


def mxfp4_preshuffle(M=64, N=8192, K=8192, tile_m=64, tile_n=128, tile_k=128):
    from kernels.gemm.mxfp4_preshuffle import launch_gemm

    torch = _torch()
    c, a, b = _zeros(M * N, torch.bfloat16), _zeros(M * K // 2), _zeros(N * K // 2)
    sa, sb = _zeros(M * K // 32), _zeros(N * K // 32)
    args = (
        _ptr(c),
        _ptr(a),
        _ptr(b),
        _ptr(sa),
        _ptr(sb),
        M,
        N,
        None,
        N,
        K,
        tile_m,
        tile_n,
        tile_k,
        "fp4",
        "bf16",
        "fp4",
        1,
        -1,
        -1,
        -1,
        -1,
        -1,
        -1,
        0,
        0,
    )
    keep = (c, a, b, sa, sb)  # the pointers must outlive the call

    def launch(*a):
        return launch_gemm(*a) if keep else None

    return launch, args


# ---------------------------------------------------------------- attention


def _attention(build, B=1, S=512, H=8, Hkv=None, D=128, dtype=None, **kw):
    torch = _torch()
    Hkv = Hkv or H
    dtype = dtype or torch.bfloat16
    launcher = build(H, D, num_kv_heads=Hkv, **kw)
    q = torch.zeros(B * S * H * D, dtype=dtype)
    k = torch.zeros(B * S * Hkv * D, dtype=dtype)
    v = torch.zeros(B * S * Hkv * D, dtype=dtype)
    o = torch.zeros(B * S * H * D, dtype=torch.bfloat16 if dtype.itemsize == 1 else dtype)
    return launcher, (q, k, v, o, B, S)


def flash_attn_950_d128():
    from kernels.attention.flash_attn_gfx950 import build_flash_attn_dualwave_swp_module as build

    return _attention(build, D=128, causal=True, dtype_str="bf16")


def flash_attn_950_d64():
    from kernels.attention.flash_attn_gfx950 import build_flash_attn_dualwave_swp_module as build

    return _attention(build, D=64, causal=True, dtype_str="bf16")


def flash_attn_fp8_950():
    from kernels.attention.flash_attn_fp8_gfx950 import build_flash_attn_dualwave_swp_fp8_module as build

    torch = _torch()
    launcher, (q, k, v, o, B, S) = _attention(build, D=128, causal=True, dtype_str="fp8", dtype=torch.float8_e4m3fn)
    return launcher, (q.view(torch.uint8), k.view(torch.uint8), v.view(torch.uint8), o, B, S)


def flash_attn_generic():
    from kernels.attention.flash_attn_generic import build_flash_attn_func_module_primary as build

    return _attention(build, D=128, causal=True, dtype_str="f16", dtype=_torch().float16)


# ---------------------------------------------------------------- norms


def layernorm(M=64, N=8192):
    import flydsl.expr as fx
    from kernels.norm.layernorm_kernel import build_layernorm_module

    torch = _torch()
    launcher = build_layernorm_module(N, "bf16")
    x, g, b, y = (
        _zeros(M * N, torch.bfloat16),
        _zeros(N, torch.bfloat16),
        _zeros(N, torch.bfloat16),
        _zeros(M * N, torch.bfloat16),
    )
    keep = (x, g, b, y)

    def launch(*a):
        return launcher(*a) if keep else None

    return launch, (_ptr(x, fx.BFloat16), _ptr(g, fx.BFloat16), _ptr(b, fx.BFloat16), _ptr(y, fx.BFloat16), M, None)


def rmsnorm(M=64, N=8192):
    from kernels.norm.rmsnorm_kernel import build_rmsnorm_module

    torch = _torch()
    launcher = build_rmsnorm_module(N, "bf16")
    x, y = torch.zeros((M, N), dtype=torch.bfloat16), torch.zeros((M, N), dtype=torch.bfloat16)
    return launcher, (x, _zeros(N, torch.bfloat16), y, M, None)


def softmax(M=64, N=8192):
    from kernels.norm.softmax_kernel import build_softmax_module

    torch = _torch()
    launcher = build_softmax_module(M, N, "bf16")
    return launcher, (torch.zeros((M, N), dtype=torch.bfloat16), torch.zeros((M, N), dtype=torch.bfloat16), M, None)


# ---------------------------------------------------------------- MoE, paged attention, conv

_MOE = dict(model_dim=256, inter_dim=128, experts=4, topk=2)  # FlyDSL's test_moe_gemm_2stage shape


def _moe(stage, tokens=128, tile_m=64, tile_n=64, tile_k=128, in_dtype="fp8"):
    torch = _torch()
    s = _MOE
    blocks = (tokens * s["topk"] + tile_m - 1) // tile_m + s["experts"]
    slots = blocks * tile_m
    if stage == 1:
        from kernels.moe.moe_gemm_2stage.gemm1 import compile_moe_gemm1

        launcher = compile_moe_gemm1(
            **s, tile_m=tile_m, tile_n=tile_n, tile_k=tile_k, doweight_stage1=False, out_dtype="bf16", in_dtype=in_dtype
        )
        out = torch.zeros(tokens * s["topk"] * s["inter_dim"], dtype=torch.bfloat16)
        x, w = _zeros(tokens * s["model_dim"]), _zeros(s["experts"] * 2 * s["inter_dim"] * s["model_dim"])
        scale_x, scale_w = (
            torch.ones(tokens, dtype=torch.float32),
            torch.ones(s["experts"] * 2 * s["inter_dim"], dtype=torch.float32),
        )
        n, k = s["inter_dim"], s["model_dim"]
    else:
        from kernels.moe.moe_gemm_2stage.gemm2 import compile_moe_gemm2

        launcher = compile_moe_gemm2(
            **s,
            tile_m=tile_m,
            tile_n=tile_n,
            tile_k=tile_k,
            doweight_stage2=True,
            out_dtype="bf16",
            accumulate=True,
            in_dtype=in_dtype,
        )
        out = torch.zeros(tokens * s["model_dim"], dtype=torch.bfloat16)
        x, w = _zeros(tokens * s["topk"] * s["inter_dim"]), _zeros(s["experts"] * s["model_dim"] * s["inter_dim"])
        scale_x = torch.ones(tokens * s["topk"], dtype=torch.float32)
        scale_w = torch.ones(s["experts"] * s["model_dim"], dtype=torch.float32)
        n, k = s["model_dim"], s["inter_dim"]
    sorted_ids = torch.zeros(slots, dtype=torch.int32)
    expert_ids = torch.zeros(blocks, dtype=torch.int32)
    sorted_w = torch.ones(slots, dtype=torch.float32)
    valid = torch.tensor([slots], dtype=torch.int32)
    return launcher, (out, x, w, scale_x, scale_w, sorted_ids, expert_ids, sorted_w, valid, tokens, n, k, blocks, None)


def moe_gemm1():
    return _moe(1)


def moe_gemm2():
    return _moe(2)


def pa_decode_tile(num_seqs=4, num_kv_heads=8, group=8, head_dim=128, block_size=16, max_blocks=64):
    from kernels.attention.pa_decode_tile import compile_pa_decode_tile

    torch = _torch()
    built = compile_pa_decode_tile(
        head_dim=head_dim, query_group_size=group, block_size=block_size, num_partitions=1, query_dtype="bf16"
    )
    hq = num_kv_heads * group
    num_blocks = num_seqs * max_blocks
    query = torch.zeros((num_seqs, hq, head_dim), dtype=torch.bfloat16)
    output = torch.zeros_like(query)
    key_cache = torch.zeros((num_blocks, num_kv_heads, head_dim // 16, block_size, 16), dtype=torch.uint8)
    value_cache = torch.zeros((num_blocks, num_kv_heads, block_size // 16, head_dim, 16), dtype=torch.uint8)
    tables = torch.zeros((num_seqs, max_blocks), dtype=torch.int32)
    lengths = torch.full((num_seqs,), block_size * max_blocks, dtype=torch.int32)
    scale = torch.ones(1, dtype=torch.float32)
    part = torch.zeros(1, dtype=torch.float32)
    return built["launch"], (
        output,
        part,
        part,
        part,
        query,
        key_cache,
        value_cache,
        tables,
        lengths,
        scale,
        scale,
        max_blocks,
        num_seqs,
        num_kv_heads,
        0,
        0,
        query.stride(0),
        query.stride(1),
        None,
    )


def mla_decode_fp8(batch=4, heads=16, ctx=1024, num_cus=256):
    """MLA decode (fp8 Q and KV, 16 heads x 8 rows per tile): its launcher with placeholder work lists."""
    from kernels.attention.mla_fwd_decode_m16x8_fp8_fp8 import launch_mla_fwd_decode_m16x8_fp8_fp8 as launch

    torch = _torch()
    d_qk, d_v = 576, 512
    lds_size = 160 * 1024 if "gfx95" in os.environ.get("ARCH", "gfx950") else 64 * 1024
    query = _zeros(batch * heads * d_qk)
    kv = _zeros(batch * ctx * d_qk)
    pages = torch.zeros(batch * ctx, dtype=torch.int32)
    work_indptr = torch.zeros(num_cus + 1, dtype=torch.int32)
    work_info = torch.zeros(num_cus * 8, dtype=torch.int32)
    out = torch.zeros(batch * heads * d_v, dtype=torch.bfloat16)
    split_out = torch.zeros(num_cus * heads * d_v, dtype=torch.float32)
    split_lse = torch.zeros(num_cus * heads, dtype=torch.float32)
    return launch, (query, kv, pages, work_indptr, work_info, out, split_out, split_lse, 0.04, num_cus, lds_size, None)


def conv3d_implicit(n=1, c=32, d=8, h=16, w=16, k=64):
    from kernels.conv.conv3d_implicit import compile_conv3d_implicit

    torch = _torch()
    launcher = compile_conv3d_implicit(n, c, d, h, w, k, 3, 3, 3, 1, 1, 1, 1, 1, 1)
    y = torch.zeros((n, k, d, h, w), dtype=torch.bfloat16)
    x = torch.zeros((n, d, h, w, c), dtype=torch.bfloat16)
    weight = torch.zeros((k, 27 * c), dtype=torch.bfloat16)
    return launcher, (y, x, weight, torch.zeros(1, dtype=torch.float32), None)


# ---------------------------------------------------------------- registry

#: name -> (builder, archs it is written for, configuration in words)
BUILDERS = {
    "a16w16": (a16w16, ("gfx950",), "bf16 nt, M=N=512 K=1024, 256x256x64 tiles, 2 stages, 8 waves"),
    "a16w16_hti": (a16w16_hti, ("gfx950",), "as a16w16, half-tile interleaved (HTI)"),
    "a16w16_3stage": (a16w16_3stage, ("gfx950",), "bf16 nt, M=N=512 K=1024, 128x128x64 tiles, 3 stages, 4 waves"),
    "fp8_gemm_8wave": (fp8_gemm_8wave, ("gfx950",), "M=N=256 K=1024, 256x256 tiles, row-major B"),
    "fp8_gemm_8wave_preshuffle_b": (fp8_gemm_8wave_preshuffle_b, ("gfx950",), "as fp8_gemm_8wave, preshuffled B"),
    "fp8_gemm_4wave": (fp8_gemm_4wave, ("gfx950",), "M=N=256 K=1024, 256x256 tiles"),
    "fp4_gemm_4wave": (fp4_gemm_4wave, ("gfx950",), "M=N=256 K=2048"),
    "preshuffle_sync": (preshuffle_sync, ARCHS, "fp8, M=32 N=1024 K=2048, 32x64x512 tiles, sync copy"),
    "preshuffle_async": (preshuffle_async, ARCHS, "as preshuffle_sync, async (DMA) copy"),
    "mxfp4_preshuffle": (mxfp4_preshuffle, ("gfx950",), "a fp4 b fp4, M=64 N=K=8192, 64x128x128 tiles"),
    "flash_attn_950_d128": (flash_attn_950_d128, ("gfx950",), "dual-wave, bf16, causal, B=1 S=512 H=8 D=128"),
    "flash_attn_950_d64": (flash_attn_950_d64, ("gfx950",), "dual-wave, bf16, causal, B=1 S=512 H=8 D=64"),
    "flash_attn_fp8_950": (flash_attn_fp8_950, ("gfx950",), "dual-wave, fp8, causal, B=1 S=512 H=8 D=128"),
    "flash_attn_generic": (flash_attn_generic, ARCHS, "f16, causal, B=1 S=512 H=8 D=128"),
    "layernorm": (layernorm, ARCHS, "bf16, M=64 N=8192"),
    "rmsnorm": (rmsnorm, ARCHS, "bf16, M=64 N=8192"),
    "softmax": (softmax, ARCHS, "bf16, M=64 N=8192"),
    "moe_gemm1": (
        moe_gemm1,
        ARCHS,
        "2-stage MoE gate-up, fp8, model 256 inter 128, 4 experts top-2, 128 tokens, 64x64x128",
    ),
    "moe_gemm2": (moe_gemm2, ARCHS, "2-stage MoE down, fp8, same shape, accumulate"),
    "pa_decode_tile": (
        pa_decode_tile,
        ARCHS,
        "paged-attention decode, bf16 query, fp8 KV, D=128, 8 KV heads x 8, block 16",
    ),
    "mla_decode_fp8": (mla_decode_fp8, ARCHS, "MLA decode, fp8 Q/KV, 16 heads, D=576/512, 256 work slots"),
    "conv3d_implicit": (conv3d_implicit, ARCHS, "bf16 implicit GEMM, 1x32x8x16x16, 64 filters 3x3x3, pad 1"),
}


def spec(kernel: str, root: str = ""):
    """The compile-only entry point: ``kernel`` names a builder, ``root`` the FlyDSL checkout."""
    root = root or os.environ.get("FLYDSL_ROOT", "")
    if root:
        root = os.path.abspath(root)
        if root not in sys.path:
            sys.path.insert(0, root)
    if kernel not in BUILDERS:
        raise ValueError(f"no builder {kernel!r}; there are {', '.join(BUILDERS)}")
    return BUILDERS[kernel][0]()
