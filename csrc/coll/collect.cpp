// coll/collect.cpp: fcollect (all-gather) and collect (all-gather with per-PE sizes).
//
// Each member pulls every other member's source into its own dest, starting with its
// right-hand neighbour so that members do not all read member 0 first.
#include <cstring>

#include "coll/coll.h"
#include "coll/coll_common.h"
#include "core/error.h"
#include "team/team.h"

namespace pyshmem {

void fcollect(int team, void* dest, const void* source, size_t nbytes, const char* call) {
  CollCall c(team, call);
  const size_t total = nbytes * static_cast<size_t>(c.size());
  std::string err = check_symmetric("source", source, nbytes);
  if (err.empty()) err = check_symmetric("target", dest, total);
  if (err.empty()) err = check_disjoint(dest, total, source, nbytes);
  CollHeader h;
  h.kind = kCollFcollect;
  h.nbytes = nbytes;
  if (c.begin(h, err)) {
    char* out = static_cast<char*>(dest);
    for (int k = 0; k < c.size(); ++k) {
      const int j = (c.me() + k) % c.size();
      sym_read(c.s(), out + size_t(j) * nbytes, source, nbytes, c.world(j));
    }
  }
  c.finish();
}

void collect(int team, void* dest, size_t dest_bytes, const void* source, size_t nbytes, size_t elem,
             const char* call) {
  CollCall c(team, call);
  std::string err = check_symmetric("source", source, nbytes);
  if (err.empty()) err = check_symmetric("target", dest, dest_bytes);
  if (err.empty()) err = check_disjoint(dest, dest_bytes, source, nbytes);
  CollHeader h;
  h.kind = kCollCollect;
  h.nbytes = nbytes;
  h.dtype = static_cast<uint32_t>(elem);
  if (c.begin(h, err, /*compare_nbytes=*/false)) {
    // Every member's count (and offset) comes from its header.
    std::vector<size_t> offset(c.size() + 1, 0);
    for (int i = 0; i < c.size(); ++i) {
      size_t n = i == c.me() ? nbytes : c.header_of(i).nbytes;
      offset[i + 1] = offset[i] + n;
    }
    if (offset[c.size()] > dest_bytes) {
      c.set_error(PYSHMEM_ERR_INVALID_ARG, "target holds " + std::to_string(dest_bytes / elem) +
                                               " elements but the members contribute " +
                                               std::to_string(offset[c.size()] / elem) + " in all");
    } else {
      char* out = static_cast<char*>(dest);
      for (int k = 0; k < c.size(); ++k) {
        const int j = (c.me() + k) % c.size();
        sym_read(c.s(), out + offset[j], source, offset[j + 1] - offset[j], c.world(j));
      }
    }
  }
  c.finish();
}

}  // namespace pyshmem
