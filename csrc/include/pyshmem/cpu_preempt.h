// pyshmem/cpu_preempt.h: preemption of a CUDA thread (fiber) of a CPU kernel's block
// that runs without a switch point (included by pyshmem/cpu_block.h; x86-64 Linux,
// host compilers only).
//
// Why: a thread may spin on a flag another thread of its block sets, with plain or
// volatile loads or cuda::atomic_ref, none of which pyshmem sees; the fibers of one
// block share an OS thread, so without preemption the setter never runs. How: while a
// block's fibers run, a CPU-time timer of its OS thread sends SIGURG every kTickNs. A
// tick that finds the same fiber running as at the previous tick with no switch in
// between (so 10-20 ms of CPU without a switch), with other fibers runnable, and the
// fiber in the kernel library's own code outside the runtime's (RtGuard), preempts it:
// the handler copies the signal frame (every register, the flags, the FP/vector state)
// onto the fiber's stack below its red zone, makes the fiber's saved context a return
// into pyshmem_preempt_resume, which hands that frame to rt_sigreturn, and edits the
// signal frame so that the signal's return resumes the next fiber instead. Nothing is
// preempted in the C library or the runtime (_C): a fiber there may hold a lock the
// next one would wait for forever on the same OS thread.
#pragma once

#if defined(__x86_64__) && defined(__linux__) && !defined(PYSHMEM_CPU_FIBERS_UCONTEXT)
#define PYSHMEM_CPU_PREEMPT 1

#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "pyshmem/cpu_fibers.h"

// Resumes a preempted fiber: entered by pyshmem_fiber_switch's return with the stack
// pointer at the copied signal frame's ucontext, exactly where rt_sigreturn expects it.
extern "C" char pyshmem_preempt_resume[], pyshmem_preempt_resume_end[];
asm(R"(
  .text
  .p2align 4
  .weak pyshmem_preempt_resume
  .hidden pyshmem_preempt_resume
  .weak pyshmem_preempt_resume_end
  .hidden pyshmem_preempt_resume_end
pyshmem_preempt_resume:
  movl $15, %eax
  syscall
  ud2
pyshmem_preempt_resume_end:
)");

namespace pyshmem {
namespace cpu {
namespace fibers {

constexpr long kTickNs = 10 * 1000 * 1000;
constexpr int kPreemptSignal = SIGURG;    // ignored by default; Python does not use it
constexpr int kPreemptMagic = 0x50594350;  // the timers' sival_int: a tick of ours

// The kernel libraries' executable segments: only code there is preempted. The
// runtime's variables (inline, so GNU-unique) are one per process even across kernel
// libraries loaded RTLD_LOCAL, and so is the signal handler (the first library's):
// every library adds its own segment, once (a per-library, internal-linkage flag).
constexpr int kMaxTexts = 1024;
inline uintptr_t g_texts[kMaxTexts][2];
inline std::atomic<int> g_text_count{0};
inline bool in_kernel_text(uintptr_t pc) {
  const int n = g_text_count.load(std::memory_order_acquire);
  for (int i = 0; i < n && i < kMaxTexts; ++i)
    if (pc >= g_texts[i][0] && pc < g_texts[i][1]) return true;
  return false;
}
inline int find_text(struct dl_phdr_info* info, size_t, void* self) {
  const uintptr_t me = reinterpret_cast<uintptr_t>(self);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (me >= lo && me < hi) {
      static std::mutex m;
      std::lock_guard<std::mutex> lock(m);
      const int k = g_text_count.load(std::memory_order_relaxed);
      if (k < kMaxTexts) {
        g_texts[k][0] = lo;
        g_texts[k][1] = hi;
        g_text_count.store(k + 1, std::memory_order_release);
      }
      return 1;
    }
  }
  return 0;
}
static void this_library_marker() {}
static std::atomic<bool> s_text_added{false};  // internal linkage: one per kernel library
inline void add_this_library_text() {
  if (!s_text_added.exchange(true)) dl_iterate_phdr(find_text, reinterpret_cast<void*>(&this_library_marker));
}

inline struct sigaction g_prev_urg;

inline void on_preempt_tick(int sig, siginfo_t* si, void* ctx) {
  Block* b = t_block;
  // Not a tick of this library's blocks: another handler's (another kernel library,
  // which installed its handler before this one, or the program's own).
  if (si->si_code != SI_TIMER || si->si_value.sival_int != kPreemptMagic || !b) {
    if ((g_prev_urg.sa_flags & SA_SIGINFO) && g_prev_urg.sa_sigaction) g_prev_urg.sa_sigaction(sig, si, ctx);
    else if (!(g_prev_urg.sa_flags & SA_SIGINFO) && g_prev_urg.sa_handler != SIG_DFL &&
             g_prev_urg.sa_handler != SIG_IGN)
      g_prev_urg.sa_handler(sig);
    return;
  }
  if (!b->cur || !b->rq_count) return;
  if (b->switches != b->preempt_mark) {  // it switched since the last tick
    b->preempt_mark = b->switches;
    return;
  }
  Fiber* a = b->cur;
  if (a->in_rt) return;
  ucontext_t* uc = static_cast<ucontext_t*>(ctx);
  const uintptr_t pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  if (!in_kernel_text(pc)) return;
  if (pc >= reinterpret_cast<uintptr_t>(pyshmem_preempt_resume) &&
      pc < reinterpret_cast<uintptr_t>(pyshmem_preempt_resume_end))
    return;
  const uintptr_t rsp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  if (rsp <= reinterpret_cast<uintptr_t>(a->stack_lo) || rsp > reinterpret_cast<uintptr_t>(a->stack_lo) + b->stack)
    return;  // not on its own stack (cannot happen in the kernel's code; be safe)
  // The FP/vector state the kernel saved: its size is in the xsave software area
  // (bytes 464..) when magic1 is there, else the 512-byte fxsave image.
  const char* fp = reinterpret_cast<const char*>(uc->uc_mcontext.fpregs);
  if (!fp) return;
  uint32_t magic1 = 0, extended = 0;
  memcpy(&magic1, fp + 464, 4);
  memcpy(&extended, fp + 464 + 4, 4);  // struct _fpx_sw_bytes: magic1, extended_size, ...
  const size_t fp_bytes = magic1 == 0x46505853u /* FP_XSTATE_MAGIC1 */ ? extended : 512;
  if (fp_bytes < 512 || fp_bytes > 32768) return;
  const size_t uc_bytes = offsetof(ucontext_t, uc_sigmask) + 8;  // the kernel's ucontext
  uintptr_t top = rsp - 128;                                     // below the red zone
  const uintptr_t fp_at = (top - fp_bytes) & ~uintptr_t(63);
  const uintptr_t uc_at = (fp_at - uc_bytes) & ~uintptr_t(15);
  void** frame = reinterpret_cast<void**>(uc_at) - 7;  // 6 registers, then the return
  if (reinterpret_cast<uintptr_t>(frame) < reinterpret_cast<uintptr_t>(a->stack_lo) + 4096) return;
  const unsigned next_i = [&] {
    rq_push(b, a->linear);
    return rq_pick(b);
  }();
  Fiber* next = &b->fibers[next_i];
  if (next == a) return;  // the random pick chose it again: it keeps running
  memcpy(reinterpret_cast<void*>(fp_at), fp, fp_bytes);
  memcpy(reinterpret_cast<void*>(uc_at), uc, uc_bytes);
  reinterpret_cast<ucontext_t*>(uc_at)->uc_mcontext.fpregs = reinterpret_cast<fpregset_t>(fp_at);
  for (int r = 0; r < 6; ++r) frame[r] = nullptr;
  frame[6] = reinterpret_cast<void*>(pyshmem_preempt_resume);
  a->sp = frame;
  a->atomics = 0;
  ++b->switches;
  b->preempt_mark = b->switches;
  ++b->preemptions;
  b->cur = next;
  ::threadIdx = next->tid;
  // The signal's return runs the second half of a switch into `next`.
  uc->uc_mcontext.gregs[REG_RSP] = reinterpret_cast<greg_t>(next->sp);
  uc->uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(pyshmem_fiber_pop);
}

inline void install_preempt_handler() {
  static std::atomic<int> installed{0};
  int expected = 0;
  if (!installed.compare_exchange_strong(expected, 1)) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_preempt_tick;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(kPreemptSignal, &sa, &g_prev_urg);
}

// A CPU-time timer of the calling OS thread while its block's fibers run. Returns
// false (no preemption for this block) when the system refuses one.
struct PreemptTimer {
  timer_t id{};
  bool armed = false;
  void start() {
    add_this_library_text();
    install_preempt_handler();
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = kPreemptSignal;
    ev.sigev_value.sival_int = kPreemptMagic;
    ev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &id) != 0) return;
    struct itimerspec its = {{0, kTickNs}, {0, kTickNs}};
    armed = timer_settime(id, 0, &its, nullptr) == 0;
    if (!armed) timer_delete(id);
  }
  ~PreemptTimer() {
    if (armed) timer_delete(id);  // a tick already queued finds t_block cleared
  }
};

}  // namespace fibers
}  // namespace cpu
}  // namespace pyshmem

#endif
