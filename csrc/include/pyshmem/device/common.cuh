// pyshmem/device/common.cuh: what every device-API header needs: host/device markers,
// cooperation levels, system-scope atomics, the device state, peer addressing, traps.
//
// The same source compiles with nvcc (device code: kernels) and with a plain C++17
// compiler (the "CPU build"). There, inside a CUDA C++ kernel run on the CPU
// (pyshmem/cpu_kernel.h), a block's threads are fibers on one OS thread and the
// `_warp`/`_block` variants cooperate across them as on a GPU (detail::t_cpu_coop);
// called from an ordinary host thread, a warp or a block is that single thread and
// the variants do the whole work in it.
#pragma once

#include <cuda/atomic>  // libcu++ (CCCL): the same atomics on host and device
#include "pyshmem/stdint.h"

#include "pyshmem/compare.h"
#include "pyshmem/device_state.h"
#include "pyshmem/proxy_fifo.h"
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
inline namespace device_api {

// How many threads cooperate in one call (NVSHMEM's thread/warp/block variants).
enum class Coop { thread, warp, block };

// Every group call is defined once, by a macro applied to each cooperation level (and,
// for RMA, each completion flavour), so the variants cannot drift apart. X(SUFFIX, LEVEL):
// SUFFIX is the name's ending (none for the thread form: putmem, putmem_warp,
// putmem_block), LEVEL the Coop enumerator.
#define PYSHMEM_FOR_EACH_COOP(X) X(, thread) X(_warp, warp) X(_block, block)
// X(NBI, SUFFIX, LEVEL, IS_NBI) for the blocking and the _nbi forms of each level, in
// NVSHMEM's name order (putmem_nbi_warp).
#define PYSHMEM_FOR_EACH_COOP_NBI(X)                                                   \
  X(, , thread, false) X(, _warp, warp, false) X(, _block, block, false)               \
  X(_nbi, , thread, true) X(_nbi, _warp, warp, true) X(_nbi, _block, block, true)

namespace detail {

template <class T>
using sys_atomic = cuda::atomic_ref<T, cuda::thread_scope_system>;

}  // namespace detail
}  // namespace device_api
}  // namespace pyshmem

#if defined(__CUDACC__)
// One copy per CUDA module, under a fixed C name so the CUDA backend can find and
// upload it (cuModuleGetGlobal "pyshmem_d_state"). With separate compilation (-rdc),
// define PYSHMEM_DEVICE_STATE_EXTERN in every translation unit but one.
#if defined(PYSHMEM_DEVICE_STATE_EXTERN)
extern "C" __constant__ pyshmem_device_state pyshmem_d_state;
#else
extern "C" {  // a block, not `extern` on the variable: nvcc makes that one's host shadow a declaration
__constant__ pyshmem_device_state pyshmem_d_state = {};
}
#endif
#endif

// The CPU build reads the state the runtime filled at init (see device_init()).
#include "pyshmem/device/host_state.h"

namespace pyshmem {
inline namespace device_api {
namespace detail {
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
inline void cpu_kernel_fail(const char* what);  // below, after CpuCoop
#endif

PYSHMEM_HD const pyshmem_device_state& state() {
#if defined(__CUDA_ARCH__)
  return pyshmem_d_state;
#else
  if (!h_state) {
    const char* what =
        "pyshmem device API: called before pyshmem::device_init() (call pyshmem_init() or nvshmem_init() first; in "
        "a kernel of a module loaded with cuModuleLoad, call nvshmemx_cumodule_init(module) first)";
#if !defined(__CUDACC_RTC__)
    cpu_kernel_fail(what);  // in a CPU kernel: the launch fails with this message
#endif
    fprintf(stderr, "%s\n", what);
    abort();
  }
  return *h_state;
#endif
}

// Stops the kernel with a message naming the call: on a GPU a trap (the launch fails);
// in a CUDA C++ kernel run on the CPU the launch raises pyshmem.KernelError with it;
// elsewhere on the host the process ends. `detail` (may be null) adds a cause, e.g.
// the proxy's failure message.
PYSHMEM_HD void trap(const char* call, const char* what, int pe, const char* detail = nullptr) {
#if defined(__CUDA_ARCH__)
  printf("pyshmem::%s on PE %d: %s (pe=%d)%s%s\n", call, state().my_pe, what, pe, detail ? ": " : "",
         detail ? detail : "");
  __trap();
#else
  char msg[512];
  snprintf(msg, sizeof msg, "pyshmem::%s on PE %d: %s (pe=%d)%s%s", call, h_state ? h_state->my_pe : -1, what, pe,
           detail ? ": " : "", detail ? detail : "");
#if !defined(__CUDACC_RTC__)
  cpu_kernel_fail(msg);  // in a CPU kernel: the launch fails with this message
#endif
  fprintf(stderr, "%s\n", msg);
  abort();
#endif
}

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ int linear_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ int block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
// Lanes present in the calling thread's warp (the last warp of a block may be partial).
__device__ __forceinline__ int warp_lanes() {
  const int rest = block_threads() - (linear_tid() & ~31);
  return rest < 32 ? rest : 32;
}
#endif

#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
// Set by the CPU kernel runtime (pyshmem/cpu_fibers.h) on the OS thread that runs a
// block's CUDA threads as fibers, while they run: the calling fiber's rank in its warp
// or block, the group's size, the group's barrier, a yield for device-API waits
// (returns false when no other thread of the block can run), the schedule's switch
// point at every data-moving call, and a failure that ends the kernel (the launch
// raises it, naming kernel, block and thread; does not return). Null elsewhere.
struct CpuCoop {
  int (*rank)(Coop);
  int (*size)(Coop);
  void (*sync)(Coop);
  bool (*poll_yield)(bool first_poll);
  void (*point)();
  void (*fail)(const char* what);
  // PYSHMEM_DEBUG=1: the group's threads meet and compare `digest` (their arguments);
  // a difference fails the kernel naming `call`.
  void (*same)(Coop, const char* call, uint64_t digest);
};
inline thread_local const CpuCoop* t_cpu_coop = nullptr;
inline void cpu_kernel_fail(const char* what) {
  if (const CpuCoop* c = t_cpu_coop) c->fail(what);
}
#endif

template <Coop C>
PYSHMEM_HD int coop_rank() {
#if defined(__CUDA_ARCH__)
  if (C == Coop::warp) return linear_tid() & 31;
  if (C == Coop::block) return linear_tid();
#elif !defined(__CUDACC_RTC__)
  if (C != Coop::thread)
    if (const CpuCoop* c = t_cpu_coop) return c->rank(C);
#endif
  return 0;
}

template <Coop C>
PYSHMEM_HD int coop_size() {
#if defined(__CUDA_ARCH__)
  if (C == Coop::warp) return warp_lanes();
  if (C == Coop::block) return block_threads();
#elif !defined(__CUDACC_RTC__)
  if (C != Coop::thread)
    if (const CpuCoop* c = t_cpu_coop) return c->size(C);
#endif
  return 1;
}

// A _warp/_block call's rule: every thread of the group passes the same arguments.
// Checked in debug mode (PYSHMEM_DEBUG=1) in CPU kernels, where the group's threads
// meet and compare a digest of a..e; free otherwise.
template <Coop C>
PYSHMEM_HD void coop_same_args(const char* call, uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0,
                               uint64_t e = 0) {
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
  if (C == Coop::thread || !(state().flags & PYSHMEM_STATE_DEBUG)) return;
  if (const CpuCoop* cc = t_cpu_coop) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (uint64_t v : {a, b, c, d, e}) h = (h ^ v) * 0x100000001B3ull + (h >> 29);
    cc->same(C, call, h);
  }
#else
  (void)call, (void)a, (void)b, (void)c, (void)d, (void)e;
#endif
}
#define PYSHMEM_U64(x) static_cast<uint64_t>(reinterpret_cast<uintptr_t>(x))

template <Coop C>
PYSHMEM_HD void coop_sync() {
#if defined(__CUDA_ARCH__)
  if (C == Coop::warp) {
    const int lanes = warp_lanes();
    __syncwarp(lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u));
  }
  if (C == Coop::block) __syncthreads();
#elif !defined(__CUDACC_RTC__)
  if (C != Coop::thread)
    if (const CpuCoop* c = t_cpu_coop) c->sync(C);
#endif
}

// CLOCK_MONOTONIC on the host; the GPU's global timer (ns) in device code.
PYSHMEM_HD uint64_t now_ns() {
#if defined(__CUDA_ARCH__)
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

// Records an operation for PYSHMEM_TIMEOUT's report (the CPU build with the variable
// set; GPU kernels' operations are not recorded).
PYSHMEM_HD void note_op(int kind, int pe, const void* sym, size_t bytes) {
#if !defined(__CUDA_ARCH__)
#if !defined(__CUDACC_RTC__)
  if (const CpuCoop* c = t_cpu_coop) c->point();
#endif
  if (auto f = state().note_op) f(kind, pe, sym, bytes);
#endif
}

// What a device-API wait waits for, for PYSHMEM_TIMEOUT (see Backoff::pause).
struct WaitDesc {
  const char* call;    // the device call ("signal_wait_until")
  const void* object;  // the symmetric variable on this PE, or null
  int dtype;           // its pyshmem_dtype, or -1
  int cmp;             // PYSHMEM_CMP_*, or -1
  uint64_t value;      // the comparison value's bits
  int peer;            // the PE whose action ends the wait, -1 when any
};

// A wait outlasted PYSHMEM_TIMEOUT. CPU build: the runtime's hook reports every PE's
// waits and ends the job. GPU: prints what this thread waits for and traps, which
// fails the kernel (the host sees the launch error at its next synchronisation).
PYSHMEM_HD void wait_expired(const WaitDesc& w, uint64_t waited_ns) {
  const pyshmem_device_state& s = state();
#if defined(__CUDA_ARCH__)
  const uint64_t mine = s.heap_base + static_cast<uint64_t>(s.my_pe) * s.heap_stride + s.user_offset;
  const uint64_t at = reinterpret_cast<uint64_t>(w.object);
  printf("pyshmem::%s on PE %d (block %u, thread %u): waited %llu ms, longer than PYSHMEM_TIMEOUT; variable at "
         "user-heap offset %lld (-1: pyshmem's own counter), condition cmp %d value %llu, needs PE %d (-1: any); "
         "the kernel stops\n",
         w.call, s.my_pe, blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z),
         threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z),
         static_cast<unsigned long long>(waited_ns / 1000000), w.object ? static_cast<long long>(at - mine) : -1LL,
         w.cmp, static_cast<unsigned long long>(w.value), w.peer);
  __trap();
#else
  if (s.wait_hook)
    s.wait_hook(PYSHMEM_WAIT_EXPIRED, w.call, w.object, w.dtype, w.cmp, w.value, w.peer, waited_ns);
  trap(w.call, "the wait outlasted PYSHMEM_TIMEOUT", w.peer);
#endif
}

#if !defined(__CUDA_ARCH__)
// The CPU build's pause between two polls of a wait, `round` counting from 1: a short
// spin (the poll itself), then yield, then sleep: 20 us per poll at first, because a
// kernel thread's wait usually depends on its PE's proxy thread (requests to remote PEs,
// their answers) and PEs with proxies often outnumber cores (measured on 2 cores, a
// spin of 1000 pause instructions doubled the device-API ping-pong through the proxy);
// then twice as long every 64 sleeps, up to 1.28 ms once the wait has lasted about 80
// ms. Waiters that never lengthen their sleeps swamp the cores: 64 blocks each polling
// every 20 us (NVIDIA's ring-reduce example on 2 PEs) spent the machine in the kernel's
// scheduler and ran 100 times slower than when their waits ended before sleeping.
constexpr unsigned kCpuSpinRounds = 1000, kCpuYieldRounds = 100, kCpuSleepsPerStep = 64, kCpuSleepSteps = 6;
inline void cpu_wait_pause(unsigned round) {
  if (round <= kCpuSpinRounds) return;
  if (round <= kCpuSpinRounds + kCpuYieldRounds) {
    sched_yield();
    return;
  }
  const unsigned step = (round - kCpuSpinRounds - kCpuYieldRounds) / kCpuSleepsPerStep;
  struct timespec ts = {0, 20000L << (step < kCpuSleepSteps ? step : kCpuSleepSteps)};
  nanosleep(&ts, nullptr);
}
#endif

// Polling pause: spin, then yield (host) or sleep (device, sm_70+). PEs often
// outnumber cores on CPU machines, and a PE that spins hot starves the one it waits for.
struct Backoff {
  unsigned iter = 0;
  uint64_t started = 0;     // when the wait stopped spinning (PYSHMEM_TIMEOUT only)
  bool published = false;   // CPU build: the wait is recorded for a report

  PYSHMEM_HD void pause() {
    ++iter;
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 700
    if (iter > 64) __nanosleep(iter < 1024 ? 32 : 256);
#endif
#else
#if !defined(__CUDACC_RTC__)
    // A CUDA thread of a CPU kernel: the block's other threads run first.
    if (const CpuCoop* c = t_cpu_coop)
      if (c->poll_yield(iter == 1)) return;
#endif
    cpu_wait_pause(iter);
#endif
  }

  // A pause in a wait that PYSHMEM_TIMEOUT bounds (wait_until, signal_wait_until,
  // barriers, team syncs). Free while the wait spins; afterwards, every 64 polls (the
  // host sleeps between polls by then), the CPU build lets the runtime end the PE if
  // the job is exiting, and the clock is read when PYSHMEM_TIMEOUT is set.
  PYSHMEM_HD void pause(const WaitDesc& w) {
    const pyshmem_device_state& s = state();
#if !defined(__CUDA_ARCH__)
    // The awaited write may be an arrival that lands only when this PE progresses its
    // transport. While the proxy thread polls, it applies it; once the proxy dozes, the
    // waiting thread progresses instead of waiting out the doze (two threads polling
    // one UCX worker contend for its lock: measured 10x slower round trips on 2 cores).
    if (s.progress && s.proxy && __atomic_load_n(&s.proxy->proxy_sleeping, __ATOMIC_RELAXED)) s.progress();
#endif
    pause();
    if ((iter & 63) || iter < 1024) return;
#if !defined(__CUDA_ARCH__)
    if (s.wait_hook) s.wait_hook(PYSHMEM_WAIT_POLL, w.call, nullptr, -1, -1, 0, -1, 0);  // global_exit ends us
#endif
    if (s.wait_timeout_ns == 0) return;
    const uint64_t now = now_ns();
    if (started == 0) {
      started = now;
#if !defined(__CUDA_ARCH__)
      if (s.wait_hook) {  // other PEs' reports name this wait from now on
        s.wait_hook(PYSHMEM_WAIT_PUBLISH, w.call, w.object, w.dtype, w.cmp, w.value, w.peer, 0);
        published = true;
      }
#endif
    } else if (now - started > s.wait_timeout_ns) {
      wait_expired(w, now - started);
    }
  }

  PYSHMEM_HD ~Backoff() {
#if !defined(__CUDA_ARCH__)
    if (published) state().wait_hook(PYSHMEM_WAIT_END, nullptr, nullptr, -1, -1, 0, -1, 0);
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

// The address a point-to-point call uses for direct loads/stores to `pe`, or nullptr
// when the call must go through the proxy (pe not load/store reachable,
// PYSHMEM_PROXY_ALL, or the ordering check, which holds the proxy's operations).
PYSHMEM_HD void* direct_ptr(const char* call, const void* sym, int pe) {
  void* p = peer_ptr(call, sym, pe);
  return (state().flags & (PYSHMEM_STATE_PROXY_ALL | PYSHMEM_STATE_ORDER_CHECK)) ? nullptr : p;
}

// The same for the data of collectives, which complete inside the call: direct also
// under the ordering check.
PYSHMEM_HD void* coll_direct_ptr(const char* call, const void* sym, int pe) {
  void* p = peer_ptr(call, sym, pe);
  return (state().flags & PYSHMEM_STATE_PROXY_ALL) ? nullptr : p;
}

#if defined(__CUDACC__)
namespace copy_detail {
template <class W, Coop C>
__device__ __forceinline__ void strided_copy(void* dst, const void* src, size_t n) {
  W* d = static_cast<W*>(dst);
  const W* s = static_cast<const W*>(src);
  for (size_t i = coop_rank<C>(); i < n; i += coop_size<C>()) d[i] = s[i];
}
}  // namespace copy_detail
#endif

// Copies nbytes with the threads of the cooperation group. The group synchronises on
// entry (so data the group wrote just before the call is what gets copied) and on exit
// (every thread returns after the whole copy). Uses the widest access the alignment of
// both pointers and the size allow.
template <Coop C>
PYSHMEM_HD void copy_bytes(void* dst, const void* src, size_t nbytes) {
#if defined(__CUDA_ARCH__)
  coop_sync<C>();
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | nbytes;
  if (a % 16 == 0) copy_detail::strided_copy<int4, C>(dst, src, nbytes / 16);
  else if (a % 8 == 0) copy_detail::strided_copy<uint64_t, C>(dst, src, nbytes / 8);
  else if (a % 4 == 0) copy_detail::strided_copy<uint32_t, C>(dst, src, nbytes / 4);
  else copy_detail::strided_copy<char, C>(dst, src, nbytes);
  coop_sync<C>();
#else
  const int n = coop_size<C>();
  if (n == 1) {
    memcpy(dst, src, nbytes);
    return;
  }
  // CPU kernel threads (fibers): each copies one contiguous share, in 64-byte units.
  coop_sync<C>();
  const size_t share = ((nbytes + n - 1) / n + 63) & ~size_t(63);
  const size_t lo = share * static_cast<size_t>(coop_rank<C>());
  if (lo < nbytes)
    memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, nbytes - lo < share ? nbytes - lo : share);
  coop_sync<C>();
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

}  // namespace device_api
}  // namespace pyshmem
