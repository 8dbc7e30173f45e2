// <cooperative_groups/reduce.h> for CUDA C++ kernels built for the CPU (see
// ../cooperative_groups.h): cooperative_groups::reduce over a thread_block_tile<N> or a
// coalesced_group, with the function objects plus, less, greater, bit_and, bit_or and
// bit_xor. Every thread of the group gets the result.
#pragma once

#include "cooperative_groups.h"

namespace cooperative_groups {

template <class T = void>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T = void>
struct less {  // the smaller of the two, as CUDA's cg::less
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <class T = void>
struct greater {  // the larger
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T = void>
struct bit_and {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T = void>
struct bit_or {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T = void>
struct bit_xor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

// A butterfly over the tile: log2(N) shuffles, every lane ends with the whole result
// (for a non-associative op such as floating-point addition the grouping is the
// butterfly's, as on a GPU's shuffle reduction).
template <unsigned N, class T, class Op>
inline T reduce(const thread_block_tile<N>& tile, T value, Op op) {
  for (unsigned d = 1; d < N; d <<= 1) value = op(value, tile.shfl_xor(value, d));
  return value;
}

// Rank by rank (the group's lanes need not be contiguous).
template <class T, class Op>
inline T reduce(const coalesced_group& group, T value, Op op) {
  const unsigned n = static_cast<unsigned>(group.size());
  T acc = group.shfl(value, 0u);
  for (unsigned r = 1; r < n; ++r) acc = op(acc, group.shfl(value, r));
  return acc;
}

}  // namespace cooperative_groups
