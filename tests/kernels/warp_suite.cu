// Warp intrinsics and cooperative groups, run by tests/unit/test_cpu_warp.py on the CPU
// build and compiled for sm_90 there too (the same source is the GPU's suite:
// tests/gpu/test_kernel_suite_gpu.py). Every kernel writes what each thread saw; the
// test computes the expected values with CUDA's rules in NumPy.
#include <pyshmem/device.cuh>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__device__ unsigned linear_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

// Four shuffles per thread with `width`: idx from lane (7*lane + 3), up by 3, down by 5,
// xor 9 (xor 9 crosses into later segments for width < 16: own value).
extern "C" __global__ void shuffles(const int* in, int* out, int width) {
  const unsigned t = blockIdx.x * blockDim.x + linear_tid(), lane = linear_tid() & 31;
  const int v = in[t];
  out[4 * t + 0] = __shfl_sync(0xffffffffu, v, int(7 * lane + 3), width);
  out[4 * t + 1] = __shfl_up_sync(0xffffffffu, v, 3u, width);
  out[4 * t + 2] = __shfl_down_sync(0xffffffffu, v, 5u, width);
  out[4 * t + 3] = __shfl_xor_sync(0xffffffffu, v, 9, width);
}

// Shuffles of 8-byte and floating-point values.
extern "C" __global__ void shuffle_types(const double* d, const long long* q, double* dout, long long* qout,
                                         float* fout) {
  const unsigned t = threadIdx.x, lane = t & 31;
  dout[t] = __shfl_xor_sync(0xffffffffu, d[t], 1);
  qout[t] = __shfl_sync(0xffffffffu, q[t], int(31 - lane));
  fout[t] = __shfl_down_sync(0xffffffffu, float(d[t]), 1u);
}

// Votes under `mask`: lanes not in it skip. out[4t..]: ballot, any, all, then 1.
extern "C" __global__ void votes(const int* pred, unsigned* out, unsigned mask) {
  const unsigned t = linear_tid(), lane = t & 31;
  if (!(mask >> lane & 1u)) return;
  const int p = pred[t];
  out[4 * t + 0] = __ballot_sync(mask, p);
  out[4 * t + 1] = __any_sync(mask, p);
  out[4 * t + 2] = __all_sync(mask, p);
  out[4 * t + 3] = 1;
}

// Matches and reductions under `mask`. out[10t..]: match_any, match_all, its pred, then
// reduce add, min, max (int), min, max (unsigned), and, or, xor (unsigned) in the next
// 8 slots (10 in all with an unused one).
extern "C" __global__ void match_reduce(const int* v, unsigned* out, unsigned mask) {
  const unsigned t = linear_tid(), lane = t & 31;
  if (!(mask >> lane & 1u)) return;
  const int x = v[t];
  int pred = -1;
  unsigned* o = out + 11 * t;
  o[0] = __match_any_sync(mask, x);
  o[1] = __match_all_sync(mask, x, &pred);
  o[2] = unsigned(pred);
  o[3] = unsigned(__reduce_add_sync(mask, x));
  o[4] = unsigned(__reduce_min_sync(mask, x));
  o[5] = unsigned(__reduce_max_sync(mask, x));
  o[6] = __reduce_min_sync(mask, unsigned(x));
  o[7] = __reduce_max_sync(mask, unsigned(x));
  o[8] = __reduce_and_sync(mask, unsigned(x));
  o[9] = __reduce_or_sync(mask, unsigned(x));
  o[10] = __reduce_xor_sync(mask, unsigned(x));
}

// Divergent branches meet separately (independent thread scheduling): even lanes
// rotate their values among themselves, odd lanes ballot among themselves.
extern "C" __global__ void divergent(unsigned* out) {
  const unsigned lane = threadIdx.x & 31;
  if (lane % 2 == 0) {
    out[threadIdx.x] = __shfl_sync(0x55555555u, threadIdx.x * 10, int((lane + 2) % 32));
  } else {
    out[threadIdx.x] = __ballot_sync(0xaaaaaaaau, lane % 3 == 0);
  }
}

// Lanes from `live` on exit first: the full-mask intrinsics wait for the others only.
// out[2t..]: __ballot_sync(full, 1), then __reduce_add_sync(full, lane).
extern "C" __global__ void exited_lanes(unsigned* out, unsigned live) {
  const unsigned t = threadIdx.x, lane = t & 31;
  if (lane >= live) return;
  __syncwarp();
  out[2 * t] = __ballot_sync(0xffffffffu, 1);
  out[2 * t + 1] = __reduce_add_sync(0xffffffffu, lane);
}

// A block reduction with warp shuffles and shared memory (any multiple of 32 threads).
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float warp_sums[32];
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.f;
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
  }
}

// Warp-aggregated atomics: the lanes __activemask() finds in the branch elect a leader
// that reserves slots for all of them.
extern "C" __global__ void aggregated(int* counter, int* slot, int* leaders) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  if (t % 3 == 0) {
    const unsigned m = __activemask();
    const int leader = __ffs(int(m)) - 1;
    int base = 0;
    if (int(lane) == leader) {
      base = atomicAdd(counter, __popc(m));
      atomicAdd(leaders, 1);
    }
    base = __shfl_sync(m, base, leader);
    slot[t] = base + __popc(m & ((1u << lane) - 1u));
  }
}

// Cooperative groups tiles. out[8t..]: tile<N> sum of thread ranks, ballot of odd ranks,
// shfl from rank 0 of t, shfl_down 1, thread_rank, meta_group_rank, then the dynamic
// tiled_partition(block, N)'s thread_rank and size.
template <unsigned N>
__device__ void tile_ops(unsigned* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
  const unsigned t = block.thread_rank();
  unsigned* o = out + 8 * t;
  o[0] = cg::reduce(tile, unsigned(t), cg::plus<unsigned>());
  o[1] = tile.ballot(tile.thread_rank() & 1);
  o[2] = tile.shfl(t, 0);
  o[3] = tile.shfl_down(t, 1u);
  o[4] = unsigned(tile.thread_rank());
  o[5] = unsigned(tile.meta_group_rank());
  tile.sync();
  cg::thread_group dyn = cg::tiled_partition(block, N);
  o[6] = unsigned(dyn.thread_rank());
  o[7] = unsigned(dyn.size());
  dyn.sync();
  block.sync();
}
extern "C" __global__ void tiles4(unsigned* out) { tile_ops<4>(out); }
extern "C" __global__ void tiles8(unsigned* out) { tile_ops<8>(out); }
extern "C" __global__ void tiles16(unsigned* out) { tile_ops<16>(out); }
extern "C" __global__ void tiles32(unsigned* out) { tile_ops<32>(out); }

// coalesced_threads() in a branch: size, rank and a reduction over the group.
extern "C" __global__ void coalesced(unsigned* out) {
  const unsigned t = threadIdx.x;
  if (t % 4 == 1) {
    cg::coalesced_group g = cg::coalesced_threads();
    out[3 * t] = unsigned(g.size());
    out[3 * t + 1] = unsigned(g.thread_rank());
    out[3 * t + 2] = cg::reduce(g, t, cg::plus<unsigned>());
  }
}

// Grid sync: every block writes, the grid syncs, every block reads all; `rounds` times.
extern "C" __global__ void grid_rounds(int* cells, int* sums, int rounds) {
  cg::grid_group grid = cg::this_grid();
  const unsigned b = blockIdx.x;
  for (int r = 0; r < rounds; ++r) {
    if (threadIdx.x == 0) cells[b] = int(b) + 100 * r;
    grid.sync();
    if (threadIdx.x == 0) {
      int s = 0;
      for (unsigned i = 0; i < gridDim.x; ++i) s += cells[i];
      sums[r * gridDim.x + b] = s;
    }
    grid.sync();
  }
  if (threadIdx.x == 0 && b == 0) sums[rounds * gridDim.x] = int(grid.num_blocks() * 1000 + grid.is_valid());
}

// Misuse the CPU build reports: kind 0 a shuffle from a lane outside the mask, 1 the
// caller outside the mask, 2 width 3, 3 lanes of one mask at different intrinsics,
// 4 a lane of the mask that never comes (waits elsewhere), 5 grid sync without a
// cooperative launch, 6 a grid sync that only block 0 reaches.
extern "C" __global__ void misuse(int* out, int kind) {
  const unsigned lane = threadIdx.x & 31;
  int r = 0;
  if (kind == 0 && lane < 16) r = __shfl_sync(0x0000ffffu, int(lane), 20);
  if (kind == 1 && lane == 3) r = __ballot_sync(0x1u, 1);
  if (kind == 2) r = __shfl_sync(0xffffffffu, int(lane), 0, 3);
  if (kind == 3) r = lane == 7 ? int(__ballot_sync(0xffffffffu, 1)) : __any_sync(0xffffffffu, 1);
  if (kind == 4) {
    if (lane == 9) __syncthreads();
    else r = __reduce_add_sync(0xffffffffu, 1u);
  }
  if (kind == 5) cg::this_grid().sync();
  if (kind == 6 && blockIdx.x == 0) cg::this_grid().sync();
  out[threadIdx.x] = r;
}
