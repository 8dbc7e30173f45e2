// host/memory.cpp: collective symmetric allocation and address queries.
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "core/state.h"
#include "heap/allocator.h"
#include "host/host.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

// Highest offset ever handed out. Memory above it has never been written (the heap is
// fresh memfd pages), so clearing a new allocation only needs to touch what lies below:
// large calloc-style allocations stay lazily backed.
size_t g_high_water = kSysAreaBytes;

std::string mib(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::string encode(size_t a, size_t b) {
  std::string out(2 * sizeof(size_t), '\0');
  std::memcpy(&out[0], &a, sizeof a);
  std::memcpy(&out[sizeof a], &b, sizeof b);
  return out;
}

}  // namespace

void collective_check_args(State& s, const char* call, const std::string& what, const std::string& mine) {
  if (!s.config.DEBUG || s.npes == 1) return;
  auto all = s.boot->allgather(mine);
  for (int p = 0; p < s.npes; ++p)
    if (all[p] != mine)
      fail(PYSHMEM_ERR_MISMATCH, call,
           "collective call mismatch: PE " + std::to_string(p) + " passed a different " + what +
               " than this PE; every PE must make the same symmetric allocations in the same order "
               "(detected because PYSHMEM_DEBUG=1)");
}

void* sym_malloc(size_t size, size_t align, bool clear, const char* call) {
  require_init(call);
  State& s = state();
  if (align && (align & (align - 1)))
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "alignment " + std::to_string(align) + " is not a power of two; pass a power of two");
  collective_check_args(s, call, "size/alignment (this PE: " + std::to_string(size) + " bytes)", encode(size, align));
  size_t off = 0;
  // Every PE runs the same deterministic allocator, so all fail together: no PE is left
  // waiting in the barrier below.
  if (!s.alloc->allocate(size, align, &off))
    fail(PYSHMEM_ERR_NOMEM, call,
         "symmetric heap exhausted: requested " + std::to_string(size) + " bytes (" + mib(size) + "), " +
             std::to_string(s.alloc->bytes_free()) + " bytes free of " + std::to_string(s.alloc->capacity()) +
             " (largest free block " + std::to_string(s.alloc->largest_free()) +
             " bytes). Raise PYSHMEM_SYMMETRIC_SIZE (currently " + std::to_string(s.config.SYMMETRIC_SIZE) +
             " bytes) or free symmetric arrays you no longer need");
  char* p = s.heap.my_base + off;
  if (clear && off < g_high_water) std::memset(p, 0, std::min(size, g_high_water - off));
  if (off + size > g_high_water) g_high_water = off + size;
  sync_all(call);
  return p;
}

void sym_free(void* ptr, const char* call) {
  require_init(call);
  State& s = state();
  char* p = static_cast<char*>(ptr);
  size_t off = static_cast<size_t>(p - s.heap.my_base);
  if (p < s.heap.user_begin() || p >= s.heap.user_end())
    fail(PYSHMEM_ERR_NOT_SYMMETRIC, call,
         "the object is not in the symmetric heap; free only arrays made by pyshmem (alloc/array/empty/zeros/...)");
  if (s.alloc->size_of(off) == 0)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "the object is not a live symmetric allocation (already freed, or a view into one: free the array "
         "returned by the allocator, not a slice of it)");
  collective_check_args(s, call, "object to free", encode(off, 0));
  barrier_all(call);  // no PE may still be accessing the object on this PE
  s.alloc->release(off);
}

bool is_symmetric(const void* addr, size_t nbytes) {
  const State& s = state();
  if (!s.initialized) return false;
  const char* p = static_cast<const char*>(addr);
  return p >= s.heap.user_begin() && p <= s.heap.user_end() && nbytes <= static_cast<size_t>(s.heap.user_end() - p);
}

size_t sym_bytes_free() {
  require_init("pyshmem.info");
  return state().alloc->bytes_free();
}

size_t sym_capacity() {
  require_init("pyshmem.info");
  return state().alloc->capacity();
}

void* sym_ptr(const void* addr, int pe, const char* call) {
  require_init(call);
  require_pe(call, pe);
  State& s = state();
  if (!is_symmetric(addr, 0))
    fail(PYSHMEM_ERR_NOT_SYMMETRIC, call, "the address is not in the symmetric heap; pass an array from pyshmem.array/empty/zeros/...");
  if (!(s.route[pe]->caps & kCapLoadStore)) return nullptr;
  return s.heap.peer_addr(addr, s.pe, pe);
}

bool pe_accessible(int pe) {
  const State& s = state();
  require_init("pyshmem.pe_accessible");
  return pe >= 0 && pe < s.npes && s.route[pe] != nullptr;
}

bool addr_accessible(const void* addr, int pe) { return pe_accessible(pe) && is_symmetric(addr, 0); }

}  // namespace pyshmem
