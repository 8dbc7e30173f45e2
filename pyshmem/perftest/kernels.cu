// Kernels of `python -m pyshmem.perftest --api device`: the device API timed from inside
// a kernel, so no Python runs in the measured loop. On the CPU build (no GPU) a block is
// a host thread; on a GPU these are GPU kernels. `scope` picks the cooperation level of
// the transfer calls: 0 thread, 1 warp, 2 block (the caller launches 1, 32 or 128
// threads). Times go to `out_ns` (one entry per timed iteration, or one total for
// bandwidth loops), written by thread 0.
#include <pyshmem/device.cuh>

#include <cuda/std/complex>

#if !defined(__CUDA_ARCH__)
#include <string.h>
#include <time.h>
#endif

namespace {

__device__ __forceinline__ unsigned long long now_ns() {
#if defined(__CUDA_ARCH__)
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<unsigned long long>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
#endif
}

__device__ __forceinline__ void put_scoped(int scope, void* d, const void* s, size_t n, int pe, bool nbi) {
  if (scope == 2) nbi ? pyshmem::putmem_nbi_block(d, s, n, pe) : pyshmem::putmem_block(d, s, n, pe);
  else if (scope == 1) nbi ? pyshmem::putmem_nbi_warp(d, s, n, pe) : pyshmem::putmem_warp(d, s, n, pe);
  else nbi ? pyshmem::putmem_nbi(d, s, n, pe) : pyshmem::putmem(d, s, n, pe);
}

__device__ __forceinline__ void get_scoped(int scope, void* d, const void* s, size_t n, int pe, bool nbi) {
  if (scope == 2) nbi ? pyshmem::getmem_nbi_block(d, s, n, pe) : pyshmem::getmem_block(d, s, n, pe);
  else if (scope == 1) nbi ? pyshmem::getmem_nbi_warp(d, s, n, pe) : pyshmem::getmem_warp(d, s, n, pe);
  else nbi ? pyshmem::getmem_nbi(d, s, n, pe) : pyshmem::getmem(d, s, n, pe);
}

__device__ __forceinline__ bool leader() { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }

}  // namespace

// kind: 0 put + quiet, 1 get, 2 p (int64) + quiet, 3 g (int64). Per-iteration times.
extern "C" __global__ void pt_latency(int kind, char* dst, const char* src, unsigned long long nbytes, int peer,
                                      int warmup, int iters, int scope, double* out_ns) {
  for (int i = 0; i < warmup + iters; ++i) {
    const unsigned long long t0 = now_ns();
    switch (kind) {
      case 0:
        put_scoped(scope, dst, src, nbytes, peer, false);
        if (leader()) pyshmem::quiet();
        break;
      case 1: get_scoped(scope, dst, src, nbytes, peer, false); break;
      case 2:
        if (leader()) {
          pyshmem::p(reinterpret_cast<long long*>(dst), *reinterpret_cast<const long long*>(src), peer);
          pyshmem::quiet();
        }
        break;
      case 3:
        if (leader()) *reinterpret_cast<long long*>(dst) = pyshmem::g(reinterpret_cast<const long long*>(src), peer);
        break;
    }
    if (leader() && i >= warmup) out_ns[i - warmup] = static_cast<double>(now_ns() - t0);
  }
}

// kind: 0 put_nbi, 1 get_nbi; `iters` transfers then one quiet, after a warm-up pass.
extern "C" __global__ void pt_bandwidth(int kind, char* dst, const char* src, unsigned long long nbytes, int peer,
                                        int iters, int scope, double* out_ns) {
  for (int pass = 0; pass < 2; ++pass) {
    const unsigned long long t0 = now_ns();
    for (int i = 0; i < iters; ++i) {
      if (kind == 0) put_scoped(scope, dst, src, nbytes, peer, true);
      else get_scoped(scope, dst, src, nbytes, peer, true);
    }
    if (leader()) pyshmem::quiet();
    if (leader() && pass == 1) out_ns[0] = static_cast<double>(now_ns() - t0);
  }
}

// put + fence + flag, answered by the peer the same way; one-way time = half a round.
// `first`: this PE serves first. flag counts rounds from 1.
extern "C" __global__ void pt_ping_pong(char* dst, const char* src, unsigned long long nbytes, long long* flag,
                                        int peer, int first, int warmup, int iters, int scope, double* out_ns) {
  for (int i = 1; i <= warmup + iters; ++i) {
    const unsigned long long t0 = now_ns();
    if (!first && leader()) pyshmem::wait_until(flag, PYSHMEM_CMP_GE, static_cast<long long>(i));
    put_scoped(scope, dst, src, nbytes, peer, false);
    if (leader()) {
      pyshmem::fence();  // the payload before the flag
      pyshmem::p(flag, static_cast<long long>(i), peer);
      if (first) pyshmem::wait_until(flag, PYSHMEM_CMP_GE, static_cast<long long>(i));
      if (i > warmup) out_ns[i - warmup - 1] = static_cast<double>(now_ns() - t0) / 2;
    }
  }
}

// op: 0 barrier_all, 1 sync_all, 2 broadcast, 3 fcollect, 4 alltoall, 5 sum_reduce (int64).
// barrier_after = 0: the PEs line up (sync_all) before each timed call. 1: each timed
// iteration is the call followed by barrier_all, the loop OpenSHMEM 1.4's active-set
// collectives need (benchmarks/bench_coll.py compares with those).
extern "C" __global__ void pt_collective(int op, char* dst, const char* src, unsigned long long nbytes, int root,
                                         int warmup, int iters, int barrier_after, double* out_ns) {
  const int team = PYSHMEM_TEAM_WORLD;
  for (int i = 0; i < warmup + iters; ++i) {
    if (!barrier_after) pyshmem::sync_all_block();
    const unsigned long long t0 = now_ns();
    switch (op) {
      case 0: pyshmem::barrier_all_block(); break;
      case 1: pyshmem::sync_all_block(); break;
      case 2: pyshmem::broadcastmem_block(team, dst, src, nbytes, root); break;
      case 3: pyshmem::fcollectmem_block(team, dst, src, nbytes); break;
      case 4: pyshmem::alltoallmem_block(team, dst, src, nbytes); break;
      case 5:
        pyshmem::sum_reduce_block(team, reinterpret_cast<long long*>(dst), reinterpret_cast<const long long*>(src),
                                  nbytes / 8);
        break;
    }
    if (barrier_after && op != 0) pyshmem::barrier_all_block();
    if (leader() && i >= warmup) out_ns[i - warmup] = static_cast<double>(now_ns() - t0);
  }
}

// op: 0 fetch_add, 1 add, 2 fetch_inc, 3 inc, 4 compare_swap(0 -> 0), 5 swap(5), 6 set(9),
// 7 fetch, 8 fetch_xor(1), 9 xor(1), 10 fetch_or(3), 11 fetch_and(0), on *target at `peer`
// (thread 0 only). Warm-up calls, then the target is set to 0 and the timed calls run.
// bw = 1: one total time (out_ns[0]) over back-to-back calls and a quiet; else per call.
extern "C" __global__ void pt_atomic(int op, long long* target, int peer, int warmup, int iters, int bw,
                                     double* out_ns) {
  if (!leader()) return;
  long long sink = 0;
  const unsigned long long start = now_ns();
  for (int i = -warmup; i < iters; ++i) {
    if (i == 0) {
      pyshmem::quiet();
      pyshmem::atomic_set(target, 0ll, peer);
    }
    const unsigned long long t0 = now_ns();
    switch (op) {
      case 0: sink += pyshmem::atomic_fetch_add(target, 1ll, peer); break;
      case 1: pyshmem::atomic_add(target, 1ll, peer); break;
      case 2: sink += pyshmem::atomic_fetch_inc(target, peer); break;
      case 3: pyshmem::atomic_inc(target, peer); break;
      case 4: sink += pyshmem::atomic_compare_swap(target, 0ll, 0ll, peer); break;
      case 5: sink += pyshmem::atomic_swap(target, 5ll, peer); break;
      case 6: pyshmem::atomic_set(target, 9ll, peer); break;
      case 7: sink += pyshmem::atomic_fetch(target, peer); break;
      case 8: sink += pyshmem::atomic_fetch_xor(target, 1ll, peer); break;
      case 9: pyshmem::atomic_xor(target, 1ll, peer); break;
      case 10: sink += pyshmem::atomic_fetch_or(target, 3ll, peer); break;
      case 11: sink += pyshmem::atomic_fetch_and(target, 0ll, peer); break;
    }
    if (!bw && i >= 0) out_ns[i] = static_cast<double>(now_ns() - t0);
  }
  pyshmem::quiet();
  if (bw) out_ns[0] = static_cast<double>(now_ns() - start);
  if (sink == 0x7fffffffffffffffll) out_ns[0] = -1;  // keeps the fetches from being optimised away
}

// signal ping-pong (nbytes == 0: signal_op only) or put_signal ping-pong: the signal
// carries the round; one-way time = half a round.
extern "C" __global__ void pt_signal_ping_pong(char* dst, const char* src, unsigned long long nbytes,
                                               uint64_t* sig, int peer, int first, int warmup, int iters,
                                               int scope, double* out_ns) {
  for (int i = 1; i <= warmup + iters; ++i) {
    const unsigned long long t0 = now_ns();
    const uint64_t round = static_cast<uint64_t>(i);
    if (!first && leader()) pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, round);
    if (nbytes == 0) {
      if (leader()) pyshmem::signal_op(sig, round, PYSHMEM_SIGNAL_SET, peer);
    } else if (scope == 2) {
      pyshmem::putmem_signal_block(dst, src, nbytes, sig, round, PYSHMEM_SIGNAL_SET, peer);
    } else if (scope == 1) {
      pyshmem::putmem_signal_warp(dst, src, nbytes, sig, round, PYSHMEM_SIGNAL_SET, peer);
    } else if (leader()) {
      pyshmem::putmem_signal(dst, src, nbytes, sig, round, PYSHMEM_SIGNAL_SET, peer);
    }
    if (leader()) {
      if (first) pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, round);
      if (i > warmup) out_ns[i - warmup - 1] = static_cast<double>(now_ns() - t0) / 2;
    }
  }
}

// `perftest compare`'s figures, looped exactly as the OpenSHMEM C peer
// (perftest/peers/oshmem_p2p.c) loops them, one thread per PE: batch 0 warms up, then
// out[b-1] = batch b's mean (µs per op; GB/s for put_bw).
// fig 0 put_latency (putmem + quiet), 1 ping_pong (putmem, fence, p of the round into
// the peer's flag, answered the same way; half a round trip; `first` serves first),
// 2 put_bw (`window` putmem_nbi + quiet, repeated), 3 (CPU build only) the memcpy ceiling:
// put_bw's loop with local memcpy in place of the puts.
extern "C" __global__ void pt_compare(int fig, char* dst, const char* src, unsigned long long nbytes,
                                      long long* flag, int peer, int first, int batches, long long per_batch,
                                      int window, double* out) {
  if (!leader()) return;
  long long round = 0;
  const long long reps = per_batch / window > 1 ? per_batch / window : 1;
  for (int b = 0; b <= batches; ++b) {
    const unsigned long long t0 = now_ns();
    double v = 0;
    if (fig == 0) {
      for (long long j = 0; j < per_batch; ++j) {
        pyshmem::putmem(dst, src, nbytes, peer);
        pyshmem::quiet();
      }
      v = static_cast<double>(now_ns() - t0) / per_batch / 1e3;
    } else if (fig == 1) {
      for (long long j = 0; j < per_batch; ++j) {
        ++round;
        if (!first) pyshmem::wait_until(flag, PYSHMEM_CMP_GE, round);
        pyshmem::putmem(dst, first ? src : dst, nbytes, peer);
        pyshmem::fence();
        pyshmem::p(flag, round, peer);
        if (first) pyshmem::wait_until(flag, PYSHMEM_CMP_GE, round);
      }
      v = static_cast<double>(now_ns() - t0) / per_batch / 2 / 1e3;
    } else if (fig == 2) {
      for (long long r = 0; r < reps; ++r) {
        for (int w = 0; w < window; ++w) pyshmem::putmem_nbi(dst, src, nbytes, peer);
        pyshmem::quiet();
      }
      v = static_cast<double>(nbytes) * window * reps / static_cast<double>(now_ns() - t0);  // bytes/ns = GB/s
    } else {
#if !defined(__CUDA_ARCH__)
      // The ceiling: the same window of copies as one thread's memcpy between two local
      // buffers (the compiler barrier keeps repeated identical copies from merging).
      for (long long r = 0; r < reps; ++r)
        for (int w = 0; w < window; ++w) {
          memcpy(dst, src, nbytes);
          asm volatile("" ::: "memory");
        }
      v = static_cast<double>(nbytes) * window * reps / static_cast<double>(now_ns() - t0);
#endif
    }
    if (b) out[b - 1] = v;
  }
}

// The copy ceiling of `perftest gpu`: `reps` local copies of nbytes, src -> dst. On a
// GPU the whole grid shares each copy in 16-byte words (the device's own copy bandwidth,
// timed by the host around the launch); on the CPU build it is one thread's memcpy.
extern "C" __global__ void pt_copy(char* dst, const char* src, unsigned long long nbytes, int reps) {
#if defined(__CUDA_ARCH__)
  const unsigned long long tid = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  const unsigned long long nth = gridDim.x * static_cast<unsigned long long>(blockDim.x);
  const unsigned long long words = nbytes / 16;
  for (int r = 0; r < reps; ++r) {
    for (unsigned long long i = tid; i < words; i += nth)
      reinterpret_cast<int4*>(dst)[i] = reinterpret_cast<const int4*>(src)[i];
    for (unsigned long long i = words * 16 + tid; i < nbytes; i += nth) dst[i] = src[i];
  }
#else
  for (int r = 0; r < reps; ++r) {
    memcpy(dst, src, nbytes);
    asm volatile("" ::: "memory");
  }
#endif
}

// `perftest reduction --api device -o OP -d TYPE`: pt_reduce_<op>_reduce_<type>, the
// loop of pt_collective around <op>_reduce_block on elements of TYPE. device.py appends
// one PT_REDUCE line for the (op, type) a run needs (as pyshmem/kernels/coll.cu is
// built), so a run compiles one reduction, not seventy.
#define PT_REDUCE(FN, NAME, T)                                                                                  \
  extern "C" __global__ void pt_reduce_##FN##_##NAME(T* dst, const T* src, unsigned long long nelems, int warmup, \
                                                     int iters, double* out_ns) {                               \
    for (int i = 0; i < warmup + iters; ++i) {                                                                  \
      pyshmem::sync_all_block();                                                                                \
      const unsigned long long t0 = now_ns();                                                                   \
      pyshmem::FN##_block(PYSHMEM_TEAM_WORLD, dst, src, nelems);                                                \
      if (leader() && i >= warmup) out_ns[i - warmup] = static_cast<double>(now_ns() - t0);                     \
    }                                                                                                           \
  }
