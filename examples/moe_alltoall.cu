// MoE token exchange as CUDA C++ kernels on the pyshmem device API: dispatch sends each
// PE its tokens (a variable number per destination), combine returns the experts'
// outputs to where the tokens came from. Launched from examples/moe_alltoall.py; the
// same file compiles with nvcc for a GPU (extern "C" kernels, no host code).
//
// Layout, on every PE: tokens are rows of `hidden` floats; slot `src` of a receive
// buffer (max_tokens rows) holds what PE `src` sent. The token count travels in the
// signal: put_signal sets signals[src] = count + 1 on the receiver after the data (so
// a zero-token send is still seen), and the receiver waits for every signal to be non-zero.
#include <pyshmem/device.cuh>

// One block per destination PE (blocks stride over PEs when the grid is smaller).
extern "C" __global__ void dispatch(float* recv, const float* send, const int* send_counts, uint64_t* recv_signals,
                                    int max_tokens, int hidden) {
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  const size_t slot = static_cast<size_t>(max_tokens) * hidden;
  for (int pe = blockIdx.x; pe < n; pe += gridDim.x) {
    const size_t bytes = static_cast<size_t>(send_counts[pe]) * hidden * sizeof(float);
    pyshmem::putmem_signal_nbi_block(recv + me * slot, send + pe * slot, bytes, recv_signals + me,
                                     static_cast<uint64_t>(send_counts[pe]) + 1, PYSHMEM_SIGNAL_SET, pe);
  }
  // Every block waits for its share of the sources, so the kernel ends when all arrived.
  for (int src = blockIdx.x; src < n; src += gridDim.x)
    if (threadIdx.x == 0) pyshmem::signal_wait_until(recv_signals + src, PYSHMEM_CMP_NE, 0);
  pyshmem::quiet();  // our sends are complete too: the caller may reuse `send`
}

// Sends expert_out's slot `src` (the tokens PE src dispatched here) back into slot `me`
// of `combined` on PE src, with the same count-in-the-signal protocol.
extern "C" __global__ void combine(float* combined, const float* expert_out, const uint64_t* recv_signals,
                                   uint64_t* back_signals, int max_tokens, int hidden) {
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  const size_t slot = static_cast<size_t>(max_tokens) * hidden;
  for (int src = blockIdx.x; src < n; src += gridDim.x) {
    const uint64_t count = pyshmem::signal_fetch(recv_signals + src) - 1;
    pyshmem::putmem_signal_nbi_block(combined + me * slot, expert_out + src * slot, count * hidden * sizeof(float),
                                     back_signals + me, count + 1, PYSHMEM_SIGNAL_SET, src);
  }
  for (int dst = blockIdx.x; dst < n; dst += gridDim.x)
    if (threadIdx.x == 0) pyshmem::signal_wait_until(back_signals + dst, PYSHMEM_CMP_NE, 0);
  pyshmem::quiet();
}
