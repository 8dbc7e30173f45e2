// Collective latency through the device API, for benchmarks/bench_coll.py: one kernel
// (one block) runs `iters` calls of a collective over TEAM_WORLD, each followed by
// barrier_all like the OpenSHMEM 1.4 loop it is compared with, and writes the mean time
// of one iteration. On the CPU build (no GPU) the block is a host thread, so this is the
// compiled path of the CPU backend; on a GPU it times the GPU-initiated collectives.
#include <pyshmem/device.cuh>

#if !defined(__CUDA_ARCH__)
#include <time.h>
#endif

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

// op: 0 barrier_all, 1 broadcast, 2 fcollect, 3 alltoall, 4 sum_reduce (int64).
extern "C" __global__ void coll_loop(int op, char* dst, const char* src, unsigned long long bytes, int iters,
                                     double* out_ns) {
  const int team = PYSHMEM_TEAM_WORLD;
  unsigned long long t0 = 0;
  for (int i = -1; i < iters; ++i) {  // i == -1: warm-up
    if (i == 0) {
      pyshmem::barrier_all_block();
      t0 = now_ns();
    }
    switch (op) {
      case 1: pyshmem::broadcastmem_block(team, dst, src, bytes, 0); break;
      case 2: pyshmem::fcollectmem_block(team, dst, src, bytes); break;
      case 3: pyshmem::alltoallmem_block(team, dst, src, bytes); break;
      case 4:
        pyshmem::sum_reduce_block(team, reinterpret_cast<long long*>(dst), reinterpret_cast<const long long*>(src),
                                  bytes / 8);
        break;
    }
    pyshmem::barrier_all_block();
  }
  if (threadIdx.x == 0) *out_ns = static_cast<double>(now_ns() - t0) / iters;
}
