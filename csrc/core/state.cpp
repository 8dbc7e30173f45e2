#include "core/state.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>

#include "core/backoff.h"
#include "core/error.h"
#include "core/trace.h"

namespace pyshmem {

interrupt_hook_t g_interrupt_hook = nullptr;
progress_hook_t g_progress_hook = nullptr;
progress_hook_t g_order_hook = nullptr;
sleep_hook_t g_sleep_hook = nullptr;
std::atomic<uint64_t> g_transport_ops{0};
std::atomic<uint64_t> g_own_progress{0};
std::atomic<uint64_t> g_own_productive{0};
std::atomic<int> g_own_sleepers{0};
bool g_cpu_per_pe = false;
thread_local bool t_proxy_thread = false;
volatile std::uint64_t* g_global_exit_word = nullptr;

void global_exit_now(int status) {
  trace_flush();
  std::fflush(stdout);
  std::fflush(stderr);
  if (status == kHangExitStatus) {
    // PYSHMEM_TIMEOUT stopped the job: show where this PE's Python code is. pyshmem
    // registers faulthandler on SIGUSR1 under shmemrun; never raise it without a handler.
    struct sigaction old {};
    if (sigaction(SIGUSR1, nullptr, &old) == 0 && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
      raise(SIGUSR1);
      std::fflush(stderr);
    }
  }
  std::_Exit(status);
}

State::State() = default;
State::~State() = default;

State& state() {
  // Leaked on purpose: it must outlive static destructors that may still call into the
  // runtime (e.g. Python's atexit finalize running late in interpreter shutdown).
  static State* s = new State();
  return *s;
}

void require_init(const char* call) {
  const State& s = state();
  if (s.initialized) return;
  if (s.finalized)
    fail(PYSHMEM_ERR_NOT_INIT, call, "called after finalize(); the runtime cannot be used again in this process");
  fail(PYSHMEM_ERR_NOT_INIT, call, "called before init(); call pyshmem.init() first (the Python API does this on first use)");
}

void require_pe(const char* call, int pe) {
  const State& s = state();
  if (pe < 0 || pe >= s.npes)
    fail(PYSHMEM_ERR_PE_RANGE, call,
         "PE " + std::to_string(pe) + " is out of range; valid PEs are 0.." + std::to_string(s.npes - 1) +
             " (n_pes() == " + std::to_string(s.npes) + ")");
}

}  // namespace pyshmem
