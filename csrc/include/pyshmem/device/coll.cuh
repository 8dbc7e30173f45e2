// pyshmem/device/coll.cuh: collectives over a team from device code.
//
// broadcast, collect, fcollect, alltoall(s), the reductions and reduce-scatters, each with _warp/_block variants
// (the group shares the copying). Every member of the team calls the routine, one
// thread (or warp/block) per PE, with the same sizes (and root/op). On return the
// routine is complete on the calling PE: dest holds the result and source may be
// reused. source and dest must be symmetric; they may be the same array for broadcast
// and the reductions, and must not otherwise overlap.
//
// Algorithms (the same as the host API's, coll/coll.h):
//  - broadcast/collect/fcollect/alltoall(s): a team barrier, then each member pulls what it needs
//    out of the other members' symmetric source (loads from the peer's segment, or a
//    get through the proxy for peers on other nodes), then a second barrier.
//  - reductions: reduce-scatter + all-gather in place: member i combines element range
//    i of every member's source (in team order: every member gets the same bits) into
//    range i of its own dest, then copies the other ranges out of their owners' dests.
//    Three barriers, no scratch memory. They need every member to be load/store
//    reachable: across nodes they trap (use the host API's reduce there).
#pragma once

#include <cuda/std/type_traits>

#include "pyshmem/device/rma.cuh"
#include "pyshmem/device/team.cuh"
#include "pyshmem/reduce_op.h"

namespace pyshmem {
inline namespace device_api {
namespace detail {

// A team barrier inside a collective: the group's stores to its source (made before the
// call) are ordered before the arrival the peers acquire.
template <Coop C>
PYSHMEM_HD void coll_sync(const char* call, team_t team) {
  coop_sync<C>();
  if (coop_rank<C>() == 0) {
    fence_system();
    team_sync_rounds(call, team);
  }
  coop_sync<C>();
}

PYSHMEM_HD int member_pe(const pyshmem_team_desc& t, int i) { return t.start + i * t.stride; }

template <Coop C>
PYSHMEM_HD void broadcast_impl(const char* call, team_t team, void* dest, const void* source, size_t nbytes,
                               int root) {
  coop_same_args<C>(call, static_cast<uint64_t>(team), PYSHMEM_U64(dest), PYSHMEM_U64(source), nbytes,
                    static_cast<uint64_t>(root));
  const pyshmem_team_desc& t = team_entry(call, team);
  if (root < 0 || root >= t.size) trap(call, "root is not a PE of the team", root);
  coll_sync<C>(call, team);
  if (t.my_index != root) getmem_impl<C>(call, dest, source, nbytes, member_pe(t, root), false);
  else if (dest != source) copy_bytes<C>(dest, source, nbytes);
  coll_sync<C>(call, team);
}

// fcollect (alltoall == false): dest block j <- member j's source.
// alltoall: dest block j <- block (my index) of member j's source.
template <Coop C>
PYSHMEM_HD void gather_impl(const char* call, team_t team, void* dest, const void* source, size_t nbytes,
                            bool alltoall) {
  coop_same_args<C>(call, static_cast<uint64_t>(team), PYSHMEM_U64(dest), PYSHMEM_U64(source), nbytes, alltoall);
  const pyshmem_team_desc& t = team_entry(call, team);
  coll_sync<C>(call, team);
  const char* from = static_cast<const char*>(source) + (alltoall ? static_cast<size_t>(t.my_index) * nbytes : 0);
  for (int k = 0; k < t.size; ++k) {
    const int j = (t.my_index + k) % t.size;
    getmem_impl<C>(call, static_cast<char*>(dest) + static_cast<size_t>(j) * nbytes, from, nbytes, member_pe(t, j),
                   false);
  }
  coll_sync<C>(call, team);
}

// This PE's copy of the team's publish area (team.h): word 0 is what the members read
// from each other during collect, word 1 a scratch word for the calling group.
PYSHMEM_HD uint64_t* coll_publish(team_t team) {
  return team_word(state().my_pe, PYSHMEM_TEAM_INDEX(team), PYSHMEM_TEAM_SLOT_HEADER + 64u * state().team_rounds);
}

// Word 0 of world PE pe's publish area: read once by the group's first thread (a peer
// behind the proxy costs one request, not one per thread) and handed to the rest of
// the group through the scratch word.
template <Coop C>
PYSHMEM_HD uint64_t coll_published(uint64_t* pub, int pe) {
  if (coop_size<C>() == 1) return pe == state().my_pe ? pub[0] : g(pub, pe);
  coop_sync<C>();
  if (coop_rank<C>() == 0) pub[1] = pe == state().my_pe ? pub[0] : g(pub, pe);
  coop_sync<C>();
  const uint64_t v = pub[1];
  coop_sync<C>();
  return v;
}

// collect: dest <- the members' sources back to back in team order, each member
// contributing its own nbytes. dest_cap bounds the total (~size_t(0): the caller vouches).
// Every member publishes its count, then reads the others' to place the blocks.
template <Coop C>
PYSHMEM_HD void collect_impl(const char* call, team_t team, void* dest, size_t dest_cap, const void* source,
                             size_t nbytes) {
  coop_same_args<C>(call, static_cast<uint64_t>(team), PYSHMEM_U64(dest), dest_cap, PYSHMEM_U64(source), nbytes);
  const pyshmem_team_desc& t = team_entry(call, team);
  uint64_t* pub = coll_publish(team);
  coop_sync<C>();
  if (coop_rank<C>() == 0) pub[0] = nbytes;
  coll_sync<C>(call, team);
  // Pass 1: where my block starts and how much all members bring.
  uint64_t mine = 0, total = 0;
  for (int j = 0; j < t.size; ++j) {
    if (j == t.my_index) mine = total;
    total += coll_published<C>(pub, member_pe(t, j));
  }
  if (total > dest_cap) trap(call, "dest is shorter than the members' blocks together", static_cast<int>(total));
  // Pass 2: pull every member's block, starting with the right-hand neighbour.
  uint64_t off = mine + nbytes;
  for (int k = 1; k <= t.size; ++k) {
    const int j = (t.my_index + k) % t.size;
    if (j == 0) off = 0;
    const uint64_t n = j == t.my_index ? nbytes : coll_published<C>(pub, member_pe(t, j));
    getmem_impl<C>(call, static_cast<char*>(dest) + off, source, n, member_pe(t, j), false);
    off += n;
  }
  coll_sync<C>(call, team);
}

// One element of `elem` bytes; arrays of T are aligned to sizeof(T) for the common sizes.
PYSHMEM_HD void copy_element(char* to, const char* from, size_t elem) {
  switch (elem) {
    case 1: *to = *from; return;
    case 2: *reinterpret_cast<uint16_t*>(to) = *reinterpret_cast<const uint16_t*>(from); return;
    case 4: *reinterpret_cast<uint32_t*>(to) = *reinterpret_cast<const uint32_t*>(from); return;
    case 8: *reinterpret_cast<uint64_t*>(to) = *reinterpret_cast<const uint64_t*>(from); return;
  }
  for (size_t b = 0; b < elem; ++b) to[b] = from[b];
}

// alltoalls: element i of block (my index) of member j's source, at stride sst, lands at
// element i of block j of dest, at stride dst (strides and nelems in elements).
template <Coop C>
PYSHMEM_HD void alltoalls_impl(const char* call, team_t team, void* dest, const void* source, ptrdiff_t dst,
                               ptrdiff_t sst, size_t nelems, size_t elem) {
  coop_same_args<C>(call, static_cast<uint64_t>(team) ^ (elem << 32), PYSHMEM_U64(dest), PYSHMEM_U64(source),
                    static_cast<uint64_t>(dst) ^ (static_cast<uint64_t>(sst) << 32), nelems);
  const pyshmem_team_desc& t = team_entry(call, team);
  if (dst < 1 || sst < 1) trap(call, "strides must be >= 1 element", static_cast<int>(dst < 1 ? dst : sst));
  coll_sync<C>(call, team);
  const size_t dstep = static_cast<size_t>(dst) * elem, sstep = static_cast<size_t>(sst) * elem;
  const char* in = static_cast<const char*>(source) + static_cast<size_t>(t.my_index) * nelems * sstep;
  for (int k = 0; k < t.size; ++k) {
    const int j = (t.my_index + k) % t.size;
    char* to = static_cast<char*>(dest) + static_cast<size_t>(j) * nelems * dstep;
    if (const char* from = static_cast<const char*>(coll_direct_ptr(call, in, member_pe(t, j)))) {
      for (size_t i = coop_rank<C>(); i < nelems; i += coop_size<C>()) copy_element(to + i * dstep, from + i * sstep, elem);
    } else {
      coop_sync<C>();
      if (coop_rank<C>() == 0) strided(call, false, to, in, dst, sst, nelems, elem, member_pe(t, j));
    }
  }
  coll_sync<C>(call, team);
}

// NVSHMEM's maxloc (nvshmemx_double2_maxloc_reduce_block), which has no pyshmem_reduce_op:
// each element a pair, value in .x and location in .y. The larger value wins and, of equal
// values, the smaller location, so every member gets the same pair whatever the order of
// combining (NVSHMEM keeps the pair combined last, which can differ between PEs).
constexpr int kReduceMaxloc = -1;

template <class T, int Op>
PYSHMEM_HD T coll_combine(T a, T b) {
  if constexpr (Op == kReduceMaxloc) return (b.x > a.x || (b.x == a.x && b.y < a.y)) ? b : a;
  else return reduce_combine<T, Op>(a, b);
}

template <class T, int Op, Coop C>
PYSHMEM_HD void reduce_impl(const char* call, team_t team, T* dest, const T* source, size_t nelems) {
  coop_same_args<C>(call, static_cast<uint64_t>(team), PYSHMEM_U64(dest), PYSHMEM_U64(source), nelems);
  const pyshmem_team_desc& t = team_entry(call, team);
  for (int j = 0; j < t.size; ++j)
    if (!coll_direct_ptr(call, source, member_pe(t, j)))
      trap(call, "device reductions need every team member load/store reachable (a member is on another node "
                 "or PYSHMEM_PROXY_ALL is set); use the host API's reduce", member_pe(t, j));
  coll_sync<C>(call, team);
  // Range i of the elements: [nelems*i/n, nelems*(i+1)/n).
  const size_t n = static_cast<size_t>(t.size);
  const size_t lo = nelems * static_cast<size_t>(t.my_index) / n;
  const size_t hi = nelems * static_cast<size_t>(t.my_index + 1) / n;
  // Member j's copy of source[i] is at source + i + (pe_j - me) * heap_stride (all checked
  // reachable above), so the loop does address arithmetic only.
  const int64_t stride = static_cast<int64_t>(state().heap_stride), me = state().my_pe;
  const char* base = reinterpret_cast<const char*>(source);
  for (size_t i = lo + coop_rank<C>(); i < hi; i += coop_size<C>()) {
    const char* mine = base + i * sizeof(T);
    T acc = *reinterpret_cast<const T*>(mine + (member_pe(t, 0) - me) * stride);
    for (int j = 1; j < t.size; ++j)
      acc = coll_combine<T, Op>(acc, *reinterpret_cast<const T*>(mine + (member_pe(t, j) - me) * stride));
    dest[i] = acc;  // in place, this overwrites source[i] after this thread's own read of it
  }
  coll_sync<C>(call, team);
  for (int k = 1; k < t.size; ++k) {
    const int j = (t.my_index + k) % t.size;
    const size_t jlo = nelems * static_cast<size_t>(j) / n, jhi = nelems * static_cast<size_t>(j + 1) / n;
    copy_bytes<C>(dest + jlo, coll_direct_ptr(call, dest + jlo, member_pe(t, j)), (jhi - jlo) * sizeof(T));
  }
  coll_sync<C>(call, team);
}

// reducescatter: dest[i] = op over the members of their source[my_index * nelems + i],
// i < nelems (source holds nelems per member, dest nelems). One barrier before (every
// source ready), one after (every member's reads of my source done: it may be reused).
// source and dest must not overlap: a member writes dest while others still read its
// source.
template <class T, int Op, Coop C>
PYSHMEM_HD void reducescatter_impl(const char* call, team_t team, T* dest, const T* source, size_t nelems) {
  coop_same_args<C>(call, static_cast<uint64_t>(team), PYSHMEM_U64(dest), PYSHMEM_U64(source), nelems);
  const pyshmem_team_desc& t = team_entry(call, team);
  const size_t n = static_cast<size_t>(t.size);
  const uintptr_t d = reinterpret_cast<uintptr_t>(dest), s = reinterpret_cast<uintptr_t>(source);
  if (nelems && d < s + n * nelems * sizeof(T) && s < d + nelems * sizeof(T))
    trap(call, "dest overlaps source (dest holds nelems elements, source nelems per team member; they must be "
               "distinct arrays)", t.my_index);
  for (int j = 0; j < t.size; ++j)
    if (!coll_direct_ptr(call, source, member_pe(t, j)))
      trap(call, "device reductions need every team member load/store reachable (a member is on another node "
                 "or PYSHMEM_PROXY_ALL is set); use the host API's reduce", member_pe(t, j));
  coll_sync<C>(call, team);
  const int64_t stride = static_cast<int64_t>(state().heap_stride), me = state().my_pe;
  const char* base = reinterpret_cast<const char*>(source + static_cast<size_t>(t.my_index) * nelems);
  for (size_t i = coop_rank<C>(); i < nelems; i += coop_size<C>()) {
    const char* mine = base + i * sizeof(T);
    T acc = *reinterpret_cast<const T*>(mine + (member_pe(t, 0) - me) * stride);
    for (int j = 1; j < t.size; ++j)
      acc = coll_combine<T, Op>(acc, *reinterpret_cast<const T*>(mine + (member_pe(t, j) - me) * stride));
    dest[i] = acc;
  }
  coll_sync<C>(call, team);
}

// The operator as a template argument: one reduce_impl per PYSHMEM_REDUCE_OPS row; the
// "bitwise" ones (and/or/xor) for integer types only.
template <class T, Coop C>
PYSHMEM_HD void reduce_op(const char* call, team_t team, T* dest, const T* source, size_t nelems, int op) {
#define PYSHMEM_REDUCE_OP_CASE(NAME, name, kind)                                                 \
  if constexpr (kind[0] != 'b' || cuda::std::is_integral<T>::value) {                           \
    if (op == PYSHMEM_OP_##NAME) return reduce_impl<T, PYSHMEM_OP_##NAME, C>(call, team, dest, source, nelems); \
  }
  PYSHMEM_REDUCE_OPS(PYSHMEM_REDUCE_OP_CASE)
#undef PYSHMEM_REDUCE_OP_CASE
  trap(call, "op is not a reduction operator for this type (and/or/xor take integer types)", op);
}

}  // namespace detail

// Each collective is defined once for a thread, a warp (_warp) and a block (_block): the
// byte form (<name>mem) and the typed form (nelems of T).
//
// broadcast: dest on every member <- root's source (root is a team PE number).
// fcollect: dest[j*n ...] <- member j's n elements.
// alltoall: block j of my source -> block (my index) of member j's dest.
// collect: dest <- every member's source back to back in team order; each member brings
//   its own nbytes (which may differ). dest must hold the sum of them.
// alltoalls: alltoall with strides: element i of block j of my source (at source +
//   (j*nelems + i)*sst) -> element i of block (my index) of member j's dest (at dest +
//   (my*nelems + i)*dst). Strides and nelems in elements; alltoallsmem's are bytes (and
//   it has no _warp/_block forms, as in NVSHMEM).
// reduce: dest[i] = op over the members of source[i]; op a pyshmem_reduce_op.
#define PYSHMEM_DEFINE_COLLECTIVES(SUFFIX, LEVEL)                                                    \
  PYSHMEM_HD void broadcastmem##SUFFIX(team_t team, void* dest, const void* source, size_t nbytes, int root) { \
    detail::broadcast_impl<Coop::LEVEL>("broadcastmem" #SUFFIX, team, dest, source, nbytes, root);  \
  }                                                                                                 \
  template <class T>                                                                                \
  PYSHMEM_HD void broadcast##SUFFIX(team_t team, T* dest, const T* source, size_t nelems, int root) { \
    broadcastmem##SUFFIX(team, dest, source, nelems * sizeof(T), root);                             \
  }                                                                                                 \
  PYSHMEM_HD void fcollectmem##SUFFIX(team_t team, void* dest, const void* source, size_t nbytes) { \
    detail::gather_impl<Coop::LEVEL>("fcollectmem" #SUFFIX, team, dest, source, nbytes, false);     \
  }                                                                                                 \
  template <class T>                                                                                \
  PYSHMEM_HD void fcollect##SUFFIX(team_t team, T* dest, const T* source, size_t nelems) {          \
    fcollectmem##SUFFIX(team, dest, source, nelems * sizeof(T));                                    \
  }                                                                                                 \
  PYSHMEM_HD void alltoallmem##SUFFIX(team_t team, void* dest, const void* source, size_t nbytes) { \
    detail::gather_impl<Coop::LEVEL>("alltoallmem" #SUFFIX, team, dest, source, nbytes, true);      \
  }                                                                                                 \
  template <class T>                                                                                \
  PYSHMEM_HD void alltoall##SUFFIX(team_t team, T* dest, const T* source, size_t nelems) {          \
    alltoallmem##SUFFIX(team, dest, source, nelems * sizeof(T));                                    \
  }                                                                                                 \
  PYSHMEM_HD void collectmem##SUFFIX(team_t team, void* dest, const void* source, size_t nbytes) {  \
    detail::collect_impl<Coop::LEVEL>("collectmem" #SUFFIX, team, dest, ~size_t(0), source, nbytes); \
  }                                                                                                 \
  template <class T>                                                                                \
  PYSHMEM_HD void collect##SUFFIX(team_t team, T* dest, const T* source, size_t nelems) {           \
    collectmem##SUFFIX(team, dest, source, nelems * sizeof(T));                                     \
  }                                                                                                 \
  template <class T>                                                                                \
  PYSHMEM_HD void alltoalls##SUFFIX(team_t team, T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, \
                                    size_t nelems) {                                                \
    detail::alltoalls_impl<Coop::LEVEL>("alltoalls" #SUFFIX, team, dest, source, dst, sst, nelems, sizeof(T)); \
  }                                                                                                 \
  template <class T>                                                                                \
  PYSHMEM_HD void reduce##SUFFIX(team_t team, T* dest, const T* source, size_t nelems, int op) {    \
    detail::reduce_op<T, Coop::LEVEL>("reduce" #SUFFIX, team, dest, source, nelems, op);            \
  }
PYSHMEM_FOR_EACH_COOP(PYSHMEM_DEFINE_COLLECTIVES)
#undef PYSHMEM_DEFINE_COLLECTIVES

PYSHMEM_HD void alltoallsmem(team_t team, void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,
                             size_t nelems) {
  detail::alltoalls_impl<Coop::thread>("alltoallsmem", team, dest, source, dst, sst, nelems, 1);
}

// sum_reduce, prod_reduce, max_reduce, min_reduce, and_reduce, or_reduce, xor_reduce
// (and _warp/_block): NVSHMEM's <op>_reduce with the type as a template parameter;
// PYSHMEM_REDUCE_OPS (pyshmem/types.h) spells the operators in capitals, which the
// preprocessor cannot lower, so the names are listed here, checked against it below.
// <op>_reducescatter (and _warp/_block): dest[i] = op over the members of their
// source[my team PE * nelems + i] (see reducescatter_impl).
#define PYSHMEM_DEFINE_REDUCTION_AT(SUFFIX, LEVEL, REDUCE, SCATTER, OP)                             \
  template <class T>                                                                              \
  PYSHMEM_HD void REDUCE##SUFFIX(team_t team, T* dest, const T* source, size_t nelems) {          \
    detail::reduce_impl<T, OP, Coop::LEVEL>(#REDUCE #SUFFIX, team, dest, source, nelems);        \
  }                                                                                               \
  template <class T>                                                                              \
  PYSHMEM_HD void SCATTER##SUFFIX(team_t team, T* dest, const T* source, size_t nelems) {         \
    detail::reducescatter_impl<T, OP, Coop::LEVEL>(#SCATTER #SUFFIX, team, dest, source, nelems); \
  }
#define PYSHMEM_DEFINE_REDUCTION(REDUCE, SCATTER, OP)                                             \
  PYSHMEM_DEFINE_REDUCTION_AT(, thread, REDUCE, SCATTER, OP)                                      \
  PYSHMEM_DEFINE_REDUCTION_AT(_warp, warp, REDUCE, SCATTER, OP)                                   \
  PYSHMEM_DEFINE_REDUCTION_AT(_block, block, REDUCE, SCATTER, OP)
PYSHMEM_DEFINE_REDUCTION(sum_reduce, sum_reducescatter, PYSHMEM_OP_SUM)
PYSHMEM_DEFINE_REDUCTION(prod_reduce, prod_reducescatter, PYSHMEM_OP_PROD)
PYSHMEM_DEFINE_REDUCTION(max_reduce, max_reducescatter, PYSHMEM_OP_MAX)
PYSHMEM_DEFINE_REDUCTION(min_reduce, min_reducescatter, PYSHMEM_OP_MIN)
PYSHMEM_DEFINE_REDUCTION(and_reduce, and_reducescatter, PYSHMEM_OP_AND)
PYSHMEM_DEFINE_REDUCTION(or_reduce, or_reducescatter, PYSHMEM_OP_OR)
PYSHMEM_DEFINE_REDUCTION(xor_reduce, xor_reducescatter, PYSHMEM_OP_XOR)
static_assert(PYSHMEM_OP_COUNT == 7, "a reduction operator was added to PYSHMEM_REDUCE_OPS: define its <op>_reduce here");
#undef PYSHMEM_DEFINE_REDUCTION
#undef PYSHMEM_DEFINE_REDUCTION_AT

}  // namespace device_api
}  // namespace pyshmem
