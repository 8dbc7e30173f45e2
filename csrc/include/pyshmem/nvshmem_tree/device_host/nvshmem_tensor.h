// <device_host/nvshmem_tensor.h>: the tensor types of NVSHMEM's tile API (a tile is a 2-D
// view of symmetric memory: data pointer, shape and stride, each dimension a run-time
// int or a compile-time ConstInt). The types work; the tile collectives that take them
// are not provided (see <device_host/nvshmem_common.cuh>).
#pragma once

#include <cuda/std/tuple>
#include <cuda/std/type_traits>
#include <limits.h>

#include "pyshmem/device/common.cuh"

// A compile-time extent or stride that converts to int.
template <int v>
struct ConstInt : cuda::std::integral_constant<int, v> {
  PYSHMEM_HD constexpr operator int() const { return v; }
};

namespace nvshmemx {

template <class... Extents>
using shape = cuda::std::tuple<Extents...>;
template <class... Steps>
using stride = cuda::std::tuple<Steps...>;

template <class... Ts>
PYSHMEM_HD constexpr shape<Ts...> make_shape(const Ts&... t) {
  return shape<Ts...>(t...);
}
template <class... Ts>
PYSHMEM_HD constexpr stride<Ts...> make_stride(const Ts&... t) {
  return stride<Ts...>(t...);
}

// Extents and steps (in elements) of a tile.
template <class Shape, class Stride>
struct Layout {
  Shape shape_;
  Stride stride_;
  PYSHMEM_HD constexpr Layout(const Shape& s = {}, const Stride& d = {}) : shape_(s), stride_(d) {}
  PYSHMEM_HD constexpr Shape shape() const { return shape_; }
  PYSHMEM_HD constexpr Stride stride() const { return stride_; }
};
template <class Shape, class Stride>
PYSHMEM_HD constexpr Layout<Shape, Stride> make_layout(const Shape& s, const Stride& d) {
  return Layout<Shape, Stride>(s, d);
}

// A tile: where its first element is and how the others follow.
template <class T, class LayoutT>
struct Tensor {
  using value_type = T;
  using layout_type = LayoutT;
  T* _data;
  LayoutT _layout;
  PYSHMEM_HD constexpr Tensor(T* data, LayoutT layout) : _data(data), _layout(layout) {}
  PYSHMEM_HD explicit Tensor(LayoutT layout) : _data(nullptr), _layout(layout) {}
  PYSHMEM_HD constexpr LayoutT layout() const { return _layout; }
  PYSHMEM_HD T* data() { return _data; }
  PYSHMEM_HD constexpr auto shape() const { return _layout.shape(); }
  PYSHMEM_HD constexpr auto stride() const { return _layout.stride(); }
};

// NVSHMEM's algorithm choices (its numbers).
typedef enum {
  NVLS_ONE_SHOT_PUSH_NBI = 0,
  NVLS_ONE_SHOT_PULL_NBI = 1,
  NVLS_TWO_SHOT_PUSH_NBI = 2,
  NVLS_TWO_SHOT_PULL_NBI = 3,
  NVSHMEMI_TILE_COLL_ALGO_SENTINEL = INT_MAX
} tile_coll_algo_t;
typedef enum {
  PEER_PUSH_NBI = 0,
  PEER_PULL_NBI = 0,
  REMOTE_PUSH_NBI = 1,
  REMOTE_PULL_NBI = 1,
  NVSHMEMI_TILE_ALGO_SENTINEL = INT_MAX
} tile_algo_t;

}  // namespace nvshmemx
