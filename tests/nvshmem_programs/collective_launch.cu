// nvshmemx_collective_launch with a grid-synchronising kernel, on-stream collectives
// (nvshmemx_int_sum_reduce_on_stream, nvshmemx_barrier_all_on_stream) and events timing
// a loop, written as NVSHMEM programs are. Run by tests/pe/test_nvshmem_programs.py.
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "cuda_check.h"

#include <cstdio>
#include <cstdlib>

namespace cg = cooperative_groups;

// Phase 1: every block writes its partial sum; grid sync; phase 2: block 0 adds them up
// and puts the PE's total into slot `mype` of every PE's `totals` (all-gather by put).
__global__ void grid_sum(const int* in, int n, int* partial, int* totals) {
  cg::grid_group grid = cg::this_grid();
  __shared__ int acc;
  if (threadIdx.x == 0) acc = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&acc, in[i]);
  __syncthreads();
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
  grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    const int me = nvshmem_my_pe();
    for (int pe = 0; pe < nvshmem_n_pes(); ++pe) nvshmem_int_p(totals + me, total, pe);
    nvshmem_quiet();
  }
}

int main() {
  nvshmem_init();
  const int mype = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int devices = 1;  // one GPU per PE of the node, or PEs sharing the node's GPUs
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % devices));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const int n = 4096;
  int *in, *partial;
  CUDA_CHECK(cudaMalloc(&in, n * sizeof(int)));
  int* host = static_cast<int*>(malloc(n * sizeof(int)));
  for (int i = 0; i < n; ++i) host[i] = (mype + 1) * (i % 7);
  CUDA_CHECK(cudaMemcpy(in, host, n * sizeof(int), cudaMemcpyHostToDevice));
  int* totals = static_cast<int*>(nvshmem_calloc(npes, sizeof(int)));
  int* reduced = static_cast<int*>(nvshmem_malloc(npes * sizeof(int)));

  int grid = 0;
  const dim3 block(128);
  if (nvshmemx_collective_launch_query_gridsize((const void*)grid_sum, block, nullptr, 0, &grid) != 0 || grid < 1) {
    fprintf(stderr, "query_gridsize failed\n");
    return 1;
  }
  grid = grid > 8 ? 8 : grid;
  CUDA_CHECK(cudaMalloc(&partial, grid * sizeof(int)));
  int nn = n;
  void* args[] = {&in, &nn, &partial, &totals};

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const int iters = 5;
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int it = 0; it < iters; ++it) {
    if (nvshmemx_collective_launch((const void*)grid_sum, dim3(grid), block, args, 0, stream) != 0) return 1;
    nvshmemx_barrier_all_on_stream(stream);
  }
  CUDA_CHECK(cudaEventRecord(stop, stream));
  // Sum over the PEs of every PE's totals: each slot j holds PE j's total everywhere.
  nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, reduced, totals, npes, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  float ms = -1;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  int* got_totals = static_cast<int*>(malloc(npes * sizeof(int)));
  int* got_reduced = static_cast<int*>(malloc(npes * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(got_totals, totals, npes * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(got_reduced, reduced, npes * sizeof(int), cudaMemcpyDeviceToHost));
  int per_pe_unit = 0;
  for (int i = 0; i < n; ++i) per_pe_unit += i % 7;
  int errors = 0;
  for (int j = 0; j < npes; ++j) {
    const int want_total = (j + 1) * per_pe_unit;
    if (got_totals[j] != want_total || got_reduced[j] != npes * want_total) {
      if (errors++ < 3)
        fprintf(stderr, "PE %d: totals[%d]=%d reduced[%d]=%d, expected %d and %d\n", mype, j, got_totals[j], j,
                got_reduced[j], want_total, npes * want_total);
    }
  }
  if (!(ms >= 0)) errors++;
  printf("PE %d of %d: collective launch of %d blocks, %d iterations in %.3f ms: %s\n", mype, npes, grid, iters, ms,
         errors ? "FAILED" : "OK");
  nvshmem_free(reduced);
  nvshmem_free(totals);
  CUDA_CHECK(cudaFree(partial));
  CUDA_CHECK(cudaFree(in));
  free(host);
  free(got_totals);
  free(got_reduced);
  nvshmem_finalize();
  return errors ? 1 : 0;
}
