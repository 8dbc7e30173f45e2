// pyshmem/cpu_kernel.h: compile a CUDA C++ kernel source with a host C++17 compiler, so
// that the same kernel runs on the CPU build of the device API (no GPU).
//
//   g++ -std=c++17 -O2 -shared -fPIC -x c++ -include pyshmem/cpu_kernel.h
//       -I<pyshmem include> -I<cccl include> kernel.cu -o kernel.so
//
// pyshmem.cuda.Module does this for you and launches the kernels. Execution model:
// every block of the grid is one host thread (all blocks run concurrently, so blocks
// may wait for each other), and a block has exactly one thread: blockDim is (1,1,1)
// and threadIdx is (0,0,0) whatever block size the launch asked for, as in the
// device API's CPU build where a warp or a block is the calling thread. Kernels that
// stride over data by blockDim/threadIdx, or call _warp/_block variants, therefore run
// unchanged. Not available: warp intrinsics (__shfl_*, __ballot_*), dynamic shared
// memory (extern __shared__), textures, CUDA runtime API calls.
#pragma once

#if defined(__CUDACC__)
#error "pyshmem/cpu_kernel.h is for host compilers; compile with nvcc for the GPU without it"
#endif

#include <atomic>

// First, before the CUDA keywords below are defined away, so libcu++ sees a plain host build.
#include "pyshmem/device.cuh"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
// Per block = per host thread (a block is one thread here). Uninitialised, as on a GPU.
#define __shared__ static thread_local

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace pyshmem {
namespace cpu {
struct Coords {
  uint3 thread_idx{0, 0, 0};
  uint3 block_idx{0, 0, 0};
  dim3 block_dim{1, 1, 1};
  dim3 grid_dim{1, 1, 1};
};
inline thread_local Coords coords;
}  // namespace cpu
}  // namespace pyshmem

#define threadIdx (::pyshmem::cpu::coords.thread_idx)
#define blockIdx (::pyshmem::cpu::coords.block_idx)
#define blockDim (::pyshmem::cpu::coords.block_dim)
#define gridDim (::pyshmem::cpu::coords.grid_dim)

inline void __syncthreads() {}
inline void __syncwarp(unsigned = 0xffffffffu) {}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }

// Entry points the launcher calls (weak: the header may be included by several files
// of one library). Exported even under -fvisibility=hidden.
extern "C" {
// Binds this library's copy of the device API to the runtime's state (before launches).
__attribute__((weak, visibility("default"))) void pyshmem_cpu_bind_state(const pyshmem_device_state* state) {
  pyshmem::detail::h_state = state;
}
// Sets the calling thread's block coordinates for the kernel call that follows.
__attribute__((weak, visibility("default"))) void pyshmem_cpu_set_block(unsigned bx, unsigned by, unsigned bz,
                                                                         unsigned gx, unsigned gy, unsigned gz) {
  pyshmem::cpu::coords.block_idx = uint3{bx, by, bz};
  pyshmem::cpu::coords.grid_dim = dim3(gx, gy, gz);
}
}
