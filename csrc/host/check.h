// host/check.h: argument checks shared by the RMA, AMO, signal and wait entry points.
#pragma once

#include <vector>

#include "core/error.h"
#include "core/state.h"
#include "host/host.h"

namespace pyshmem {

// Throws unless [addr, addr+nbytes) lies in this PE's symmetric heap. `role` names the
// argument in the message ("target", "source", "signal", "ivar").
inline void require_symmetric(const char* call, const char* role, const void* addr, size_t nbytes) {
  if (__builtin_expect(is_symmetric(addr, nbytes), 1)) return;
  pyshmem_status status;
  const std::string why = symmetric_problem(role, addr, nbytes, &status);
  fail(status, call, why);
}

// Throws unless addr is aligned to `align` bytes (atomics on misaligned words can tear
// or take a bus-wide split lock).
inline void require_aligned(const char* call, const char* role, const void* addr, size_t align) {
  if (reinterpret_cast<uintptr_t>(addr) % align)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         std::string(role) + " is not aligned to " + std::to_string(align) + " bytes (a view at an odd byte offset?)");
}

// Throws unless cmp is a CMP_* constant and dtype a 16/32/64-bit integer (host/wait.cpp).
void check_wait_args(const char* call, int dtype, int cmp);

// One look at the vector wait's variables at `base` (host memory: the heap itself, or a
// copy of GPU variables): true when the wait is satisfied, with *result (and `indices`
// for kWaitSome) as wait_vector returns them (host/wait.cpp).
bool scan_vector(WaitMode mode, const char* base, size_t nelems, const int* status, int dtype, int cmp,
                 const char* vals, bool vector, std::vector<size_t>* indices, size_t* result);

// The common prologue of a one-sided call: initialised, PE in range.
inline State& rma_prologue(const char* call, int pe) {
  State& s = state();
  if (__builtin_expect(!s.initialized, 0)) require_init(call);
  if (__builtin_expect(pe < 0 || pe >= s.npes, 0)) require_pe(call, pe);
  return s;
}

}  // namespace pyshmem
