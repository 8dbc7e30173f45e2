// pyshmem/cpu_fibers.h: the fibers that run the CUDA threads of a block of a CUDA C++
// kernel built for the CPU (included by pyshmem/cpu_kernel.h; host compilers only).
//
// One OS thread runs one block. Every CUDA thread of the block is a fiber: a user-level
// context with its own small stack, switched only at synchronisation points
// (__syncthreads, __syncwarp, device-API waits, the end of the thread). The scheduler is
// deterministic: a FIFO run queue in thread order, and a switch goes straight from one
// fiber to the next runnable one (no trip through a scheduler context), so a
// __syncthreads costs one context switch per thread.
//
// Context switch: on x86-64 a 16-instruction switch that saves the six callee-saved
// registers (the ABI's; kernels do not change the floating-point control state, which
// stays shared), ~4 ns; elsewhere, or with -DPYSHMEM_CPU_FIBERS_UCONTEXT, POSIX
// swapcontext, which also saves the signal mask with a system call (~300 ns).
//
// Stacks (pyshmem/cpu_stacks.h): one mapping per block, pooled for later blocks
// (MAP_NORESERVE: only touched pages are resident, an idle thread costs about one 4 KiB
// page) holding every thread's stack with a guard page below each. Guards are MADV_GUARD_INSTALL markers (Linux >= 6.13), which do not split
// the mapping, so 96 blocks x 1024 threads stay far below vm.max_map_count; older
// kernels get PROT_NONE pages (two mappings per thread). Kernels are compiled with
// -fstack-clash-protection, so a large frame touches the guard instead of jumping it.
// A SIGSEGV handler on an alternate signal stack recognises a guard-page hit and prints
// kernel, block, thread and the stack size option before the process dies.
#pragma once

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

#include "pyshmem/device/common.cuh"  // detail::cpu_wait_pause

#if !defined(__x86_64__) && !defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
#define PYSHMEM_CPU_FIBERS_UCONTEXT 1
#endif
#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
#include <ucontext.h>
#endif

#if !defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
// void pyshmem_fiber_switch(void** save_sp, void* load_sp): saves the callee-saved
// registers on the current stack, stores the stack pointer in *save_sp, and resumes the
// context whose stack pointer is load_sp. Weak and hidden: one copy per kernel library.
extern "C" void pyshmem_fiber_switch(void** save_sp, void* load_sp);
// Its second half (pop the callee-saved registers, return): where a preempted fiber's
// signal handler sends the thread to resume the next fiber (pyshmem/cpu_preempt.h).
extern "C" char pyshmem_fiber_pop[];
asm(R"(
  .text
  .p2align 4
  .weak pyshmem_fiber_switch
  .hidden pyshmem_fiber_switch
  .type pyshmem_fiber_switch,@function
pyshmem_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  .weak pyshmem_fiber_pop
  .hidden pyshmem_fiber_pop
pyshmem_fiber_pop:
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size pyshmem_fiber_switch,.-pyshmem_fiber_switch
)");
#endif

// CUDA's vector types for the built-in coordinates.
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

// CUDA's built-in variables, as variables of the global namespace (as CUDA declares
// them), so host code may declare its own `dim3 gridDim(...)` in a function. blockIdx,
// blockDim and gridDim are set when a block starts on its OS thread; threadIdx whenever
// that thread switches to another CUDA thread (a fiber), so it reads the running one's.
inline thread_local uint3 threadIdx{0, 0, 0};
inline thread_local uint3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};

namespace pyshmem {
namespace cpu {

enum FiberState : uint8_t { kReady, kBarrier, kWarpSync, kDone };

struct Fiber {
  void* sp = nullptr;       // saved stack pointer while switched out
  uint3 tid{0, 0, 0};     // threadIdx
  unsigned linear = 0;      // x + bdx * (y + bdy * z); warp = linear / 32
  FiberState state = kReady;
  int result = 0;           // __syncthreads_count's result, set at release
  // A warp intrinsic it waits at (pyshmem/cpu_warp.h): kind, mask, the value it brought,
  // the shuffle's lane argument and width, its result, and a shuffle source that was
  // not there (-1: none).
  uint8_t warp_op = 0, warp_width = 32;
  int8_t warp_bad = -1;
  unsigned warp_mask = 0, warp_arg = 0;
  uint64_t warp_in = 0, warp_out = 0;
  const void* active_site = nullptr;  // the __activemask call it waits at
  unsigned atomics = 0;     // atomic operations since it last switched
  // Inside the runtime's own code (not preemptible, pyshmem/cpu_preempt.h); a fiber that
  // has not started counts as inside.
  volatile unsigned in_rt = 1;
  char* stack_lo = nullptr; // lowest usable byte (the guard lies below)
#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
  ucontext_t* uc = nullptr;
#endif
};

// One block being run by the calling OS thread.
struct Block {
  const char* kernel = "";
  void (*entry)(Block*) = nullptr;  // runs the kernel body for the current fiber
  void* entry_arg = nullptr;
  uint3 block_idx{0, 0, 0};
  unsigned n = 1;                   // threads
  Fiber* fibers = nullptr;
  Fiber* cur = nullptr;
  // Stacks: fiber i's guard at region + i*slot, its stack above it up to region + (i+1)*slot.
  char* region = nullptr;
  size_t region_bytes = 0, slot = 0, guard = 0, stack = 0;
  size_t region_slots = 0;          // stacks the region holds (>= n when reused from the pool)
  bool mprotect_guards = false;
  // Scheduler.
  void* main_sp = nullptr;          // the OS thread's own context while fibers run
#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
  ucontext_t main_uc;
#endif
  unsigned* runq = nullptr;         // ring of n fiber indices
  unsigned rq_head = 0, rq_count = 0;
  unsigned exited = 0;
  unsigned bar_arrived = 0;
  int bar_sum = 0;
  unsigned poll_streak = 0, idle_rounds = 0;
  void* dead_sp = nullptr;          // where an exited fiber's last switch saves its sp
  bool stopped = false;             // ended early: a failure here or in another block
  int args_differ = -1;             // PYSHMEM_DEBUG: a thread whose _block call's arguments differ
  uint64_t switches = 0;            // context switches (for pyshmem_cpu_switches)
  uint64_t preempt_mark = 0;        // switches at the last preemption tick
  uint64_t preemptions = 0;         // fibers preempted (pyshmem/cpu_preempt.h)
  uint64_t rng = 0;                 // random schedule's state (0: fixed order)
};

inline thread_local Block* t_block = nullptr;

// State shared by the blocks of one launch (pyshmem/_cpu_kernels.py allocates it; the
// layout is that ctypes structure's). Fields are accessed with __atomic builtins.
struct Grid {
  uint32_t failed;          // a block failed: the others stop at their next switch point
  uint32_t sync_arrived;    // blocks at this_grid().sync()
  uint32_t sync_generation;
  uint32_t blocks;
  uint32_t finished;        // blocks whose threads all ended
  uint32_t cooperative;     // launch(cooperative=True): grid sync allowed
  uint32_t schedule;        // 0 fixed order, 1 seeded random (PYSHMEM_CPU_SCHEDULE)
  uint64_t seed;
};
inline thread_local Grid* t_grid = nullptr;
// Context switches of every block this library ran so far (benchmarks read it).
inline std::atomic<uint64_t> g_switches{0}, g_preemptions{0};
inline bool grid_failed() { return t_grid && __atomic_load_n(&t_grid->failed, __ATOMIC_RELAXED); }

namespace fibers {

inline size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

inline void rq_push(Block* b, unsigned i) {
  b->runq[(b->rq_head + b->rq_count) % b->n] = i;
  ++b->rq_count;
}
inline unsigned rq_pop(Block* b) {
  const unsigned i = b->runq[b->rq_head];
  b->rq_head = (b->rq_head + 1) % b->n;
  --b->rq_count;
  return i;
}

// ---- context switch ----
[[noreturn]] inline void fiber_main();

#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
inline void uc_entry() { fiber_main(); }
#endif

// Prepares fiber f to start at fiber_main on its own stack.
inline void prepare(Block* b, Fiber& f) {
  char* top = f.stack_lo + b->stack;
#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
  getcontext(f.uc);
  f.uc->uc_stack.ss_sp = f.stack_lo;
  f.uc->uc_stack.ss_size = b->stack;
  f.uc->uc_link = nullptr;
  makecontext(f.uc, uc_entry, 0);
  (void)top;
#else
  // The frame pyshmem_fiber_switch pops: r15 r14 r13 r12 rbx rbp, then `ret` to
  // fiber_main with the stack as right after a call (rsp = 8 mod 16), a null return address.
  void** sp = reinterpret_cast<void**>(top);
  *--sp = nullptr;
  *--sp = reinterpret_cast<void*>(&fiber_main);
  for (int r = 0; r < 6; ++r) *--sp = nullptr;
  f.sp = sp;
#endif
}

// Switches from the running context (saving into *save) to fiber `to`, or to the
// block's OS-thread context when `to` is null.
inline void switch_to(Block* b, Fiber* from, Fiber* to) {
  ++b->switches;  // first: a preemption tick that sees the count change leaves it alone
  std::atomic_signal_fence(std::memory_order_seq_cst);
  b->cur = to;
  if (to) ::threadIdx = to->tid;
  if (from) from->atomics = 0;
#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
  static thread_local ucontext_t dead;
  ucontext_t* save = from ? (from->state == kDone ? &dead : from->uc) : &b->main_uc;
  swapcontext(save, to ? to->uc : &b->main_uc);
#else
  void** save = from ? (from->state == kDone ? &b->dead_sp : &from->sp) : &b->main_sp;
  pyshmem_fiber_switch(save, to ? to->sp : b->main_sp);
#endif
}

// The running fiber stops (it waits or ended): runs the next runnable fiber, or goes
// back to the OS thread when none is left (all ended, or a deadlock run_block reports).
inline uint64_t next_random(Block* b) {  // xorshift64*
  b->rng ^= b->rng >> 12;
  b->rng ^= b->rng << 25;
  b->rng ^= b->rng >> 27;
  return b->rng * 0x2545F4914F6CDD1Dull;
}

// The next fiber to run: the run queue's head, or under the random schedule a random
// runnable one (swapped to the head first).
inline unsigned rq_pick(Block* b) {
  if (b->rng && b->rq_count > 1) {
    const unsigned k = static_cast<unsigned>(next_random(b) % b->rq_count);
    unsigned& head = b->runq[b->rq_head];
    unsigned& other = b->runq[(b->rq_head + k) % b->n];
    const unsigned t = head;
    head = other;
    other = t;
  }
  return rq_pop(b);
}

inline void switch_away(Block* b) {
  Fiber* me = b->cur;
  Fiber* next = b->rq_count ? &b->fibers[rq_pick(b)] : nullptr;
  if (next == me) return;
  switch_to(b, me, next);
}

// Marks the running fiber as inside the runtime for the guard's scope: a preemption
// signal leaves it alone there (the run queue and the fibers' states are consistent
// only between runtime calls).
struct RtGuard {
  Fiber* f;
  explicit RtGuard(Block* b) : f(b->cur) {
    f->in_rt = f->in_rt + 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~RtGuard() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    f->in_rt = f->in_rt - 1;
  }
};

inline void progress(Block* b) {
  b->poll_streak = 0;
  b->idle_rounds = 0;
}

// Ends the block now, from the running fiber: back to the OS thread, which reports
// (a failure here) or stops quietly (another block failed). The other fibers never
// resume; their stacks go with the block.
[[noreturn]] inline void stop_block(Block* b) {
  RtGuard guard(b);
  b->stopped = true;
  Fiber* me = b->cur;
  me->state = kDone;
  switch_to(b, me, nullptr);
  __builtin_unreachable();
}

// ---- synchronisation ----
// __syncthreads: every thread of the block must arrive (see cpu_kernel.h for why
// exited threads do not count as arrived); the last one releases the others in thread
// order and carries on. Returns the number of threads whose `pred` was nonzero.
// `on_last` (may be null) runs in the last thread to arrive before any is released
// (this_grid().sync() waits for the other blocks there).
inline int barrier(int pred, void (*on_last)(Block*) = nullptr) {
  Block* b = t_block;
  RtGuard guard(b);
  Fiber* me = b->cur;
  progress(b);
  b->bar_sum += pred != 0;
  if (++b->bar_arrived < b->n) {
    me->state = kBarrier;
    switch_away(b);
    return me->result;
  }
  if (on_last) on_last(b);
  const int sum = b->bar_sum;
  b->bar_arrived = 0;
  b->bar_sum = 0;
  for (unsigned i = 0; i < b->n; ++i) {
    Fiber& f = b->fibers[i];
    if (f.state == kBarrier) {
      f.state = kReady;
      f.result = sum;
      rq_push(b, i);
    }
  }
  return sum;
}

// Lanes of the calling thread's warp that exist (the last warp may be partial).
inline unsigned warp_lanes_mask(const Block* b, unsigned linear) {
  const unsigned rest = b->n - (linear & ~31u);
  return rest >= 32 ? 0xffffffffu : ((1u << rest) - 1u);
}

[[noreturn]] inline void usage_error(const char* what);

// A switch point of the schedule: an atomic operation or a device-API call. A fiber
// that did 64 of them in a row without switching lets the block's other threads run
// (so a spin on an atomic flag another thread of the block sets makes progress); the
// random schedule also switches here at random, half the time, and one time in 16
// gives the OS thread up (other blocks' threads run then, perturbing the blocks'
// interleaving too). Stops the block when another block failed.
inline void schedule_point() {
  Block* b = t_block;
  if (!b) return;
  RtGuard guard(b);
  Fiber* me = b->cur;
  if (b->rng && (next_random(b) & 15) == 0) sched_yield();
  if (!b->rq_count) {
    if (grid_failed()) stop_block(b);
    return;
  }
  if (++me->atomics < 64 && !(b->rng && (next_random(b) & 1))) return;
  me->atomics = 0;
  if (grid_failed()) stop_block(b);
  rq_push(b, me->linear);
  switch_away(b);
}

inline void warp_lane_exited(Block* b, unsigned linear);  // pyshmem/cpu_warp.h

// A device-API wait polls again (device/common.cuh's Backoff, CPU build): lets the
// other runnable threads of the block run first. Returns false when none can (the
// caller then backs off on the OS thread as outside fibers). When every runnable
// thread only polled since the last real progress, the OS thread pauses once for the
// round (detail::cpu_wait_pause, the device API's own backoff: spin, yield, sleep).
inline bool poll_yield(bool first_poll) {
  Block* b = t_block;
  if (!b) return false;
  RtGuard guard(b);
  if (grid_failed()) stop_block(b);
  if (!b->rq_count) return false;
  if (first_poll) progress(b);
  if (++b->poll_streak > b->rq_count) {
    b->poll_streak = 0;
    ::pyshmem::detail::cpu_wait_pause(++b->idle_rounds);
  }
  rq_push(b, static_cast<unsigned>(b->cur - b->fibers));
  switch_away(b);
  return true;
}

[[noreturn]] inline void fiber_main() {
  Block* b = t_block;
  b->cur->in_rt = 0;  // in the kernel's code from here
  b->entry(b);
  Fiber* me = b->cur;
  me->in_rt = 1;
  me->state = kDone;
  ++b->exited;
  progress(b);
  warp_lane_exited(b, me->linear);
  switch_away(b);
  __builtin_unreachable();
}

}  // namespace fibers
}  // namespace cpu
}  // namespace pyshmem
