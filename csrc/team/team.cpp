// team/team.cpp: the team table, splits, destruction and the team barrier.
#include "team/team.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/backoff.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "core/trace.h"
#include "heap/allocator.h"
#include "proxy/complete.h"
#include "pyshmem/device_state.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

struct Table {
  std::vector<pyshmem_team_desc> desc;  // max_teams entries; my_index -1 when not mine
  std::vector<uint8_t> live;            // entry holds a team this PE belongs to
  std::vector<uint32_t> generation;     // last generation handed out per index
  std::vector<uint64_t> agreements;     // team_sync_agree calls per index (equal on every member)
  size_t pool_offset = 0;
  uint32_t slot_bytes = 0, rounds = 0, publish_bytes = 0, max_teams = 0;
  const TeamMirror* mirror = nullptr;  // the GPU heap's copy, or none
};
Table g;

// The publish area: a collective header first, then what splits exchange.
constexpr size_t kSplitArgsOffset = 0;   // 4 x int32: the split and its arguments
constexpr size_t kSplitMaskOffset = 64;  // free-index bitmask, max_teams bits

int ceil_log2(int n) {
  int r = 0;
  while ((1 << r) < n) ++r;
  return r;
}

char* slot(const State& s, int index) { return s.heap.my_base + g.pool_offset + size_t(index) * g.slot_bytes; }
uint64_t* round_counter(const State& s, int index, int round) {
  return reinterpret_cast<uint64_t*>(slot(s, index) + PYSHMEM_TEAM_SLOT_HEADER + size_t(round) * 64);
}

int handle_of(int index) { return index < 2 ? index : static_cast<int>((g.generation[index] << 16) | uint32_t(index)); }

// The table index of a live handle, or -1.
int index_of(int team) {
  if (team < 0 || g.desc.empty()) return -1;
  const int index = PYSHMEM_TEAM_INDEX(team);
  if (index >= static_cast<int>(g.max_teams) || !g.live[index]) return -1;
  if (index >= 2 && PYSHMEM_TEAM_GENERATION(team) != g.generation[index]) return -1;
  if (index < 2 && team != index) return -1;
  return index;
}

void set_desc(int index, int start, int stride, int size, int my_index, const TeamConfig& config) {
  pyshmem_team_desc& d = g.desc[index];
  d = pyshmem_team_desc{};
  d.start = start;
  d.stride = stride;
  d.size = size;
  d.my_index = my_index;
  d.generation = index < 2 ? 0 : g.generation[index];
  d.num_contexts = static_cast<uint32_t>(config.num_contexts);
  g.live[index] = 1;
  g.agreements[index] = 0;  // the fault words were zeroed with the slot
  if (g.mirror) g.mirror->update(index, d);
}

// "" or what is wrong with a split's config.
std::string config_problem(const TeamConfig& c, long mask) {
  if (mask & ~kTeamConfigNumContexts)
    return "config_mask " + std::to_string(mask) + " has unknown bits; only num_contexts exists";
  if ((mask & kTeamConfigNumContexts) && c.num_contexts < 0)
    return "num_contexts must be >= 0 (got " + std::to_string(c.num_contexts) + ")";
  return "";
}

// One collective round over `parent`. `split` (4 words: which split and its arguments
// in the parent's numbering) must be the same on every PE of the parent; each PE names
// the team it joins (start/stride/size in world PEs), and the members of each new team
// agree on the lowest table index free on all of them and zero its slot. Returns the
// new handle, or TEAM_INVALID on PEs outside every new team. `local_error`: this PE
// rejected its arguments; it still takes part (team_sync_agree), so every PE fails.
int create_round(State& s, int parent, const int32_t split[4], bool member, int start, int stride, int size,
                 const TeamConfig& config, const char* call, const std::string& local_error = "") {
  const pyshmem_team_desc& p = team_member_desc(parent, call);
  char* pub = team_publish(parent);
  std::memcpy(pub + kSplitArgsOffset, split, 16);
  const size_t mask_words = (g.max_teams + 63) / 64;
  auto* mask = reinterpret_cast<uint64_t*>(pub + kSplitMaskOffset);
  for (size_t w = 0; w < mask_words; ++w) mask[w] = 0;
  for (uint32_t i = 2; i < g.max_teams; ++i)
    if (!g.live[i]) mask[i / 64] |= uint64_t(1) << (i % 64);
  const int failed = team_sync_agree(parent, !local_error.empty(), call);
  if (failed >= 0) {
    team_sync(parent, call);  // the round's second barrier, which the other PEs also reach
    if (failed == s.pe) fail(PYSHMEM_ERR_INVALID_ARG, call, local_error);
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "PE " + std::to_string(failed) + " rejected its arguments to this split (see its error); no team was made");
  }

  std::string error;
  // Same split on every PE of the parent? (Peers on this node always, others with
  // PYSHMEM_DEBUG=1: a get per peer.)
  for (int i = 0; i < p.size && error.empty(); ++i) {
    const int pe = team_world_pe(p, i);
    if (pe == s.pe || (!s.config.DEBUG && !(s.route[pe]->caps & kCapLoadStore))) continue;
    int32_t theirs[4];
    sym_read(s, theirs, pub + kSplitArgsOffset, sizeof theirs, pe);
    if (std::memcmp(theirs, split, sizeof theirs) != 0)
      error = "PE " + std::to_string(pe) + " made a different split of the parent team (" +
              std::to_string(theirs[1]) + "/" + std::to_string(theirs[2]) + "/" + std::to_string(theirs[3]) +
              ", this PE " + std::to_string(split[1]) + "/" + std::to_string(split[2]) + "/" +
              std::to_string(split[3]) + "): every PE of the parent team must pass the same arguments";
  }
  int index = -1;
  if (member && error.empty()) {
    std::vector<uint64_t> all(mask, mask + mask_words), theirs(mask_words);
    for (int i = 0; i < size; ++i) {
      const int pe = start + i * stride;
      if (pe == s.pe) continue;
      sym_read(s, theirs.data(), mask, mask_words * 8, pe);
      for (size_t w = 0; w < mask_words; ++w) all[w] &= theirs[w];
    }
    for (size_t w = 0; w < mask_words && index < 0; ++w)
      if (all[w]) index = static_cast<int>(w * 64 + __builtin_ctzll(all[w]));
    if (index < 0)
      error = "no team index is free on every member (PYSHMEM_MAX_TEAMS=" + std::to_string(g.max_teams) +
              "): destroy teams you no longer need, or raise PYSHMEM_MAX_TEAMS";
  }
  if (member && error.empty()) {
    std::memset(slot(s, index), 0, g.slot_bytes);
    if (g.mirror) g.mirror->slot_clear(index);
    if (++g.generation[index] >= 0x8000) g.generation[index] = 1;
    set_desc(index, start, stride, size, (s.pe - start) / stride, config);
  }
  team_sync(parent, call);  // every member zeroed its slot before anyone uses it
  if (!error.empty()) fail(PYSHMEM_ERR_MISMATCH, call, error);
  return member ? handle_of(index) : PYSHMEM_TEAM_INVALID;
}

// The round of a split this PE rejected (`err`): it takes part, then throws `err`.
int reject_round(State& s, int parent, const char* call, const std::string& err) {
  const int32_t none[4] = {0, 0, 0, 0};
  return create_round(s, parent, none, false, 0, 1, 0, TeamConfig{}, call, err);
}

}  // namespace

void sym_read(State& s, void* dst, const void* src, size_t nbytes, int pe) {
  if (!nbytes) return;
  if (pe == s.pe) {
    std::memmove(dst, src, nbytes);
    return;
  }
  s.route[pe]->get(s, dst, src, nbytes, pe);
}

namespace {
struct PoolShape {
  uint32_t max_teams, rounds, publish_bytes, slot_bytes;
};
PoolShape pool_shape(const State& s) {
  const long long max = s.config.MAX_TEAMS;
  if (max < 2 || max > PYSHMEM_TEAM_MAX_INDEX)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
         "PYSHMEM_MAX_TEAMS=" + std::to_string(max) + " must be between 2 and " + std::to_string(PYSHMEM_TEAM_MAX_INDEX));
  PoolShape p;
  p.max_teams = static_cast<uint32_t>(max);
  p.rounds = static_cast<uint32_t>(ceil_log2(s.npes) < 1 ? 1 : ceil_log2(s.npes));
  const size_t mask_bytes = (p.max_teams + 63) / 64 * 8;
  p.publish_bytes = static_cast<uint32_t>(std::max<size_t>(256, (kSplitMaskOffset + mask_bytes + 63) / 64 * 64));
  p.slot_bytes = PYSHMEM_TEAM_SLOT_HEADER + 64 * p.rounds + p.publish_bytes;
  return p;
}
}  // namespace

size_t team_pool_bytes(const State& s) {
  const PoolShape p = pool_shape(s);
  return size_t(p.slot_bytes) * p.max_teams;
}

size_t team_table_bytes(const State& s) { return sizeof(pyshmem_team_desc) * pool_shape(s).max_teams; }

void teams_init(State& s, const TeamMirror* mirror) {
  const PoolShape p = pool_shape(s);
  g = Table{};
  g.mirror = mirror;
  g.max_teams = p.max_teams;
  g.rounds = p.rounds;
  g.publish_bytes = p.publish_bytes;
  g.slot_bytes = p.slot_bytes;
  g.pool_offset = s.heap.size - s.team_pool_bytes;  // fresh memfd pages: already zero
  g.desc.assign(g.max_teams, pyshmem_team_desc{});
  for (auto& d : g.desc) d.my_index = -1;
  g.live.assign(g.max_teams, 0);
  g.generation.assign(g.max_teams, 0);
  g.agreements.assign(g.max_teams, 0);
  set_desc(PYSHMEM_TEAM_WORLD, 0, 1, s.npes, s.pe, TeamConfig{});
  // TEAM_SHARED: the PEs of this node when they form a triplet (they do with shmemrun's
  // block placement); otherwise a team of this PE alone, which OpenSHMEM allows.
  const auto& l = s.local_pes;
  bool strided = l.size() >= 1;
  const int stride = l.size() > 1 ? l[1] - l[0] : 1;
  for (size_t i = 1; i < l.size() && strided; ++i) strided = l[i] - l[i - 1] == stride && stride > 0;
  if (strided) {
    int me = 0;
    while (l[me] != s.pe) ++me;
    set_desc(PYSHMEM_TEAM_SHARED, l[0], stride, static_cast<int>(l.size()), me, TeamConfig{});
  } else {
    log_debug("teams: the PEs of this node are not evenly spaced; TEAM_SHARED holds this PE only");
    set_desc(PYSHMEM_TEAM_SHARED, s.pe, 1, 1, 0, TeamConfig{});
  }
  if (g.mirror) g.mirror->setup(g.desc.data(), g.slot_bytes, g.max_teams, g.rounds);
}

void teams_finalize(State&) { g = Table{}; }

void team_device_fill(pyshmem_device_state* d) {
  d->teams = g.desc.data();
  d->team_pool_offset = g.pool_offset;
  d->team_slot_bytes = g.slot_bytes;
  d->max_teams = g.max_teams;
  d->team_rounds = g.rounds;
}

const pyshmem_team_desc& team_desc(int team, const char* call) {
  require_init(call);
  const int index = index_of(team);
  if (index < 0) {
    if (team == PYSHMEM_TEAM_INVALID)
      fail(PYSHMEM_ERR_INVALID_ARG, call,
           "the team is TEAM_INVALID (a split returns it on the PEs it leaves out); skip the call on those PEs");
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "team handle " + std::to_string(team) +
             " is not a live team (destroyed, or never created on this PE); use a team a split returned on this PE");
  }
  return g.desc[index];
}

const pyshmem_team_desc& team_member_desc(int team, const char* call) {
  const pyshmem_team_desc& d = team_desc(team, call);
  if (d.my_index < 0)
    fail(PYSHMEM_ERR_INVALID_ARG, call, "this PE is not a member of the team; only its members may call this");
  return d;
}

int team_index_of_me(int team) {
  const int index = state().initialized ? index_of(team) : -1;
  return index < 0 ? -1 : g.desc[index].my_index;
}

int team_size_of(int team) {
  const int index = state().initialized ? index_of(team) : -1;
  return index < 0 ? -1 : g.desc[index].size;
}

int team_translate_pe(int src, int pe, int dst, const char* call) {
  const pyshmem_team_desc& a = team_desc(src, call);
  const pyshmem_team_desc& b = team_desc(dst, call);
  if (pe < 0 || pe >= a.size) return -1;
  const int world = team_world_pe(a, pe);
  const int rel = world - b.start;
  if (rel < 0 || rel % b.stride || rel / b.stride >= b.size) return -1;
  return rel / b.stride;
}

TeamConfig team_get_config(int team, const char* call) {
  TeamConfig c;
  c.num_contexts = static_cast<int>(team_desc(team, call).num_contexts);
  return c;
}

int team_split_strided(int parent, int start, int stride, int size, const TeamConfig& config, long config_mask,
                       const char* call) {
  State& s = state();
  const pyshmem_team_desc& p = team_member_desc(parent, call);
  std::string err = config_problem(config, config_mask);
  const std::string triplet = " (start=" + std::to_string(start) + ", stride=" + std::to_string(stride) +
                              ", size=" + std::to_string(size) + ", parent size " + std::to_string(p.size) + ")";
  if (err.empty() && (size < 1 || start < 0 || start >= p.size || stride < 1 ||
                      static_cast<long long>(start) + static_cast<long long>(stride) * (size - 1) >= p.size))
    err = "the PEs start + i*stride for i < size must lie in the parent team, with stride >= 1 and size >= 1" + triplet;
  if (!err.empty()) return reject_round(s, parent, call, err);
  // In world PEs.
  const int wstart = team_world_pe(p, start), wstride = p.stride * stride;
  const int rel = p.my_index - start;
  const bool member = rel >= 0 && rel % stride == 0 && rel / stride < size;
  TeamConfig c = (config_mask & kTeamConfigNumContexts) ? config : TeamConfig{};
  const int32_t split[4] = {1, start, stride, size};
  return create_round(s, parent, split, member, wstart, wstride, size, c, call);
}

void team_split_2d(int parent, int xrange, const TeamConfig& xconfig, long xmask, const TeamConfig& yconfig,
                   long ymask, int* xteam, int* yteam, const char* call) {
  State& s = state();
  const pyshmem_team_desc& p = team_member_desc(parent, call);
  std::string err = config_problem(xconfig, xmask);
  if (err.empty()) err = config_problem(yconfig, ymask);
  if (err.empty() && xrange < 1) err = "xrange must be >= 1, got " + std::to_string(xrange);
  if (!err.empty()) reject_round(s, parent, call, err);
  const int n = p.size, me = p.my_index;
  if (xrange > n) xrange = n;  // OpenSHMEM: a larger xrange behaves as the parent's size
  const int y = me / xrange, x = me % xrange;
  // My row: parent indices y*xrange ... (a last row may be short); my column: x, x+xrange, ...
  const int row_size = std::min(xrange, n - y * xrange);
  const int col_size = (n - x + xrange - 1) / xrange;
  const TeamConfig xc = (xmask & kTeamConfigNumContexts) ? xconfig : TeamConfig{};
  const TeamConfig yc = (ymask & kTeamConfigNumContexts) ? yconfig : TeamConfig{};
  const int32_t xsplit[4] = {2, xrange, 0, 0}, ysplit[4] = {3, xrange, 0, 0};
  const int xt = create_round(s, parent, xsplit, true, team_world_pe(p, y * xrange), p.stride, row_size, xc, call);
  int yt;
  try {
    yt = create_round(s, parent, ysplit, true, team_world_pe(p, x), p.stride * xrange, col_size, yc, call);
  } catch (...) {
    team_destroy(xt, call);
    throw;
  }
  *xteam = xt;
  *yteam = yt;
}

void team_split_reject(int parent, const char* call) {
  try {
    reject_round(state(), parent, call, "rejected");
  } catch (...) {
    // This PE's own error is what its caller raises.
  }
}

void team_destroy(int team, const char* call) {
  require_init(call);
  if (team == PYSHMEM_TEAM_WORLD || team == PYSHMEM_TEAM_SHARED)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "TEAM_WORLD and TEAM_SHARED cannot be destroyed; destroy only teams made by split_*");
  const int index = index_of(team);
  if (index < 0)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         team == PYSHMEM_TEAM_INVALID ? std::string("the team is TEAM_INVALID")
                                      : "team handle " + std::to_string(team) +
                                            " was already destroyed; destroy each team once");
  g.live[index] = 0;
  g.desc[index] = pyshmem_team_desc{};
  g.desc[index].my_index = -1;
  if (g.mirror) g.mirror->update(index, g.desc[index]);
}

size_t team_count() {
  size_t n = 0;
  for (uint8_t l : g.live) n += l;
  return n;
}

void team_sync(int team, const char* call) {
  State& s = state();
  const pyshmem_team_desc& t = team_member_desc(team, call);
  if (team == PYSHMEM_TEAM_WORLD) {
    const TraceSpan span(kTraceColl, call, -1, 0);
    world_sync(s, call);  // shares the system-area counters with barrier_all and the device API
    return;
  }
  const int index = PYSHMEM_TEAM_INDEX(team);
  auto* epoch_word = reinterpret_cast<uint64_t*>(slot(s, index));
  const uint64_t epoch = ++*epoch_word;  // only this PE writes its own epoch
  const uint64_t one = 1;
  for (int dist = 1, round = 0; dist < t.size; dist <<= 1, ++round) {
    const int to = team_world_pe(t, (t.my_index + dist) % t.size);
    uint64_t* counter = round_counter(s, index, round);  // symmetric among the members
    s.route[to]->amo(s, AmoArgs{PYSHMEM_AMO_ADD, PYSHMEM_UINT64, counter, &one, nullptr, nullptr, to});
    if (__atomic_load_n(counter, __ATOMIC_ACQUIRE) >= epoch) continue;
    const int from = team_world_pe(t, (t.my_index - dist % t.size + t.size) % t.size);  // signals this round
    const WaitInfo info{call, counter, PYSHMEM_UINT64, PYSHMEM_CMP_GE, epoch, from};
    const WaitScope scope(info);
    Backoff backoff(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
    while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < epoch) backoff.pause();
  }
}

namespace {
// Fault words in the slot header (offset 0 is the team barrier's epoch): two, used by
// alternate agreements, so a member marking agreement k+1 cannot overwrite the mark of
// agreement k before a slower member has read it (it reads before arriving at k+1).
constexpr size_t kFaultWordOffset = 8;
constexpr int kFaultPeBits = 24;  // a mark is (agreement number << 24) | world PE
static_assert(kFaultWordOffset + 2 * sizeof(uint64_t) <= PYSHMEM_TEAM_SLOT_HEADER, "fault words fit the header");
}  // namespace

int team_sync_agree(int team, bool failed, const char* call) {
  State& s = state();
  const pyshmem_team_desc& t = team_member_desc(team, call);
  const int index = PYSHMEM_TEAM_INDEX(team);
  const uint64_t n = ++g.agreements[index] & ((uint64_t(1) << (64 - kFaultPeBits)) - 1);
  auto* word = reinterpret_cast<uint64_t*>(slot(s, index) + kFaultWordOffset + 8 * (n & 1));
  if (failed) {
    const uint64_t mark = (n << kFaultPeBits) | uint64_t(s.pe);
    for (int i = 0; i < t.size; ++i) {
      const int to = team_world_pe(t, i);
      if (to == s.pe) continue;
      s.route[to]->amo(s, AmoArgs{PYSHMEM_AMO_SET, PYSHMEM_UINT64, word, &mark, nullptr, nullptr, to});
    }
    complete_all(s, call);  // the marks land before this PE's barrier arrival
  }
  team_sync(team, call);
  if (failed) return s.pe;
  const uint64_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  if (seen >> kFaultPeBits != n) return -1;
  return static_cast<int>(seen & ((uint64_t(1) << kFaultPeBits) - 1));
}

char* team_publish(int team) {
  return slot(state(), PYSHMEM_TEAM_INDEX(team)) + PYSHMEM_TEAM_SLOT_HEADER + 64 * g.rounds;
}

}  // namespace pyshmem
