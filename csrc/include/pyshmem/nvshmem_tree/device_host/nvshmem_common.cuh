// <device_host/nvshmem_common.cuh>: NVSHMEM's tile collectives (nvshmemx::tile_allreduce
// ... over NVLS multicast). pyshmem does not provide them: pyshmem maps no multicast
// objects (nvshmemx_mc_ptr answers NULL), and the tile API's results are defined by
// them. Every tile function is declared with NVSHMEM's signature; calling one fails to
// compile with the message below, so a program learns it when it is built, never at run
// time. docs/design.md's feature status lists the tile API.
#pragma once

#include <nvshmem.h>

#include "device_host/nvshmem_tensor.h"

namespace nvshmemx {

template <class...>
struct pyshmem_tile_api_unavailable : cuda::std::false_type {};

#define PYSHMEM_TILE_REFUSE(...)                                                                              \
  static_assert(pyshmem_tile_api_unavailable<__VA_ARGS__>::value,                                          \
                "pyshmem does not provide NVSHMEM's tile API (NVLS multicast tile collectives: tile_*_reduce, " \
                "tile_allgather, tile_broadcast, tile_put/get, tile_collective_wait); see docs/design.md, "     \
                "feature status, and use the typed collectives (nvshmemx_<T>_sum_reduce_block ...)");          \
  return 0

#define PYSHMEM_TILE_GROUPS(X) X() X(_warp) X(_warpgroup) X(_block)
#define PYSHMEM_TILE_COLL(SUFFIX)                                                                             \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_sum_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, int, uint64_t) { PYSHMEM_TILE_REFUSE(S); } \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_sum_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, uint64_t) { PYSHMEM_TILE_REFUSE(S); }      \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_min_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, int, uint64_t) { PYSHMEM_TILE_REFUSE(S); } \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_min_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, uint64_t) { PYSHMEM_TILE_REFUSE(S); }      \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_max_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, int, uint64_t) { PYSHMEM_TILE_REFUSE(S); } \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_max_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, uint64_t) { PYSHMEM_TILE_REFUSE(S); }      \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_sum_rooted_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, int, uint64_t) {                  \
    PYSHMEM_TILE_REFUSE(S);                                                                                   \
  }                                                                                                           \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_min_rooted_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, int, uint64_t) {                  \
    PYSHMEM_TILE_REFUSE(S);                                                                                   \
  }                                                                                                           \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_max_rooted_reduce##SUFFIX(nvshmem_team_t, S, D, T, T, int, uint64_t) {                  \
    PYSHMEM_TILE_REFUSE(S);                                                                                   \
  }                                                                                                           \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_allgather##SUFFIX(nvshmem_team_t, S, D, T, T, uint64_t) { PYSHMEM_TILE_REFUSE(S); }       \
  template <class S, class D, class T, tile_coll_algo_t A>                                                    \
  PYSHMEM_HD int tile_broadcast##SUFFIX(nvshmem_team_t, S, D, T, T, uint64_t) { PYSHMEM_TILE_REFUSE(S); }       \
  template <class S, class D, class T, tile_algo_t A>                                                         \
  PYSHMEM_HD int tile_put##SUFFIX(S, D, T, T, int, uint64_t) { PYSHMEM_TILE_REFUSE(S); }                        \
  template <class S, class D, class T, tile_algo_t A>                                                         \
  PYSHMEM_HD int tile_get##SUFFIX(S, D, T, T, int, uint64_t) { PYSHMEM_TILE_REFUSE(S); }                        \
  template <tile_coll_algo_t A>                                                                               \
  PYSHMEM_HD int tile_collective_wait##SUFFIX(nvshmem_team_t team, uint64_t) {                                \
    PYSHMEM_TILE_REFUSE(decltype(team), ConstInt<A>);                                                         \
  }
PYSHMEM_TILE_GROUPS(PYSHMEM_TILE_COLL)
#undef PYSHMEM_TILE_COLL
#undef PYSHMEM_TILE_GROUPS
#undef PYSHMEM_TILE_REFUSE

}  // namespace nvshmemx
