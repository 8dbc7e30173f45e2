// Kernels written the way NVSHMEM's documentation writes them, against <nvshmem.h> and
// <nvshmemx.h> (pyshmem's generated NVSHMEM layer), with no pyshmem names. Driven by
// tests/pe/programs/nvshmem_kernels.py on the CPU build; compiled for sm_90 by
// tests/unit/test_nvshmem_headers.py. extern "C" kernels, no host code.
#include <nvshmem.h>
#include <nvshmemx.h>

// Ring broadcast: PE 0's `n` ints travel PE 0 -> 1 -> ... -> n_pes-1; each hop is
// nvshmem_int_put + nvshmem_fence + nvshmemx_signal_op, and the next PE waits on the signal.
extern "C" __global__ void ring_bcast(int* data, uint64_t* sig, size_t n) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  if (me > 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, 1);
  if (me < npes - 1) {
    nvshmem_int_put(data, data, n, me + 1);
    nvshmem_fence();
    nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_SET, me + 1);
  }
  nvshmem_quiet();
}

// Ring reduce over chunks with put_signal_nbi: each PE adds its contribution to what its
// left neighbour sent and forwards the running sum, chunk by chunk; the last PE holds
// the total. `sig` has one signal per chunk.
extern "C" __global__ void ring_reduce(float* acc, const float* mine, float* inbox, uint64_t* sig,
                                       size_t chunk, int nchunks, uint64_t epoch) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  for (int c = 0; c < nchunks; ++c) {
    float* a = acc + c * chunk;
    if (me > 0) {
      nvshmem_signal_wait_until(sig + c, NVSHMEM_CMP_GE, epoch);
      for (size_t i = 0; i < chunk; ++i) a[i] = inbox[c * chunk + i] + mine[c * chunk + i];
    } else {
      for (size_t i = 0; i < chunk; ++i) a[i] = mine[c * chunk + i];
    }
    if (me < npes - 1)
      nvshmem_float_put_signal_nbi(inbox + c * chunk, a, chunk, sig + c, epoch, NVSHMEM_SIGNAL_SET, me + 1);
  }
  nvshmem_quiet();
}

// Block put from 128 threads: the whole block copies `n` floats to the right neighbour.
extern "C" __global__ void block_put(float* dst, const float* src, size_t n) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  nvshmemx_float_put_block(dst, src, n, (me + 1) % npes);
  if (threadIdx.x == 0) nvshmem_quiet();
}

// Warp and block non-blocking puts, then g of a neighbour's int64 and typed atomics.
// Warp w of the block puts slice w of `src` into `dst` on the left neighbour.
extern "C" __global__ void warp_nbi(int64_t* dst, const int64_t* src, size_t per_warp, int64_t* counter,
                                    int64_t* peek) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const int warp = threadIdx.x / 32, left = (me + npes - 1) % npes;
  nvshmemx_int64_put_nbi_warp(dst + warp * per_warp, src + warp * per_warp, per_warp, left);
  __syncthreads();
  if (threadIdx.x == 0) {
    nvshmem_quiet();
    nvshmem_int64_atomic_add(counter, 1, 0);
    peek[0] = nvshmem_int64_g(src, left);  // the left neighbour's src[0]
    peek[1] = nvshmem_longlong_atomic_fetch_add(reinterpret_cast<long long*>(counter), 0, 0) >= 1;
  }
}

// MoE-style token shuffle: every thread of a block counts its tokens per destination in
// `extern __shared__` counts, one thread sends the counts with nvshmem_int_p, then all
// PEs meet in nvshmem_barrier_all.
extern "C" __global__ void shuffle_counts(const int* dest_of_token, int ntokens, int* counts_in) {
  extern __shared__ int counts[];
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  for (int p = threadIdx.x; p < npes; p += blockDim.x) counts[p] = 0;
  __syncthreads();
  for (int t = threadIdx.x; t < ntokens; t += blockDim.x) atomicAdd(&counts[dest_of_token[t]], 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int p = 0; p < npes; ++p) nvshmem_int_p(counts_in + me, counts[p], p);
    nvshmem_barrier_all();
  }
}

// Team reduction and team queries: the sum over NVSHMEM_TEAM_WORLD of every PE's values.
extern "C" __global__ void team_sum(int* dest, const int* src, size_t n, int* info) {
  nvshmemx_int_sum_reduce_block(NVSHMEM_TEAM_WORLD, dest, src, n);
  if (threadIdx.x == 0) {
    info[0] = nvshmem_team_my_pe(NVSHMEM_TEAM_WORLD);
    info[1] = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE);
    info[2] = nvshmem_ptr(dest, nvshmem_my_pe()) == dest;
  }
}

// Half-precision RMA: nvshmem_half_put / nvshmem_bfloat16_p (NVSHMEM 3's 16-bit floats).
extern "C" __global__ void half_put(__half* dst, const __half* src, size_t n, __nv_bfloat16* bdst, float bval) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  nvshmem_half_put(dst, src, n, (me + 1) % npes);
  nvshmem_bfloat16_p(bdst, __float2bfloat16(bval), (me + 1) % npes);
  nvshmem_quiet();
}

// A comparison that is not an NVSHMEM_CMP_* constant: the wait traps naming the call
// instead of waiting for ever (wait_until, wait_until_any and test alike).
extern "C" __global__ void bad_cmp(int* v, int cmp, int which) {
  if (which == 0) nvshmem_int_wait_until(v, cmp, 0);
  else if (which == 1) (void)nvshmem_int_wait_until_any(v, 1, nullptr, cmp, 0);
  else (void)nvshmem_int_test(v, cmp, 0);
}
