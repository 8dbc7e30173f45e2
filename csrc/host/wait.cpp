// host/wait.cpp: wait_until / test and their vector forms (acquire semantics).
#include <cstring>

#include "core/backoff.h"
#include "host/check.h"
#include "pyshmem/compare.h"

namespace pyshmem {
namespace {

template <class T>
bool cmp_load(const void* ivar, int cmp, const void* value) {
  T a = __atomic_load_n(static_cast<const T*>(ivar), __ATOMIC_ACQUIRE);
  T b;
  std::memcpy(&b, value, sizeof b);
  return detail::compare_t(a, cmp, b);
}

}  // namespace

void check_wait_args(const char* call, int dtype, int cmp) {
  if (cmp < PYSHMEM_CMP_EQ || cmp > PYSHMEM_CMP_GE)
    fail(PYSHMEM_ERR_INVALID_ARG, call, "cmp must be one of CMP_EQ/NE/GT/LE/LT/GE (got " + std::to_string(cmp) + ")");
  switch (dtype) {
    case PYSHMEM_INT16: case PYSHMEM_INT32: case PYSHMEM_INT64:
    case PYSHMEM_UINT16: case PYSHMEM_UINT32: case PYSHMEM_UINT64:
      return;
    default:
      fail(PYSHMEM_ERR_TYPE, call, "wait/test variables must be 16-, 32- or 64-bit integers");
  }
}

bool compare(const void* a, int dtype, int cmp, const void* b) {
  switch (dtype) {
    case PYSHMEM_INT16: return cmp_load<int16_t>(a, cmp, b);
    case PYSHMEM_INT32: return cmp_load<int32_t>(a, cmp, b);
    case PYSHMEM_INT64: return cmp_load<int64_t>(a, cmp, b);
    case PYSHMEM_UINT16: return cmp_load<uint16_t>(a, cmp, b);
    case PYSHMEM_UINT32: return cmp_load<uint32_t>(a, cmp, b);
    case PYSHMEM_UINT64: return cmp_load<uint64_t>(a, cmp, b);
    default: return false;
  }
}

bool test(const void* ivar, int dtype, int cmp, const void* value, const char* call) {
  require_init(call);
  check_wait_args(call, dtype, cmp);
  require_symmetric(call, "ivar", ivar, PYSHMEM_DTYPE_SIZE(dtype));
  require_aligned(call, "ivar", ivar, PYSHMEM_DTYPE_SIZE(dtype));
  return compare(ivar, dtype, cmp, value);
}

void wait_until(const void* ivar, int dtype, int cmp, const void* value, const char* call) {
  if (test(ivar, dtype, cmp, value, call)) return;
  uint64_t bits = 0;
  std::memcpy(&bits, value, PYSHMEM_DTYPE_SIZE(dtype));
  const WaitInfo info{call, ivar, dtype, cmp, bits, -1};
  const WaitScope scope(info);
  const State& s = state();
  Backoff backoff(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
  while (!compare(ivar, dtype, cmp, value)) backoff.pause();
}

bool scan_vector(WaitMode mode, const char* base, size_t nelems, const int* status, int dtype, int cmp,
                 const char* vals, bool vector, std::vector<size_t>* indices, size_t* result) {
  const size_t elem = PYSHMEM_DTYPE_SIZE(dtype);
  auto ok = [&](size_t i) { return compare(base + i * elem, dtype, cmp, vector ? vals + i * elem : vals); };
  auto active = [&](size_t i) { return !status || status[i] == 0; };
  switch (mode) {
    case kWaitAll: {
      bool all = true;
      for (size_t i = 0; i < nelems && all; ++i) all = !active(i) || ok(i);
      *result = 1;
      return all;
    }
    case kWaitAny: {
      size_t nactive = 0;
      for (size_t i = 0; i < nelems; ++i) {
        if (!active(i)) continue;
        ++nactive;
        if (ok(i)) {
          *result = i;
          return true;
        }
      }
      *result = SIZE_MAX;
      return nactive == 0;
    }
    case kWaitSome: {
      size_t nactive = 0, found = 0;
      for (size_t i = 0; i < nelems; ++i) {
        if (!active(i)) continue;
        ++nactive;
        if (ok(i)) {
          indices->push_back(i);
          ++found;
        }
      }
      *result = found;
      return found > 0 || nactive == 0;
    }
  }
  return true;
}

size_t wait_vector(WaitMode mode, bool blocking, const void* ivars, size_t nelems, const int* status, int dtype,
                   int cmp, const void* values, bool vector, std::vector<size_t>* indices, const char* call) {
  require_init(call);
  check_wait_args(call, dtype, cmp);
  const size_t elem = PYSHMEM_DTYPE_SIZE(dtype);
  if (nelems > SIZE_MAX / elem) fail(PYSHMEM_ERR_INVALID_ARG, call, "too many ivars");
  require_symmetric(call, "ivars", ivars, nelems * elem);
  require_aligned(call, "ivars", ivars, elem);
  const State& s = state();
  uint64_t bits = 0;  // reported: the first variable and its value
  if (nelems && values) std::memcpy(&bits, values, elem);
  const WaitInfo info{call, nelems ? ivars : nullptr, dtype, cmp, bits, -1};
  const WaitScope scope(info);
  Backoff backoff(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
  size_t result = 0;
  while (!scan_vector(mode, static_cast<const char*>(ivars), nelems, status, dtype, cmp,
                      static_cast<const char*>(values), vector, indices, &result)) {
    if (!blocking) return mode == kWaitAny ? SIZE_MAX : 0;
    backoff.pause();
  }
  return result;
}

}  // namespace pyshmem
