// Warp-specialised one-shot all-reduce (sum of float32 vectors over all PEs) as a CUDA
// C++ kernel on the pyshmem device API. Launched from examples/ws_allreduce.py; the
// same file compiles with nvcc for a GPU (extern "C" kernel, no host code).
//
// The vector is cut into one chunk per block. In every block the first `send_warps`
// warps are senders: each puts this PE's chunk into slot `me` of every peer's `stage`
// (put_signal_nbi_warp: the whole warp copies, then one lane sets the peer's signal for
// (me, block) to `epoch`), peers shared out round-robin over the sender warps. The
// other warps are reducers: for every PE s in order 0, 1, ..., one lane waits for the
// signal of (s, block), the warp meets at __syncwarp, and each reducer thread adds slot
// s of its elements into `out` (its own x for s == me). Summing in PE order gives the
// same bits as NumPy's reduce(np.add, ...) over the PEs.
//
// The roles run at the same time: reducers block in their waits while the senders of
// the same block keep going, so the kernel needs real threads (warps that progress
// independently); with a block of one thread there would be no reducer at all.
//
// Buffers (symmetric, on every PE): x and out of nelems floats, stage of n_pes * nelems
// floats, signals of n_pes * gridDim.x. Signals only grow (epoch 1, 2, ...), so no reset
// is needed between calls; the caller orders calls by a barrier (a peer must have read
// its stage before the next call overwrites it).
#include <pyshmem/device.cuh>

extern "C" __global__ void ws_allreduce(float* out, const float* x, float* stage, uint64_t* signals,
                                        unsigned long long nelems, int send_warps, unsigned long long epoch) {
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t total = static_cast<size_t>(nelems);
  const size_t chunk = (total + gridDim.x - 1) / gridDim.x;
  const size_t lo = chunk * blockIdx.x < total ? chunk * blockIdx.x : total;
  const size_t len = lo + chunk < total ? chunk : total - lo;
  uint64_t* my_signal = signals + static_cast<size_t>(me) * gridDim.x + blockIdx.x;  // symmetric: set on peers

  if (warp < send_warps) {
    // Peers me+1, me+2, ... so that not every PE starts with the same target.
    for (int k = warp; k < n - 1; k += send_warps) {
      const int pe = (me + 1 + k) % n;
      pyshmem::put_signal_nbi_warp(stage + static_cast<size_t>(me) * total + lo, x + lo, len, my_signal, epoch,
                                   PYSHMEM_SIGNAL_SET, pe);
    }
  } else {
    const size_t rank = threadIdx.x - 32 * send_warps, reducers = blockDim.x - 32 * send_warps;
    for (int s = 0; s < n; ++s) {
      const float* from = x;
      if (s != me) {
        uint64_t* sig = signals + static_cast<size_t>(s) * gridDim.x + blockIdx.x;
        if (lane == 0) pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, epoch);
        __syncwarp();  // the lane's acquire, then the warp reads the slot
        from = stage + static_cast<size_t>(s) * total;
      }
      for (size_t i = lo + rank; i < lo + len; i += reducers) out[i] = s == 0 ? from[i] : out[i] + from[i];
    }
  }
  __syncthreads();  // senders done issuing, reducers done summing
  if (threadIdx.x == 0) pyshmem::quiet();  // our puts are complete: the caller may reuse x
}
