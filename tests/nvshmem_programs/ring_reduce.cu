// A chunked ring reduce as NVSHMEM code writes it, whole program: PE p adds its vector to
// the running sum its left neighbour forwarded and sends the result on, chunk by chunk,
// with nvshmemx_float_put_signal_nbi_block from a 128-thread block (one signal per
// chunk); the last PE then broadcasts the total around with nvshmemx_float_put_block and
// nvshmemx_float_put_nbi_block. Run by tests/pe/test_nvshmem_programs.py.
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>

constexpr int kChunk = 256, kChunks = 8, kN = kChunk * kChunks;

__global__ void ring_reduce(float* acc, const float* mine, float* inbox, uint64_t* sig) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  for (int c = 0; c < kChunks; ++c) {
    float* a = acc + c * kChunk;
    if (me > 0 && threadIdx.x == 0) nvshmem_signal_wait_until(sig + c, NVSHMEM_CMP_EQ, 1);
    __syncthreads();
    for (int i = threadIdx.x; i < kChunk; i += blockDim.x)
      a[i] = (me > 0 ? inbox[c * kChunk + i] : 0.0f) + mine[c * kChunk + i];
    __syncthreads();
    if (me < npes - 1)
      nvshmemx_float_put_signal_nbi_block(inbox + c * kChunk, a, kChunk, sig + c, 1, NVSHMEM_SIGNAL_SET, me + 1);
  }
  if (threadIdx.x == 0) nvshmem_quiet();
}

// The last PE holds the total: it puts the first half with the blocking block put and
// the second half with the non-blocking one to every other PE.
__global__ void spread(float* total, const float* acc) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (me != npes - 1) return;
  for (int pe = 0; pe < npes; ++pe) {
    nvshmemx_float_put_block(total, acc, kN / 2, pe);
    nvshmemx_float_put_nbi_block(total + kN / 2, acc + kN / 2, kN / 2, pe);
  }
  if (threadIdx.x == 0) nvshmem_quiet();
}

int main() {
  nvshmem_init();
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int devices = 1;  // one GPU per PE of the node, or PEs sharing the node's GPUs
  cudaGetDeviceCount(&devices);
  cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % devices);
  float* acc = static_cast<float*>(nvshmem_malloc(kN * sizeof(float)));
  float* mine = static_cast<float*>(nvshmem_malloc(kN * sizeof(float)));
  float* inbox = static_cast<float*>(nvshmem_malloc(kN * sizeof(float)));
  float* total = static_cast<float*>(nvshmem_malloc(kN * sizeof(float)));
  uint64_t* sig = static_cast<uint64_t*>(nvshmem_calloc(kChunks, sizeof(uint64_t)));
  float* host = static_cast<float*>(malloc(kN * sizeof(float)));
  for (int i = 0; i < kN; ++i) host[i] = float((me + 1) * (i % 13));
  cudaMemcpy(mine, host, kN * sizeof(float), cudaMemcpyHostToDevice);
  nvshmem_barrier_all();
  ring_reduce<<<1, 128>>>(acc, mine, inbox, sig);
  nvshmemx_barrier_all_on_stream(0);
  spread<<<1, 128>>>(total, acc);
  nvshmemx_barrier_all_on_stream(0);
  if (cudaMemcpy(host, total, kN * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
  const float scale = float(npes * (npes + 1) / 2);
  int errors = 0;
  for (int i = 0; i < kN; ++i)
    if (host[i] != scale * float(i % 13) && errors++ < 3)
      fprintf(stderr, "PE %d: total[%d] = %g, expected %g\n", me, i, host[i], scale * float(i % 13));
  printf("PE %d of %d: ring reduce of %d chunks %s\n", me, npes, kChunks, errors ? "FAILED" : "OK");
  free(host);
  nvshmem_free(sig);
  nvshmem_free(total);
  nvshmem_free(inbox);
  nvshmem_free(mine);
  nvshmem_free(acc);
  nvshmem_finalize();
  return errors ? 1 : 0;
}
