// An NVSHMEM program as NVSHMEM's documentation writes them: host main() and kernels,
// <<<>>> launches, cudaMalloc/cudaMemcpy, a stream, on-stream barriers. Built with
// pyshmem-nvcc and run under shmemrun by tests/pe/test_nvshmem_programs.py.
//
// PE 0's block of ints travels the ring 0 -> 1 -> ... -> npes-1, each hop an
// nvshmem_int_put + nvshmem_fence + nvshmemx_signal_op that the next PE waits for.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "cuda_check.h"

__global__ void ring_bcast(int* data, size_t n, uint64_t* sig) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    if (me > 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, 1);
    if (me < npes - 1) {
      nvshmem_int_put(data, data, n, me + 1);
#ifndef RING_WITHOUT_FENCE  // the ordering check's test builds it without, to see it fail
      nvshmem_fence();
#endif
      nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_SET, me + 1);
    }
    nvshmem_quiet();
  }
}

// Every thread of every block fills its share of the local block.
__global__ void fill(int* data, size_t n, int value) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) data[i] = value + int(i);
}

int main() {
  nvshmem_init();
  const int mype = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const int mype_node = nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE);
  int devices = 1;  // one GPU per PE of the node, or PEs sharing the node's GPUs
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaSetDevice(mype_node % devices));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  const size_t n = 1000;
  int* data = static_cast<int*>(nvshmem_malloc(n * sizeof(int)));
  uint64_t* sig = static_cast<uint64_t*>(nvshmem_calloc(1, sizeof(uint64_t)));
  fill<<<4, 64, 0, stream>>>(data, n, mype == 0 ? 1000 : -1);
  nvshmemx_barrier_all_on_stream(stream);  // every PE's block is filled before the ring starts
  ring_bcast<<<1, 32, 0, stream>>>(data, n, sig);
  nvshmemx_barrier_all_on_stream(stream);

  int* host = nullptr;
  CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host), n * sizeof(int)));
  CUDA_CHECK(cudaMemcpyAsync(host, data, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  int errors = 0;
  for (size_t i = 0; i < n; ++i)
    if (host[i] != 1000 + int(i)) {
      if (errors++ < 3) fprintf(stderr, "PE %d: data[%zu] = %d, expected %d\n", mype, i, host[i], 1000 + int(i));
    }
  printf("PE %d of %d: ring broadcast %s\n", mype, npes, errors ? "FAILED" : "OK");
  CUDA_CHECK(cudaFreeHost(host));
  nvshmem_free(sig);
  nvshmem_free(data);
  CUDA_CHECK(cudaStreamDestroy(stream));
  nvshmem_finalize();
  return errors ? 1 : 0;
}
