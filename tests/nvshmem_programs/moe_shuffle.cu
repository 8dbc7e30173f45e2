// An MoE token shuffle as NVSHMEM code writes it: each PE routes its tokens to expert
// owners. One 128-thread block counts tokens per destination in dynamic shared memory
// (extern __shared__), reserves space on each destination with nvshmem_int64_atomic_fetch_add,
// and each warp moves its token rows with nvshmemx_float_put_nbi_warp, then the block
// checks a neighbour's counter with nvshmem_int64_g. Run by tests/pe/test_nvshmem_programs.py.
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kHidden = 16;     // floats per token
constexpr int kTokens = 64;     // tokens per PE
constexpr int kThreads = 128;

// Token t of PE p goes to PE (p + t) % npes; its row is filled with p * 1000 + t.
__device__ int route(int pe, int t, int npes) { return (pe + t) % npes; }

__global__ void shuffle(const float* tokens, float* inbox, long long* fill, int* total_sent) {
  extern __shared__ int counts[];  // one per destination PE
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  for (int p = threadIdx.x; p < npes; p += blockDim.x) counts[p] = 0;
  __syncthreads();
  for (int t = threadIdx.x; t < kTokens; t += blockDim.x) atomicAdd(&counts[route(me, t, npes)], 1);
  __syncthreads();
  // Each warp moves token rows: lane 0 reserves a slot on the destination, the whole warp puts.
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32, lane = threadIdx.x % 32;
  for (int t = warp; t < kTokens; t += warps) {
    const int dest = route(me, t, npes);
    long long slot = 0;
    if (lane == 0) slot = nvshmem_int64_atomic_fetch_add(reinterpret_cast<int64_t*>(fill), 1, dest);
    slot = __shfl_sync(0xffffffffu, slot, 0);
    nvshmemx_float_put_nbi_warp(inbox + slot * kHidden, tokens + t * kHidden, kHidden, dest);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    nvshmem_quiet();
    int sent = 0;
    for (int p = 0; p < npes; ++p) sent += counts[p];
    *total_sent = sent;
  }
}

__global__ void peek(long long* fill, long long* seen) {
  const int npes = nvshmem_n_pes();
  if (threadIdx.x == 0) *seen = nvshmem_int64_g(reinterpret_cast<int64_t*>(fill), (nvshmem_my_pe() + 1) % npes);
}

int main() {
  nvshmem_init();
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int devices = 1;  // one GPU per PE of the node, or PEs sharing the node's GPUs
  cudaGetDeviceCount(&devices);
  cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % devices);
  float* tokens = static_cast<float*>(nvshmem_malloc(kTokens * kHidden * sizeof(float)));
  float* inbox = static_cast<float*>(nvshmem_malloc(npes * kTokens * kHidden * sizeof(float)));
  long long* fill = static_cast<long long*>(nvshmem_calloc(1, sizeof(long long)));
  int* sent = nullptr;
  long long* seen = nullptr;
  cudaMalloc(&sent, sizeof(int));
  cudaMalloc(&seen, sizeof(long long));
  float* host = static_cast<float*>(malloc(npes * kTokens * kHidden * sizeof(float)));
  for (int t = 0; t < kTokens; ++t)
    for (int h = 0; h < kHidden; ++h) host[t * kHidden + h] = me * 1000 + t;
  cudaMemcpy(tokens, host, kTokens * kHidden * sizeof(float), cudaMemcpyHostToDevice);
  nvshmem_barrier_all();

  shuffle<<<1, kThreads, npes * sizeof(int)>>>(tokens, inbox, fill, sent);
  nvshmemx_barrier_all_on_stream(0);
  peek<<<1, 32>>>(fill, seen);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;

  // Received: one row from every (PE p, token t) with route(p, t) == me, in any order.
  long long nfill = 0, nseen = 0;
  int nsent = 0;
  cudaMemcpy(&nfill, fill, sizeof nfill, cudaMemcpyDeviceToHost);
  cudaMemcpy(&nsent, sent, sizeof nsent, cudaMemcpyDeviceToHost);
  cudaMemcpy(&nseen, seen, sizeof nseen, cudaMemcpyDeviceToHost);
  int expected = 0, errors = 0;
  std::vector<int> got(npes * kTokens, 0);
  for (int p = 0; p < npes; ++p)
    for (int t = 0; t < kTokens; ++t) expected += (p + t) % npes == me;
  cudaMemcpy(host, inbox, nfill * kHidden * sizeof(float), cudaMemcpyDeviceToHost);
  for (long long r = 0; r < nfill; ++r) {
    const int v = static_cast<int>(host[r * kHidden]);
    const int p = v / 1000, t = v % 1000;
    bool row_ok = p >= 0 && p < npes && t >= 0 && t < kTokens && (p + t) % npes == me;
    for (int h = 1; h < kHidden && row_ok; ++h) row_ok = host[r * kHidden + h] == v;
    if (!row_ok || got[p * kTokens + t]++) errors++;
  }
  if (nfill != expected || nsent != kTokens) errors++;
  long long right_expected = 0;
  for (int p = 0; p < npes; ++p)
    for (int t = 0; t < kTokens; ++t) right_expected += (p + t) % npes == (me + 1) % npes;
  if (nseen != right_expected) errors++;
  printf("PE %d of %d: received %lld token rows (expected %d), neighbour holds %lld: %s\n", me, npes, nfill, expected,
         nseen, errors ? "FAILED" : "OK");
  cudaFree(seen);
  cudaFree(sent);
  free(host);
  nvshmem_free(fill);
  nvshmem_free(inbox);
  nvshmem_free(tokens);
  nvshmem_finalize();
  return errors ? 1 : 0;
}
