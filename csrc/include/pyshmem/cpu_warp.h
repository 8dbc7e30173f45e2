// pyshmem/cpu_warp.h: warps of 32 lanes for CUDA C++ kernels built for the CPU
// (included by pyshmem/cpu_kernel.h; host compilers only): __syncwarp, the shuffles,
// votes, matches and reductions, and __activemask, on the fibers of pyshmem/cpu_fibers.h.
//
// Lane l of warp w is the block's thread of linear index 32*w + l, as on a GPU. Every
// *_sync intrinsic is a meeting of the lanes named in its mask, as on Volta and later
// (independent thread scheduling): a lane arrives, waits (its fiber switches away)
// until every non-exited lane of the mask has arrived at a *_sync intrinsic of the same
// kind with the same mask, and the last to arrive computes every lane's result from the
// values they brought and wakes them. So divergent lanes meet wherever they call it, and
// a lane waiting for a different meeting first (another mask) is simply waited for.
// What CUDA leaves undefined is reported, never guessed (pyshmem.KernelError names
// kernel, block and thread): the caller's lane not in mask, a width that is not a power
// of two up to 32, a shuffle that reads a lane not in the mask or that exited, and lanes
// of the same mask meeting at different intrinsics. Lanes that never come are reported
// when nothing else in the block can run (cpu_block.h's deadlock report).
#pragma once

#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "pyshmem/cpu_fibers.h"

#if defined(__CUDACC__)
#error "pyshmem/cpu_warp.h is for host compilers"
#endif

namespace pyshmem {
namespace cpu {
namespace fibers {

// What a lane waits at (Fiber::warp_op), and its name for messages.
enum WarpOp : uint8_t {
  kOpSyncwarp, kOpShflIdx, kOpShflUp, kOpShflDown, kOpShflXor, kOpBallot, kOpAny, kOpAll,
  kOpMatchAny, kOpMatchAll, kOpReduceAddU, kOpReduceMinU, kOpReduceMaxU, kOpReduceMinI,
  kOpReduceMaxI, kOpReduceAnd, kOpReduceOr, kOpReduceXor, kWarpOps
};
inline const char* warp_op_name(uint8_t op) {
  static const char* const names[kWarpOps] = {
      "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
      "__any_sync", "__all_sync", "__match_any_sync", "__match_all_sync", "__reduce_add_sync",
      "__reduce_min_sync", "__reduce_max_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
      "__reduce_or_sync", "__reduce_xor_sync"};
  return op < kWarpOps ? names[op] : "a warp intrinsic";
}

// Lane `src`'s value as the shuffle of lane `lane` reads it, or -1 when the shuffle
// keeps the caller's own value (CUDA's rule for a source outside the width segment).
inline int shuffle_source(uint8_t op, unsigned lane, unsigned arg, unsigned width) {
  const unsigned seg = lane & ~(width - 1), pos = lane & (width - 1);
  switch (op) {
    case kOpShflIdx: return static_cast<int>(seg + (arg & (width - 1)));
    case kOpShflUp: return pos >= arg ? static_cast<int>(lane - arg) : -1;
    case kOpShflDown: return arg < width && pos + arg < width ? static_cast<int>(lane + arg) : -1;
    default: {  // xor: earlier segments may be read, later ones give the own value
      const unsigned src = lane ^ arg;
      return src < seg + width && src < 32 ? static_cast<int>(src) : -1;
    }
  }
}

// The meeting of `group` (lanes of the warp at `base`, all waiting at `op`, with the
// calling lane among them) is complete: computes every lane's result and makes the
// others runnable. A shuffle reading a lane outside `group` flags the reader's
// warp_bad, which the reader reports when it resumes.
inline void warp_release(Block* b, unsigned base, unsigned group, uint8_t op, unsigned self) {
  Fiber* f = b->fibers + base;
  uint64_t out = 0;
  switch (op) {
    case kOpBallot: case kOpAny: case kOpAll:
      for (unsigned m = group; m; m &= m - 1) {
        const unsigned l = __builtin_ctz(m);
        if (f[l].warp_in) out |= 1u << l;
      }
      if (op == kOpAny) out = out != 0;
      else if (op == kOpAll) out = out == group;
      break;
    case kOpReduceAddU: case kOpReduceAnd: case kOpReduceOr: case kOpReduceXor:
    case kOpReduceMinU: case kOpReduceMaxU: case kOpReduceMinI: case kOpReduceMaxI: {
      uint32_t acc = static_cast<uint32_t>(f[__builtin_ctz(group)].warp_in);
      for (unsigned m = group & (group - 1); m; m &= m - 1) {
        const uint32_t v = static_cast<uint32_t>(f[__builtin_ctz(m)].warp_in);
        const int32_t sa = static_cast<int32_t>(acc), sv = static_cast<int32_t>(v);
        switch (op) {
          case kOpReduceAddU: acc += v; break;
          case kOpReduceAnd: acc &= v; break;
          case kOpReduceOr: acc |= v; break;
          case kOpReduceXor: acc ^= v; break;
          case kOpReduceMinU: acc = v < acc ? v : acc; break;
          case kOpReduceMaxU: acc = v > acc ? v : acc; break;
          case kOpReduceMinI: acc = static_cast<uint32_t>(sv < sa ? sv : sa); break;
          default: acc = static_cast<uint32_t>(sv > sa ? sv : sa); break;
        }
      }
      out = acc;
      break;
    }
    case kOpMatchAll: {
      const uint64_t v = f[__builtin_ctz(group)].warp_in;
      bool same = true;
      for (unsigned m = group; m; m &= m - 1) same = same && f[__builtin_ctz(m)].warp_in == v;
      out = same ? group : 0;
      break;
    }
    default: break;  // per-lane results below
  }
  for (unsigned m = group; m; m &= m - 1) {
    const unsigned l = __builtin_ctz(m);
    Fiber& o = f[l];
    uint64_t r = out;
    if (op >= kOpShflIdx && op <= kOpShflXor) {
      const int src = shuffle_source(op, l, o.warp_arg, o.warp_width);
      if (src < 0) r = o.warp_in;
      else if (group & (1u << src)) r = f[src].warp_in;
      else o.warp_bad = static_cast<int8_t>(src);
    } else if (op == kOpMatchAny) {
      r = 0;
      for (unsigned k = group; k; k &= k - 1)
        if (f[__builtin_ctz(k)].warp_in == o.warp_in) r |= 1u << __builtin_ctz(k);
    }
    o.warp_out = r;
    if (base + l != self) {
      o.state = kReady;
      rq_push(b, base + l);
    }
  }
}

// The lanes named in `mask` (the caller's warp, at `base`) that have not exited, if all
// of them wait at `op` with `mask`; 0 when some are still missing. A lane waiting with
// the same mask at another intrinsic is a misuse: reported through `clash`.
inline unsigned warp_group_ready(const Block* b, unsigned base, unsigned mask, uint8_t op, unsigned self,
                                 int* clash) {
  unsigned group = 0;
  for (unsigned m = mask; m; m &= m - 1) {
    const unsigned l = __builtin_ctz(m);
    const Fiber& o = b->fibers[base + l];
    if (base + l == self || o.state == kDone) {
      if (o.state != kDone) group |= 1u << l;
      continue;
    }
    if (o.state != kWarpSync || o.warp_mask != mask) return 0;
    if (o.warp_op != op) {
      *clash = static_cast<int>(l);
      return 0;
    }
    group |= 1u << l;
  }
  return group;
}

// The calling lane arrives at warp intrinsic `op` with `mask` and value `in` (arg and
// width for shuffles); returns its result once every named lane has arrived.
inline uint64_t warp_meet(uint8_t op, unsigned mask, uint64_t in, unsigned arg = 0, unsigned width = 32) {
  Block* b = t_block;
  RtGuard guard(b);
  Fiber* me = b->cur;
  const unsigned lane = me->linear & 31u, base = me->linear & ~31u;
  char what[200];
  if (!(mask & (1u << lane))) {
    snprintf(what, sizeof what, "%s(mask=0x%08x): the calling thread's lane %u is not in mask", warp_op_name(op),
             mask, lane);
    usage_error(what);
  }
  if (width == 0 || width > 32 || (width & (width - 1))) {
    snprintf(what, sizeof what, "%s: width %u is not a power of two from 1 to 32", warp_op_name(op), width);
    usage_error(what);
  }
  mask &= warp_lanes_mask(b, me->linear);
  progress(b);
  me->warp_op = op;
  me->warp_mask = mask;
  me->warp_in = in;
  me->warp_arg = arg;
  me->warp_width = static_cast<uint8_t>(width);
  me->warp_bad = -1;
  int clash = -1;
  const unsigned group = warp_group_ready(b, base, mask, op, me->linear, &clash);
  if (clash >= 0) {
    snprintf(what, sizeof what,
             "lanes of mask 0x%08x meet at different warp intrinsics: this lane (%u) at %s, lane %d at %s", mask, lane,
             warp_op_name(op), clash, warp_op_name(b->fibers[base + clash].warp_op));
    usage_error(what);
  }
  if (group) {
    warp_release(b, base, group, op, me->linear);
  } else {
    me->state = kWarpSync;
    switch_away(b);
  }
  if (me->warp_bad >= 0) {
    snprintf(what, sizeof what,
             "%s(mask=0x%08x): lane %u reads lane %d, which is not in mask or has exited (undefined on a GPU)",
             warp_op_name(op), mask, lane, me->warp_bad);
    usage_error(what);
  }
  return me->warp_out;
}

// A lane exited: the meetings of its warp that only it was missing complete now
// (CUDA's *_sync intrinsics wait for the non-exited lanes of the mask only).
inline void warp_lane_exited(Block* b, unsigned linear) {
  const unsigned base = linear & ~31u, bit = 1u << (linear & 31u);
  for (unsigned l = 0; l < 32 && base + l < b->n; ++l) {
    const Fiber& o = b->fibers[base + l];
    if (o.state != kWarpSync || !(o.warp_mask & bit)) continue;
    int clash = -1;
    if (unsigned group = warp_group_ready(b, base, o.warp_mask, o.warp_op, base + l, &clash)) {
      // Released on behalf of lane l, which is not running: it is woken too.
      warp_release(b, base, group, o.warp_op, ~0u);
    }
  }
}

// __syncwarp(mask).
inline void syncwarp(unsigned mask) { warp_meet(kOpSyncwarp, mask, 0); }

// __activemask(): the lanes of the caller's warp that reach this same call (`site`) in
// the same scheduling round, the CPU's notion of lanes executing together. The caller
// lets the runnable threads queued before it run first; the first of the lanes there to
// resume hands every lane at `site` the same mask. Lanes in another branch, or waiting
// elsewhere, are not in it (CUDA makes no promise that they are).
inline unsigned activemask(const void* site) {
  Block* b = t_block;
  RtGuard guard(b);
  Fiber* me = b->cur;
  const unsigned base = me->linear & ~31u;
  me->active_site = site;
  me->warp_out = 0;
  if (b->rq_count) {
    rq_push(b, me->linear);
    switch_away(b);
  }
  if (me->warp_out) {
    me->active_site = nullptr;
    return static_cast<unsigned>(me->warp_out);
  }
  unsigned mask = 0;
  for (unsigned l = 0; l < 32 && base + l < b->n; ++l)
    if (b->fibers[base + l].active_site == site) mask |= 1u << l;
  for (unsigned m = mask; m; m &= m - 1) {
    Fiber& o = b->fibers[base + __builtin_ctz(m)];
    o.warp_out = mask;
    o.active_site = nullptr;
  }
  return mask;
}

template <class T>
inline uint64_t to_bits(T v) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "warp shuffles and matches take values of at most 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof v);
  return bits;
}
template <class T>
inline T from_bits(uint64_t bits) {
  T v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace fibers
}  // namespace cpu
}  // namespace pyshmem

// ---- CUDA's warp intrinsics -----------------------------------------------------------

inline void __syncwarp(unsigned mask = 0xffffffffu) { ::pyshmem::cpu::fibers::syncwarp(mask); }

// A distinct address per call site (each expansion is its own lambda with its own static).
#define __activemask() \
  (::pyshmem::cpu::fibers::activemask([]() -> const void* { static const char site = 0; return &site; }()))

#define PYSHMEM_CPU_SHFL(name, op, ArgT)                                                                         \
  template <class T>                                                                                             \
  inline T name(unsigned mask, T var, ArgT arg, int width = 32) {                                                \
    using namespace ::pyshmem::cpu::fibers;                                                                      \
    return from_bits<T>(warp_meet(op, mask, to_bits(var), static_cast<unsigned>(arg), static_cast<unsigned>(width))); \
  }
PYSHMEM_CPU_SHFL(__shfl_sync, ::pyshmem::cpu::fibers::kOpShflIdx, int)
PYSHMEM_CPU_SHFL(__shfl_up_sync, ::pyshmem::cpu::fibers::kOpShflUp, unsigned int)
PYSHMEM_CPU_SHFL(__shfl_down_sync, ::pyshmem::cpu::fibers::kOpShflDown, unsigned int)
PYSHMEM_CPU_SHFL(__shfl_xor_sync, ::pyshmem::cpu::fibers::kOpShflXor, int)
#undef PYSHMEM_CPU_SHFL

inline unsigned __ballot_sync(unsigned mask, int pred) {
  return static_cast<unsigned>(::pyshmem::cpu::fibers::warp_meet(::pyshmem::cpu::fibers::kOpBallot, mask, pred != 0));
}
inline int __any_sync(unsigned mask, int pred) {
  return static_cast<int>(::pyshmem::cpu::fibers::warp_meet(::pyshmem::cpu::fibers::kOpAny, mask, pred != 0));
}
inline int __all_sync(unsigned mask, int pred) {
  return static_cast<int>(::pyshmem::cpu::fibers::warp_meet(::pyshmem::cpu::fibers::kOpAll, mask, pred != 0));
}

template <class T>
inline unsigned __match_any_sync(unsigned mask, T value) {
  using namespace ::pyshmem::cpu::fibers;
  return static_cast<unsigned>(warp_meet(kOpMatchAny, mask, to_bits(value)));
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int* pred) {
  using namespace ::pyshmem::cpu::fibers;
  const unsigned r = static_cast<unsigned>(warp_meet(kOpMatchAll, mask, to_bits(value)));
  *pred = r != 0;
  return r;
}

// CUDA's __reduce_*_sync overloads (sm_80): add/min/max on unsigned and int, and/or/xor
// on unsigned.
#define PYSHMEM_CPU_REDUCE(name, T, op)                                                                   \
  inline T name(unsigned mask, T value) {                                                                 \
    return static_cast<T>(::pyshmem::cpu::fibers::warp_meet(op, mask, static_cast<uint32_t>(value)));     \
  }
PYSHMEM_CPU_REDUCE(__reduce_add_sync, unsigned, ::pyshmem::cpu::fibers::kOpReduceAddU)
PYSHMEM_CPU_REDUCE(__reduce_add_sync, int, ::pyshmem::cpu::fibers::kOpReduceAddU)
PYSHMEM_CPU_REDUCE(__reduce_min_sync, unsigned, ::pyshmem::cpu::fibers::kOpReduceMinU)
PYSHMEM_CPU_REDUCE(__reduce_min_sync, int, ::pyshmem::cpu::fibers::kOpReduceMinI)
PYSHMEM_CPU_REDUCE(__reduce_max_sync, unsigned, ::pyshmem::cpu::fibers::kOpReduceMaxU)
PYSHMEM_CPU_REDUCE(__reduce_max_sync, int, ::pyshmem::cpu::fibers::kOpReduceMaxI)
PYSHMEM_CPU_REDUCE(__reduce_and_sync, unsigned, ::pyshmem::cpu::fibers::kOpReduceAnd)
PYSHMEM_CPU_REDUCE(__reduce_or_sync, unsigned, ::pyshmem::cpu::fibers::kOpReduceOr)
PYSHMEM_CPU_REDUCE(__reduce_xor_sync, unsigned, ::pyshmem::cpu::fibers::kOpReduceXor)
#undef PYSHMEM_CPU_REDUCE
