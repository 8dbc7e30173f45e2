// core/backoff.h: how every wait in pyshmem polls.
//
// Waits spin briefly, then yield, then sleep with growing intervals: PEs often outnumber
// cores (4 PEs on 2 cores in tests), and a PE that spins hot starves the PE it waits for.
// Long waits periodically call the interrupt hook (set by the Python binding) so Ctrl-C
// reaches a PE blocked in wait_until or a barrier.
#pragma once

#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "core/hang.h"

namespace pyshmem {

// Called from slow wait paths every ~20 ms; throws to abandon the wait (the binding
// raises the pending Python exception, e.g. KeyboardInterrupt). May be null.
using interrupt_hook_t = void (*)();
extern interrupt_hook_t g_interrupt_hook;

// Set while a transport needs this PE's help for remote operations to complete (UCX
// over tcp applies incoming puts when the target progresses): every wait step calls it.
// Returns how many events it handled (the proxy thread keeps polling while there are).
using progress_hook_t = unsigned (*)();
extern progress_hook_t g_progress_hook;
// Set while a transport can end a wait's sleep when it has work for this PE (UCX: its
// worker's event fd): a wait's sleep step of `ns` nanoseconds calls it instead of
// nanosleep, so an arrival wakes the waiter at once instead of after the sleep (a PE
// receiving a stream of puts over tcp that slept 50 us between progress calls let the
// socket fill and stalled the sender). Returns false when it could not sleep there
// (the caller then sleeps as usual); returns true at once when events are pending.
using sleep_hook_t = bool (*)(long ns);
extern sleep_hook_t g_sleep_hook;
// Set while the ordering check runs (host/order_check.h): every wait step lets it
// deliver held operations, so a PE that waits for an answer to its own held put sees one.
extern progress_hook_t g_order_hook;

// Transport operations issued by this PE's own threads (not the proxy's): the proxy
// polls the transport for incoming work only while this stays unchanged, leaving the
// progress of a PE that is busy issuing operations to that PE's threads (two threads
// contending for one UCX worker, on few cores, slow both down).
extern std::atomic<uint64_t> g_transport_ops;
extern thread_local bool t_proxy_thread;
inline void note_transport_op() {
  if (!t_proxy_thread) g_transport_ops.fetch_add(1, std::memory_order_relaxed);
}
// Progress calls of this PE's own threads (waits that progress the transport
// themselves): while this moves, the idle proxy does not sleep on the transport's event
// fd (each arrival would wake it to contend for the worker with the waiting thread).
extern std::atomic<uint64_t> g_own_progress;
inline void note_own_progress() {
  if (!t_proxy_thread) g_own_progress.fetch_add(1, std::memory_order_relaxed);
}
// Progress calls of this PE's own threads that handled events, and those threads in the
// sleep step of a wait. While the first moves and none sleeps, a thread of the PE is
// busy applying traffic (a stream of puts arriving, a flush sending), and the proxy
// leaves the worker to it: both polling one UCX worker contend for its lock (a stream
// of 64 KiB puts over tcp ran 25 % slower). Otherwise the proxy polls too: a waiter's
// progress calls that find nothing do not stand in for it (an 8-byte put + fence +
// flag ping-pong took 40-54 us instead of 27-32 when the proxy stopped polling for any
// progress call of the PE's threads).
extern std::atomic<uint64_t> g_own_productive;
// Set at init when this host has a CPU per PE. Only then does a wait whose progress
// calls handle events poll on, and a wait's sleep use the transport's sleep hook, and
// the proxy leave the worker to a thread applying traffic: with more PEs than CPUs,
// waits and the proxy back off as before, so that the PEs waited for get a CPU (4 PEs
// on 2 CPUs: barriers 10-25 % slower otherwise).
extern bool g_cpu_per_pe;
extern std::atomic<int> g_own_sleepers;
inline void note_own_productive() {
  if (!t_proxy_thread) g_own_productive.fetch_add(1, std::memory_order_relaxed);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Set at init to this PE's word in its system area that another PE's global_exit()
// writes (status + 1). Waiting PEs notice it and exit with that status, so a job
// never hangs on a PE that left through global_exit.
extern volatile std::uint64_t* g_global_exit_word;
[[noreturn]] void global_exit_now(int status);  // flushes stdio, _Exit(status)

// Two words after it lies the system area's hang_probe (static_assert in
// host/hang_report.cpp): a PE reporting a PYSHMEM_TIMEOUT hang stores 1 there, and
// answering 2 here (waits and the idle proxy thread pass by) tells it this PE runs.
inline void check_global_exit() {
  if (g_global_exit_word) {
    std::uint64_t v = __atomic_load_n(g_global_exit_word, __ATOMIC_RELAXED);
    if (v) global_exit_now(static_cast<int>(v - 1));
    volatile std::uint64_t* probe = g_global_exit_word + 2;
    if (__atomic_load_n(probe, __ATOMIC_RELAXED) == 1) __atomic_store_n(probe, 2, __ATOMIC_RELAXED);
  }
}

class Backoff {
 public:
  Backoff(long long spin_iters, long long sleep_max_us)
      : spin_iters_(spin_iters), sleep_max_ns_(sleep_max_us * 1000) {}

  // One unit of waiting; call between polls of the condition. `progressed`: the caller
  // progressed the transport itself and it handled events. While progress calls handle
  // events (a flush's data moving, arrivals applied, peers' gets served) the wait polls
  // on, from the start of its spin phase, when PEs have a CPU each
  // (g_cpu_per_pe): this thread is then the PE's progress engine, and
  // sleeping would stall the traffic (a receiver sleeping between progress calls let
  // the socket fill and stalled a stream of puts over tcp).
  void pause(bool progressed = false) {
    ++iter_;
    if (progress_hook_t h = g_progress_hook; h && progress_) progressed = h() > 0 || progressed;
    if (progress_hook_t h = g_order_hook; h) h();
    if (progressed && g_cpu_per_pe) {
      iter_ = 0;
      sleep_ns_ = 0;
      if ((++busy_steps_ & (kBusyCheckPeriod - 1)) == 0) {  // the checks of the slow path, now and then
        check_global_exit();
        if (g_hang_timeout_ns && !t_proxy_thread) check_hang();
        if (g_interrupt_hook && interruptible_) g_interrupt_hook();
      }
      cpu_relax();
      return;
    }
    if (iter_ <= spin_iters_) {
      cpu_relax();
      return;
    }
    check_global_exit();
    if (g_hang_timeout_ns && !t_proxy_thread) check_hang();
    if (iter_ <= spin_iters_ + kYields) {
      sched_yield();
      return;
    }
    sleep_ns_ = sleep_ns_ == 0 ? 1000 : sleep_ns_ * 2;
    if (sleep_ns_ > sleep_max_ns_) sleep_ns_ = sleep_max_ns_ > 0 ? sleep_max_ns_ : 1000;
    if (sleep_ns_ > 999999999) sleep_ns_ = 999999999;
    if (!t_proxy_thread) g_own_sleepers.fetch_add(1, std::memory_order_relaxed);
    const sleep_hook_t sleep_on_transport = g_cpu_per_pe ? g_sleep_hook : nullptr;
    if (!sleep_on_transport || !sleep_on_transport(static_cast<long>(sleep_ns_))) {
      timespec ts{0, static_cast<long>(sleep_ns_)};
      nanosleep(&ts, nullptr);
    }
    if (!t_proxy_thread) g_own_sleepers.fetch_sub(1, std::memory_order_relaxed);
    slept_ns_ += sleep_ns_ + 2000;  // account for syscall and wake-up overhead
    if (slept_ns_ >= kInterruptPeriodNs) {
      slept_ns_ = 0;
      if (g_interrupt_hook && interruptible_) g_interrupt_hook();
    }
  }

  // A wait that must finish even when Python signals arrive (e.g. the clean-up path of
  // an interrupted set_lock) is not interruptible.
  Backoff& uninterruptible() {
    interruptible_ = false;
    return *this;
  }

  // For a caller that progresses the transport itself (the proxy thread).
  Backoff& without_progress() {
    progress_ = false;
    return *this;
  }

 private:
  // PYSHMEM_TIMEOUT: publishes what this thread waits for once it stops spinning, and
  // hands a wait that outlasts the timeout to the report (core/hang.h).
  void check_hang() {
    const int64_t now = monotonic_ns();
    if (!started_ns_) {
      started_ns_ = now;
      hang_publish_wait();
    } else if (now - started_ns_ > g_hang_timeout_ns && g_hang_hook) {
      g_hang_hook(now - started_ns_);
    }
  }

  static constexpr long long kYields = 64;
  static constexpr long long kBusyCheckPeriod = 4096;  // productive steps between the slow path's checks
  static constexpr long long kInterruptPeriodNs = 20 * 1000 * 1000;
  long long spin_iters_, sleep_max_ns_;
  long long iter_ = 0, sleep_ns_ = 0, slept_ns_ = 0, busy_steps_ = 0;
  int64_t started_ns_ = 0;
  bool interruptible_ = true;
  bool progress_ = true;
};

}  // namespace pyshmem
