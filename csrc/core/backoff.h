// core/backoff.h: how every wait in pyshmem polls.
//
// Waits spin briefly, then yield, then sleep with growing intervals: PEs often outnumber
// cores (4 PEs on 2 cores in tests), and a PE that spins hot starves the PE it waits for.
// Long waits periodically call the interrupt hook (set by the Python binding) so Ctrl-C
// reaches a PE blocked in wait_until or a barrier.
#pragma once

#include <sched.h>
#include <time.h>

#include <cstdint>

namespace pyshmem {

// Called from slow wait paths every ~20 ms; throws to abandon the wait (the binding
// raises the pending Python exception, e.g. KeyboardInterrupt). May be null.
using interrupt_hook_t = void (*)();
extern interrupt_hook_t g_interrupt_hook;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

class Backoff {
 public:
  Backoff(long long spin_iters, long long sleep_max_us)
      : spin_iters_(spin_iters), sleep_max_ns_(sleep_max_us * 1000) {}

  // One unit of waiting; call between polls of the condition.
  void pause() {
    ++iter_;
    if (iter_ <= spin_iters_) {
      cpu_relax();
      return;
    }
    if (iter_ <= spin_iters_ + kYields) {
      sched_yield();
      return;
    }
    sleep_ns_ = sleep_ns_ == 0 ? 1000 : sleep_ns_ * 2;
    if (sleep_ns_ > sleep_max_ns_) sleep_ns_ = sleep_max_ns_ > 0 ? sleep_max_ns_ : 1000;
    timespec ts{0, static_cast<long>(sleep_ns_)};
    nanosleep(&ts, nullptr);
    slept_ns_ += sleep_ns_ + 2000;  // account for syscall and wake-up overhead
    if (slept_ns_ >= kInterruptPeriodNs) {
      slept_ns_ = 0;
      if (g_interrupt_hook) g_interrupt_hook();
    }
  }

 private:
  static constexpr long long kYields = 64;
  static constexpr long long kInterruptPeriodNs = 20 * 1000 * 1000;
  long long spin_iters_, sleep_max_ns_;
  long long iter_ = 0, sleep_ns_ = 0, slept_ns_ = 0;
};

}  // namespace pyshmem
