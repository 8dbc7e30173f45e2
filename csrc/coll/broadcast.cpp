// coll/broadcast.cpp: barrier and broadcast over a team.
//
// Broadcast pulls: after the first barrier every member copies root's source (straight
// out of root's segment on one node, a transport get otherwise); the second barrier
// keeps root's source (and each dest) untouched until everyone has copied.
#include <cstring>

#include "coll/coll.h"
#include "coll/coll_common.h"
#include "core/error.h"
#include "core/state.h"
#include "proxy/complete.h"
#include "team/team.h"

namespace pyshmem {

void barrier(int team, const char* call) {
  team_member_desc(team, call);
  complete_all(state(), call);
  team_sync(team, call);
}

void broadcast(int team, void* dest, const void* source, size_t nbytes, int root, const char* call) {
  CollCall c(team, call);
  // A rejected call still meets the others (CollCall::begin), so they fail too.
  std::string err;
  if (root < 0 || root >= c.size())
    err = "root " + std::to_string(root) + " is not a PE of the team (team PEs are 0.." + std::to_string(c.size() - 1) +
          "); pass the root's team-relative PE number";
  if (err.empty()) err = check_symmetric("source", source, nbytes);
  if (err.empty()) err = check_symmetric("target", dest, nbytes);
  if (err.empty() && dest != source) err = check_disjoint(dest, nbytes, source, nbytes);
  CollHeader h;
  h.kind = kCollBroadcast;
  h.root = root;
  h.nbytes = nbytes;
  if (c.begin(h, err)) {
    if (c.me() == root) {
      if (dest != source) std::memcpy(dest, source, nbytes);
    } else {
      sym_read(c.s(), dest, source, nbytes, c.world(root));
    }
  }
  c.finish();
}

}  // namespace pyshmem
