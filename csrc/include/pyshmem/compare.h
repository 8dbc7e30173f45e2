// pyshmem/compare.h: the OpenSHMEM comparison of wait_until/test/signal_wait_until,
// shared by the host core and the device API (no other dependency, so the core does
// not need libcu++ to use it).
#pragma once

#include "pyshmem/types.h"

#if defined(__CUDACC__)
#define PYSHMEM_COMPARE_HD __host__ __device__ __forceinline__
#else
#define PYSHMEM_COMPARE_HD inline
#endif

namespace pyshmem {
inline namespace device_api {
namespace detail {

// True when `a cmp b` holds (cmp: PYSHMEM_CMP_*); false for an unknown cmp.
template <class T>
PYSHMEM_COMPARE_HD bool compare_t(T a, int cmp, T b) {
  switch (cmp) {
    case PYSHMEM_CMP_EQ: return a == b;
    case PYSHMEM_CMP_NE: return a != b;
    case PYSHMEM_CMP_GT: return a > b;
    case PYSHMEM_CMP_LE: return a <= b;
    case PYSHMEM_CMP_LT: return a < b;
    case PYSHMEM_CMP_GE: return a >= b;
    default: return false;
  }
}

}  // namespace detail
}  // namespace device_api
}  // namespace pyshmem
