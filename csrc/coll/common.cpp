// coll/common.cpp: the call header, argument checks and barriers shared by collectives.
#include "coll/coll_common.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "heap/symmetric.h"
#include "team/team.h"
#include "transport/transport.h"

namespace pyshmem {

CollCall::CollCall(int team, const char* call)
    : s_(state()), team_(team), call_(call), t_(&team_member_desc(team, call)), trace_(kTraceColl, call, -1, 0) {}

const char* CollCall::direct(const void* sym, int i) const {
  const int pe = world(i);
  if (pe == s_.pe) return static_cast<const char*>(sym);
  if (!(s_.route[pe]->caps & kCapLoadStore)) return nullptr;
  return s_.heap.peer_addr(sym, s_.pe, pe);
}

CollHeader CollCall::header_of(int i) {
  CollHeader h;
  sym_read(s_, &h, team_publish(team_), sizeof h, world(i));
  return h;
}

bool CollCall::begin(CollHeader h, const std::string& local_error, bool compare_nbytes, pyshmem_status local_status) {
  trace_.set_bytes(h.nbytes);
  if (!local_error.empty()) set_error(local_status, local_error);
  std::memcpy(team_publish(team_), &h, sizeof h);
  const int failed = team_sync_agree(team_, !local_error.empty(), call_);
  if (failed >= 0) {  // no member moves data; comparing headers would add nothing
    set_error(PYSHMEM_ERR_INVALID_ARG, "PE " + std::to_string(failed) +
                                           " rejected its arguments to this collective (see its error); no data "
                                           "was moved");
    return false;
  }
  const bool debug = s_.config.DEBUG;
  for (int i = 0; i < size(); ++i) {
    if (i == me() || (!debug && !direct(team_publish(team_), i))) continue;
    const CollHeader o = header_of(i);
    const int pe = world(i);
    if (o.kind != h.kind) {
      set_error(PYSHMEM_ERR_MISMATCH, "PE " + std::to_string(pe) +
                                          " is in a different collective call on this team: every member must "
                                          "call the same collectives in the same order");
    } else if ((compare_nbytes && o.nbytes != h.nbytes) || o.root != h.root || o.dtype != h.dtype || o.op != h.op) {
      std::string what = o.root != h.root ? "root (" + std::to_string(o.root) + " vs " + std::to_string(h.root) + ")"
                         : o.nbytes != h.nbytes
                             ? "size (" + std::to_string(o.nbytes) + " vs " + std::to_string(h.nbytes) + " bytes)"
                             : std::string("element type, operation or strides");
      set_error(PYSHMEM_ERR_MISMATCH, "PE " + std::to_string(pe) + " passed a different " + what +
                                          " than this PE: every member must pass the same arguments");
    }
  }
  return error_.empty();
}

void collective_reject(int team, const char* call) {
  try {
    CollCall c(team, call);
    c.begin(CollHeader{}, "rejected");
    c.finish();
  } catch (const Error&) {
    // This PE's own error is what its caller raises; the others name this PE.
  }
}

void CollCall::finish() {
  team_sync(team_, call_);
  if (!error_.empty()) fail(status_, call_, error_);
}

std::string check_symmetric(const char* role, const void* p, size_t nbytes) {
  if (is_symmetric(p, nbytes)) return "";
  return std::string(role) +
         " is not symmetric memory of that size: collectives read peers' copies, so allocate it with "
         "pyshmem.array/empty/zeros/ones/full (on every PE)";
}

std::string check_disjoint(const void* a, size_t an, const void* b, size_t bn) {
  const char *x = static_cast<const char*>(a), *y = static_cast<const char*>(b);
  if (x + an <= y || y + bn <= x || !an || !bn) return "";
  return "source and target overlap; they must be separate arrays";
}

char* coll_scratch(size_t nbytes, int which) {
  thread_local std::vector<char> buf[2];
  std::vector<char>& b = buf[which & 1];
  if (b.size() < nbytes) b.resize(nbytes);
  return b.data();
}

}  // namespace pyshmem
