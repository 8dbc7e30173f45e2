// pyshmem/device/common.cuh: what every device-API header needs: host/device markers,
// cooperation levels, system-scope atomics, the device state, peer addressing, traps.
//
// The same source compiles with nvcc (device code: kernels) and with a plain C++17
// compiler (the "CPU build": host threads call the device API). In the CPU build a
// warp or a block is a single thread, so `_warp`/`_block` variants do the whole work
// in the calling thread.
#pragma once

#include <cuda/atomic>  // libcu++ (CCCL): the same atomics on host and device
#include "pyshmem/stdint.h"

#include "pyshmem/device_state.h"
#include "pyshmem/types.h"

#if defined(__CUDACC__)
#define PYSHMEM_HD __host__ __device__ __forceinline__
#else
#define PYSHMEM_HD inline
#endif

#if !defined(__CUDA_ARCH__)
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#endif

namespace pyshmem {

// How many threads cooperate in one call (NVSHMEM's thread/warp/block variants).
enum class Coop { thread, warp, block };

namespace detail {

template <class T>
using sys_atomic = cuda::atomic_ref<T, cuda::thread_scope_system>;

#if defined(__CUDACC__)
// One copy per CUDA module; the CUDA backend uploads it when it loads the module.
static __constant__ pyshmem_device_state d_state;
#endif
#if !defined(__CUDACC_RTC__)
// The CPU build reads the state the runtime filled at init (see device_init()).
inline const pyshmem_device_state* h_state = nullptr;
#endif

PYSHMEM_HD const pyshmem_device_state& state() {
#if defined(__CUDA_ARCH__)
  return d_state;
#else
  if (!h_state) {
    fprintf(stderr, "pyshmem device API: called before pyshmem::device_init() (call pyshmem_init() first)\n");
    abort();
  }
  return *h_state;
#endif
}

// Stops the kernel (device) or the process (host) with a message naming the call.
PYSHMEM_HD void trap(const char* call, const char* what, int pe) {
#if defined(__CUDA_ARCH__)
  printf("pyshmem::%s on PE %d: %s (pe=%d)\n", call, state().my_pe, what, pe);
  __trap();
#else
  fprintf(stderr, "pyshmem::%s on PE %d: %s (pe=%d)\n", call, h_state ? h_state->my_pe : -1, what, pe);
  abort();
#endif
}

template <Coop C>
PYSHMEM_HD int coop_rank() {
#if defined(__CUDA_ARCH__)
  if (C == Coop::warp) return threadIdx.x % 32;
  if (C == Coop::block) return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
#endif
  return 0;
}

template <Coop C>
PYSHMEM_HD int coop_size() {
#if defined(__CUDA_ARCH__)
  if (C == Coop::warp) return 32;
  if (C == Coop::block) return blockDim.x * blockDim.y * blockDim.z;
#endif
  return 1;
}

template <Coop C>
PYSHMEM_HD void coop_sync() {
#if defined(__CUDA_ARCH__)
  if (C == Coop::warp) __syncwarp();
  if (C == Coop::block) __syncthreads();
#endif
}

// Polling pause: spin, then yield (host) or sleep (device, sm_70+). PEs often
// outnumber cores on CPU machines, and a PE that spins hot starves the one it waits for.
struct Backoff {
  unsigned iter = 0;
  PYSHMEM_HD void pause() {
    ++iter;
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 700
    if (iter > 64) __nanosleep(iter < 1024 ? 32 : 256);
#endif
#else
    if (iter < 1000) return;
    if (iter < 1100) {
      sched_yield();
      return;
    }
    struct timespec ts = {0, 20000};
    nanosleep(&ts, nullptr);
#endif
  }
};

// Address of symmetric `sym` on `pe`, or nullptr when `pe` is not load/store reachable.
// In debug mode (PYSHMEM_DEBUG=1) a bad PE or a non-symmetric address traps.
PYSHMEM_HD void* peer_ptr(const char* call, const void* sym, int pe) {
  const pyshmem_device_state& s = state();
  if (s.flags & PYSHMEM_STATE_DEBUG) {
    if (pe < 0 || pe >= s.n_pes) trap(call, "PE out of range", pe);
    const uint64_t a = reinterpret_cast<uint64_t>(sym);
    const uint64_t mine = s.heap_base + static_cast<uint64_t>(s.my_pe) * s.heap_stride;
    if (a < mine + s.user_offset || a >= mine + s.heap_size) trap(call, "address is not in the symmetric heap", pe);
  }
  if (!(s.peer_flags[pe] & PYSHMEM_PEER_LOAD_STORE)) return nullptr;
  return const_cast<char*>(static_cast<const char*>(sym)) +
         static_cast<int64_t>(pe - s.my_pe) * static_cast<int64_t>(s.heap_stride);
}

// Like peer_ptr, but the peer must be reachable: requests to other peers go through
// the proxy FIFO, which arrives with the proxy work; until then this traps.
PYSHMEM_HD void* peer_ptr_required(const char* call, const void* sym, int pe) {
  void* p = peer_ptr(call, sym, pe);
  if (!p) trap(call, "PE is not load/store reachable and the proxy path is not built yet", pe);
  return p;
}

template <class T>
PYSHMEM_HD bool compare_t(T a, int cmp, T b) {
  switch (cmp) {
    case PYSHMEM_CMP_EQ: return a == b;
    case PYSHMEM_CMP_NE: return a != b;
    case PYSHMEM_CMP_GT: return a > b;
    case PYSHMEM_CMP_LE: return a <= b;
    case PYSHMEM_CMP_LT: return a < b;
    case PYSHMEM_CMP_GE: return a >= b;
    default: return false;
  }
}

// Copies nbytes with the threads of the cooperation group; every thread returns after
// the group's copy is done (the group is synchronised).
template <Coop C>
PYSHMEM_HD void copy_bytes(void* dst, const void* src, size_t nbytes) {
#if defined(__CUDA_ARCH__)
  const int rank = coop_rank<C>(), size = coop_size<C>();
  if ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | nbytes) % 16 == 0) {
    int4* d = static_cast<int4*>(dst);
    const int4* s = static_cast<const int4*>(src);
    for (size_t i = rank; i < nbytes / 16; i += size) d[i] = s[i];
  } else {
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
    for (size_t i = rank; i < nbytes; i += size) d[i] = s[i];
  }
  coop_sync<C>();
#else
  memcpy(dst, src, nbytes);
#endif
}

// Full system-scope fence: orders this thread's prior stores (including to peers'
// memory and, on the host, non-temporal memcpy stores) before its later ones.
PYSHMEM_HD void fence_system() { cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_system); }

}  // namespace detail

#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
// CPU build: binds the device API to this process's runtime. Call after pyshmem_init();
// returns a pyshmem_status (PYSHMEM_ERR_NOT_INIT before init).
inline int device_init() { return ::pyshmem_device_state_get(&detail::h_state); }
#endif

}  // namespace pyshmem
