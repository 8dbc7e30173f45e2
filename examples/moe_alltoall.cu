// MoE token exchange as CUDA C++ kernels on the pyshmem device API, written as for a
// GPU: 128 threads (4 warps) per block, counts and offsets shared through __shared__
// memory, tokens copied by whole warps. dispatch sends each PE its tokens (a variable
// number per destination), combine returns the experts' outputs to where the tokens
// came from. Launched from examples/moe_alltoall.py; the same file compiles with nvcc
// for a GPU (extern "C" kernels, no host code).
//
// Layout, on every PE: tokens are rows of `hidden` floats. `send` is packed, as after
// routing: the tokens for PE 0 first, then those for PE 1, ... (send_counts[d] rows for
// PE d, at the exclusive prefix sum of the counts). Slot `src` of a receive buffer
// (max_tokens rows) holds what PE `src` sent. The token count travels in the signal:
// signals[src] = count + 1 on the receiver, set after the data (so a zero-token send is
// still seen), and the receiver waits for every signal to be non-zero.
//
// Ordering: the warps of a block issue their puts (non-blocking), __syncthreads, then
// one thread fences and signals. On load/store peers the puts are stores done before
// the barrier and the fence is a cumulative system fence; behind the proxy, requests
// run in ticket order, so the fence request follows every warp's puts.
//
// Dynamic shared memory: 2 * n_pes ints (launch(..., shared_mem=8 * n_pes)).
#include <pyshmem/device.cuh>

namespace {

constexpr int kWarp = 32;

__device__ int warp_id() { return threadIdx.x / kWarp; }
__device__ int warps() { return (blockDim.x + kWarp - 1) / kWarp; }

// Warp w copies tokens w, w + warps, ... of one destination: each a put of one row.
__device__ void put_tokens(float* dest, const float* src, int count, int hidden, int pe) {
  for (int t = warp_id(); t < count; t += warps())
    pyshmem::put_nbi_warp(dest + static_cast<size_t>(t) * hidden, src + static_cast<size_t>(t) * hidden,
                          static_cast<size_t>(hidden), pe);
}

// Thread i waits for signal first + i * stride (all of this block's share, in parallel).
__device__ void wait_share(uint64_t* signals, int first, int stride, int n) {
  for (int s = first + static_cast<int>(threadIdx.x) * stride; s < n; s += static_cast<int>(blockDim.x) * stride)
    pyshmem::signal_wait_until(signals + s, PYSHMEM_CMP_NE, 0);
}

}  // namespace

// Block b sends to PEs b, b + gridDim.x, ...
extern "C" __global__ void dispatch(float* recv, const float* send, const int* send_counts, uint64_t* recv_signals,
                                    int max_tokens, int hidden) {
  extern __shared__ int smem[];  // [0, n): counts, [n, 2n): offsets into `send` (rows)
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  int* counts = smem;
  int* offsets = smem + n;
  for (int d = threadIdx.x; d < n; d += blockDim.x) counts[d] = send_counts[d];
  __syncthreads();
  if (threadIdx.x == 0) {  // exclusive prefix sum (n is small; a block scan for large n)
    int sum = 0;
    for (int d = 0; d < n; ++d) {
      offsets[d] = sum;
      sum += counts[d];
    }
  }
  __syncthreads();

  const size_t slot = static_cast<size_t>(max_tokens) * hidden;
  for (int pe = blockIdx.x; pe < n; pe += gridDim.x)
    put_tokens(recv + me * slot, send + static_cast<size_t>(offsets[pe]) * hidden, counts[pe], hidden, pe);
  __syncthreads();  // every warp's puts are issued
  if (threadIdx.x == 0) {
    pyshmem::fence();  // the data before the signals
    for (int pe = blockIdx.x; pe < n; pe += gridDim.x)
      pyshmem::signal_op(recv_signals + me, static_cast<uint64_t>(counts[pe]) + 1, PYSHMEM_SIGNAL_SET, pe);
    pyshmem::quiet();  // our sends are complete: the caller may reuse `send`
  }
  // Every block waits for its share of the sources, so the kernel ends when all arrived.
  wait_share(recv_signals, blockIdx.x, gridDim.x, n);
}

// Sends expert_out's slot `src` (the tokens PE src dispatched here) back into slot `me`
// of `combined` on PE src, with the same count-in-the-signal protocol.
extern "C" __global__ void combine(float* combined, const float* expert_out, const uint64_t* recv_signals,
                                   uint64_t* back_signals, int max_tokens, int hidden) {
  extern __shared__ int smem[];  // [0, n): tokens received from each PE
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  int* counts = smem;
  for (int s = threadIdx.x; s < n; s += blockDim.x)
    counts[s] = static_cast<int>(pyshmem::signal_fetch(recv_signals + s) - 1);
  __syncthreads();

  const size_t slot = static_cast<size_t>(max_tokens) * hidden;
  for (int src = blockIdx.x; src < n; src += gridDim.x)
    put_tokens(combined + me * slot, expert_out + src * slot, counts[src], hidden, src);
  __syncthreads();
  if (threadIdx.x == 0) {
    pyshmem::fence();
    for (int src = blockIdx.x; src < n; src += gridDim.x)
      pyshmem::signal_op(back_signals + me, static_cast<uint64_t>(counts[src]) + 1, PYSHMEM_SIGNAL_SET, src);
    pyshmem::quiet();
  }
  wait_share(back_signals, blockIdx.x, gridDim.x, n);
}
