// racy_gemm.cu's kernel on the CPU, for tests without a GPU (tests/test_racy_gemm_emulated.py).
//
// One std::thread per CUDA thread and a std::barrier per block for __syncthreads. cp.async is
// emulated at its weakest: a copy lands only when a cp.async.wait_group retires its group, never
// earlier. So the fixed variant must still compute the exact GEMM (every read is covered by a
// wait and a barrier), while the racy variant's pre-read of the final stage always sees the
// stage's old bytes: the race, made deterministic.
//
//   g++ -std=c++20 -O2 -pthread -DSTAGES=2 -DBLOCK_K=32 -DFIXED=0 racy_gemm_emulation.cpp
//   ./a.out M N K SLACK INPUT OUTPUT
//
// INPUT holds A (M*K fp8 bytes), B (N*K), a_scale (M fp32), b_scale (N fp32); OUTPUT receives
// out (M*N bf16).

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#define TAIL_GEMM_EMULATION 1
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(threads)
#define __restrict__

struct Dim3 {
    int x = 0, y = 0, z = 0;
};
thread_local Dim3 threadIdx;
thread_local Dim3 blockIdx;
struct uint4 {
    unsigned int x, y, z, w;
};

static std::barrier<>* block_barrier;
static unsigned char* block_shared;
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
inline float __uint_as_float(unsigned int u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline unsigned int __float_as_uint(float f) {
    unsigned int u;
    std::memcpy(&u, &f, 4);
    return u;
}

// cp.async: this thread's copies, queued in commit groups until a wait retires them.
struct PendingCopy {
    void* dst;
    const void* src;
};
thread_local std::vector<PendingCopy> open_group;
thread_local std::deque<std::vector<PendingCopy>> committed_groups;

#define DYNAMIC_SHARED(name) unsigned char* name = block_shared
inline void cp_async_16(void* shared_dst, const void* global_src) { open_group.push_back({shared_dst, global_src}); }
inline void cp_async_commit() {
    committed_groups.push_back(open_group);
    open_group.clear();
}
template <int N>
inline void cp_async_wait() {
    while ((int)committed_groups.size() > N) {
        for (const PendingCopy& copy : committed_groups.front()) std::memcpy(copy.dst, copy.src, 16);
        committed_groups.pop_front();
    }
}
inline long long clock_now() {  // a clock that advances on every read: spin() terminates
    thread_local long long cycles = 0;
    return cycles += 64;
}
inline void compiler_fence() {}

#include "racy_gemm.cu"

int main(int argc, char** argv) {
    if (argc != 7) {
        std::fprintf(stderr, "usage: %s M N K SLACK INPUT OUTPUT\n", argv[0]);
        return 2;
    }
    const int M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
    const long long slack = std::atoll(argv[4]);
    std::vector<u8> A((size_t)M * K), B((size_t)N * K);
    std::vector<float> a_scale(M), b_scale(N);
    std::vector<u16> out((size_t)M * N, 0x7FC0);  // NaN poison
    FILE* input = std::fopen(argv[5], "rb");
    if (!input || std::fread(A.data(), 1, A.size(), input) != A.size() ||
        std::fread(B.data(), 1, B.size(), input) != B.size() ||
        std::fread(a_scale.data(), 4, M, input) != (size_t)M || std::fread(b_scale.data(), 4, N, input) != (size_t)N) {
        std::fprintf(stderr, "cannot read %s\n", argv[5]);
        return 1;
    }
    std::fclose(input);
    // Shared memory as a GPU leaves it: whatever was there before (here, a fixed pattern).
    std::vector<unsigned char> shared(SMEM_BYTES);
    for (size_t i = 0; i < shared.size(); ++i) shared[i] = (unsigned char)(i * 37 + 11);
    block_shared = shared.data();
    for (int by = 0; by < M / BLOCK_M; ++by) {
        for (int bx = 0; bx < N / BLOCK_N; ++bx) {
            std::barrier<> barrier(THREADS);
            block_barrier = &barrier;
            std::vector<std::thread> threads;
            for (int t = 0; t < THREADS; ++t) {
                threads.emplace_back([&, t] {
                    threadIdx.x = t;
                    blockIdx.x = bx;
                    blockIdx.y = by;
                    tail_gemm(A.data(), B.data(), a_scale.data(), b_scale.data(), out.data(), M, N, K, slack);
                });
            }
            for (std::thread& thread : threads) thread.join();
        }
    }
    FILE* output = std::fopen(argv[6], "wb");
    if (!output || std::fwrite(out.data(), 2, out.size(), output) != out.size()) {
        std::fprintf(stderr, "cannot write %s\n", argv[6]);
        return 1;
    }
    std::fclose(output);
    return 0;
}
