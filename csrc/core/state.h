// core/state.h: the runtime state of one PE (a process-wide singleton).
//
// Lower layers (bootstrap, heap, transport) own their pieces; State ties them together
// so the host API can route every call. Nothing here is thread-safe against concurrent
// init/finalize; RMA/AMO/wait calls may come from any thread after init.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "pyshmem/device_state.h"

namespace pyshmem {

class Bootstrap;
class Allocator;
struct Transport;
class OrderCheck;

// The system area at offset 0 of every segment (public layout: pyshmem/device_state.h).
using SysArea = pyshmem_sys_area;
static_assert(sizeof(pyshmem_sys_flag) == 64, "one barrier counter per cache line");
static_assert(offsetof(pyshmem_sys_area, barrier) == 64, "barrier counters start on a cache line");
// The user heap starts after the system area, at this offset in every segment.
constexpr size_t kSysAreaBytes = 64 * 1024;
static_assert(sizeof(SysArea) <= kSysAreaBytes, "system area overflows its reserved bytes");

// The symmetric heap of this process: one reserved address range with one slot per PE;
// slot p holds PE p's segment when p is load/store reachable (same node), else stays
// PROT_NONE. Symmetric address translation is then pure arithmetic:
//   peer_addr = local_addr + (p - me) * stride.
struct Heap {
  char* reservation = nullptr;
  size_t reservation_len = 0;
  size_t stride = 0;       // bytes between slots (segment size rounded up to 2 MiB)
  size_t size = 0;         // bytes of each PE's segment, system area included
  char* my_base = nullptr; // my segment in my address space
  std::vector<char*> peer_base;  // per PE: its segment in my address space, or nullptr
  int memfd = -1;

  // Address of symmetric `sym` (an address in PE `me`'s segment) in PE `pe`'s slot.
  char* peer_addr(const void* sym, int me, int pe) const {
    return const_cast<char*>(static_cast<const char*>(sym)) +
           (static_cast<ptrdiff_t>(pe) - me) * static_cast<ptrdiff_t>(stride);
  }
  char* user_begin() const { return my_base + kSysAreaBytes; }
  char* user_end() const { return my_base + size; }
  SysArea* sys(int pe) const { return reinterpret_cast<SysArea*>(peer_base[pe]); }
};

struct State {
  Config config{};
  int pe = -1;
  int npes = 0;
  bool initialized = false;
  bool finalized = false;
  std::string node_id;             // identifies this PE's node (host + network namespace)
  std::vector<int> node_of_pe;     // per PE: index of its node, PEs sharing one can load/store
  std::vector<int> local_pes;      // PEs on my node, ascending
  bool cpus_oversubscribed = false;  // more PEs on this host than CPUs this process may run on
  // shared_ptr, not unique_ptr: it destroys through the deleter captured where the
  // object was made (host/init.cpp), so core/ needs no bootstrap or heap header.
  std::shared_ptr<Bootstrap> boot;
  Heap heap;
  std::shared_ptr<Allocator> alloc;
  std::vector<const Transport*> route;  // per PE: the transport that reaches it
  // The cuda backend's GPU heap segment in my address space (0/0 with the cpu backend),
  // set by gpu_heap_create before the transports are set up, so the ones that reach
  // other nodes register it too.
  uint64_t gpu_base = 0;
  size_t gpu_size = 0;
  // Bytes at the end of every segment (after the user heap) that hold the team slots
  // (team/team.cpp); set before the heap is created so the user keeps the whole
  // PYSHMEM_SYMMETRIC_SIZE.
  size_t team_pool_bytes = 0;
  size_t team_table_bytes = 0;  // the GPU heap also holds a copy of the team table
  std::string job_id;
  // PYSHMEM_ORDER_CHECK=1: the held operations (host/order_check.cpp owns it); null
  // otherwise, which is the only thing the normal mode's calls look at.
  OrderCheck* order = nullptr;

  State();
  ~State();
};

// The process-wide state. Valid before init (pe == -1, not initialized).
State& state();

// Throws Error(NOT_INIT) naming `call` when the runtime is not initialised or finalised.
void require_init(const char* call);

// Throws Error(PE_RANGE) naming `call` when pe is outside [0, npes).
void require_pe(const char* call, int pe);

}  // namespace pyshmem
