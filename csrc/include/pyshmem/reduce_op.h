// pyshmem/reduce_op.h: one element of a reduction (and/or/xor/max/min/sum/prod), shared
// by the host collectives (coll/reduce.cpp) and the device API (device/coll.cuh), so
// both give the same bits. Integer arithmetic wraps around (in unsigned types of at
// least int's width: no undefined behaviour), as NumPy's does.
#pragma once

#include "pyshmem/types.h"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#include <cuda/std/type_traits>
#define PYSHMEM_REDUCE_HD __host__ __device__ __forceinline__
#define PYSHMEM_REDUCE_STD cuda::std
#else
#include <type_traits>
#define PYSHMEM_REDUCE_HD inline
#define PYSHMEM_REDUCE_STD std
#endif

namespace pyshmem {
inline namespace device_api {
namespace detail {

// a op b for Op a pyshmem_reduce_op. and/or/xor are for integer T only; max/min for
// integer and floating T; sum/prod for every T with + and * (complex on the host).
template <class T, int Op>
PYSHMEM_REDUCE_HD T reduce_combine(T a, T b) {
  if constexpr (PYSHMEM_REDUCE_STD::is_integral<T>::value) {
    using U = typename PYSHMEM_REDUCE_STD::make_unsigned<T>::type;
    using W = typename PYSHMEM_REDUCE_STD::conditional<(sizeof(T) < sizeof(unsigned)), unsigned, U>::type;
    if constexpr (Op == PYSHMEM_OP_SUM) return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
    if constexpr (Op == PYSHMEM_OP_PROD) return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
    if constexpr (Op == PYSHMEM_OP_AND) return static_cast<T>(a & b);
    if constexpr (Op == PYSHMEM_OP_OR) return static_cast<T>(a | b);
    if constexpr (Op == PYSHMEM_OP_XOR) return static_cast<T>(a ^ b);
  } else {
    static_assert(Op != PYSHMEM_OP_AND && Op != PYSHMEM_OP_OR && Op != PYSHMEM_OP_XOR,
                  "and/or/xor reductions take integer types");
    if constexpr (Op == PYSHMEM_OP_SUM) return a + b;
    if constexpr (Op == PYSHMEM_OP_PROD) return a * b;
  }
  if constexpr (Op == PYSHMEM_OP_MAX) return b > a ? b : a;
  if constexpr (Op == PYSHMEM_OP_MIN) return b < a ? b : a;
  return a;
}

}  // namespace detail
}  // namespace device_api
}  // namespace pyshmem
