// coll/alltoall.cpp: alltoall and its strided form.
//
// Member me pulls block `me` of every member j's source into block j of its dest, in the
// order me+1, me+2, ... so that no member is read by everyone at once.
#include <cstring>

#include "coll/coll.h"
#include "coll/coll_common.h"
#include "core/error.h"
#include "team/team.h"

namespace pyshmem {

void alltoall(int team, void* dest, const void* source, size_t nbytes, const char* call) {
  CollCall c(team, call);
  const size_t total = nbytes * static_cast<size_t>(c.size());
  std::string err = check_symmetric("source", source, total);
  if (err.empty()) err = check_symmetric("target", dest, total);
  if (err.empty()) err = check_disjoint(dest, total, source, total);
  CollHeader h;
  h.kind = kCollAlltoall;
  h.nbytes = nbytes;
  if (c.begin(h, err)) {
    char* out = static_cast<char*>(dest);
    const char* in = static_cast<const char*>(source) + size_t(c.me()) * nbytes;
    for (int k = 0; k < c.size(); ++k) {
      const int j = (c.me() + k) % c.size();
      sym_read(c.s(), out + size_t(j) * nbytes, in, nbytes, c.world(j));
    }
  }
  c.finish();
}

void alltoalls(int team, void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem,
               const char* call) {
  CollCall c(team, call);
  // A rejected call still meets the others (CollCall::begin), so they fail too.
  std::string err;
  if (dst < 1 || sst < 1)
    err = "strides must be >= 1 element (got tst=" + std::to_string(dst) + ", sst=" + std::to_string(sst) + ")";
  const size_t n = nelems * static_cast<size_t>(c.size());
  // Bytes spanned by n elements at a stride (the last element ends the span), or
  // SIZE_MAX when that overflows (then no heap holds it: check_symmetric rejects it).
  auto span = [&](ptrdiff_t stride) -> size_t {
    size_t last, bytes;
    if (!n || stride < 1) return 0;
    if (__builtin_mul_overflow(n - 1, size_t(stride), &last) || __builtin_mul_overflow(last + 1, elem, &bytes))
      return SIZE_MAX;
    return bytes;
  };
  if (err.empty()) err = check_symmetric("source", source, span(sst));
  if (err.empty()) err = check_symmetric("target", dest, span(dst));
  if (err.empty()) err = check_disjoint(dest, span(dst), source, span(sst));
  CollHeader h;
  h.kind = kCollAlltoalls;
  h.nbytes = nelems * elem;
  h.dtype = static_cast<uint32_t>(elem);
  h.op = static_cast<uint32_t>(dst * 65599 + sst);  // strides must match too
  if (c.begin(h, err) && nelems) {
    char* out = static_cast<char*>(dest);
    const size_t block_span = ((nelems - 1) * size_t(sst) + 1) * elem;
    const char* in = static_cast<const char*>(source) + size_t(c.me()) * nelems * size_t(sst) * elem;
    for (int k = 0; k < c.size(); ++k) {
      const int j = (c.me() + k) % c.size();
      const char* from = c.direct(in, j);
      if (!from) {  // one get of the block's span, then pick the elements
        char* tmp = coll_scratch(block_span);
        sym_read(c.s(), tmp, in, block_span, c.world(j));
        from = tmp;
      }
      char* to = out + size_t(j) * nelems * size_t(dst) * elem;
      for (size_t i = 0; i < nelems; ++i) std::memcpy(to + i * size_t(dst) * elem, from + i * size_t(sst) * elem, elem);
    }
  }
  c.finish();
}

}  // namespace pyshmem
