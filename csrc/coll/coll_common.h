// coll/coll_common.h: what every host collective shares: the call header each member
// publishes, the argument checks, and the two team barriers around the data movement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/state.h"
#include "core/trace.h"
#include "pyshmem/team.h"
#include "pyshmem/types.h"

namespace pyshmem {

enum CollKind : uint32_t { kCollBroadcast = 1, kCollFcollect, kCollCollect, kCollAlltoall, kCollAlltoalls, kCollReduce };

// Published at the start of the team's publish area; peers compare it with their own.
struct CollHeader {
  uint32_t kind = 0;
  int32_t root = 0;     // broadcast
  uint64_t nbytes = 0;  // bytes per member (collect: this member's own count)
  uint32_t dtype = 0;   // reduce; alltoalls: element size
  uint32_t op = 0;      // reduce; alltoalls: strides folded in (see alltoall.cpp)
  uint32_t pad[2] = {0, 0};  // (whether a member rejected its arguments goes by team_sync_agree)
};
static_assert(sizeof(CollHeader) == 32, "one header per publish area");

// One collective call in progress on this PE.
class CollCall {
 public:
  // Checks team membership (throws: nothing was published yet, and a PE outside the team
  // is not expected by the others).
  CollCall(int team, const char* call);

  // Publishes `h`, then the first team barrier; compares the members' headers (every
  // member on this node; with PYSHMEM_DEBUG=1 every member). `local_error` (may be empty)
  // is this PE's own complaint about its arguments, raised with `local_status`: the
  // barrier is an agreement (team_sync_agree), so every member fails, on any transport.
  // Returns false when the call must not move data.
  bool begin(CollHeader h, const std::string& local_error, bool compare_nbytes = true,
             pyshmem_status local_status = PYSHMEM_ERR_INVALID_ARG);
  // Final team barrier; then throws the error found (if any).
  void finish();

  // World PE of team member i.
  int world(int i) const { return t_->start + i * t_->stride; }
  int size() const { return t_->size; }
  int me() const { return t_->my_index; }
  State& s() const { return s_; }
  int team() const { return team_; }
  // A peer's header (read in begin when compared, else on demand: collect needs counts).
  CollHeader header_of(int i);
  // Address of symmetric `sym` in member i's segment when load/store reachable, else null.
  const char* direct(const void* sym, int i) const;
  // Fails the call (after the final barrier) with `msg`.
  void set_error(pyshmem_status status, const std::string& msg) {
    if (error_.empty()) status_ = status, error_ = msg;
  }

 private:
  State& s_;
  int team_;
  const char* call_;
  const pyshmem_team_desc* t_;
  std::string error_;
  pyshmem_status status_ = PYSHMEM_ERR_MISMATCH;
  TraceSpan trace_;  // PYSHMEM_TRACE: the whole collective is one event (bytes: this PE's share)
};

// Argument checks (return "" or a message): symmetric range, overlap.
std::string check_symmetric(const char* role, const void* p, size_t nbytes);
std::string check_disjoint(const void* a, size_t an, const void* b, size_t bn);

// Scratch memory reused across calls on this thread (reductions, remote reads).
char* coll_scratch(size_t nbytes, int which = 0);

}  // namespace pyshmem
