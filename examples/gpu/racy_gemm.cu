// An fp8 (ptpc) GEMM with a cp.async multi-stage pipeline and a peeled tail, in two variants
// that differ in one place: where the tail waits for the final K tile.
//
//   out[M, N] = bf16((A[M, K] @ B[N, K]^T) * a_scale[M, None] * b_scale[None, N])
//
// A and B are float8_e4m3fn bytes, row-major with K innermost (B transposed, as GEMM kernels
// take it); the scales are fp32; out is bf16 bits. The arithmetic is plain fp32 FMA on CUDA
// cores (fp8 decoded through a table in shared memory): the pipeline, not the math, is the
// subject. Compile-time knobs (-D): STAGES (>= 2), BLOCK_K (16, 32, 64 or 128) and FIXED (0 for
// the racy variant, 1 for its fixed twin). Runtime knob: `slack`, SM clock cycles spun between
// the tail's last copy issue and its pre-read (the window the final tile has to land in).
//
// The pipeline. Each 64x64 output tile is one block of 256 threads (a 16x16 grid, each thread a
// 4x4 micro-tile of rows ty+16i, columns tx+16j). K is walked in tiles of BLOCK_K bytes. Every
// thread copies part of every tile (16 bytes per cp.async.cg), so each thread reads bytes that
// other threads' copies wrote: only cp.async.wait_group (this thread's copies complete) followed
// by __syncthreads (everyone's) makes a tile safe to read. The prologue issues tiles
// 0..STAGES-2; step kt waits for tile kt, refills the stage read at step kt-1 with tile
// kt+STAGES-1, and computes tile kt. The last two steps are peeled out of the loop; with
// K = 2*BLOCK_K the loop runs zero times and only the tail's waits exist.
//
// The bug (FIXED=0), the class of shared/background/seed-ptpc-tail-race.md: at step K-2 the
// tail pre-reads the first 16-byte slice of the FINAL tile into registers -- software
// pipelining of register fragments, as real kernels do -- after a bare __syncthreads. A barrier
// is a rendezvous, not a completion wait: it drains no cp.async, so the pre-read can return the
// stage's previous contents (tile K-1-STAGES, or whatever an earlier block left there). The
// wait that covers those copies comes one step later, too late for the pre-read. The fixed
// twin puts cp.async.wait_group 0 before that barrier; nothing else differs.
//
// When the race shows: the final tile's copies were issued (STAGES-1) compute steps plus
// `slack` cycles before the pre-read. Idle, L2-resident operands land in well under a
// microsecond; under a copy load that evicts L2 and saturates DRAM they take several. So small
// windows race on every launch, large ones never, and in between there are settings that are
// clean on an idle GPU and corrupt under stress (benchmarks/gpu_measure.py sweeps them).

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#ifndef STAGES
#define STAGES 2
#endif
#ifndef BLOCK_K
#define BLOCK_K 32
#endif
#ifndef FIXED
#define FIXED 0
#endif

#define BLOCK_M 64
#define BLOCK_N 64
#define THREADS 256
#define SLICE 16                             // K bytes per slice: one cp.async chunk, one uint4 per row
#define SLICES (BLOCK_K / SLICE)
#define ROW_BYTES (BLOCK_K + 16)             // padded: 16-byte aligned for cp.async, rows shift banks
#define TILE_BYTES (BLOCK_M * ROW_BYTES)     // one operand's K tile (BLOCK_M == BLOCK_N)
#define STAGE_BYTES (2 * TILE_BYTES)         // A tile, then B tile
#define LUT_BYTES 1024                       // 256 floats: fp8 e4m3fn -> fp32
#define SMEM_BYTES (LUT_BYTES + STAGES * STAGE_BYTES)
#define TILE_CHUNKS (BLOCK_M * SLICES)       // 16-byte copies per operand per tile

#if STAGES < 2
#error "STAGES must be at least 2"
#endif
#if BLOCK_K % SLICE != 0 || BLOCK_K < SLICE
#error "BLOCK_K must be a positive multiple of 16"
#endif

// --- the GPU primitives: cp.async, the SM clock, a compiler fence ---------------------------
// racy_gemm_emulation.cpp defines CPU stand-ins for exactly these and includes this file, so
// that the tests can run the kernel's logic without a GPU.
#ifndef TAIL_GEMM_EMULATION
#define DYNAMIC_SHARED(name) extern __shared__ __align__(16) u8 name[]

__device__ __forceinline__ u32 shared_address(const void* pointer) {
    u32 address;
    asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(address) : "l"(pointer));
    return address;
}

// 16 bytes global -> shared, asynchronously, bypassing L1 (.cg).
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(shared_dst)), "l"(global_src)
                 : "memory");
}

// Closes the group of this thread's cp.async issued since the last commit (possibly empty).
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most N of this thread's committed groups are pending: every older group's
// copies are complete and visible to THIS thread. Other threads need a barrier after it.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ long long clock_now() {
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    return t;
}

// Keeps the compiler from moving memory accesses across this point.
__device__ __forceinline__ void compiler_fence() { asm volatile("" ::: "memory"); }
#endif  // TAIL_GEMM_EMULATION
// ------------------------------------------------------------------------------------------

__device__ __forceinline__ void spin(long long cycles) {
    if (cycles <= 0) return;
    const long long start = clock_now();
    while (clock_now() - start < cycles) {
    }
}

__device__ __forceinline__ float e4m3fn_to_float(u32 byte) {
    const u32 sign = (byte & 0x80u) << 24;
    const u32 exponent = (byte >> 3) & 0xFu;
    const u32 mantissa = byte & 0x7u;
    if (exponent == 0xFu && mantissa == 0x7u) return __uint_as_float(sign | 0x7FC00000u);  // NaN
    const float magnitude = exponent == 0
        ? (float)mantissa * 0.001953125f                                    // subnormal: m/8 * 2^-6
        : __uint_as_float(((exponent + 120u) << 23) | (mantissa << 20));   // (1 + m/8) * 2^(e-7)
    return sign ? -magnitude : magnitude;
}

__device__ __forceinline__ u16 float_to_bf16_bits(float value) {  // round to nearest even
    u32 bits = __float_as_uint(value);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (u16)((bits >> 16) | 0x40u);  // quiet NaN
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return (u16)(bits >> 16);
}

__device__ __forceinline__ u8* stage_at(u8* stages, int tile) { return stages + (tile % STAGES) * STAGE_BYTES; }

// This thread's share of tile `tile` of A's rows m0.. and B's rows n0.. into `stage`.
__device__ __forceinline__ void issue_tile(u8* stage, const u8* A, const u8* B, int K, int m0, int n0, int tile) {
    const int k0 = tile * BLOCK_K;
    for (int chunk = threadIdx.x; chunk < TILE_CHUNKS; chunk += THREADS) {
        const int row = chunk / SLICES;
        const int column = (chunk % SLICES) * SLICE;
        cp_async_16(stage + row * ROW_BYTES + column, A + (size_t)(m0 + row) * K + k0 + column);
        cp_async_16(stage + TILE_BYTES + row * ROW_BYTES + column, B + (size_t)(n0 + row) * K + k0 + column);
    }
}

struct Slice {  // 16 K bytes of this thread's 4 rows of A and 4 rows of B
    uint4 a[4];
    uint4 b[4];
};

__device__ __forceinline__ void read_slice(const u8* stage, int slice, Slice& s) {
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        s.a[i] = *reinterpret_cast<const uint4*>(stage + (ty + 16 * i) * ROW_BYTES + slice * SLICE);
        s.b[i] = *reinterpret_cast<const uint4*>(stage + TILE_BYTES + (tx + 16 * i) * ROW_BYTES + slice * SLICE);
    }
}

__device__ __forceinline__ u32 word(const uint4& v, int w) { return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w; }

// acc += the slice's 16 K steps, in K order (so every launch adds in the same order).
__device__ __forceinline__ void multiply_slice(const float* lut, const Slice& s, float acc[4][4]) {
#pragma unroll
    for (int w = 0; w < 4; ++w) {
#pragma unroll
        for (int byte = 0; byte < 4; ++byte) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                a[i] = lut[(word(s.a[i], w) >> (8 * byte)) & 0xFFu];
                b[i] = lut[(word(s.b[i], w) >> (8 * byte)) & 0xFFu];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
    }
}

__device__ __forceinline__ void multiply_tile(const float* lut, const u8* stage, int first_slice, float acc[4][4]) {
    for (int slice = first_slice; slice < SLICES; ++slice) {
        Slice s;
        read_slice(stage, slice, s);
        multiply_slice(lut, s, acc);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
tail_gemm(const u8* __restrict__ A, const u8* __restrict__ B, const float* __restrict__ a_scale,
          const float* __restrict__ b_scale, u16* __restrict__ out, int M, int N, int K, long long slack) {
    DYNAMIC_SHARED(smem);
    float* lut = reinterpret_cast<float*>(smem);
    u8* stages = smem + LUT_BYTES;
    const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
    const int k_tiles = K / BLOCK_K;  // >= 2, checked by the host

    for (int i = threadIdx.x; i < 256; i += THREADS) lut[i] = e4m3fn_to_float((u32)i);
    __syncthreads();

    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

    // Prologue: tiles 0 .. STAGES-2, one commit group each (empty past the last tile).
    for (int tile = 0; tile < STAGES - 1; ++tile) {
        if (tile < k_tiles) issue_tile(stage_at(stages, tile), A, B, K, m0, n0, tile);
        cp_async_commit();
    }

    // Main loop: every step but the last two. Before step kt, groups for tiles 0..kt+STAGES-2
    // are committed, so waiting until at most STAGES-2 are pending completes tile kt.
    for (int kt = 0; kt < k_tiles - 2; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();  // tile kt complete for every thread; stage of tile kt-1 no longer read
        const int next = kt + STAGES - 1;
        if (next < k_tiles) issue_tile(stage_at(stages, next), A, B, K, m0, n0, next);
        cp_async_commit();
        multiply_tile(lut, stage_at(stages, kt), 0, acc);
    }

    // Peeled tail, step k_tiles-2.
    const int kt = k_tiles - 2;
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt complete for every thread
    {
        const int next = kt + STAGES - 1;  // the final tile, when STAGES == 2
        if (next < k_tiles) issue_tile(stage_at(stages, next), A, B, K, m0, n0, next);
        cp_async_commit();
    }
    spin(slack);
    const u8* final_stage = stage_at(stages, k_tiles - 1);
#if FIXED
    cp_async_wait<0>();  // the final tile's copies (this thread's) are complete...
    __syncthreads();     // ...and every thread's, before anyone pre-reads it
#else
    __syncthreads();     // BUG: a bare barrier drains no cp.async; the final tile may not have landed
#endif
    Slice pre_read;
    read_slice(final_stage, 0, pre_read);  // pre-reads the FINAL tile's first slice
    compiler_fence();                      // keeps the compiler from sinking it into the next step
    multiply_tile(lut, stage_at(stages, kt), 0, acc);

    // Step k_tiles-1.
    cp_async_wait<0>();
    __syncthreads();  // covers the rest of the final tile: too late for the pre-read above
    multiply_slice(lut, pre_read, acc);
    multiply_tile(lut, final_stage, 1, acc);

    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int row = m0 + ty + 16 * i;
        const float row_scale = a_scale[row];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int column = n0 + tx + 16 * j;
            out[(size_t)row * N + column] = float_to_bf16_bits(acc[i][j] * row_scale * b_scale[column]);
        }
    }
}
