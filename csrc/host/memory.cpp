// host/memory.cpp: collective symmetric allocation and address queries.
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "core/state.h"
#include "heap/allocator.h"
#include "host/host.h"
#include "team/team.h"
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

}  // namespace

void collective_check_args(State& s, const char* call, const std::string& what, const std::string& mine) {
  if (!s.config.DEBUG || s.npes == 1) return;
  auto all = s.boot->allgather(mine);
  for (int p = 0; p < s.npes; ++p)
    if (all[p] != mine)
      fail(PYSHMEM_ERR_MISMATCH, call,
           "collective call mismatch: PE " + std::to_string(p) + " passed a different " + what + " (PE " +
               std::to_string(p) + ": " + all[p] + "; this PE: " + mine +
               "); every PE must make the same symmetric allocations in the same order "
               "(detected because PYSHMEM_DEBUG=1)");
}

std::string describe_request(size_t size, size_t align) {
  return std::to_string(size) + " bytes" + (align ? ", alignment " + std::to_string(align) : "");
}

void heap_agree(const char* call, const char* what, bool failed) {
  const int pe = team_sync_agree(PYSHMEM_TEAM_WORLD, failed, call);
  if (pe >= 0 && pe != state().pe)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "PE " + std::to_string(pe) + " could not " + what + " (see its error), so no PE did; every PE makes the "
         "same symmetric allocations and frees in the same order");
}

void* sym_malloc(size_t size, size_t align, bool clear, const char* call) {
  require_init(call);
  State& s = state();
  std::string err;
  pyshmem_status status = PYSHMEM_ERR_INVALID_ARG;
  if (align && (align & (align - 1))) err = "alignment " + std::to_string(align) + " is not a power of two; pass a power of two";
  collective_check_args(s, call, "size/alignment", describe_request(size, align));
  size_t off = 0;
  // Every PE runs the same deterministic allocator, so with equal requests all succeed
  // or all fail; the agreement below covers the PEs whose requests differ.
  if (err.empty() && !s.alloc->allocate(size, align, &off)) {
    status = PYSHMEM_ERR_NOMEM;
    err = "symmetric heap exhausted: requested " + std::to_string(size) + " bytes (" + mib(size) + "), " +
          std::to_string(s.alloc->bytes_free()) + " bytes free of " + std::to_string(s.alloc->capacity()) +
          " (largest free block " + std::to_string(s.alloc->largest_free()) +
          " bytes). Raise PYSHMEM_SYMMETRIC_SIZE (currently " + std::to_string(s.config.SYMMETRIC_SIZE) +
          " bytes) or free symmetric arrays you no longer need";
  }
  char* p = s.heap.my_base + off;
  if (err.empty()) {
    if (clear && off < g_high_water) std::memset(p, 0, std::min(size, g_high_water - off));
    if (off + size > g_high_water) g_high_water = off + size;
  }
  try {
    // Also the barrier after which peers may touch the new object (it is zeroed).
    heap_agree(call, "allocate", !err.empty());
  } catch (...) {
    if (err.empty()) s.alloc->release(off);
    throw;
  }
  if (!err.empty()) fail(status, call, err);
  return p;
}

void sym_malloc_reject(const char* call) {
  require_init(call);
  collective_check_args(state(), call, "size/alignment", "arguments it rejected");
  heap_agree(call, "allocate", true);
}

void sym_free(void* ptr, const char* call) {
  require_init(call);
  State& s = state();
  char* p = static_cast<char*>(ptr);
  size_t off = static_cast<size_t>(p - s.heap.my_base);
  std::string err;
  pyshmem_status status = PYSHMEM_ERR_INVALID_ARG;
  if (p < s.heap.user_begin() || p >= s.heap.user_end()) {
    status = PYSHMEM_ERR_NOT_SYMMETRIC;
    err = "the object is not in the symmetric heap; free only arrays made by pyshmem (alloc/array/empty/zeros/...)";
  } else if (s.alloc->size_of(off) == 0) {
    err = "the object is not a live symmetric allocation (already freed, or a view into one: free the array "
          "returned by the allocator, not a slice of it)";
  }
  collective_check_args(s, call, "object to free",
                        err.empty() ? "the object at heap offset " + std::to_string(off) : "an object it rejected");
  quiet();  // no PE may still be accessing the object on this PE once all arrive
  heap_agree(call, "free the object", !err.empty());
  if (!err.empty()) fail(status, call, err);
  s.alloc->release(off);
}

std::string symmetric_problem(const char* role, const void* addr, size_t nbytes, pyshmem_status* status) {
  if (is_symmetric(addr, nbytes)) return "";
  const State& s = state();
  const char* p = static_cast<const char*>(addr);
  *status = PYSHMEM_ERR_INVALID_ARG;
  if (s.initialized && p >= s.heap.user_begin() && p < s.heap.user_end()) {
    size_t start, requested;
    const size_t off = static_cast<size_t>(p - s.heap.my_base);
    if (!s.alloc->find_requested(off, &start, &requested))
      return std::string(role) + " is not in a live symmetric allocation (it was freed, or never allocated); use an "
             "array that pyshmem.alloc/array/empty/zeros/... returned and that is not freed yet";
    return std::string(role) + " range of " + std::to_string(nbytes) + " bytes at byte " + std::to_string(off - start) +
           " of its allocation runs past the allocation's end (" + std::to_string(requested) +
           " bytes): the view is larger than the array it was made from, or size= (or nelems x stride) is too large";
  }
  *status = PYSHMEM_ERR_NOT_SYMMETRIC;
  return std::string(role) +
         " is not symmetric memory: allocate it with pyshmem.array/empty/zeros/ones/full/new_array "
         "(a plain NumPy array exists only on this PE)";
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
