// team/team.h: teams of PEs (OpenSHMEM 1.5 teams) in the host core.
//
// The table of teams and each team's synchronisation slot are described in
// include/pyshmem/team.h (the device API reads the same table). Splits are collective
// over the parent team and agree on a table index that is free on every member, so a
// team's slot is symmetric among its members without any global allocation: hundreds
// of teams can be created and destroyed without touching the user heap.
//
// Every function throws pyshmem::Error naming `call` on bad input.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pyshmem/device_state.h"
#include "pyshmem/team.h"

namespace pyshmem {

struct State;

// The team config a split may set (OpenSHMEM shmem_team_config_t).
struct TeamConfig {
  int num_contexts = 0;
};
constexpr long kTeamConfigNumContexts = 1;  // bit of config_mask: num_contexts is set

// ---- life cycle (called by init/finalize) ----
// Bytes of the slot pool for s.config.MAX_TEAMS and s.npes (throws on a bad
// PYSHMEM_MAX_TEAMS). The heap reserves them at the end of every segment.
size_t team_pool_bytes(const State& s);
// Bytes of the team table (pyshmem_team_desc per index): the GPU heap keeps a copy.
size_t team_table_bytes(const State& s);
// A copy of the team table kept elsewhere (the CUDA backend's, in GPU memory, for
// kernels): told of the table at init and of every change, so the team code never calls
// the layer that keeps it. `setup` gets the whole table; `update` one changed entry;
// `slot_clear` when a new team takes slot `index` (that PE-local slot must read zero).
struct TeamMirror {
  void (*setup)(const pyshmem_team_desc* table, uint32_t slot_bytes, uint32_t max_teams, uint32_t rounds);
  void (*update)(int index, const pyshmem_team_desc& d);
  void (*slot_clear)(int index);
};
// Sets up the table over the pool (the last s.team_pool_bytes of the segment) with
// TEAM_WORLD and TEAM_SHARED. `mirror` (may be null) is kept until teams_finalize.
void teams_init(State& s, const TeamMirror* mirror);
void teams_finalize(State& s);
// Points the device state's team fields at the table (host/device_state.cpp).
void team_device_fill(pyshmem_device_state* d);

// ---- queries ----
// The descriptor of a live team; throws INVALID_ARG for TEAM_INVALID, a destroyed team
// or a handle that never existed.
const pyshmem_team_desc& team_desc(int team, const char* call);
// Like team_desc, and also throws when this PE is not a member.
const pyshmem_team_desc& team_member_desc(int team, const char* call);
int team_index_of_me(int team);   // -1 when not a member or the handle is not a live team
int team_size_of(int team);   // -1 when the handle is not a live team
// PE `pe` of team `src` as a PE of team `dst`; -1 when it is not a member of dst.
int team_translate_pe(int src, int pe, int dst, const char* call);
TeamConfig team_get_config(int team, const char* call);
// World PE of index `i` of team t.
inline int team_world_pe(const pyshmem_team_desc& t, int i) { return t.start + i * t.stride; }

// ---- splits and destruction (collective over the parent / the team) ----
// OpenSHMEM's shmem_team_split_strided: start/stride/size are in the parent's
// numbering. Returns the new handle, or PYSHMEM_TEAM_INVALID on PEs outside it.
int team_split_strided(int parent, int start, int stride, int size, const TeamConfig& config, long config_mask,
                       const char* call);
// OpenSHMEM's shmem_team_split_2d: parent index i sits at (x, y) = (i % xrange, i / xrange);
// *xteam gets the PEs of my row (same y), *yteam those of my column (same x).
void team_split_2d(int parent, int xrange, const TeamConfig& xconfig, long xmask, const TeamConfig& yconfig,
                   long ymask, int* xteam, int* yteam, const char* call);
// Meets the parent's members in a split whose arguments this PE rejected before calling
// it (in Python): they fail too instead of desynchronising. Collective over `parent`;
// throws nothing (returns at once when this PE is not a member of a live parent).
void team_split_reject(int parent, const char* call);
// Frees the team's table entry on this PE. Destroying TEAM_WORLD/TEAM_SHARED or a team
// already destroyed throws.
void team_destroy(int team, const char* call);
size_t team_count();  // live teams this PE is a member of, the two predefined ones included

// ---- synchronisation and scratch used by the collectives ----
// Barrier over the team's members without completing puts (shmem_team_sync).
void team_sync(int team, const char* call);
// team_sync that also tells every member whether any member failed its local checks
// (the agreement step of a collective). Collective over the team, at the same point on
// every member. A member passing `failed` first marks a fault word on every other member
// (then quiet), so after the barrier each member sees the mark in its own memory with one
// load, on any transport and without PYSHMEM_DEBUG. Returns the world PE of a failed
// member (this PE when `failed`), or -1 when every member succeeded. Keeps the members'
// collective sequence aligned when some of them reject their arguments.
int team_sync_agree(int team, bool failed, const char* call);
// The barrier over all PEs, without quiet (team/world_sync.cpp): returns once every PE
// has entered it. Collective over the world in the order of its calls; `call` names the
// wait in hang reports.
void world_sync(State& s, const char* call);
// This PE's copy of the team's publish area (publish_bytes bytes, symmetric among members).
char* team_publish(int team);

// Reads nbytes at symmetric `src` (an address in this PE's heap) from `pe` into `dst`:
// a copy from the mapped peer segment, or a transport get. Complete on return.
void sym_read(State& s, void* dst, const void* src, size_t nbytes, int pe);

}  // namespace pyshmem
