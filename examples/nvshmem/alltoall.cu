// An all-to-all written as an NVSHMEM program: block j of every PE's `send` goes to PE j,
// landing at slot (my PE) of its `recv`. One CUDA block per destination PE puts its
// chunk with nvshmemx_float_put_signal_nbi_block, which adds 1 to the destination's
// arrival counter after the data; each PE's kernel then waits for all npes arrivals.
// The result is checked against nvshmemx_float_alltoall_on_stream, NVSHMEM's collective.
//
//   pyshmem-nvcc --cpu examples/nvshmem/alltoall.cu -o alltoall     (no GPU needed)
//   shmemrun -n 4 ./alltoall
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>

constexpr int kChunk = 1024;  // floats per (source, destination) pair

__global__ void alltoall(float* recv, const float* send, uint64_t* arrived, uint64_t round) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const int dest = (me + blockIdx.x) % npes;  // block b sends to PE me+b: spread the load
  nvshmemx_float_put_signal_nbi_block(recv + me * kChunk, send + dest * kChunk, kChunk, arrived, 1,
                                      NVSHMEM_SIGNAL_ADD, dest);
  if (blockIdx.x == 0 && threadIdx.x == 0) nvshmem_signal_wait_until(arrived, NVSHMEM_CMP_GE, round * npes);
}

int main() {
  nvshmem_init();
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int devices = 1;  // one GPU per PE of the node, or PEs sharing the node's GPUs
  cudaGetDeviceCount(&devices);
  cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % devices);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  const size_t n = size_t(npes) * kChunk;
  float* send = static_cast<float*>(nvshmem_malloc(n * sizeof(float)));
  float* recv = static_cast<float*>(nvshmem_malloc(n * sizeof(float)));
  float* reference = static_cast<float*>(nvshmem_malloc(n * sizeof(float)));
  uint64_t* arrived = static_cast<uint64_t*>(nvshmem_calloc(1, sizeof(uint64_t)));
  float* host = static_cast<float*>(malloc(n * sizeof(float)));
  for (size_t i = 0; i < n; ++i) host[i] = float(me * 100000 + int(i));  // value names source and index
  cudaMemcpyAsync(send, host, n * sizeof(float), cudaMemcpyHostToDevice, stream);
  nvshmemx_barrier_all_on_stream(stream);

  const int rounds = 3;
  for (int r = 1; r <= rounds; ++r) {
    alltoall<<<npes, 128, 0, stream>>>(recv, send, arrived, r);
    nvshmemx_barrier_all_on_stream(stream);  // every PE's recv is complete before the next round
  }
  nvshmemx_float_alltoall_on_stream(NVSHMEM_TEAM_WORLD, reference, send, kChunk, stream);
  float* got = static_cast<float*>(malloc(n * sizeof(float)));
  cudaMemcpyAsync(got, recv, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaMemcpyAsync(host, reference, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  if (cudaStreamSynchronize(stream) != cudaSuccess) return 1;

  int errors = 0;
  for (int src = 0; src < npes; ++src)
    for (int k = 0; k < kChunk; ++k) {
      const float want = float(src * 100000 + me * kChunk + k);  // src's block `me`, element k
      const size_t at = size_t(src) * kChunk + k;
      if ((got[at] != want || host[at] != want) && errors++ < 3)
        fprintf(stderr, "PE %d: recv[%zu] = %g, alltoall gives %g, expected %g\n", me, at, got[at], host[at], want);
    }
  printf("PE %d of %d: all-to-all of %d floats per pair, %d rounds: %s\n", me, npes, kChunk, rounds,
         errors ? "FAILED" : "OK");
  free(got);
  free(host);
  nvshmem_free(arrived);
  nvshmem_free(reference);
  nvshmem_free(recv);
  nvshmem_free(send);
  cudaStreamDestroy(stream);
  nvshmem_finalize();
  return errors ? 1 : 0;
}
