// pyshmem/device/team.cuh: teams in device code: queries, team barrier and team sync.
//
// A team is the int handle the host API returned (pyshmem/team.h): PYSHMEM_TEAM_WORLD,
// PYSHMEM_TEAM_SHARED or a split's result (in Python: int(team)). Device code reads the
// team table the runtime keeps in the device state; create and destroy teams on the
// host, between kernels.
//
// sync(team) is a dissemination barrier over the team's members on the team's slot
// counters, the same counters the host API's sync(team) uses (so host and device team
// barriers may alternate on one PE, but not run concurrently). On TEAM_WORLD it is
// sync_all. barrier(team) = quiet + sync(team). One caller per PE (or one warp/block
// with the _warp/_block variants); every member must call.
#pragma once

#include "pyshmem/device/common.cuh"
#include "pyshmem/device/proxy.cuh"
#include "pyshmem/device/sync.cuh"
#include "pyshmem/team.h"

namespace pyshmem {
inline namespace device_api {

using team_t = int32_t;

namespace detail {

// The table entry of a live team this PE belongs to; traps otherwise.
PYSHMEM_HD const pyshmem_team_desc& team_entry(const char* call, team_t team) {
  const pyshmem_device_state& s = state();
  if (team < 0) trap(call, "the team is TEAM_INVALID", -1);
  const uint32_t index = PYSHMEM_TEAM_INDEX(team);
  if (!s.teams || index >= s.max_teams) trap(call, "not a team handle of this runtime", -1);
  const pyshmem_team_desc& d = s.teams[index];
  if (d.my_index < 0 || (index >= 2 && d.generation != PYSHMEM_TEAM_GENERATION(team)))
    trap(call, "the team was destroyed, or this PE is not a member", -1);
  return d;
}

// Word at byte `off` of team slot `index` in PE pe's segment (pe's copy when pe is
// load/store reachable; for pe == my_pe, my own copy).
PYSHMEM_HD uint64_t* team_word(int pe, uint32_t index, size_t off) {
  const pyshmem_device_state& s = state();
  return reinterpret_cast<uint64_t*>(s.heap_base + static_cast<uint64_t>(pe) * s.heap_stride + s.team_pool_offset +
                                     static_cast<uint64_t>(index) * s.team_slot_bytes + off);
}

PYSHMEM_HD void team_sync_rounds(const char* call, team_t team) {
  if (team == PYSHMEM_TEAM_WORLD) return barrier_rounds(call);
  const pyshmem_team_desc& t = team_entry(call, team);
  const pyshmem_device_state& s = state();
  const uint32_t index = PYSHMEM_TEAM_INDEX(team);
  uint64_t* epoch_word = team_word(s.my_pe, index, 0);
  const uint64_t epoch = ++*epoch_word;  // only this PE writes its epoch
  for (int dist = 1, round = 0; dist < t.size; dist <<= 1, ++round) {
    const int to = t.start + ((t.my_index + dist) % t.size) * t.stride;
    const size_t off = PYSHMEM_TEAM_SLOT_HEADER + 64u * static_cast<size_t>(round);
    uint64_t* mine = team_word(s.my_pe, index, off);  // symmetric: the same offset on `to`
    if (!(s.flags & PYSHMEM_STATE_PROXY_ALL) && (s.peer_flags[to] & PYSHMEM_PEER_LOAD_STORE))
      sys_atomic<uint64_t>(*team_word(to, index, off)).fetch_add(1, kSeqCst);
    else
      proxy_amo<uint64_t>(call, PYSHMEM_AMO_ADD, mine, 1, 0, to, false);
    const WaitDesc w{call, nullptr, -1, -1, 0, t.start + ((t.my_index + t.size - dist) % t.size) * t.stride};
    Backoff b;
    while (sys_atomic<uint64_t>(*mine).load(cuda::std::memory_order_acquire) < epoch) b.pause(w);
  }
}

template <Coop C>
PYSHMEM_HD void team_barrier_impl(const char* call, team_t team, bool complete_puts) {
  coop_sync<C>();
  if (coop_rank<C>() == 0) {
    if (complete_puts) {
      fence_system();
      proxy_quiet(call);
    }
    team_sync_rounds(call, team);
  }
  coop_sync<C>();
}

}  // namespace detail

// This PE's number in `team`, or -1 when it is not a member (or the handle is invalid).
PYSHMEM_HD int team_my_pe(team_t team) {
  const pyshmem_device_state& s = detail::state();
  if (team < 0 || !s.teams || static_cast<uint32_t>(PYSHMEM_TEAM_INDEX(team)) >= s.max_teams) return -1;
  const pyshmem_team_desc& d = s.teams[PYSHMEM_TEAM_INDEX(team)];
  if (PYSHMEM_TEAM_INDEX(team) >= 2 && d.generation != PYSHMEM_TEAM_GENERATION(team)) return -1;
  return d.my_index;
}
// Number of PEs in `team` (a team this PE belongs to), or -1.
PYSHMEM_HD int team_n_pes(team_t team) {
  return team_my_pe(team) < 0 ? -1 : detail::state().teams[PYSHMEM_TEAM_INDEX(team)].size;
}
// PE `pe` of team `src` as a PE of `dst` (both teams this PE belongs to), or -1.
PYSHMEM_HD int team_translate_pe(team_t src, int pe, team_t dst) {
  if (team_my_pe(src) < 0 || team_my_pe(dst) < 0) return -1;
  const pyshmem_team_desc& a = detail::state().teams[PYSHMEM_TEAM_INDEX(src)];
  const pyshmem_team_desc& b = detail::state().teams[PYSHMEM_TEAM_INDEX(dst)];
  if (pe < 0 || pe >= a.size) return -1;
  const int rel = a.start + pe * a.stride - b.start;
  if (rel < 0 || rel % b.stride || rel / b.stride >= b.size) return -1;
  return rel / b.stride;
}

#define PYSHMEM_DEFINE_TEAM_BARRIER(SUFFIX, LEVEL)                                                  \
  PYSHMEM_HD void sync##SUFFIX(team_t team) {                                                       \
    detail::team_barrier_impl<Coop::LEVEL>("sync" #SUFFIX, team, false);                            \
  }                                                                                                 \
  PYSHMEM_HD void barrier##SUFFIX(team_t team) {                                                    \
    detail::team_barrier_impl<Coop::LEVEL>("barrier" #SUFFIX, team, true);                          \
  }
PYSHMEM_FOR_EACH_COOP(PYSHMEM_DEFINE_TEAM_BARRIER)
#undef PYSHMEM_DEFINE_TEAM_BARRIER

}  // namespace device_api
}  // namespace pyshmem
