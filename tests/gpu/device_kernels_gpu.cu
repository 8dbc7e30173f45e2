// Kernels for tests/gpu (one PE on one GPU, heap in device memory: see harness.py).
// Every device-API call targets PE 0, this PE, through the direct load/store path.
#include <pyshmem/device.cuh>

// Thread-scope calls, one thread: results in out[] (checked by the test).
extern "C" __global__ void check_thread_calls(int64_t* sym, uint64_t* sig, int64_t* out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  out[0] = pyshmem::my_pe();
  out[1] = pyshmem::n_pes();
  pyshmem::p(&sym[0], int64_t(42), 0);
  pyshmem::quiet();
  out[2] = pyshmem::g(&sym[0], 0);
  int64_t local[8], back[8];
  for (int i = 0; i < 8; ++i) local[i] = 3 * i;
  pyshmem::put(&sym[8], local, 8, 0);
  pyshmem::fence();
  pyshmem::get(back, &sym[8], 8, 0);
  int64_t sum = 0;
  for (int i = 0; i < 8; ++i) sum += back[i];
  out[3] = sum;                                                           // 84
  out[4] = pyshmem::atomic_fetch_add(&sym[1], int64_t(5), 0);            // 0
  out[5] = pyshmem::atomic_compare_swap(&sym[1], int64_t(5), int64_t(9), 0);  // 5
  out[6] = pyshmem::atomic_fetch(&sym[1], 0);                            // 9
  out[7] = pyshmem::atomic_swap(&sym[1], int64_t(1), 0);                 // 9
  pyshmem::atomic_or(&sym[2], int64_t(6), 0);
  pyshmem::atomic_xor(&sym[2], int64_t(3), 0);
  out[8] = pyshmem::atomic_fetch_and(&sym[2], int64_t(12), 0);           // 5
  out[9] = pyshmem::atomic_fetch(&sym[2], 0);                            // 4
  pyshmem::iput(&sym[16], local, 2, 1, 4, 0);                            // sym[16,18,20,22] = 0,3,6,9
  out[10] = sym[16] + sym[18] + sym[20] + sym[22];                       // 18
  pyshmem::put_signal(&sym[32], local, 8, sig, 7, PYSHMEM_SIGNAL_SET, 0);
  out[11] = int64_t(pyshmem::signal_wait_until(sig, PYSHMEM_CMP_EQ, 7));  // 7
  pyshmem::signal_op(sig, 3, PYSHMEM_SIGNAL_ADD, 0);
  out[12] = int64_t(pyshmem::signal_fetch(sig));                         // 10
  out[13] = pyshmem::test(&sym[0], PYSHMEM_CMP_EQ, int64_t(42));         // 1
  pyshmem::barrier_all();
  pyshmem::sync_all();
  out[14] = pyshmem::ptr(sym, 0) == sym ? 1 : 0;                         // 1
}

// Every thread of every block adds 1, `iters` times (atomics under contention).
extern "C" __global__ void contended_add(unsigned long long* counter, int iters) {
  for (int i = 0; i < iters; ++i) pyshmem::atomic_add(counter, 1ull, 0);
}

// scope 0/1/2 = thread/warp/block: each unit moves its slice of nbytes.
extern "C" __global__ void put_scoped(char* dst, const char* src, unsigned long long nbytes, int scope, int iters) {
  const unsigned long long tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long units = scope == 0 ? gridDim.x * blockDim.x
                                 : scope == 1 ? gridDim.x * (blockDim.x / 32) : gridDim.x;
  const unsigned long long unit = scope == 0 ? tid : scope == 1 ? tid / 32 : blockIdx.x;
  const unsigned long long slice = (nbytes / units) & ~15ull;
  for (int it = 0; it < iters; ++it) {
    char* d = dst + unit * slice;
    const char* s = src + unit * slice;
    if (scope == 0) pyshmem::putmem(d, s, slice, 0);
    else if (scope == 1) pyshmem::putmem_warp(d, s, slice, 0);
    else pyshmem::putmem_block(d, s, slice, 0);
  }
  pyshmem::quiet();
}

// One block puts with put_signal_nbi_block; thread 0 waits for the signal.
extern "C" __global__ void block_put_signal(float* dst, const float* src, unsigned long long n, uint64_t* sig) {
  pyshmem::put_signal_nbi_block(dst, src, n, sig, 1, PYSHMEM_SIGNAL_ADD, 0);
  if (threadIdx.x == 0) pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, 1);
}

// Latency: one thread does iters x (p + quiet); ns[0] = elapsed globaltimer ns.
extern "C" __global__ void p_latency(int64_t* sym, int iters, unsigned long long* ns) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const unsigned long long t0 = pyshmem::detail::now_ns();
  for (int i = 0; i < iters; ++i) {
    pyshmem::p(sym, int64_t(i), 0);
    pyshmem::quiet();
  }
  ns[0] = pyshmem::detail::now_ns() - t0;
}

// Debug mode: an out-of-range PE traps with a message (the test expects a launch error).
extern "C" __global__ void bad_pe(int64_t* sym) { pyshmem::p(sym, int64_t(1), 5); }
