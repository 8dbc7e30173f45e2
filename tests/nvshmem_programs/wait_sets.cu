// Waits and tests on arrays of signals, as NVSHMEM's documentation writes them: every PE
// sends a chunk to every PE with put_signal_nbi, and the receiver handles the chunks in
// arrival order with nvshmem_uint64_wait_until_any (one at a time, excluding what it has
// handled through the status mask) and then nvshmem_uint64_wait_until_some (several at
// once); per-sender counters end with nvshmem_int64_wait_until_all_vector; the test_*
// family checks the final state; host code waits with the _on_stream forms; a collect
// gathers a different number of elements from every PE. Built with pyshmem-nvcc and run
// under shmemrun by tests/pe/test_nvshmem_programs.py.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "cuda_check.h"

constexpr int kChunk = 64;
constexpr int kMaxPes = 16;

// errors[0] counts failed checks; errors[1] the line of the first.
__device__ void check(bool ok, int line, int* errors) {
  if (!ok && atomicAdd(&errors[0], 1) == 0) errors[1] = line;
}
#define CHECK(cond) check((cond), __LINE__, errors)

__device__ int expected(int sender, int round, int k) { return 1000 * round + 100 * sender + k; }

// One chunk per PE: recv[me] on PE p <- my data, then flags[me] on p = 1.
__global__ void send_all(int* recv, int* src, uint64_t* flags, int round) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  for (int k = threadIdx.x; k < kChunk; k += blockDim.x) src[k] = expected(me, round, k);
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i <= npes; ++i) {
      const int peer = (me + i) % npes;
      nvshmem_int_put_signal_nbi(recv + me * kChunk, src, kChunk, flags + me, 1, NVSHMEM_SIGNAL_SET, peer);
    }
    nvshmem_quiet();
  }
}

// Handle the chunks in the order they arrive: wait_until_any, then leave that one out.
__global__ void receive_any(const int* recv, uint64_t* flags, int* status, int* errors) {
  const int npes = nvshmem_n_pes();
  int handled = 0;
  for (;;) {
    const size_t i = nvshmem_uint64_wait_until_any(flags, npes, status, NVSHMEM_CMP_EQ, 1);
    if (i == SIZE_MAX) break;
    CHECK(i < size_t(npes) && status[i] == 0 && flags[i] == 1);
    for (int k = 0; k < kChunk; ++k) CHECK(recv[i * kChunk + k] == expected(int(i), 0, k));
    status[i] = 1;
    ++handled;
  }
  CHECK(handled == npes);
  // Everything excluded: the wait set is empty, nothing blocks.
  CHECK(nvshmem_uint64_wait_until_any(flags, npes, status, NVSHMEM_CMP_EQ, 7) == SIZE_MAX);
  CHECK(nvshmem_uint64_wait_until_some(flags, npes, nullptr, status, NVSHMEM_CMP_EQ, 7) == 0);
  nvshmem_uint64_wait_until_all(flags, npes, status, NVSHMEM_CMP_EQ, 7);
  CHECK(nvshmem_uint64_test_all(flags, 0, nullptr, NVSHMEM_CMP_EQ, 7) == 1);
}

// Several at a time: wait_until_some returns every chunk that has arrived.
__global__ void receive_some(const int* recv, uint64_t* flags, int* status, int* errors) {
  const int npes = nvshmem_n_pes();
  size_t indices[kMaxPes];
  int handled = 0, rounds = 0;
  while (handled < npes) {
    const size_t n = nvshmem_uint64_wait_until_some(flags, npes, indices, status, NVSHMEM_CMP_EQ, 1);
    CHECK(n >= 1 && n <= size_t(npes - handled));
    for (size_t j = 0; j < n; ++j) {
      const size_t i = indices[j];
      CHECK(i < size_t(npes) && status[i] == 0 && (j == 0 || indices[j - 1] < i));
      for (int k = 0; k < kChunk; ++k) CHECK(recv[i * kChunk + k] == expected(int(i), 1, k));
      status[i] = 1;
    }
    handled += int(n);
    ++rounds;
  }
  CHECK(handled == npes && rounds >= 1);
}

// Sender j adds j + 1 to counts[j] on every PE, twice.
__global__ void count_up(int64_t* counts) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  for (int r = 0; r < 2; ++r)
    for (int p = 0; p < npes; ++p) nvshmem_int64_atomic_add(counts + me, me + 1, p);
}

__global__ void check_counts(int64_t* counts, int64_t* want, uint64_t* flags, int* errors) {
  const int npes = nvshmem_n_pes();
  for (int j = 0; j < npes; ++j) want[j] = 2 * (j + 1);
  nvshmem_int64_wait_until_all_vector(counts, npes, nullptr, NVSHMEM_CMP_EQ, want);
  for (int j = 0; j < npes; ++j) CHECK(counts[j] == 2 * (j + 1));
  CHECK(nvshmem_int64_test_all_vector(counts, npes, nullptr, NVSHMEM_CMP_EQ, want) == 1);
  CHECK(nvshmem_int64_test_any_vector(counts, npes, nullptr, NVSHMEM_CMP_GT, want) == SIZE_MAX);
  CHECK(nvshmem_int64_wait_until_any_vector(counts, npes, nullptr, NVSHMEM_CMP_GE, want) == 0);
  size_t idx[kMaxPes];
  CHECK(nvshmem_int64_test_some_vector(counts, npes, idx, nullptr, NVSHMEM_CMP_LE, want) == size_t(npes));
  CHECK(nvshmem_int64_wait_until_some_vector(counts, npes, idx, nullptr, NVSHMEM_CMP_EQ, want) == size_t(npes));
  // The final state of the flags through the test family, with a status mask that
  // keeps only the odd indices.
  int odd[kMaxPes];
  for (int j = 0; j < npes; ++j) odd[j] = (j % 2 == 0);
  CHECK(nvshmem_uint64_test_all(flags, npes, nullptr, NVSHMEM_CMP_EQ, 1) == 1);
  CHECK(nvshmem_uint64_test_all(flags, npes, nullptr, NVSHMEM_CMP_NE, 1) == 0);
  CHECK(nvshmem_uint64_test_any(flags, npes, odd, NVSHMEM_CMP_EQ, 1) == (npes > 1 ? 1 : SIZE_MAX));
  CHECK(nvshmem_uint64_test_any(flags, npes, nullptr, NVSHMEM_CMP_GT, 1) == SIZE_MAX);
  CHECK(nvshmem_uint64_test_some(flags, npes, idx, odd, NVSHMEM_CMP_EQ, 1) == size_t(npes / 2));
  for (int j = 0; j < npes / 2; ++j) CHECK(idx[j] == size_t(2 * j + 1));
  CHECK(nvshmem_uint64_test_some(flags, npes, idx, nullptr, NVSHMEM_CMP_LT, 1) == 0);
}

// PE j brings j + 1 elements; dest holds them back to back.
__global__ void gather(int* dest, int* src, int* errors, bool block) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  for (int k = threadIdx.x; k <= me; k += blockDim.x) src[k] = 100 * me + k;
  __syncthreads();
  if (block) nvshmemx_int_collect_block(NVSHMEM_TEAM_WORLD, dest, src, me + 1);
  else if (threadIdx.x == 0) nvshmem_int_collect(NVSHMEM_TEAM_WORLD, dest, src, me + 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    int at = 0;
    for (int j = 0; j < npes; ++j)
      for (int k = 0; k <= j; ++k) CHECK(dest[at++] == 100 * j + k);
  }
}

__global__ void clear(int* dest, int n) {
  for (int k = threadIdx.x; k < n; k += blockDim.x) dest[k] = -1;
}

int main() {
  nvshmem_init();
  const int mype = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (npes > kMaxPes) {
    fprintf(stderr, "this program handles at most %d PEs\n", kMaxPes);
    return 2;
  }
  int devices = 1;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % devices));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  int* recv = static_cast<int*>(nvshmem_malloc(npes * kChunk * sizeof(int)));
  int* src = static_cast<int*>(nvshmem_malloc(kChunk * sizeof(int)));
  uint64_t* flags = static_cast<uint64_t*>(nvshmem_calloc(3 * npes, sizeof(uint64_t)));
  int64_t* counts = static_cast<int64_t*>(nvshmem_calloc(npes, sizeof(int64_t)));
  const int gathered = npes * (npes + 1) / 2;
  int* dest = static_cast<int*>(nvshmem_malloc(gathered * sizeof(int)));
  int* gsrc = static_cast<int*>(nvshmem_malloc(npes * sizeof(int)));
  int *status, *errors;
  int64_t* want;
  CUDA_CHECK(cudaMalloc(&status, 2 * npes * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&errors, 2 * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&want, npes * sizeof(int64_t)));
  CUDA_CHECK(cudaMemset(status, 0, 2 * npes * sizeof(int)));
  CUDA_CHECK(cudaMemset(errors, 0, 2 * sizeof(int)));

  // Round 0: chunks handled one at a time as they arrive.
  nvshmemx_barrier_all_on_stream(stream);
  send_all<<<1, 64, 0, stream>>>(recv, src, flags, 0);
  receive_any<<<1, 1, 0, stream>>>(recv, flags, status, errors);
  nvshmemx_barrier_all_on_stream(stream);  // every PE has read round 0 before recv is reused
  // Round 1: several at a time.
  send_all<<<1, 64, 0, stream>>>(recv, src, flags + npes, 1);
  receive_some<<<1, 1, 0, stream>>>(recv, flags + npes, status + npes, errors);
  nvshmemx_barrier_all_on_stream(stream);
  // Round 2: the host waits on the stream for every PE's signal, then for one of them.
  send_all<<<1, 64, 0, stream>>>(recv, src, flags + 2 * npes, 2);
  nvshmemx_uint64_wait_until_all_on_stream(flags + 2 * npes, npes, nullptr, NVSHMEM_CMP_EQ, 1, stream);
  nvshmemx_uint64_wait_until_on_stream(flags + 2 * npes + (mype + 1) % npes, NVSHMEM_CMP_EQ, 1, stream);
  count_up<<<1, 1, 0, stream>>>(counts);
  check_counts<<<1, 1, 0, stream>>>(counts, want, flags, errors);
  // collect from one thread, then from a whole block, then on the stream.
  nvshmemx_barrier_all_on_stream(stream);
  gather<<<1, 1, 0, stream>>>(dest, gsrc, errors, false);
  clear<<<1, 64, 0, stream>>>(dest, gathered);
  nvshmemx_barrier_all_on_stream(stream);
  gather<<<1, 128, 0, stream>>>(dest, gsrc, errors, true);
  clear<<<1, 64, 0, stream>>>(dest, gathered);
  nvshmemx_int_collect_on_stream(NVSHMEM_TEAM_WORLD, dest, gsrc, mype + 1, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  int host_errors[2];
  CUDA_CHECK(cudaMemcpy(host_errors, errors, sizeof host_errors, cudaMemcpyDeviceToHost));
  int* got = static_cast<int*>(malloc(gathered * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(got, dest, gathered * sizeof(int), cudaMemcpyDeviceToHost));
  int at = 0, collect_errors = 0;
  for (int j = 0; j < npes; ++j)
    for (int k = 0; k <= j; ++k) collect_errors += got[at++] != 100 * j + k;
  nvshmem_barrier_all();
  if (host_errors[0] || collect_errors)
    printf("PE %d of %d: FAILED: %d failed checks (first at line %d), %d wrong elements after collect_on_stream\n",
           mype, npes, host_errors[0], host_errors[1], collect_errors);
  else
    printf("PE %d of %d: %d chunks by wait_until_any, %d by wait_until_some, counters, tests, collect: OK\n", mype,
           npes, npes, npes);
  free(got);
  CUDA_CHECK(cudaFree(status));
  CUDA_CHECK(cudaFree(errors));
  CUDA_CHECK(cudaFree(want));
  nvshmem_free(gsrc);
  nvshmem_free(dest);
  nvshmem_free(counts);
  nvshmem_free(flags);
  nvshmem_free(src);
  nvshmem_free(recv);
  CUDA_CHECK(cudaStreamDestroy(stream));
  nvshmem_finalize();
  return host_errors[0] || collect_errors ? 1 : 0;
}
