// host/init.cpp: bringing a PE up and down.
#include <sched.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "core/backoff.h"
#include "core/trace.h"
#include "host/clock_offset.h"
#include "host/hang_report.h"
#include "cuda/gpu_heap.h"
#include "heap/allocator.h"
#include "heap/heap.h"
#include "host/host.h"
#include "order/order_check.h"
#include "proxy/proxy.h"
#include "pyshmem/version.h"
#include "team/team.h"
#include "transport/transport.h"

namespace pyshmem {

void device_state_fill(const State& s);  // host/device_state.cpp

namespace {

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(&out[got], n - got, 0);
    if (r <= 0) fail_errno("pyshmem.init", "getrandom failed");
    got += static_cast<size_t>(r);
  }
  return out;
}

std::string to_hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

// A node is a host *and* a network namespace: PEs in different namespaces of one
// machine are treated as different nodes (how the multi-host tests emulate hosts).
std::string local_node_id() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  char ns[128] = {};
  ssize_t n = ::readlink("/proc/self/ns/net", ns, sizeof ns - 1);
  return std::string(host) + "/" + (n > 0 ? std::string(ns, static_cast<size_t>(n)) : "");
}

constexpr int kOversubscribedSpins = 100;

void find_nodes(State& s) {
  s.node_id = local_node_id();
  if (s.config.REMOTE_ONLY) s.node_id += "#pe" + std::to_string(s.pe);  // every PE a node of its own
  auto ids = s.boot->allgather(s.node_id);
  std::vector<std::string> uniq;
  s.node_of_pe.assign(s.npes, 0);
  for (int p = 0; p < s.npes; ++p) {
    size_t k = 0;
    while (k < uniq.size() && uniq[k] != ids[p]) ++k;
    if (k == uniq.size()) uniq.push_back(ids[p]);
    s.node_of_pe[p] = static_cast<int>(k);
  }
  s.local_pes.clear();
  for (int p = 0; p < s.npes; ++p)
    if (s.node_of_pe[p] == s.node_of_pe[s.pe]) s.local_pes.push_back(p);
  // More PEs on this host (REMOTE_ONLY's per-PE "nodes" included) than CPUs this process
  // may run on: a waiting PE that spins keeps the PE it waits for off the CPU, so waits
  // yield after a short spin unless PYSHMEM_SPIN_ITERS says otherwise (measured with
  // barrier_all, 4 PEs on 2 cores: 93 us with 2000 spins, 7 us with 100).
  const std::string host = local_node_id();
  int on_host = 0;
  for (const auto& id : ids) on_host += id.compare(0, host.size(), host) == 0 ? 1 : 0;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int ncpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  s.cpus_oversubscribed = on_host > ncpu;
  g_cpu_per_pe = !s.cpus_oversubscribed;
  if (on_host > ncpu && !std::getenv("PYSHMEM_SPIN_ITERS") && s.config.SPIN_ITERS > kOversubscribedSpins) {
    s.config.SPIN_ITERS = kOversubscribedSpins;
    log_debug("init: %d PEs on this host, %d CPUs: waits spin %d times before yielding", on_host, ncpu,
              kOversubscribedSpins);
  }
}

// Undoes a failed init so that the process holds no segment or socket of the job.
void abandon_init(State& s) {
  order_check_stop(s);
  heap_destroy(s);
  s.boot.reset();
  s.pe = -1;
  s.npes = 0;
}

}  // namespace

void init() {
  State& s = state();
  if (s.initialized) return;
  if (s.finalized)
    fail(PYSHMEM_ERR_NOT_INIT, "pyshmem.init", "the runtime was finalized in this process and cannot be initialised again");
  try {
#if defined(__linux__)
    // Waits sleep in steps of 1 to PYSHMEM_WAIT_SLEEP_MAX_US us (core/backoff.h; device
    // waits of CPU kernels 20 us): Linux's default timer slack of 50 us would add more
    // than the step to each sleep, and to every round trip that outlasts the spin. This
    // thread's slack, which the proxy thread and CPU kernels' threads inherit, is 1 us.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
    s.config = config_from_env();
    if (s.config.BACKEND != "auto" && s.config.BACKEND != "cpu" && s.config.BACKEND != "cuda")
      fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init", "PYSHMEM_BACKEND='" + s.config.BACKEND + "' must be auto, cpu or cuda");
    s.boot = bootstrap_create(s.config);
    s.pe = s.boot->rank();
    s.npes = s.boot->size();
    // PE 0 draws the job's private token: it names the local sockets and authenticates
    // the fd exchange. It travels only over the authenticated bootstrap.
    std::string token = s.boot->bcast(s.pe == 0 ? random_bytes(40) : std::string(), 0);
    s.job_id = to_hex(token.substr(32, 8));
    token.resize(32);
    find_nodes(s);
    s.team_pool_bytes = team_pool_bytes(s);
    s.team_table_bytes = team_table_bytes(s);
    heap_create(s);
    heap_attach_peers(s, token);
    transport_route_all(s);
    gpu_heap_create(s, token);  // collective; a no-op for the cpu backend
    transport_setup_all(s);     // collective (UCX: addresses and keys of both heaps exchanged)
    s.alloc = std::make_unique<Allocator>(kSysAreaBytes, s.heap.size - s.team_pool_bytes);
    // The GPU heap keeps a copy of the team table for kernels (cuda/gpu_heap.h).
    static const TeamMirror gpu_team_mirror{gpu_teams_setup, gpu_team_update, gpu_team_slot_clear};
    teams_init(s, gpu_active() ? &gpu_team_mirror : nullptr);
    order_check_start(s);  // collective: PE 0's seed
    s.boot->barrier();  // every PE has mapped every local heap before anyone uses one
    s.initialized = true;
    g_global_exit_word = &s.heap.sys(s.pe)->global_exit;
    hang_init(s);
    trace_init(s);
    trace_clock_estimate(s);  // collective: one allgather, and round trips when every PE traces
    static const RingMemory pinned{gpu_pinned_alloc, gpu_pinned_free};  // for GPU kernels' ring
    proxy_start(s, &pinned);
    gpu_state_set_proxy(proxy_fifo(s, /*gpu=*/true));
    device_state_fill(s);
    log_debug("init: %d PEs, %zu local, heap %zu bytes", s.npes, s.local_pes.size(), s.heap.size);
  } catch (const Error& e) {
    // Errors of the layers below (bootstrap, transports, environment) get init's name
    // and this PE's number now, while the PE is still known.
    const std::string msg = error_message(e, "pyshmem.init");
    abandon_init(s);
    throw Error(e.status(), msg, true);
  } catch (...) {
    abandon_init(s);
    throw;
  }
}

void finalize() {
  State& s = state();
  if (!s.initialized) return;
  gpu_state_set_proxy(nullptr);
  proxy_stop(s);            // requests device code queued are complete before the barrier
  order_drain(s);  // held operations are complete before the barrier, test hook or not
  barrier_all("pyshmem.finalize");  // no PE may still be accessing a heap we are about to unmap
  order_check_stop(s);
  trace_flush();
  gpu_heap_retire(s);
  transport_teardown_all(s);
  s.initialized = false;
  s.finalized = true;
  g_global_exit_word = nullptr;
  heap_retire(s);
  teams_finalize(s);
  s.alloc.reset();
  s.boot.reset();
}

bool is_initialized() { return state().initialized; }
bool is_finalized() { return state().finalized; }

int my_pe() {
  require_init("pyshmem.my_pe");
  return state().pe;
}

int n_pes() {
  require_init("pyshmem.n_pes");
  return state().npes;
}

void global_exit(int status) {
  State& s = state();
  if (s.initialized) {
    // Tell every PE: those waiting in pyshmem notice within their next backoff step
    // and exit with the same status, so the job ends even for status 0 (the launcher
    // only ends the other PEs itself when one fails).
    const uint64_t word = static_cast<uint64_t>(static_cast<uint8_t>(status)) + 1;
    for (int p = 0; p < s.npes; ++p) {
      if (p == s.pe || !s.route[p]) continue;
      uint64_t* target = &s.heap.sys(s.pe)->global_exit;  // symmetric: same offset on every PE
      s.route[p]->amo(s, AmoArgs{PYSHMEM_AMO_SET, PYSHMEM_UINT64, target, &word, nullptr, nullptr, p});
    }
    // A set to a remote PE may still be queued in its transport: out before this process ends.
    for (const Transport* const* t = kTransports; *t; ++t) {
      if (!(*t)->quiet) continue;
      try {
        (*t)->quiet(s);
      } catch (const Error&) {  // a PE that is gone already needs no telling
      }
    }
  }
  global_exit_now(status);
}

std::string describe() {
  const State& s = state();
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s %d.%d (OpenSHMEM %d.%d)\n", PYSHMEM_VENDOR_STRING, PYSHMEM_VERSION_MAJOR,
                PYSHMEM_VERSION_MINOR, PYSHMEM_MAJOR_VERSION, PYSHMEM_MINOR_VERSION);
  std::string out = buf;
  out += "backend: " + gpu_describe() + "\n";
  if (s.initialized) {
    out += "PE " + std::to_string(s.pe) + " of " + std::to_string(s.npes) + ", " +
           std::to_string(s.local_pes.size()) + " on this node (" + s.node_id + ")\n";
    out += "symmetric heap: " + std::to_string(s.alloc->capacity()) + " bytes per PE, " +
           std::to_string(s.alloc->bytes_free()) + " free\n";
  }
  out += "transports:\n" + transport_describe();
  return out;
}

}  // namespace pyshmem
