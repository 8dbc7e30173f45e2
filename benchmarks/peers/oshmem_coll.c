/* Collective latency of an OpenSHMEM implementation (Open MPI's OSHMEM here), the peer
 * that benchmarks/bench_coll.py runs side by side with pyshmem. OpenSHMEM 1.4 active-set
 * routines (Open MPI 4.1 has no 1.5 teams): barrier_all, broadcast64, fcollect64,
 * alltoall64 and long_sum_to_all over all PEs.
 *
 * Usage: oshrun -np N ./oshmem_coll ITERS_BYTES SIZE...  (SIZE: bytes per PE block)
 * Prints one JSON object per (op, size) from PE 0: the mean latency of a call in µs
 * over the median of 3 timed loops. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static long psync[SHMEM_REDUCE_SYNC_SIZE > SHMEM_BCAST_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE : SHMEM_BCAST_SYNC_SIZE];
static long psync2[SHMEM_ALLTOALL_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE ? SHMEM_ALLTOALL_SYNC_SIZE
                                                                        : SHMEM_COLLECT_SYNC_SIZE];

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const long budget = argc > 1 ? atol(argv[1]) : (1L << 24);
  size_t max = 8;
  for (int a = 2; a < argc; ++a)
    if ((size_t)atol(argv[a]) > max) max = (size_t)atol(argv[a]);
  char* src = shmem_malloc(max * n);
  char* dst = shmem_malloc(max * n);
  long* pwrk = shmem_malloc(sizeof(long) * (max / 8 / 2 + 1 > SHMEM_REDUCE_MIN_WRKDATA_SIZE
                                                 ? max / 8 / 2 + 1 : SHMEM_REDUCE_MIN_WRKDATA_SIZE));
  memset(src, me + 1, max * n);
  for (size_t i = 0; i < sizeof psync / sizeof *psync; ++i) psync[i] = SHMEM_SYNC_VALUE;
  for (size_t i = 0; i < sizeof psync2 / sizeof *psync2; ++i) psync2[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();
  const char* ops[] = {"barrier_all", "broadcast", "fcollect", "alltoall", "sum_reduce"};
  for (int o = 0; o < 5; ++o) {
    for (int a = 2; a < argc; ++a) {
      const size_t bytes = (size_t)atol(argv[a]);
      if (o == 0 && a > 2) break;  /* the barrier has no size */
      long iters = budget / (long)(bytes * n + 4096);
      if (iters < 5) iters = 5;
      if (iters > 2000) iters = 2000;
      double loops[3];
      for (int r = -1; r < 3; ++r) { /* r == -1: warm-up */
        shmem_barrier_all();
        const double t0 = now_us();
        for (long i = 0; i < iters; ++i) {
          switch (o) {
            case 0: shmem_barrier_all(); break;
            case 1: shmem_broadcast64(dst, src, bytes / 8, 0, 0, 0, n, psync); break;
            case 2: shmem_fcollect64(dst, src, bytes / 8, 0, 0, n, psync2); break;
            case 3: shmem_alltoall64(dst, src, bytes / 8, 0, 0, n, psync2); break;
            case 4: shmem_long_sum_to_all((long*)dst, (long*)src, (int)(bytes / 8), 0, 0, n, pwrk, psync); break;
          }
          /* active-set collectives reuse pSync: OpenSHMEM 1.4 needs a barrier between
           * calls that reuse it; the others' loops run the same extra barrier. */
          if (o != 0) shmem_barrier_all();
        }
        if (r >= 0) loops[r] = (now_us() - t0) / iters;
      }
      qsort(loops, 3, sizeof *loops, cmp);
      if (me == 0)
        printf("{\"system\": \"oshmem\", \"op\": \"%s\", \"npes\": %d, \"bytes\": %zu, \"us\": %.3f, \"iters\": %ld}\n",
               ops[o], n, o == 0 ? (size_t)0 : bytes, loops[1], iters);
      fflush(stdout);
    }
  }
  shmem_barrier_all();
  shmem_finalize();
  return 0;
}
