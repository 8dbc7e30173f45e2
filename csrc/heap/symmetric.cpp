// heap/symmetric.cpp: see symmetric.h.
#include "heap/symmetric.h"

#include <cstdint>

#include "core/state.h"
#include "heap/allocator.h"

namespace pyshmem {
namespace {
// The live allocation a thread's last check found: puts and atomics repeat on the same
// object, so most checks cost two compares instead of a map lookup.
struct LiveCache {
  const Allocator* alloc = nullptr;
  uint64_t releases = 0;
  size_t begin = 0, end = 0;  // offsets: [start, start + bytes requested)
};
// initial-exec: a direct %fs-relative load, not a __tls_get_addr call per check (32 bytes of
// the static TLS surplus that glibc keeps for dlopen'ed libraries).
__attribute__((tls_model("initial-exec"))) thread_local LiveCache t_live;
}  // namespace

bool is_symmetric(const void* addr, size_t nbytes) {
  const State& s = state();
  if (!s.initialized) return false;
  const char* p = static_cast<const char*>(addr);
  if (p < s.heap.user_begin() || p > s.heap.user_end() || nbytes > static_cast<size_t>(s.heap.user_end() - p))
    return false;
  if (nbytes == 0) return true;  // touches nothing (e.g. an empty view just past an array)
  const size_t off = static_cast<size_t>(p - s.heap.my_base);
  LiveCache& c = t_live;
  if (c.alloc == s.alloc.get() && c.releases == s.alloc->releases() && off >= c.begin && off < c.end &&
      nbytes <= c.end - off)
    return true;
  size_t start, requested;
  if (!s.alloc->find_requested(off, &start, &requested)) return false;
  c = LiveCache{s.alloc.get(), s.alloc->releases(), start, start + requested};
  return off < c.end && nbytes <= c.end - off;
}

}  // namespace pyshmem
