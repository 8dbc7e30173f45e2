// pyshmem/cpu_stacks.h: the stacks of the fibers of a CPU kernel's block (included by
// pyshmem/cpu_block.h; host compilers only): one mapping per block holding every
// thread's stack with a guard page below each, a pool of the mappings of finished
// blocks, and the report of a stack overflow (see pyshmem/cpu_fibers.h).
#pragma once

#include <mutex>

#include "pyshmem/cpu_fibers.h"

namespace pyshmem {
namespace cpu {
namespace fibers {

// ---- stack overflow report ----
inline std::atomic<int> g_segv_installed{0};
inline struct sigaction g_prev_segv;

inline void on_segv(int sig, siginfo_t* si, void* ctx) {
  Block* b = t_block;
  char* a = static_cast<char*>(si->si_addr);
  if (b && b->region && a >= b->region && a < b->region + b->region_bytes &&
      static_cast<size_t>(a - b->region) % b->slot < b->guard && static_cast<size_t>(a - b->region) / b->slot < b->n) {
    const Fiber& f = b->fibers[(a - b->region) / b->slot];
    char msg[640];
    const int len = snprintf(
        msg, sizeof msg,
        "pyshmem: stack overflow in CPU kernel %s, block (%u,%u,%u), thread (%u,%u,%u): the thread used more than "
        "its %zu KiB stack. Raise it with pyshmem.cuda.launch(..., stack_size=BYTES) or PYSHMEM_CPU_KERNEL_STACK "
        "(e.g. 256K), or move large arrays out of the kernel's locals (shared or global memory).\n",
        b->kernel, b->block_idx.x, b->block_idx.y, b->block_idx.z, f.tid.x, f.tid.y, f.tid.z, b->stack / 1024);
    if (len > 0) (void)!write(2, msg, static_cast<size_t>(len) < sizeof msg ? len : sizeof msg - 1);
  }
  // Not ours, or reported: the previous handler (or the default action) takes the
  // fault when the instruction runs again.
  sigaction(SIGSEGV, &g_prev_segv, nullptr);
  (void)sig;
  (void)ctx;
}

inline void install_segv_handler() {
  int expected = 0;
  if (!g_segv_installed.compare_exchange_strong(expected, 1)) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_prev_segv);
}

// ---- stacks ----
// Mapped regions of finished blocks, kept for the next blocks: a reused region's guards
// are in place and the pages its threads touched are still resident, so a launch does
// not pay the mapping, the guard system calls, the page faults and the unmapping again
// (most of a small launch's cost). Bounded: at most kPoolRegions regions and
// kPoolSlots thread stacks in all; a region is reused for a block of at most as many
// threads with the same stack size.
struct StackRegion {
  char* base = nullptr;
  size_t bytes = 0, slot = 0, stack = 0, slots = 0;
  bool mprotect_guards = false;
};
constexpr size_t kPoolRegions = 64, kPoolSlots = 16384;
inline std::mutex g_pool_mutex;
inline StackRegion g_pool[kPoolRegions];
inline size_t g_pool_count = 0, g_pool_slots = 0;

// -DPYSHMEM_CPU_NO_STACK_POOL turns the pool off (benchmarks compare both).
#if defined(PYSHMEM_CPU_NO_STACK_POOL)
constexpr bool kStackPool = false;
#else
constexpr bool kStackPool = true;
#endif

inline bool pool_take(Block* b, size_t stack, size_t slots) {
  if (!kStackPool) return false;
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  size_t best = kPoolRegions;
  for (size_t i = 0; i < g_pool_count; ++i)
    if (g_pool[i].stack == stack && g_pool[i].slots >= slots &&
        (best == kPoolRegions || g_pool[i].slots < g_pool[best].slots))
      best = i;
  if (best == kPoolRegions) return false;
  const StackRegion r = g_pool[best];
  g_pool[best] = g_pool[--g_pool_count];
  g_pool_slots -= r.slots;
  b->region = r.base;
  b->region_bytes = r.bytes;
  b->region_slots = r.slots;
  b->mprotect_guards = r.mprotect_guards;
  return true;
}

// Maps the block's stacks with guards (or reuses a pooled region); returns an error
// message or null.
inline const char* map_stacks(Block* b, size_t stack_bytes) {
  const size_t pg = page_size();
  b->stack = (stack_bytes + pg - 1) / pg * pg;
  if (b->stack < 4 * pg) b->stack = 4 * pg;
  b->guard = pg;
  b->slot = b->stack + b->guard;
  if (pool_take(b, b->stack, b->n)) return nullptr;
  b->region_slots = b->n;
  b->region_bytes = b->slot * b->n;
  void* p = mmap(nullptr, b->region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return "cannot reserve address space for the block's thread stacks (mmap failed)";
  b->region = static_cast<char*>(p);
#if defined(MADV_NOHUGEPAGE)
  madvise(p, b->region_bytes, MADV_NOHUGEPAGE);  // a huge page would make every stack resident
#endif
  constexpr int kGuardInstall = 102;  // MADV_GUARD_INSTALL (Linux 6.13)
  static std::atomic<int> guard_markers{-1};     // -1 unknown, 0 no, 1 yes
  for (unsigned i = 0; i < b->n; ++i) {
    char* g = b->region + i * b->slot;
    if (guard_markers.load(std::memory_order_relaxed) != 0) {
      if (madvise(g, b->guard, kGuardInstall) == 0) {
        guard_markers.store(1, std::memory_order_relaxed);
        continue;
      }
      guard_markers.store(0, std::memory_order_relaxed);
    }
    b->mprotect_guards = true;
    if (mprotect(g, b->guard, PROT_NONE) != 0)
      return "cannot protect the guard pages of the block's thread stacks: this kernel (Linux < 6.13) needs two "
             "memory maps per CUDA thread and vm.max_map_count is too low; raise it (sysctl vm.max_map_count) or "
             "launch fewer threads";
  }
  return nullptr;
}

// The block is done with its stacks: back to the pool, or unmapped when it is full.
inline void unmap_stacks(Block* b) {
  if (!b->region) return;
  if (kStackPool) {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (g_pool_count < kPoolRegions && g_pool_slots + b->region_slots <= kPoolSlots) {
      g_pool[g_pool_count++] = StackRegion{b->region, b->region_bytes, b->slot, b->stack, b->region_slots,
                                           b->mprotect_guards};
      g_pool_slots += b->region_slots;
      b->region = nullptr;
      return;
    }
  }
  munmap(b->region, b->region_bytes);
  b->region = nullptr;
}

}  // namespace fibers
}  // namespace cpu
}  // namespace pyshmem
