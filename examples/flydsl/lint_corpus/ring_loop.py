"""A FlyDSL kernel with a runtime loop over a two-stage LDS ring, compiled for gfx950 and linted.

Four waves; each loads its 1 KiB slice of tile ``k`` into stage ``k % 2`` with
``buffer_load_dwordx4 ... lds`` and reads the next wave's slice of it after a barrier. The trip
count ``n_tiles`` is a kernel argument, so LLVM unrolls the loop by four and keeps a remainder
loop, and computes the stage with its own idioms (``s_and_b32 ..., 0x1000``, ``v_or_b32``, a
uniform branch through ``s_and_b64 vcc, exec, ...``): the compiler's shape of the code the
hand-written corpus imitates. ``racy`` leaves out the wait before each read's barrier.
The compiled assembly is committed as tests/compiled/data/ring_loop_{fixed,racy}.s.
"""

# No `from __future__ import annotations`: FlyDSL reads the kernel annotations as types.

WAVE_SIZE = 64
N_WAVES = 4
THREADS = N_WAVES * WAVE_SIZE
SLICE = WAVE_SIZE * 16  # one buffer_load_dwordx4 ... lds
STAGE = N_WAVES * SLICE


def build(variant: str = "fixed"):
    """The ``@flyc.jit`` launcher ``launch(A, C, n_tiles, stream)`` of the ring loop."""
    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import llvm
    from flydsl.expr import rocdl
    from flydsl.expr.typing import Vector

    racy = variant == "racy"

    def i32(value):
        return fx.Int32(value).ir_value()

    def lds_pointer(address):
        return llvm.inttoptr(ir.Type.parse("!llvm.ptr<3>"), fx.Int32(address).ir_value())

    @flyc.kernel(known_block_size=[THREADS, 1, 1])
    def ring_loop(A: fx.Tensor, C: fx.Tensor, n_tiles: fx.Int32):
        vec4_i32 = ir.VectorType.get([4], ir.IntegerType.get_signless(32))
        allocator = fx.SharedAllocator()
        ring = allocator.allocate(fx.Array[fx.Int8, 2 * STAGE, 16]).peek()
        base = fx.Int32(fx.ptrtoint(ring.ptr))
        tid = fx.thread_idx.x
        lane = tid % WAVE_SIZE
        wave = tid // WAVE_SIZE
        a_rsrc = rocdl.get_buffer_rsrc(fx.get_iter(rocdl.make_buffer_tensor(A)))
        c_rsrc = rocdl.get_buffer_rsrc(fx.get_iter(rocdl.make_buffer_tensor(C)))
        src = wave * SLICE + lane * 16

        def load_tile(k):
            stage = k % 2
            dst = base + stage * STAGE + wave * SLICE
            rocdl.raw_ptr_buffer_load_async_lds(a_rsrc, lds_pointer(dst), i32(16), i32(src), i32(k * STAGE), i32(0))

        load_tile(0)
        for k in range(n_tiles):
            load_tile(k + 1)
            if not racy:
                rocdl.s_waitcnt(vmcnt=1)
            rocdl.s_barrier()
            nxt = (wave + 1) % N_WAVES
            value = Vector(llvm.load(vec4_i32, lds_pointer(base + (k % 2) * STAGE + nxt * SLICE + lane * 16)))
            rocdl.raw_ptr_buffer_store(value.ir_value(), c_rsrc, i32(k * STAGE + src), i32(0))
            rocdl.s_waitcnt(lgkmcnt=0)
            rocdl.s_barrier()

    @flyc.jit
    def launch(A: fx.Tensor, C: fx.Tensor, n_tiles: fx.Int32, stream: fx.Stream):
        ring_loop(A, C, n_tiles).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)

    return launch


def compile_spec(variant: str = "fixed"):
    """The compile-only entry point: the launcher and host arguments to trace it with."""
    import torch

    launcher = build(str(variant))
    return launcher, (torch.zeros(1 << 20, dtype=torch.uint8), torch.zeros(1 << 20, dtype=torch.uint8), 8, None)
