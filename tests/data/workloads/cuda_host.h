// cuda_host.h: compile a CUDA kernel's source for the host, as an independent executor that
// tests compare the numpy references against (no GPU, no nvcc, no emulator needed).
//
// CTAs run one after another; inside a CTA every CUDA thread is a std::thread, so
// __syncthreads is a real barrier and warp votes/shuffles exchange values through per-warp
// slots between two warp barriers.  A thread that returns drops out of both barriers, as an
// exited thread no longer counts for bar.sync.  Only the CUDA subset the workloads use is here.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

struct alignas(16) uint4 {
    unsigned x, y, z, w;
};

inline thread_local dim3 threadIdx;
inline thread_local unsigned simt_lane, simt_warp;
inline dim3 blockIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __constant__
#define __shared__ static
#define __restrict__ __restrict

inline std::barrier<>* simt_cta_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> simt_warp_barriers;
inline std::vector<uint64_t> simt_warp_slots;  // [warp][32]

inline void __syncthreads() { simt_cta_barrier->arrive_and_wait(); }

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }

template <typename T, typename V>
inline T atomicAdd(T* address, V value) { return __atomic_fetch_add(address, (T)value, __ATOMIC_SEQ_CST); }

inline uint64_t* simt_slots() { return &simt_warp_slots[32 * simt_warp]; }
inline void simt_warp_sync() { simt_warp_barriers[simt_warp]->arrive_and_wait(); }

inline unsigned __ballot_sync(unsigned mask, int predicate)
{
    uint64_t* slot = simt_slots();
    slot[simt_lane] = predicate ? 1 : 0;
    simt_warp_sync();
    unsigned vote = 0;
    for (unsigned lane = 0; lane < 32; ++lane)
        if ((mask >> lane) & 1u)
            vote |= (unsigned)slot[lane] << lane;
    simt_warp_sync();
    return vote;
}

template <typename T>
inline T __shfl_down_sync(unsigned, T value, unsigned delta)
{
    static_assert(sizeof(T) <= 8, "shuffle of a value wider than 64 bits");
    uint64_t* slot = simt_slots();
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    slot[simt_lane] = bits;
    simt_warp_sync();
    unsigned src = simt_lane + delta;
    // A lane past the end of the warp keeps its own value (CUDA semantics for shfl.down).
    if (src < 32 && 32 * simt_warp + src < blockDim.x * blockDim.y * blockDim.z)
        bits = slot[src];
    simt_warp_sync();
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}

template <typename... A, size_t... I>
void simt_call(void (*kernel)(A...), void** argv, std::index_sequence<I...>)
{
    kernel(*static_cast<std::remove_reference_t<A>*>(argv[I])...);
}

template <typename... A>
void simt_launch(void (*kernel)(A...), dim3 grid, dim3 block, void** argv)
{
    gridDim = grid;
    blockDim = block;
    unsigned n = block.x * block.y * block.z, n_warps = (n + 31) / 32;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                blockIdx = dim3{bx, by, bz};
                std::barrier<> cta(n);
                simt_cta_barrier = &cta;
                simt_warp_barriers.clear();
                for (unsigned w = 0; w < n_warps; ++w)
                    simt_warp_barriers.emplace_back(new std::barrier<>(std::min(32u, n - 32 * w)));
                simt_warp_slots.assign(32 * n_warps, 0);
                std::vector<std::thread> threads;
                for (unsigned t = 0; t < n; ++t)
                    threads.emplace_back([=] {
                        threadIdx = dim3{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
                        simt_lane = t % 32;
                        simt_warp = t / 32;
                        simt_call(kernel, argv, std::index_sequence_for<A...>{});
                        simt_cta_barrier->arrive_and_drop();
                        simt_warp_barriers[simt_warp]->arrive_and_drop();
                    });
                for (auto& th : threads)
                    th.join();
            }
}
