// printf, assert, __trap, forward progress of atomic spins and the random schedule, run
// by tests/unit/test_cpu_kernel_faults.py on the CPU build (compiled for sm_90 there too).
#include <pyshmem/device.cuh>

// One printf per thread, long enough that lines of concurrent blocks would mix if the
// text went out in pieces.
extern "C" __global__ void print_lines(int width) {
  char pad[300];
  const int n = width < 299 ? width : 299;
  for (int i = 0; i < n; ++i) pad[i] = char('a' + (threadIdx.x + i) % 26);
  pad[n] = 0;
  printf("line block=%u thread=%u %s end\n", blockIdx.x, threadIdx.x, pad);
}

// Thread `bad_thread` of block `bad_block` fails an assert (kind 0) or traps (kind 1);
// every other block spins on an atomic flag nobody sets, so the launch must stop them.
extern "C" __global__ void fail_while_others_wait(int* flag, int kind, unsigned bad_block, unsigned bad_thread) {
  if (blockIdx.x == bad_block) {
    if (threadIdx.x == bad_thread) {
      if (kind == 0) assert(threadIdx.x != bad_thread);
      else __trap();
    }
    __syncthreads();
    return;
  }
  if (threadIdx.x == 0)
    while (atomicAdd(flag, 0) == 0) {
    }
}

// Thread 0 spins on an atomic flag the block's last thread sets after a __syncthreads
// the others reach: only the spin's atomics let the others run.
extern "C" __global__ void atomic_spin(int* flag, int* seen) {
  if (threadIdx.x == 0) {
    long spins = 0;
    while (atomicCAS(flag, 1, 1) != 1) ++spins;
    seen[0] = 1;
    seen[1] = spins > 0;
    return;
  }
  if (threadIdx.x == blockDim.x - 1) atomicExch(flag, 1);
}

// A planted ordering bug: every thread fills its slot, and the last thread publishes
// the block's sum with no __syncthreads() before reading the others' slots. In thread
// order the last thread runs last and the sum is right; any other order exposes it.
extern "C" __global__ void missing_syncthreads(int* slots, int* sums) {
  int* mine = slots + blockIdx.x * blockDim.x;
  mine[threadIdx.x] = int(threadIdx.x) + 1;
  // BUG: a __syncthreads() belongs here.
  if (threadIdx.x == blockDim.x - 1) {
    int s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) s += mine[i];
    sums[blockIdx.x] = s;
  }
}

// The same kernel, correct.
extern "C" __global__ void with_syncthreads(int* slots, int* sums) {
  int* mine = slots + blockIdx.x * blockDim.x;
  mine[threadIdx.x] = int(threadIdx.x) + 1;
  __syncthreads();
  if (threadIdx.x == blockDim.x - 1) {
    int s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) s += mine[i];
    sums[blockIdx.x] = s;
  }
}

// A device-API check fails inside a thread (PYSHMEM_DEBUG=1: a PE out of range).
extern "C" __global__ void bad_pe(long long* dst) {
  if (threadIdx.x == 2) pyshmem::p(dst, 1LL, 1 << 20);
}

// A _block and a _warp call whose threads disagree on the arguments (kind 0: thread 5
// of the block passes another size to putmem_block; kind 1: lane 3 of warp 1 another
// destination to putmem_warp; kind 2: all agree).
extern "C" __global__ void coop_args(char* dst, const char* src, int kind) {
  const size_t n = 256;
  if (kind == 0) pyshmem::putmem_block(dst, src, threadIdx.x == 5 ? n / 2 : n, pyshmem::my_pe());
  if (kind == 1) pyshmem::putmem_warp(dst + (threadIdx.x == 35 ? 64 : 0), src, n, pyshmem::my_pe());
  if (kind == 2) pyshmem::putmem_block(dst, src, n, pyshmem::my_pe());
}

// Spins pyshmem cannot see: thread 0 waits on a volatile flag that lane 1 of its warp
// sets (kind 0) or that the block's last thread sets (kind 1), or on cuda::atomic_ref
// (kind 2); without preemption the setter never runs.
extern "C" __global__ void blind_spin(int* flag, int* seen, int kind) {
  const unsigned setter = kind == 0 ? 1 : blockDim.x - 1;
  if (threadIdx.x == 0) {
    if (kind == 2) {
      cuda::atomic_ref<int, cuda::thread_scope_block> f(*flag);
      while (f.load(cuda::std::memory_order_acquire) == 0) {
      }
    } else {
      while (*(volatile int*)flag == 0) {
      }
    }
    seen[0] = 1;
  } else if (threadIdx.x == setter) {
    if (kind == 2) cuda::atomic_ref<int, cuda::thread_scope_block>(*flag).store(1, cuda::std::memory_order_release);
    else *(volatile int*)flag = 1;
  }
}

// Long floating-point and integer work per thread with no switch point, so the threads
// of a many-thread block get preempted mid-loop; the results must equal those of
// one-thread blocks (never preempted).
extern "C" __global__ void grind(double* out, int iters) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  float f = 1.0f + t;
  double d = 0.5 + t;
  unsigned long long h = t * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < iters; ++i) {
    f = f * 1.0000001f + 1e-3f;
    d = d * 0.99999999 + f * 1e-9;
    h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull + unsigned(i);
  }
  out[2 * t] = d + f;
  out[2 * t + 1] = double(h >> 11);
}
