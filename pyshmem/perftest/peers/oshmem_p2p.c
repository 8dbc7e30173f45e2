/* Point-to-point figures of an OpenSHMEM C library, for `perftest compare`.
 *
 *   oshcc -O2 oshmem_p2p.c -o oshmem_p2p
 *   oshrun --mca osc ^rdma -np 2 ./oshmem_p2p ITERS BATCHES WINDOW SIZE...
 *
 * (Open MPI 4.1's osc/rdma component crashes in shmem_finalize on Debian 12; the
 * one-sided MPI component is not used by OpenSHMEM, so compare excludes it.)
 *
 * The same figures, loops and batch medians as shmem_p2p.py (put_latency: put + quiet;
 * ping_pong: put, fence, flag put, answered the same way, half a round trip; put_bw: a
 * window of put_nbi + quiet). PE 0 prints one JSON object per figure; PE 1 checks the
 * data and exits 1 when it is wrong. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static long iterations(long base, size_t nbytes) {
  const long k = base * 4096 / (long)(nbytes > 4096 ? nbytes : 4096);
  return k > 4 ? k : 4;
}

static void fill(unsigned char* p, size_t n, int salt) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)((i * 131 + salt * 7 + 1) & 0xFF);
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s ITERS BATCHES WINDOW SIZE...\n", argv[0]);
    return 2;
  }
  const long base = atol(argv[1]);
  const int batches = atoi(argv[2]), window = atoi(argv[3]);
  size_t biggest = 0;
  for (int a = 4; a < argc; ++a)
    if ((size_t)atoll(argv[a]) > biggest) biggest = (size_t)atoll(argv[a]);
  shmem_init();
  const int me = shmem_my_pe();
  if (shmem_n_pes() != 2) {
    if (me == 0) fprintf(stderr, "oshmem_p2p: needs exactly 2 PEs\n");
    shmem_finalize();
    return 2;
  }
  unsigned char* src = shmem_malloc(biggest);
  unsigned char* dst = shmem_malloc(biggest);
  long long* flag = shmem_malloc(sizeof(long long));
  unsigned char* want = malloc(biggest);
  double* samples = malloc(sizeof(double) * (size_t)batches);
  int bad = 0;
  const char* figures[] = {"put_latency", "ping_pong", "put_bw"};
  for (int a = 4; a < argc; ++a) {
    const size_t n = (size_t)atoll(argv[a]);
    fill(want, n, a - 4);
    for (int f = 0; f < 3; ++f) {
      if (me == 0) memcpy(src, want, n);
      else memset(src, 0, n);
      memset(dst, 0, n);
      *flag = 0;
      shmem_barrier_all();
      const long k = iterations(base, n);
      long long i = 0;
      for (int b = 0; b <= batches; ++b) { /* batch 0 warms up */
        double t0 = now_s(), v = 0;
        if (f == 0 && me == 0) {
          for (long j = 0; j < k; ++j) {
            shmem_putmem(dst, src, n, 1);
            shmem_quiet();
          }
          v = (now_s() - t0) / k * 1e6;
        } else if (f == 2 && me == 0) {
          const long reps = k / window > 1 ? k / window : 1;
          for (long r = 0; r < reps; ++r) {
            for (int w = 0; w < window; ++w) shmem_putmem_nbi(dst, src, n, 1);
            shmem_quiet();
          }
          v = (double)n * window * reps / (now_s() - t0) / 1e9;
        } else if (f == 1) {
          for (long j = 0; j < k; ++j) {
            ++i;
            if (me == 1) shmem_longlong_wait_until(flag, SHMEM_CMP_GE, i);
            shmem_putmem(dst, me == 0 ? src : dst, n, 1 - me);
            shmem_fence();
            shmem_longlong_p(flag, i, 1 - me);
            if (me == 0) shmem_longlong_wait_until(flag, SHMEM_CMP_GE, i);
          }
          v = (now_s() - t0) / k / 2 * 1e6;
        }
        if (b) samples[b - 1] = v;
      }
      if (me == 0)
        printf("{\"figure\": \"%s\", \"bytes\": %zu, \"value\": %.6g, \"unit\": \"%s\"}\n", figures[f], n,
               median(samples, batches), f == 2 ? "GB/s" : "us");
      shmem_barrier_all();
      if (me == 1 && memcmp(dst, want, n) != 0) {
        fprintf(stderr, "oshmem_p2p on PE 1: %s of %zu bytes delivered wrong data\n", figures[f], n);
        bad = 1;
      }
    }
  }
  fflush(stdout);
  shmem_barrier_all();
  shmem_free(flag);
  shmem_free(dst);
  shmem_free(src);
  free(samples);
  free(want);
  shmem_finalize();
  return bad;
}
