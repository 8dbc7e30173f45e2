// Put latency and bandwidth as a whole NVSHMEM program (after NVSHMEM's perftest
// shmem_put_latency and shmem_put_bw), for benchmarks/bench_nvshmem_program.py. Built
// twice with pyshmem-nvcc --cpu: with NVSHMEM's names, and with -DPYSHMEM_NAMES with
// pyshmem's own device-API names; everything else is the same source.
//
//   shmemrun -n 2 ./prog ITERS     PE 0 prints "put_lat_ns <ns per put+quiet> put_bw_GBps <GB/s>"
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>

#if defined(PYSHMEM_NAMES)
#define PUT8(d, s, pe) pyshmem::put(d, s, 1, pe)
#define QUIET() pyshmem::quiet()
#define PUTMEM_BLOCK(d, s, n, pe) pyshmem::putmem_block(d, s, n, pe)
#else
#define PUT8(d, s, pe) nvshmem_longlong_put(d, s, 1, pe)
#define QUIET() nvshmem_quiet()
#define PUTMEM_BLOCK(d, s, n, pe) nvshmemx_putmem_block(d, s, n, pe)
#endif

__global__ void put_lat(long long* dst, const long long* src, long long iters) {
  for (long long i = 0; i < iters; ++i) {
    PUT8(dst, src, 1);
    QUIET();
  }
}

__global__ void put_bw(char* dst, const char* src, size_t bytes, long long iters) {
  for (long long i = 0; i < iters; ++i) PUTMEM_BLOCK(dst, src, bytes, 1);
  if (threadIdx.x == 0) QUIET();
}

int main(int argc, char** argv) {
  const long long iters = argc > 1 ? atoll(argv[1]) : 20000;
  nvshmem_init();
  const size_t bytes = 64 * 1024;
  long long* dst8 = static_cast<long long*>(nvshmem_calloc(1, sizeof(long long)));
  long long* src8 = static_cast<long long*>(nvshmem_calloc(1, sizeof(long long)));
  char* dst = static_cast<char*>(nvshmem_calloc(bytes, 1));
  char* src = static_cast<char*>(nvshmem_calloc(bytes, 1));
  cudaEvent_t t0, t1, t2;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  cudaEventCreate(&t2);
  nvshmem_barrier_all();
  if (nvshmem_my_pe() == 0) {
    const long long bw_iters = iters / 20 > 0 ? iters / 20 : 1;
    cudaEventRecord(t0);
    put_lat<<<1, 1>>>(dst8, src8, iters);
    cudaEventRecord(t1);
    put_bw<<<1, 128>>>(dst, src, bytes, bw_iters);
    cudaEventRecord(t2);
    if (cudaEventSynchronize(t2) != cudaSuccess) return 1;
    float lat_ms = 0, bw_ms = 0;
    cudaEventElapsedTime(&lat_ms, t0, t1);
    cudaEventElapsedTime(&bw_ms, t1, t2);
    printf("put_lat_ns %.1f put_bw_GBps %.3f\n", lat_ms * 1e6 / iters, bytes * bw_iters / (bw_ms * 1e-3) / 1e9);
  }
  nvshmem_barrier_all();
  nvshmem_finalize();
  return 0;
}
