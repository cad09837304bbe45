"""An fp8 (ptpc) GEMM for gfx950 in FlyDSL: a two-stage global->LDS pipeline and a peeled K tail.

One 128x128 output tile per workgroup, four waves in a 2x2 grid, each wave a 64x64 sub-tile of
4x4 MFMA 16x16x128 tiles. Each K tile (128 fp8 columns) of A and of B is 16 KiB of LDS written by
``buffer_load_dwordx4 ... lds`` (the async LDS-DMA form: the compiler adds no wait of its own, so
the waits written here are all the ordering there is). The prologue issues tiles 0 and 1; main-loop
step ``k`` reads tile ``k``, refills its stage with tile ``k + 2`` and waits for tile ``k + 1``;
the last two K steps are peeled out of the loop, so at K=256 the loop runs zero times.

The tail is where the race of the bug report lived: it pre-reads the final K tile, and that read
must come after ``s_waitcnt vmcnt(0)`` + ``s_barrier`` (every wave wrote part of the tile), not
after a bare ``s_barrier``, which is a rendezvous, not a completion wait. The test compiles this
kernel for gfx950 and lints it for exactly that (no GPU needed), and runs it where a gfx950 GPU is.

M and N must be multiples of 128; K a multiple of 128, at least 256.
"""

# No `from __future__ import annotations`: FlyDSL reads the kernel annotations as types.
import importlib.metadata

BLOCK_M = BLOCK_N = 128
BLOCK_K = 128  # fp8 bytes per row of a K tile
N_WAVES = 4
WAVE_SIZE = 64
THREADS = N_WAVES * WAVE_SIZE
TILE_BYTES = BLOCK_M * BLOCK_K  # one operand's K tile
DMA_BYTES = WAVE_SIZE * 16  # one buffer_load_dwordx4 ... lds
LOADS_PER_OPERAND = TILE_BYTES // DMA_BYTES // N_WAVES  # per wave, per tile
LOADS_PER_STAGE = 2 * LOADS_PER_OPERAND  # A and B
IDENTITY_E8M0 = 0x7F7F7F7F  # four E8M0 scales of 1.0: the MFMA's block scales stay neutral
ARCH = "gfx950"


def check_shape(*, m: int = BLOCK_M, n: int = BLOCK_N, k: int) -> None:
    if m % BLOCK_M or n % BLOCK_N:
        raise ValueError(f"M and N must be multiples of {BLOCK_M}, got {m}x{n}")
    if k % BLOCK_K or k < 2 * BLOCK_K:
        raise ValueError(f"K must be a multiple of {BLOCK_K} and at least {2 * BLOCK_K}, got {k}")


def build(*, K: int):
    """The ``@flyc.jit`` launcher for a given K.

    ``launcher(A, B, C, a_scale, b_scale, M, N, stream)`` computes
    ``C[M, N] = bf16((A[M, K] @ B[N, K].T) * a_scale[M, None] * b_scale[None, N])`` for fp8 A and
    B passed as uint8 bytes, C as flat bf16.
    """
    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import llvm
    from flydsl.expr import range_constexpr, rocdl
    from flydsl.expr.typing import Vector

    check_shape(k=K)
    k_tiles = K // BLOCK_K

    def i32(value):
        return fx.Int32(value).ir_value()

    def lds_pointer(address):
        return llvm.inttoptr(ir.Type.parse("!llvm.ptr<3>"), fx.Int32(address).ir_value())

    def wait_then_barrier(vm_outstanding):
        # s_waitcnt vmcnt(n) retires all but this wave's n youngest loads; the barrier then
        # publishes that to the other waves. Every wave writes part of every tile.
        rocdl.s_waitcnt(vmcnt=vm_outstanding)
        rocdl.s_barrier()

    def reads_done_barrier():
        # LDS reads retire under lgkmcnt, which no vmcnt wait covers: drain them before the
        # barrier that lets any wave refill the stage they read.
        rocdl.s_waitcnt(lgkmcnt=0)
        rocdl.s_barrier()

    @flyc.kernel(known_block_size=[THREADS, 1, 1])
    def fp8_tail_gemm(
        A: fx.Tensor,
        B: fx.Tensor,
        C: fx.Tensor,
        a_scale: fx.Tensor,
        b_scale: fx.Tensor,
        m_size: fx.Int32,  # rows of C; the grid covers them, the kernel does no bounds checks
        n_size: fx.Int32,
    ):
        allocator = fx.SharedAllocator()
        # stage_tiles[stage] = (A tile, B tile), 16 KiB each
        stage_tiles = [
            [allocator.allocate(fx.Array[fx.Float8E4M3FN, TILE_BYTES, 16]).peek() for _ in range_constexpr(2)]
            for _ in range_constexpr(2)
        ]
        stage_base = [[fx.Int32(fx.ptrtoint(t.ptr)) for t in stage] for stage in stage_tiles]

        tid = fx.thread_idx.x
        lane = tid % WAVE_SIZE
        wave = tid // WAVE_SIZE
        wave_m = wave // 2
        wave_n = wave % 2
        n_blocks = n_size // BLOCK_N
        block_m = fx.block_idx.x // n_blocks
        block_n = fx.block_idx.x % n_blocks

        a_rsrc = rocdl.get_buffer_rsrc(fx.get_iter(rocdl.make_buffer_tensor(A)))
        b_rsrc = rocdl.get_buffer_rsrc(fx.get_iter(rocdl.make_buffer_tensor(B)))

        # Rows in LDS are XOR-swizzled in 16-byte chunks: LDS row r gets global row r, and LDS
        # chunk c of it holds global chunk c ^ (r % 8). The loads permute their source, the
        # reads undo it.
        def dma_source_offset(block_row, step):
            row = (step * N_WAVES + wave) * 8 + lane // 8
            chunk = (lane % 8) ^ (row % 8)
            return (block_row + row) * K + chunk * 16

        a_src = [dma_source_offset(block_m * BLOCK_M, s) for s in range_constexpr(LOADS_PER_OPERAND)]
        b_src = [dma_source_offset(block_n * BLOCK_N, s) for s in range_constexpr(LOADS_PER_OPERAND)]

        def load_tile(stage, k_tile):
            # Global -> LDS: each load writes DMA_BYTES at M0 + 16 * lane, M0 being this
            # wave's slice of the tile.
            for operand, rsrc, src in ((0, a_rsrc, a_src), (1, b_rsrc, b_src)):
                for step in range_constexpr(LOADS_PER_OPERAND):
                    dst = stage_base[stage][operand] + (step * N_WAVES + wave) * DMA_BYTES
                    rocdl.raw_ptr_buffer_load_async_lds(
                        rsrc, lds_pointer(dst), i32(16), i32(src[step]), i32(k_tile * BLOCK_K), i32(0)
                    )

        vec4_i32 = ir.VectorType.get([4], ir.IntegerType.get_signless(32))

        def read_chunk(base, row, chunk):
            return Vector(llvm.load(vec4_i32, lds_pointer(base + row * BLOCK_K + (chunk ^ (row % 8)) * 16)))

        def read_operand(base, wave_row0):
            # One MFMA operand per 16-row tile: lane l takes row l % 16 and 32 bytes of K.
            fragments = []
            for tile in range_constexpr(4):
                row = wave_row0 + tile * 16 + lane % 16
                chunk = (lane // 16) * 2
                lo = read_chunk(base, row, chunk)
                hi = read_chunk(base, row, chunk + 1)
                fragments.append(lo.shuffle(hi, list(range(8))))
            return fragments

        def read_stage(stage):
            return (
                read_operand(stage_base[stage][0], wave_m * 64),
                read_operand(stage_base[stage][1], wave_n * 64),
            )

        acc_type = ir.VectorType.get([4], ir.F32Type.get())

        def multiply(a_frags, b_frags, acc):
            return [
                [
                    rocdl.mfma_scale_f32_16x16x128_f8f6f4(
                        acc_type, [a_frags[i], b_frags[j], acc[i][j], 0, 0, 0, IDENTITY_E8M0, 0, IDENTITY_E8M0]
                    )
                    for j in range_constexpr(4)
                ]
                for i in range_constexpr(4)
            ]

        zero = Vector.filled(4, 0.0, fx.Float32)
        acc = [[zero for _ in range_constexpr(4)] for _ in range_constexpr(4)]

        # Prologue: tiles 0 and 1 in flight; tile 0 (the older half) landed everywhere.
        load_tile(0, 0)
        load_tile(1, 1)
        wait_then_barrier(LOADS_PER_STAGE)

        for k in range_constexpr(k_tiles - 2):
            stage = k % 2
            a_frags, b_frags = read_stage(stage)
            acc = multiply(a_frags, b_frags, acc)
            reads_done_barrier()
            load_tile(stage, k + 2)
            wait_then_barrier(LOADS_PER_STAGE)  # tile k + 1 landed; tile k + 2 may not have

        # Peeled tail: steps k_tiles - 2 and k_tiles - 1.
        stage = (k_tiles - 2) % 2
        a_frags, b_frags = read_stage(stage)
        wait_then_barrier(0)  # the final tile landed in every wave, before anyone pre-reads it
        a_last, b_last = read_stage(1 - stage)
        acc = multiply(a_frags, b_frags, acc)
        acc = multiply(a_last, b_last, acc)

        # Epilogue: C = bf16(acc * a_scale[row] * b_scale[col]). MFMA 16x16 output: lane l holds
        # column l % 16 and rows 4 * (l // 16) + 0..3 of its tile.
        c_rsrc = rocdl.get_buffer_rsrc(fx.get_iter(rocdl.make_buffer_tensor(C)))
        sa_rsrc = rocdl.get_buffer_rsrc(fx.get_iter(rocdl.make_buffer_tensor(a_scale)))
        sb_rsrc = rocdl.get_buffer_rsrc(fx.get_iter(rocdl.make_buffer_tensor(b_scale)))
        f32 = ir.F32Type.get()
        for i in range_constexpr(4):
            for j in range_constexpr(4):
                col = block_n * BLOCK_N + wave_n * 64 + j * 16 + lane % 16
                col_scale = fx.Float32(rocdl.raw_ptr_buffer_load(f32, sb_rsrc, i32(col * 4), i32(0)))
                values = Vector(acc[i][j])
                for r in range_constexpr(4):
                    row = block_m * BLOCK_M + wave_m * 64 + i * 16 + (lane // 16) * 4 + r
                    row_scale = fx.Float32(rocdl.raw_ptr_buffer_load(f32, sa_rsrc, i32(row * 4), i32(0)))
                    out = (values[r] * row_scale * col_scale).to(fx.BFloat16)
                    rocdl.raw_ptr_buffer_store(out.ir_value(), c_rsrc, i32((row * n_size + col) * 2), i32(0))

    @flyc.jit
    def launch(
        A: fx.Tensor,
        B: fx.Tensor,
        C: fx.Tensor,
        a_scale: fx.Tensor,
        b_scale: fx.Tensor,
        m_size: fx.Int32,
        n_size: fx.Int32,
        stream: fx.Stream,
    ):
        grid = (m_size // BLOCK_M) * (n_size // BLOCK_N)
        fp8_tail_gemm(A, B, C, a_scale, b_scale, m_size, n_size).launch(
            grid=(grid, 1, 1), block=(THREADS, 1, 1), stream=stream
        )

    return launch


def compile_tail_gemm(*, k: int):
    """``kern(a, b, out, a_scale, b_scale)`` for fp8 ``a`` [M, K], ``b`` [N, K] on a gfx950 GPU.

    Launches on the current stream of ``out``'s device, after whatever is queued there.
    """
    import torch

    k = int(k)
    launcher = build(K=k)

    def kern(a, b, out, a_scale, b_scale):
        m, n = out.shape
        if a.shape[1] != k or b.shape[1] != k:
            raise ValueError(f"compiled for K={k}, got A {tuple(a.shape)} and B {tuple(b.shape)}")
        check_shape(m=m, n=n, k=k)
        launcher(
            a.view(torch.uint8).reshape(-1),
            b.view(torch.uint8).reshape(-1),
            out.view(-1),
            a_scale,
            b_scale,
            m,
            n,
            torch.cuda.current_stream(out.device),
        )

    return kern


def compile_spec(K: int = 256, M: int = 256, N: int = 256):
    """Compile-only entry point (``FILE.py:compile_spec``): the launcher and host tensors to trace
    it with; under FlyDSL's ``COMPILE_ONLY=1`` nothing is launched."""
    import torch

    M, N, K = int(M), int(N), int(K)
    args = (
        torch.zeros(M * K, dtype=torch.uint8),
        torch.zeros(N * K, dtype=torch.uint8),
        torch.zeros(M * N, dtype=torch.bfloat16),
        torch.ones(M, dtype=torch.float32),
        torch.ones(N, dtype=torch.float32),
        M,
        N,
        None,
    )
    return build(K=K), args


def cannot_run_here() -> str | None:
    """Why this kernel cannot run on this machine, or None when it can (FlyDSL and a gfx950 GPU)."""
    try:
        importlib.metadata.distribution("flydsl")
    except importlib.metadata.PackageNotFoundError:
        return "FlyDSL is not installed (pip install flydsl)"
    import torch

    if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
        return "no AMD GPU here (FlyDSL kernels run on ROCm)"
    arch = torch.cuda.get_device_properties(torch.cuda.current_device()).gcnArchName.split(":", 1)[0]
    if arch != ARCH:
        return f"the kernel is written for {ARCH} (MFMA f8f6f4), this GPU is {arch}"
    return None
