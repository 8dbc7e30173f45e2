// heap/segment.cpp: memfd-backed segments mapped into one reserved range (see heap.h).
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "core/log.h"
#include "heap/heap.h"

namespace pyshmem {
namespace {

constexpr size_t kSlotAlign = 2u << 20;  // 2 MiB: lets the kernel use huge pages if it wants

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

void map_slot(State& s, int pe, int fd) {
  Heap& h = s.heap;
  void* want = h.reservation + static_cast<size_t>(pe) * h.stride;
  void* got = ::mmap(want, h.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0);
  if (got == MAP_FAILED || got != want)
    fail_errno("pyshmem.init", "cannot map the symmetric heap segment of PE " + std::to_string(pe));
  h.peer_base[pe] = static_cast<char*>(got);
}

}  // namespace

void heap_create(State& s) {
  Heap& h = s.heap;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  h.size = round_up(s.config.SYMMETRIC_SIZE + kSysAreaBytes + s.team_pool_bytes, page);
  h.stride = round_up(h.size, kSlotAlign);
  h.peer_base.assign(s.npes, nullptr);

  // All PEs must agree on the size: offsets are only symmetric if the heaps are.
  auto sizes = s.boot->allgather(std::string(reinterpret_cast<const char*>(&h.size), sizeof h.size));
  for (int p = 0; p < s.npes; ++p) {
    size_t other;
    std::memcpy(&other, sizes[p].data(), sizeof other);
    if (other != h.size)
      fail(PYSHMEM_ERR_MISMATCH, "pyshmem.init",
           "PE " + std::to_string(p) + " has a symmetric heap of " + std::to_string(other) + " bytes but this PE has " +
               std::to_string(h.size) + "; set the same PYSHMEM_SYMMETRIC_SIZE for every PE");
  }

  if (s.npes > 0 && h.stride > (SIZE_MAX / 4) / static_cast<size_t>(s.npes))
    fail(PYSHMEM_ERR_NOMEM, "pyshmem.init",
         "PYSHMEM_SYMMETRIC_SIZE (" + std::to_string(s.config.SYMMETRIC_SIZE) + " bytes) x " + std::to_string(s.npes) +
             " PEs exceeds the address space; lower PYSHMEM_SYMMETRIC_SIZE or run fewer PEs");
  h.reservation_len = h.stride * static_cast<size_t>(s.npes);
  void* r = ::mmap(nullptr, h.reservation_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED)
    fail_errno("pyshmem.init", "cannot reserve " + std::to_string(h.reservation_len >> 20) +
                           " MiB of address space for the symmetric heap; lower PYSHMEM_SYMMETRIC_SIZE");
  h.reservation = static_cast<char*>(r);

  std::string name = "pyshmem-" + s.job_id + "-pe" + std::to_string(s.pe);
  h.memfd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (h.memfd < 0) fail_errno("pyshmem.init", "memfd_create failed for the symmetric heap");
  if (::ftruncate(h.memfd, static_cast<off_t>(h.size)) != 0)
    fail_errno("pyshmem.init", "cannot size the symmetric heap to " + std::to_string(h.size) + " bytes");
  map_slot(s, s.pe, h.memfd);
  h.my_base = h.peer_base[s.pe];
  auto* sys = reinterpret_cast<SysArea*>(h.my_base);
  sys->magic = PYSHMEM_SYS_MAGIC;
  sys->pe = static_cast<uint64_t>(s.pe);
  log_debug("heap: %zu bytes per PE at %p (stride %zu)", h.size, static_cast<void*>(h.my_base), h.stride);
}

void heap_attach_peers(State& s, const std::string& token) {
  Heap& h = s.heap;
  std::vector<int> fds = fd_exchange(s, h.memfd, token, "heap");
  for (int p = 0; p < s.npes; ++p) {
    if (fds[p] < 0) continue;
    map_slot(s, p, fds[p]);
    ::close(fds[p]);
    if (h.sys(p)->magic != PYSHMEM_SYS_MAGIC || h.sys(p)->pe != static_cast<uint64_t>(p))
      fail(PYSHMEM_ERR_INTERNAL, "pyshmem.init", "the heap segment received for PE " + std::to_string(p) + " is not that PE's");
  }
  // Every local PE holds a mapping now; the fd is no longer needed by anyone.
  ::close(h.memfd);
  h.memfd = -1;
}

void heap_retire(State& s) {
  Heap& h = s.heap;
  for (int p = 0; p < static_cast<int>(h.peer_base.size()); ++p) {
    if (!h.peer_base[p] || p == s.pe) continue;
    ::mmap(h.peer_base[p], h.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
           -1, 0);
  }
  if (h.memfd >= 0) ::close(h.memfd);
  h = Heap{};  // the reservation is intentionally left mapped
}

void heap_destroy(State& s) {
  Heap& h = s.heap;
  if (h.memfd >= 0) ::close(h.memfd);
  if (h.reservation) ::munmap(h.reservation, h.reservation_len);
  h = Heap{};
}

}  // namespace pyshmem
