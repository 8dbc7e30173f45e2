// <cooperative_groups.h> for CUDA C++ kernels built for the CPU (pyshmem.cuda.Module puts
// pyshmem/cpu_include first on the CPU build's include path; a GPU build gets the
// toolkit's header). The groups are views of the fibers of pyshmem/cpu_fibers.h:
//
//   thread_block         this_thread_block(): sync() is __syncthreads()
//   grid_group           this_grid(): sync() waits for every block of the grid, under
//                        pyshmem.cuda.launch(..., cooperative=True) (else KernelError)
//   thread_block_tile<N> tiled_partition<N>(parent), N a power of two up to 32: the N
//                        consecutive threads of a warp; shfl*, ballot, any, all,
//                        match_*, sync are the warp intrinsics with the tile's mask
//   thread_group         tiled_partition(parent, n), n a power of two up to 32
//   coalesced_group      coalesced_threads(): the lanes __activemask() gives
//
// cooperative_groups::reduce / plus / less / greater / bit_* are in
// <cooperative_groups/reduce.h>. Tiles larger than a warp and cluster groups are not
// available on the CPU build (they do not compile).
#pragma once

#include "pyshmem/cpu_kernel.h"

namespace cooperative_groups {
namespace details {

inline unsigned block_rank() { return ::pyshmem::cpu::t_block->cur->linear; }
inline unsigned block_size() { return ::pyshmem::cpu::t_block->n; }
// The mask of the `size`-lane tile (a power of two up to 32) holding the caller's lane.
inline unsigned tile_mask(unsigned size) {
  const unsigned lane = block_rank() & 31u;
  const unsigned bits = size >= 32 ? 0xffffffffu : ((1u << size) - 1u);
  return size >= 32 ? bits : bits << (lane & ~(size - 1));
}
inline void check_tile_size(unsigned size) {
  if (size == 0 || size > 32 || (size & (size - 1)))
    ::pyshmem::cpu::fibers::usage_error(
        "cooperative_groups::tiled_partition: the CPU build supports tiles of 1, 2, 4, 8, 16 or 32 threads");
}

}  // namespace details

// Any group of threads of a block: a tile of a warp (mask_ != 0) or the whole block.
class thread_group {
 public:
  unsigned long long size() const { return num_threads(); }
  unsigned long long num_threads() const {
    return mask_ ? static_cast<unsigned>(__builtin_popcount(mask_ & ::pyshmem::cpu::fibers::warp_lanes_mask(
                                                                          ::pyshmem::cpu::t_block, details::block_rank())))
                 : details::block_size();
  }
  unsigned long long thread_rank() const {
    const unsigned r = details::block_rank();
    return mask_ ? static_cast<unsigned>(__builtin_popcount(mask_ & ((1u << (r & 31u)) - 1u))) : r;
  }
  void sync() const {
    if (mask_) __syncwarp(mask_);
    else __syncthreads();
  }

 protected:
  explicit thread_group(unsigned mask) : mask_(mask) {}
  unsigned mask_;  // lanes of the caller's warp; 0: the whole block
  friend thread_group tiled_partition(const thread_group& parent, unsigned tile_size);
};

class thread_block : public thread_group {
 public:
  void sync() const { __syncthreads(); }
  unsigned long long thread_rank() const { return details::block_rank(); }
  unsigned long long size() const { return details::block_size(); }
  unsigned long long num_threads() const { return details::block_size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }

 private:
  thread_block() : thread_group(0) {}
  friend thread_block this_thread_block();
};
inline thread_block this_thread_block() { return thread_block(); }

class grid_group {
 public:
  void sync() const { ::pyshmem::cpu::fibers::grid_sync(); }
  bool is_valid() const { return ::pyshmem::cpu::t_grid && ::pyshmem::cpu::t_grid->cooperative; }
  unsigned long long num_blocks() const { return static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z; }
  unsigned long long block_rank() const { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
  unsigned long long num_threads() const { return num_blocks() * details::block_size(); }
  unsigned long long size() const { return num_threads(); }
  unsigned long long thread_rank() const { return block_rank() * details::block_size() + details::block_rank(); }
  dim3 group_dim() const { return gridDim; }
  dim3 dim_blocks() const { return gridDim; }
  dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }

 private:
  grid_group() = default;
  friend grid_group this_grid();
};
inline grid_group this_grid() { return grid_group(); }

// N consecutive lanes of a warp (N a power of two up to 32; the last warp of a block
// may be partial, its missing lanes are not in the tile).
template <unsigned N>
class thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0,
                "the CPU build supports thread_block_tile<N> for N = 1, 2, 4, 8, 16 or 32");

 public:
  static constexpr unsigned long long num_threads() { return N; }
  static constexpr unsigned long long size() { return N; }
  unsigned long long thread_rank() const { return details::block_rank() & (N - 1); }
  unsigned long long meta_group_rank() const { return details::block_rank() / N; }
  unsigned long long meta_group_size() const { return (details::block_size() + N - 1) / N; }
  void sync() const { __syncwarp(mask()); }
  template <class T>
  T shfl(T var, int src_rank) const { return __shfl_sync(mask(), var, src_rank, N); }
  template <class T>
  T shfl_up(T var, unsigned delta) const { return __shfl_up_sync(mask(), var, delta, N); }
  template <class T>
  T shfl_down(T var, unsigned delta) const { return __shfl_down_sync(mask(), var, delta, N); }
  template <class T>
  T shfl_xor(T var, unsigned lane_mask) const { return __shfl_xor_sync(mask(), var, lane_mask, N); }
  // Bit i: tile rank i.
  unsigned ballot(int pred) const { return __ballot_sync(mask(), pred) >> shift(); }
  int any(int pred) const { return __any_sync(mask(), pred); }
  int all(int pred) const { return __all_sync(mask(), pred); }
  template <class T>
  unsigned match_any(T value) const { return __match_any_sync(mask(), value) >> shift(); }
  template <class T>
  unsigned match_all(T value, int& pred) const { return __match_all_sync(mask(), value, &pred) >> shift(); }
  operator thread_group() const { return thread_group_of(mask()); }

 private:
  static unsigned mask() { return details::tile_mask(N); }
  static unsigned shift() { return N >= 32 ? 0 : (details::block_rank() & 31u & ~(N - 1)); }
  struct thread_group_of : thread_group {
    explicit thread_group_of(unsigned m) : thread_group(m) {}
  };
};

template <unsigned N, class Parent>
inline thread_block_tile<N> tiled_partition(const Parent&) {
  return thread_block_tile<N>();
}

inline thread_group tiled_partition(const thread_group& parent, unsigned tile_size) {
  (void)parent;
  details::check_tile_size(tile_size);
  return thread_group(details::tile_mask(tile_size));
}

// The lanes of the caller's warp that __activemask() finds together here.
class coalesced_group {
 public:
  unsigned long long num_threads() const { return static_cast<unsigned>(__builtin_popcount(mask_)); }
  unsigned long long size() const { return num_threads(); }
  unsigned long long thread_rank() const {
    return static_cast<unsigned>(__builtin_popcount(mask_ & ((1u << (details::block_rank() & 31u)) - 1u)));
  }
  void sync() const { __syncwarp(mask_); }
  template <class T>
  T shfl(T var, unsigned src_rank) const { return __shfl_sync(mask_, var, lane_of(src_rank)); }
  unsigned ballot(int pred) const { return compact(__ballot_sync(mask_, pred)); }
  int any(int pred) const { return __any_sync(mask_, pred); }
  int all(int pred) const { return __all_sync(mask_, pred); }

 private:
  explicit coalesced_group(unsigned mask) : mask_(mask) {}
  // The lane of the group's rank-th member.
  unsigned lane_of(unsigned rank) const {
    unsigned m = mask_;
    for (unsigned i = 0; i < rank && m; ++i) m &= m - 1;
    return m ? static_cast<unsigned>(__builtin_ctz(m)) : 32u;
  }
  // Lane bits to rank bits.
  unsigned compact(unsigned lanes) const {
    unsigned out = 0, rank = 0;
    for (unsigned m = mask_; m; m &= m - 1, ++rank)
      if (lanes & (1u << __builtin_ctz(m))) out |= 1u << rank;
    return out;
  }
  unsigned mask_;
  friend coalesced_group coalesced_threads_at(unsigned);
};
inline coalesced_group coalesced_threads_at(unsigned mask) { return coalesced_group(mask); }
// A macro, as __activemask(): the lanes are found per call site.
#define coalesced_threads() coalesced_threads_at(__activemask())

template <class Group>
inline void sync(const Group& g) {
  g.sync();
}

}  // namespace cooperative_groups
