// pyshmem/cpu_block.h: runs one block of a CPU kernel launch on the calling OS thread
// (pyshmem_cpu_run_block, called by pyshmem/_cpu_kernels.py once per block, each block
// on its own new thread): the block's CUDA threads as fibers (pyshmem/cpu_fibers.h),
// the kernel called with the launch's arguments, and the errors a GPU would turn into
// a hang or undefined behaviour reported with kernel, block and thread.
#pragma once

#include "pyshmem/cpu_fibers.h"
#include "pyshmem/cpu_preempt.h"
#include "pyshmem/cpu_stacks.h"
#include "pyshmem/cpu_warp.h"
#include "pyshmem/device.cuh"

namespace pyshmem {
namespace cpu {

// blockIdx, gridDim and blockDim (the global built-ins, pyshmem/cpu_fibers.h): per block
// = per OS thread.
inline void set_coords(const unsigned* c) {
  ::blockIdx = uint3{c[0], c[1], c[2]};
  ::gridDim = dim3(c[3], c[4], c[5]);
  ::blockDim = dim3(c[6], c[7], c[8]);
}

// The launch's dynamic shared memory (extern __shared__), per block = per OS thread.
inline thread_local void* t_dynamic_shared = nullptr;
inline void* dynamic_shared() { return t_dynamic_shared; }

namespace fibers {

// The kernel and its arguments, classified as the C calling convention passes them:
// kind 0 an integer or pointer (64 bits, already sign- or zero-extended), 1 a float
// (its bits in the low half), 2 a double.
struct KernelCall {
  void* fn;
  const uint64_t* argv;
  const uint8_t* kinds;
  int nargs;
};

#if defined(__x86_64__)
constexpr int kIntRegs = 6;
#elif defined(__aarch64__)
constexpr int kIntRegs = 8;
#else
constexpr int kIntRegs = 0;  // unsupported: pyshmem_cpu_run_block refuses
#endif
constexpr int kFpRegs = 8, kStackWords = 16;

// Calls k.fn with its arguments through a function type with every integer and
// floating-point argument register and kStackWords stack slots: the registers and the
// stack get exactly what a call with the kernel's own prototype would put there (all
// kernel parameters are scalars or pointers of at most 8 bytes), and the caller pops
// the unused slots (x86-64 System V and AAPCS64 on Linux).
inline void call_kernel(const KernelCall& k) {
  uint64_t in[kIntRegs > 0 ? kIntRegs : 1] = {}, st[kStackWords] = {};
  double fp[kFpRegs] = {};
  int ni = 0, nf = 0, ns = 0;
  for (int a = 0; a < k.nargs; ++a) {
    const uint64_t v = k.argv[a];
    if (k.kinds[a] == 0 && ni < kIntRegs) in[ni++] = v;
    else if (k.kinds[a] != 0 && nf < kFpRegs) memcpy(&fp[nf++], &v, sizeof v);
    else st[ns++] = v;  // bounded by pyshmem_cpu_run_block
  }
#define PYSHMEM_ST st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7], st[8], st[9], st[10], st[11], st[12], \
                   st[13], st[14], st[15]
#define PYSHMEM_FP fp[0], fp[1], fp[2], fp[3], fp[4], fp[5], fp[6], fp[7]
  using U = uint64_t;
  using D = double;
#if defined(__x86_64__)
  using F = void (*)(U, U, U, U, U, U, D, D, D, D, D, D, D, D, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U);
  reinterpret_cast<F>(k.fn)(in[0], in[1], in[2], in[3], in[4], in[5], PYSHMEM_FP, PYSHMEM_ST);
#elif defined(__aarch64__)
  using F = void (*)(U, U, U, U, U, U, U, U, D, D, D, D, D, D, D, D, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U,
                     U);
  reinterpret_cast<F>(k.fn)(in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], PYSHMEM_FP, PYSHMEM_ST);
#endif
#undef PYSHMEM_ST
#undef PYSHMEM_FP
}

inline void run_kernel_body(Block* b) { call_kernel(*static_cast<const KernelCall*>(b->entry_arg)); }

// The first misuse a thread of the block reported (it ends that thread).
inline thread_local char t_error[1024];

// Ends the kernel: the launch raises pyshmem.KernelError with `what`, naming the thread,
// block and kernel (the other blocks stop at their next switch point, as a GPU kernel
// stops at a trap).
[[noreturn]] inline void usage_error(const char* what) {
  Block* b = t_block;
  Fiber* me = b->cur;
  if (!t_error[0])
    snprintf(t_error, sizeof t_error, "%s (thread (%u,%u,%u) of block (%u,%u,%u) of kernel %s)", what, me->tid.x,
             me->tid.y, me->tid.z, b->block_idx.x, b->block_idx.y, b->block_idx.z, b->kernel);
  stop_block(b);
}
inline void fail(const char* what) { usage_error(what); }

// this_grid().sync(): the block's threads meet, then the last of them waits for the
// other blocks (the grid barrier of a cooperative launch; all blocks run at once).
inline void grid_wait(Block* b) {
  Grid* g = t_grid;
  const uint32_t gen = __atomic_load_n(&g->sync_generation, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&g->sync_arrived, 1, __ATOMIC_ACQ_REL) == g->blocks) {
    __atomic_store_n(&g->sync_arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g->sync_generation, gen + 1, __ATOMIC_RELEASE);
    return;
  }
  for (unsigned spins = 0; __atomic_load_n(&g->sync_generation, __ATOMIC_ACQUIRE) == gen; ++spins) {
    if (grid_failed()) stop_block(b);
    if (__atomic_load_n(&g->finished, __ATOMIC_ACQUIRE))
      usage_error("this_grid().sync(): a block of the grid ended without reaching it, so it can never complete "
                  "(every thread of every block must call it)");
    if (spins > 1000) {
      struct timespec ts = {0, 20000};
      nanosleep(&ts, nullptr);
    } else if (spins > 100) {
      sched_yield();
    }
  }
}
inline void grid_sync() {
  if (!t_grid || !t_grid->cooperative)
    usage_error("this_grid().sync() needs a cooperative launch: pyshmem.cuda.launch(..., cooperative=True)");
  barrier(0, grid_wait);
}

// Appends "a-b, c, ..." for the fibers in state `s` to out; returns how many.
inline unsigned list_threads(const Block* b, FiberState s, char* out, size_t cap) {
  unsigned count = 0;
  size_t len = strlen(out);
  for (unsigned i = 0; i < b->n; ++i) {
    if (b->fibers[i].state != s) continue;
    unsigned j = i;
    while (j + 1 < b->n && b->fibers[j + 1].state == s) ++j;
    count += j - i + 1;
    if (len + 32 < cap)
      len += static_cast<size_t>(snprintf(out + len, cap - len, i == j ? "%s%u" : "%s%u-%u", len ? ", " : "", i, j));
    i = j;
  }
  return count;
}

// Threads left waiting when nothing in the block can run any more.
inline void report_deadlock(const Block* b, char* err, size_t cap) {
  char waiting[320] = "", warp[320] = "", done[320] = "";
  const unsigned nb = list_threads(b, kBarrier, waiting, sizeof waiting);
  const unsigned nw = list_threads(b, kWarpSync, warp, sizeof warp);
  list_threads(b, kDone, done, sizeof done);
  size_t len = static_cast<size_t>(snprintf(err, cap, "kernel %s, block (%u,%u,%u) cannot finish: ", b->kernel,
                                            b->block_idx.x, b->block_idx.y, b->block_idx.z));
  if (nb && len < cap) len += static_cast<size_t>(snprintf(err + len, cap - len, "threads %s wait at __syncthreads(); ", waiting));
  if (nw && len < cap) {
    const Fiber* first = b->fibers;
    while (first->state != kWarpSync) ++first;
    len += static_cast<size_t>(snprintf(err + len, cap - len,
                                        "threads %s wait at warp intrinsics (thread %u at %s with mask 0x%08x); ",
                                        warp, first->linear, warp_op_name(first->warp_op), first->warp_mask));
  }
  if (len < cap)
    snprintf(err + len, cap - len,
             "threads %s ended without reaching it (threads by linear index x + blockDim.x*(y + blockDim.y*z)). "
             "Every thread of a block must reach each __syncthreads(), and every non-exited lane a warp intrinsic's "
             "mask names must reach that intrinsic with the same mask; on a GPU this is undefined behaviour (a hang "
             "or wrong results)",
             done[0] ? done : "(none)");
}

}  // namespace fibers

// The device API's cooperation levels (device/common.cuh) on the fibers of this block.
namespace fibers {
inline int coop_rank(Coop c) {
  const unsigned l = t_block->cur->linear;
  return static_cast<int>(c == Coop::warp ? (l & 31u) : c == Coop::block ? l : 0);
}
inline int coop_size(Coop c) {
  Block* b = t_block;
  if (c == Coop::block) return static_cast<int>(b->n);
  if (c == Coop::warp) return __builtin_popcount(warp_lanes_mask(b, b->cur->linear));
  return 1;
}
inline void coop_sync(Coop c) {
  if (c == Coop::block) barrier(0);
  else if (c == Coop::warp) syncwarp(warp_lanes_mask(t_block, t_block->cur->linear));
}
// PYSHMEM_DEBUG=1: the threads of the warp or block calling a _warp/_block function
// compare the digests of their arguments.
inline void digests_differ(Block* b) {
  b->args_differ = -1;
  for (unsigned i = 1; i < b->n && b->args_differ < 0; ++i)
    if (b->fibers[i].warp_in != b->fibers[0].warp_in) b->args_differ = static_cast<int>(i);
}
inline void coop_same(Coop c, const char* call, uint64_t digest) {
  Block* b = t_block;
  Fiber* me = b->cur;
  char what[320];
  if (c == Coop::warp) {
    if (warp_meet(kOpMatchAll, warp_lanes_mask(b, me->linear), digest)) return;
    snprintf(what, sizeof what,
             "pyshmem::%s: the lanes of warp %u called it with different arguments (PYSHMEM_DEBUG check: every "
             "lane of the warp must call a _warp function with the same arguments)",
             call, me->linear / 32);
    usage_error(what);
  }
  if (c != Coop::block) return;
  me->warp_in = digest;
  barrier(0, digests_differ);
  if (b->args_differ < 0) return;
  snprintf(what, sizeof what,
           "pyshmem::%s: the threads of the block called it with different arguments (thread 0 and thread %d "
           "differ; PYSHMEM_DEBUG check: every thread of the block must call a _block function with the same "
           "arguments)",
           call, b->args_differ);
  usage_error(what);
}

inline const detail::CpuCoop kCoop = {coop_rank, coop_size, coop_sync, poll_yield, schedule_point, fail, coop_same};
}  // namespace fibers

inline int run_block(void (*entry)(Block*), void* entry_arg, const char* kernel, const unsigned* coords,
                     uint64_t shared_bytes, uint64_t stack_bytes, Grid* g, char* err, uint64_t errlen);

}  // namespace cpu
}  // namespace pyshmem

extern "C" {
// Context switches between the CUDA threads (fibers) of every block this kernel
// library has run, a benchmark's count of the execution model's work.
__attribute__((weak, visibility("default"))) uint64_t pyshmem_cpu_switches() {
  return pyshmem::cpu::g_switches.load(std::memory_order_relaxed);
}
// Of those, the preemptions of threads that ran 10-20 ms of CPU without a switch point.
__attribute__((weak, visibility("default"))) uint64_t pyshmem_cpu_preemptions() {
  return pyshmem::cpu::g_preemptions.load(std::memory_order_relaxed);
}

// Runs block (coords[0..2]) of a grid coords[3..5] with blocks of coords[6..8] threads:
// kernel `fn` with nargs arguments (argv/kinds, see KernelCall); `grid` is the launch's
// state shared by its blocks (pyshmem::cpu::Grid). Returns 0; 1 with a message in err
// (a block that cannot finish, a misused intrinsic, a failed assert or trap, no
// stacks), which also stops the other blocks; or 2 when this block stopped because
// another one failed.
__attribute__((weak, visibility("default"))) int pyshmem_cpu_run_block(void* fn, const char* kernel,
                                                                        const uint64_t* argv, const uint8_t* kinds,
                                                                        int nargs, const unsigned* coords,
                                                                        uint64_t shared_bytes, uint64_t stack_bytes,
                                                                        void* grid, char* err, uint64_t errlen) {
  using namespace pyshmem::cpu::fibers;
  err[0] = 0;
  int ni = 0, nf = 0;
  for (int a = 0; a < nargs; ++a) (kinds[a] == 0 ? ni : nf)++;
  const int on_stack = (ni > kIntRegs ? ni - kIntRegs : 0) + (nf > kFpRegs ? nf - kFpRegs : 0);
  if (kIntRegs == 0 || on_stack > kStackWords) {
    snprintf(err, errlen, kIntRegs == 0 ? "CPU kernels run on x86-64 and aarch64 only"
                                        : "kernel %s: too many arguments for a CPU launch (at most %d integer/pointer "
                                          "and %d floating-point ones plus %d more); pass a struct in memory instead",
             kernel, kIntRegs, kFpRegs, kStackWords);
    return 1;
  }
  KernelCall call{fn, argv, kinds, nargs};
  return pyshmem::cpu::run_block(run_kernel_body, &call, kernel, coords, shared_bytes, stack_bytes,
                                 static_cast<pyshmem::cpu::Grid*>(grid), err, errlen);
}
}

namespace pyshmem {
namespace cpu {
// Runs one block of a launch on the calling OS thread, each of its CUDA threads a fiber
// that calls entry(block) (block->entry_arg = entry_arg); the rest as for
// pyshmem_cpu_run_block, whose return codes it returns.
inline int run_block(void (*entry)(Block*), void* entry_arg, const char* kernel, const unsigned* coords,
                     uint64_t shared_bytes, uint64_t stack_bytes, Grid* g, char* err, uint64_t errlen) {
  using namespace pyshmem::cpu::fibers;
  err[0] = 0;
  Block b;
  b.kernel = kernel;
  if (g->schedule) {  // a per-block stream of the launch's seed (never 0: xorshift's fixed point)
    const unsigned linear_block = coords[0] + coords[3] * (coords[1] + coords[4] * coords[2]);
    b.rng = (g->seed + 1) * 0x9E3779B97F4A7C15ull ^ (linear_block + 1) * 0xBF58476D1CE4E5B9ull;
    if (!b.rng) b.rng = 1;
  }
  b.block_idx = uint3{coords[0], coords[1], coords[2]};
  ::pyshmem::cpu::set_coords(coords);
  const unsigned bx = coords[6], by = coords[7];
  b.n = coords[6] * coords[7] * coords[8];
  b.entry = entry;
  b.entry_arg = entry_arg;
  b.fibers = new Fiber[b.n];
  b.runq = new unsigned[b.n];
#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
  ucontext_t* ucs = new ucontext_t[b.n];
#endif
  // An alternate signal stack, so that the stack-overflow report has a stack to run on.
  const size_t alt_bytes = 64 * 1024;
  void* alt = mmap(nullptr, alt_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  stack_t alt_new{}, alt_old{};
  alt_new.ss_sp = alt;
  alt_new.ss_size = alt_bytes;
  const bool alt_set = alt != MAP_FAILED && sigaltstack(&alt_new, &alt_old) == 0;
  install_segv_handler();
  int status = 0;
  if (const char* why = map_stacks(&b, stack_bytes)) {
    snprintf(err, errlen, "kernel %s, block (%u,%u,%u) of %u threads: %s", kernel, coords[0], coords[1], coords[2],
             b.n, why);
    status = 1;
  } else {
    void* smem = nullptr;
    if (shared_bytes) {
      smem = aligned_alloc(128, (shared_bytes + 127) / 128 * 128);
      memset(smem, 0, shared_bytes);
    }
    t_dynamic_shared = smem;
    t_error[0] = 0;
    t_block = &b;
    t_grid = g;
    pyshmem::detail::t_cpu_coop = &kCoop;
    for (unsigned i = 0; i < b.n; ++i) {
      Fiber& f = b.fibers[i];
      f.linear = i;
      f.tid = uint3{i % bx, (i / bx) % by, i / (bx * by)};
      f.stack_lo = b.region + i * b.slot + b.guard;
#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
      f.uc = &ucs[i];
#endif
      prepare(&b, f);
      rq_push(&b, i);
    }
    if (!grid_failed()) {
#if defined(PYSHMEM_CPU_PREEMPT)
      PreemptTimer timer;  // a fiber spinning without a switch point is preempted
      if (alt_set && b.n > 1) timer.start();
#endif
      switch_to(&b, nullptr, &b.fibers[rq_pick(&b)]);  // back here when no fiber can run
    } else {
      b.stopped = true;
    }
    pyshmem::detail::t_cpu_coop = nullptr;
    t_block = nullptr;
    t_grid = nullptr;
    t_dynamic_shared = nullptr;
    free(smem);
    if (t_error[0]) {
      snprintf(err, errlen, "%s", t_error);
      status = 1;
    } else if (b.stopped) {
      status = 2;
    } else if (b.exited < b.n) {
      report_deadlock(&b, err, errlen);
      status = 1;
    } else {
      __atomic_add_fetch(&g->finished, 1, __ATOMIC_ACQ_REL);
    }
    if (status == 1) __atomic_store_n(&g->failed, 1, __ATOMIC_RELEASE);
    unmap_stacks(&b);
  }
  g_switches.fetch_add(b.switches, std::memory_order_relaxed);
  g_preemptions.fetch_add(b.preemptions, std::memory_order_relaxed);
  if (alt_set) sigaltstack(&alt_old, nullptr);
  if (alt != MAP_FAILED) munmap(alt, alt_bytes);
#if defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
  delete[] ucs;
#endif
  delete[] b.fibers;
  delete[] b.runq;
  return status;
}
}  // namespace cpu
}  // namespace pyshmem
