// host/gpu_wait.cpp: wait_until / test / signal_fetch / signal_wait_until and the
// vector waits on symmetric GPU memory (the cuda backend).
//
// The host cannot load device memory, so every poll copies the variable out of this
// PE's GPU heap (gpu_get without a stream: a copy on pyshmem's private non-blocking
// stream, waited for; it sees what kernels stored with system scope and what peers'
// copies or UCX puts delivered before it ran, and it never queues behind the kernel
// that is to set the variable, wherever that kernel runs). A poll costs a
// copy (microseconds on a GPU), so waits spin little and back off to sleeps sooner than
// waits on host memory; like those they are interruptible (Ctrl-C) and unbounded.
#include <vector>

#include "core/backoff.h"
#include "cuda/gpu_heap.h"
#include "host/check.h"
#include "pyshmem/compare.h"

namespace pyshmem {
namespace {

constexpr long long kGpuPollSpins = 16;

// The `size`-byte value at `sym` in this PE's GPU heap, zero-extended.
uint64_t load(uint64_t sym, size_t size, const char* call) {
  uint64_t v = 0;  // little-endian: the value's bytes come first
  gpu_get(reinterpret_cast<uint64_t>(&v), sym, size, state().pe, 0, call);
  return v;
}

void check_gpu_var(const char* call, const char* role, uint64_t sym, size_t size) {
  require_init(call);
  if (!gpu_is_symmetric(sym, size))
    fail(PYSHMEM_ERR_NOT_SYMMETRIC, call,
         std::string(role) + " is a GPU array outside the symmetric GPU heap; allocate it with pyshmem.cuda.zeros/empty");
  require_aligned(call, role, reinterpret_cast<const void*>(sym), size);
}

template <class Done>
void poll_until(Done done) {
  const State& s = state();
  Backoff backoff(kGpuPollSpins, s.config.WAIT_SLEEP_MAX_US);
  while (!done()) backoff.pause();
}

}  // namespace

bool gpu_test(uint64_t ivar, int dtype, int cmp, const void* value, const char* call) {
  check_wait_args(call, dtype, cmp);
  check_gpu_var(call, "ivar", ivar, PYSHMEM_DTYPE_SIZE(dtype));
  const uint64_t v = load(ivar, PYSHMEM_DTYPE_SIZE(dtype), call);
  return compare(&v, dtype, cmp, value);
}

void gpu_wait_until(uint64_t ivar, int dtype, int cmp, const void* value, const char* call) {
  poll_until([&] { return gpu_test(ivar, dtype, cmp, value, call); });
}

uint64_t gpu_signal_fetch(uint64_t sig, const char* call) {
  check_gpu_var(call, "signal", sig, sizeof(uint64_t));
  return load(sig, sizeof(uint64_t), call);
}

uint64_t gpu_signal_wait_until(uint64_t sig, int cmp, uint64_t value, const char* call) {
  check_wait_args(call, PYSHMEM_UINT64, cmp);
  uint64_t v = 0;
  poll_until([&] {
    v = gpu_signal_fetch(sig, call);
    return compare(&v, PYSHMEM_UINT64, cmp, &value);
  });
  return v;
}

size_t gpu_wait_vector(WaitMode mode, bool blocking, uint64_t ivars, size_t nelems, const int* status, int dtype,
                       int cmp, const void* values, bool vector, std::vector<size_t>* indices, const char* call) {
  check_wait_args(call, dtype, cmp);
  const size_t elem = PYSHMEM_DTYPE_SIZE(dtype);
  if (nelems > SIZE_MAX / elem) fail(PYSHMEM_ERR_INVALID_ARG, call, "too many ivars");
  check_gpu_var(call, "ivars", ivars, nelems * elem);
  std::vector<char> snapshot(nelems * elem);
  size_t result = 0;
  auto look = [&] {
    if (!snapshot.empty())
      gpu_get(reinterpret_cast<uint64_t>(snapshot.data()), ivars, snapshot.size(), state().pe, 0, call);
    indices->clear();
    return scan_vector(mode, snapshot.data(), nelems, status, dtype, cmp, static_cast<const char*>(values), vector,
                       indices, &result);
  };
  if (look()) return result;
  if (!blocking) return mode == kWaitAny ? SIZE_MAX : 0;
  poll_until(look);
  return result;
}

}  // namespace pyshmem
