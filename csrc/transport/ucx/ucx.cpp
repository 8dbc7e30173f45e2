// transport/ucx/ucx.cpp: PEs on other nodes through UCX's UCP RMA and AMO.
//
// One UCP context and worker per PE (thread mode MULTI: the host API and the proxy
// thread both use it). At init this PE's whole heap segment is registered
// (ucp_mem_map), and with the cuda backend its GPU heap segment too; the worker
// address and, per heap, the packed rkey and segment base of every PE are exchanged
// through the bootstrap; an endpoint and an unpacked rkey are kept per remote
// PE, and every endpoint is connected before init returns (connect_all), so no first
// operation pays for UCX's connection setup and none is set up while user code runs.
// Symmetric addresses translate as on the load/store path: offset in my segment =
// offset in theirs.
//
// Completion: gets and fetching atomics wait for their UCP request; puts over 4 KiB
// wait for theirs (the source may be reused on return). Smaller puts (out of a copy of
// the source), put_nbi and non-fetching atomics return once issued: their requests are
// kept (keep_pending) and completed by quiet, which flushes every endpoint written
// since the last quiet and then waits for them. fence = ucp_worker_fence. Atomics are
// in ucx_amo.cpp. No operation waits longer than PYSHMEM_TRANSPORT_TIMEOUT: a link
// that goes down leaves UCX requests pending forever (TCP keeps retrying), so the wait
// ends with an error that names the peer instead.
// Transports such as tcp apply remote writes when the *target* progresses its worker,
// so every pyshmem wait calls the progress hook (core/backoff.h), and the proxy thread,
// which runs whenever a peer is remote, progresses while idle and sleeps on the
// worker's event fd (ucx_wakeup_arm). That progress polls every transport interface
// (adaptive progress off, see ucx_setup): UCX's wakeups that would turn polling on do
// not cross network namespaces.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <time.h>

#include "bootstrap/bootstrap.h"
#include "core/backoff.h"
#include "core/env.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "core/trace.h"
#include "transport/transport.h"
#include "transport/ucx/ucp_lib.h"
#include "transport/ucx/ucx_state.h"

namespace pyshmem {
namespace ucx_impl {

Ucx g;

const ucx::Ucp& lib() { return *g.u; }

[[noreturn]] void ucx_fail(const char* what, ucs_status_t st, int pe) {
  const bool lost = st == UCS_ERR_UNREACHABLE || st == UCS_ERR_ENDPOINT_TIMEOUT || st == UCS_ERR_CONNECTION_RESET;
  std::string msg = std::string(what) + " failed: " + lib().ucs_status_string(st);
  if (pe >= 0) msg += " (toward PE " + std::to_string(pe) + ")";
  msg += lost ? "; that PE is unreachable: its process stopped, or the network between the nodes is down"
              : "; UCX_LOG_LEVEL=info shows why, and python -m pyshmem info the UCX library and transports in use "
                "(UCX_TLS selects them)";
  fail_inner(lost ? PYSHMEM_ERR_BOOTSTRAP : PYSHMEM_ERR_SYSTEM, "UCX", msg);
}

void check(const char* what, ucs_status_t st, int pe) {
  if (st != UCS_OK) ucx_fail(what, st, pe);
}

unsigned progress_hook() {
  if (!g.worker) return 0;
  note_own_progress();
  const unsigned n = lib().ucp_worker_progress(g.worker);
  if (n) note_own_productive();
  if (n && g_trace_on) {  // when an arrival was applied, for a round trip's phases
    const int64_t now = monotonic_ns();
    trace_record(kTraceProgress, "ucx progress", -1, n, now, now);
  }
  return n;
}

// A wait's sleep (core/backoff.h g_sleep_hook): on the worker's event fd, armed first,
// so that incoming data ends it; at once when the worker has events pending.
bool sleep_hook(long ns) {
  if (g.efd < 0) return false;
  const ucs_status_t st = lib().ucp_worker_arm(g.worker);
  if (st == UCS_ERR_BUSY) return true;  // progress them first
  if (st != UCS_OK) return false;
  pollfd p{g.efd, POLLIN, 0};
  const timespec ts{0, ns};
  ppoll(&p, 1, &ts, nullptr);
  return true;
}

Clock::time_point deadline_from_now() {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(g.timeout_s));
}

[[noreturn]] static void timed_out(const char* what, int pe) {
  const std::string who = pe >= 0 ? "PE " + std::to_string(pe) : std::string("a PE on another node");
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", g.timeout_s);
  fail_inner(PYSHMEM_ERR_TIMEOUT, "UCX",
             std::string(what) + " toward " + who +
                  " did not complete within PYSHMEM_TRANSPORT_TIMEOUT=" + secs + " s: " + who +
                  " is unreachable (network link down, or its process stopped). Check the link; raise "
                  "PYSHMEM_TRANSPORT_TIMEOUT only for transfers that are legitimately that slow");
}

void wait(const char* what, ucs_status_ptr_t req, int pe, Clock::time_point deadline) {
  if (req == nullptr) return;  // completed in place
  if (UCS_PTR_IS_ERR(req)) ucx_fail(what, UCS_PTR_STATUS(req), pe);
  ucs_status_t st;
  // Backs off like every wait (PEs may outnumber cores, and the peer must run to answer
  // a get), progressing the worker each step. Uninterruptible: the proxy thread waits
  // here too, and it must not run Python's signal check.
  Backoff b(state().config.SPIN_ITERS, state().config.WAIT_SLEEP_MAX_US);
  b.uninterruptible().without_progress();  // progressed once per step, here
  unsigned polls = 0;
  while ((st = lib().ucp_request_check_status(req)) == UCS_INPROGRESS) {
    const bool progressed = progress_hook() > 0;
    if ((++polls & 255) == 0 && Clock::now() > deadline) timed_out(what, pe);
    b.pause(progressed);
  }
  lib().ucp_request_free(req);
  check(what, st, pe);
}

void wait(const char* what, ucs_status_ptr_t req, int pe) { wait(what, req, pe, deadline_from_now()); }

void mark_dirty(int pe) {
  note_transport_op();
  g.dirty_pe[pe].store(1, std::memory_order_relaxed);
  g.dirty.store(true, std::memory_order_release);
}

// Where symmetric `sym` is on PE pe (the GPU heap, if it holds it; else the host heap).
Remote remote(const void* sym, int pe) {
  const uint64_t a = reinterpret_cast<uint64_t>(sym);
  for (size_t i = g.seg.size(); i-- > 1;) {  // the GPU heap, if any; else the host heap
    const Ucx::Segment& sg = g.seg[i];
    if (a >= sg.my_base && a - sg.my_base < sg.size) return {sg.base[pe] + (a - sg.my_base), sg.rkey[pe]};
  }
  return {g.seg[0].base[pe] + (a - g.seg[0].my_base), g.seg[0].rkey[pe]};
}

// When the kept requests reach g.reap_at, the ones already complete are freed first, so
// a loop of non-blocking operations without a quiet holds only those still in flight;
// the threshold then moves to twice what is left (at least kReapAt), so requests that
// stay in flight are not scanned again at every operation.
namespace {
// Frees the kept requests that completed. pending_mu held.
void reap_completed() {
  auto done = [](const Ucx::Pending& p) {
    const ucs_status_t st = lib().ucp_request_check_status(p.req);
    if (st == UCS_INPROGRESS) return false;
    lib().ucp_request_free(p.req);
    if (st != UCS_OK) g.failed_pending = st;  // reported by the next quiet
    g.pending_bytes -= p.bytes;
    return true;
  };
  g.pending.erase(std::remove_if(g.pending.begin(), g.pending.end(), done), g.pending.end());
}
}  // namespace

void keep_pending(const char* what, ucs_status_ptr_t req, int pe, std::unique_ptr<char[]> buf, size_t bytes) {
  if (req == nullptr) return;  // completed in place: UCX is done with `buf`
  if (UCS_PTR_IS_ERR(req)) ucx_fail(what, UCS_PTR_STATUS(req), pe);
  {
    std::lock_guard<std::mutex> lock(g.pending_mu);
    if (g.pending.size() >= g.reap_at) {
      reap_completed();
      g.reap_at = std::max(kReapAt, 2 * g.pending.size());
    }
    g.pending.push_back({req, pe, std::move(buf), bytes});
    g.pending_bytes += bytes;
    if (g.pending_bytes <= kInFlightBytes) return;
  }
  // Too much queued: progress (outside the lock, so other threads keep issuing) until
  // at most half of it is still in flight.
  const Clock::time_point deadline = deadline_from_now();
  for (unsigned polls = 1;; ++polls) {
    if (progress_hook() == 0) cpu_relax();
    std::lock_guard<std::mutex> lock(g.pending_mu);
    reap_completed();
    if (g.pending_bytes <= kInFlightBytes / 2) return;
    if ((polls & 255) == 0 && Clock::now() > deadline) timed_out(what, pe);
  }
}

}  // namespace ucx_impl

namespace {
using namespace ucx_impl;

uint64_t read_u64(const char* c) {
  uint64_t v = 0;
  std::memcpy(&v, c, 8);
  return v;
}

// The bootstrap barrier, while a helper thread progresses the worker: a peer may still
// need this PE's answers to its connection messages to finish connecting.
void barrier_progressing(State& s) {
  std::atomic<bool> done{false};
  std::thread helper([&done] {
    while (!done.load(std::memory_order_acquire)) {
      lib().ucp_worker_progress(g.worker);
      timespec ts{0, 20000};
      nanosleep(&ts, nullptr);
    }
  });
  try {
    s.boot->barrier();
  } catch (...) {
    done.store(true, std::memory_order_release);
    helper.join();
    throw;
  }
  done.store(true, std::memory_order_release);
  helper.join();
}

// Creates the endpoints to `peers` and waits until UCX has connected them (an endpoint
// flush completes once its wireup has).
void connect_peers(State& s, const std::vector<std::string>& cards, const std::vector<int>& peers) {
  std::vector<std::pair<ucs_status_ptr_t, int>> flushes;
  for (int p : peers) {
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = reinterpret_cast<const ucp_address_t*>(cards[p].data() + 8);
    // err_mode NONE: shared-memory transports (and AMO over them) support no other mode
    check("ucp_ep_create", lib().ucp_ep_create(g.worker, &ep, &g.ep[p]), p);
    ucp_request_param_t prm{};
    flushes.emplace_back(lib().ucp_ep_flush_nbx(g.ep[p], &prm), p);
  }
  const Clock::time_point deadline = deadline_from_now();
  for (auto& f : flushes) wait("connecting (UCX wireup)", f.first, f.second, deadline);
}

// Connects every endpoint at init, in two ordered rounds, so that no connection is
// set up concurrently from both of its ends and none is still being set up once user
// code runs. First each PE connects to the PEs above it; the endpoints that these
// connections create on the PEs above are the ones those PEs' own ucp_ep_create then
// returns (UCX matches them by the peer's worker), so the second round (toward the
// PEs below) only adopts what exists. Both ends connecting at once, or a PE dying
// while a peer's connection to it is half set up, is where UCX's wireup has failed
// its own assertions (seen with UCX 1.22 across network namespaces).
void connect_all(State& s, const std::vector<std::string>& cards) {
  std::vector<int> above, below;
  for (int p = 0; p < s.npes; ++p)
    if (s.route[p] == &kUcxTransport) (p > s.pe ? above : below).push_back(p);
  connect_peers(s, cards, above);
  barrier_progressing(s);
  connect_peers(s, cards, below);
  barrier_progressing(s);
}

// ---- the table's operations ----

bool ucx_available(std::string* why) {
  const Config c = state().initialized ? state().config : config_from_env();
  g.u = ucx::ucp_load(c.UCX_LIBRARY, c.UCX_PREFER_SYSTEM, why);
  if (g.u && why) *why = std::string("UCX ") + lib().ucp_get_version_string();  // for `pyshmem info`
  return g.u != nullptr;
}

bool ucx_can_reach(const State& s, int pe) { return s.node_of_pe[pe] != s.node_of_pe[s.pe]; }

void ucx_setup(State& s) {
  ucp_config_t* cfg = nullptr;
  check("ucp_config_read", lib().ucp_config_read(nullptr, nullptr, &cfg));
  // Poll every transport interface on each progress call. With UCX's default adaptive
  // progress, an interface with no connected endpoint of ours yet is not polled: its
  // first incoming message is meant to wake it through the transport's event. The
  // shared-memory transports (sysv, posix) raise that event by a datagram to the
  // receiver's abstract Unix socket, and ignore a failed send. Abstract sockets belong
  // to a network namespace, so between containers or namespaces of one machine (which
  // UCX sees as one node: same host name, PID namespace and /dev/shm) the wakeup is
  // lost, and a PE whose first UCX operation comes after a wait for a remote arrival
  // (the first PE of each host in a barrier: its first round goes to a local PE) never
  // reads the arrival or the wireup before it: the whole job hangs. pyshmem never sleeps
  // on UCX events, it polls (core/backoff.h), so polling every interface is what it
  // relies on anyway.
  const ucs_status_t mod = lib().ucp_config_modify(cfg, "ADAPTIVE_PROGRESS", "n");
  if (mod != UCS_OK) {
    lib().ucp_config_release(cfg);
    ucx_fail("ucp_config_modify(ADAPTIVE_PROGRESS=n)", mod);
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  // WAKEUP: the idle proxy thread sleeps on the worker's event fd (ucx_wakeup_arm).
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 1;
  const ucs_status_t st = lib().ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, cfg, &g.ctx);
  lib().ucp_config_release(cfg);
  check("ucp_init", st);
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_MULTI;
  check("ucp_worker_create", lib().ucp_worker_create(g.ctx, &wp, &g.worker));
  g.efd = -1;
  if (lib().ucp_worker_get_efd(g.worker, &g.efd) != UCS_OK) {
    g.efd = -1;  // the proxy then polls on a timer, as without wakeups
    log_debug("ucx: the worker has no event fd; the idle proxy polls on a timer");
  }

  g.seg.resize(s.gpu_size ? 2 : 1);
  g.seg[0].my_base = reinterpret_cast<uint64_t>(s.heap.my_base);
  g.seg[0].size = s.heap.size;
  if (s.gpu_size) {
    g.seg[1].my_base = s.gpu_base;  // UCX detects it as GPU memory (host memory with the test driver)
    g.seg[1].size = s.gpu_size;
  }
  // My card: [u64 address length][worker address], then per heap [u64 base][u64 rkey length][rkey].
  ucp_address_t* addr = nullptr;
  size_t addr_len = 0;
  check("ucp_worker_get_address", lib().ucp_worker_get_address(g.worker, &addr, &addr_len));
  std::string card;
  auto put_u64 = [&card](uint64_t v) { card.append(reinterpret_cast<const char*>(&v), 8); };
  put_u64(addr_len);
  card.append(reinterpret_cast<const char*>(addr), addr_len);
  lib().ucp_worker_release_address(g.worker, addr);
  for (Ucx::Segment& sg : g.seg) {
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = reinterpret_cast<void*>(sg.my_base);
    mp.length = sg.size;
    check(&sg == &g.seg[0] ? "ucp_mem_map (registering the symmetric heap)"
                           : "ucp_mem_map (registering the GPU symmetric heap; this UCX may lack CUDA support)",
          lib().ucp_mem_map(g.ctx, &mp, &sg.memh));
    if (&sg != &g.seg[0]) {
      ucp_mem_attr_t ma{};
      ma.field_mask = UCP_MEM_ATTR_FIELD_MEM_TYPE;
      g.gpu_seg_is_cuda = lib().ucp_mem_query(sg.memh, &ma) == UCS_OK && ma.mem_type == UCS_MEMORY_TYPE_CUDA;
    }
    void* rkey_buf = nullptr;
    size_t rkey_len = 0;
    check("ucp_rkey_pack", lib().ucp_rkey_pack(g.ctx, sg.memh, &rkey_buf, &rkey_len));
    put_u64(sg.my_base);
    put_u64(rkey_len);
    card.append(static_cast<const char*>(rkey_buf), rkey_len);
    lib().ucp_rkey_buffer_release(rkey_buf);
    sg.rkey.assign(s.npes, nullptr);
    sg.base.assign(s.npes, 0);
  }

  const std::vector<std::string> cards = s.boot->allgather(card);
  g.timeout_s = s.config.TRANSPORT_TIMEOUT;
  if (!(g.timeout_s > 0))
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init", "PYSHMEM_TRANSPORT_TIMEOUT must be a positive number of seconds");
  g.ep.assign(s.npes, nullptr);
  connect_all(s, cards);
  for (int p = 0; p < s.npes; ++p) {
    if (!g.ep[p]) continue;
    const char* c = cards[p].data();
    c += 8 + read_u64(c);  // the worker address, used by connect_all
    for (Ucx::Segment& sg : g.seg) {
      sg.base[p] = read_u64(c);
      const uint64_t rlen = read_u64(c + 8);
      c += 16;
      check("ucp_ep_rkey_unpack", lib().ucp_ep_rkey_unpack(g.ep[p], c, &sg.rkey[p]), p);
      c += rlen;
    }
  }
  g.dirty_pe.reset(new std::atomic<uint8_t>[static_cast<size_t>(std::max(s.npes, 1))]());
  g.gpu_amo_problem.assign(s.npes, "?");
  g_progress_hook = progress_hook;
  g_sleep_hook = sleep_hook;
  log_debug("ucx: %s, heap registered, endpoints to %d PE(s)", lib().ucp_get_version_string(),
            static_cast<int>(std::count_if(g.ep.begin(), g.ep.end(), [](ucp_ep_h e) { return e != nullptr; })));
}

void ucx_quiet(State&);

void ucx_teardown(State& s) {
  if (!g.worker) return;
  try {
    ucx_quiet(s);  // nothing of ours left in flight
  } catch (const Error&) {
  }
  g_progress_hook = nullptr;
  g_sleep_hook = nullptr;
  for (Ucx::Segment& sg : g.seg)
    for (ucp_rkey_h k : sg.rkey)
      if (k) lib().ucp_rkey_destroy(k);
  for (size_t p = 0; p < g.ep.size(); ++p) {
    if (!g.ep[p]) continue;
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_EP_CLOSE_FLAG_FORCE;  // peers may be gone already; never wait on them
    ucs_status_ptr_t r = lib().ucp_ep_close_nbx(g.ep[p], &prm);
    if (r && !UCS_PTR_IS_ERR(r)) {
      while (lib().ucp_request_check_status(r) == UCS_INPROGRESS) lib().ucp_worker_progress(g.worker);
      lib().ucp_request_free(r);
    }
  }
  for (Ucx::Segment& sg : g.seg)
    if (sg.memh) lib().ucp_mem_unmap(g.ctx, sg.memh);
  lib().ucp_worker_destroy(g.worker);
  lib().ucp_cleanup(g.ctx);
  const ucx::Ucp* u = g.u;
  g.ctx = nullptr;
  g.worker = nullptr;
  g.efd = -1;
  g.ep.clear();
  g.seg.clear();
  g.dirty = false;
  g.dirty_pe.reset();
  g.pending.clear();
  g.pending_bytes = 0;
  g.reap_at = kReapAt;
  g.u = u;
}

// A blocking put returns once the source may be reused. UCX over tcp completes even an
// 8-byte put's request only after the target acknowledged it (a round trip that also
// waits for the target to progress), so puts up to kBouncePut bytes go out of a copy
// that lives until the next quiet, and return at once.
constexpr size_t kBouncePut = 4096;
void ucx_put(State& s, void* dest, const void* src, size_t n, int pe) {
  mark_dirty(pe);
  ucp_request_param_t prm{};
  const Remote r = remote(dest, pe);
  if (n > kBouncePut) {
    wait("put", lib().ucp_put_nbx(g.ep[pe], src, n, r.addr, r.rkey, &prm), pe);
    return;
  }
  std::unique_ptr<char[]> copy(new char[n ? n : 1]);
  std::memcpy(copy.get(), src, n);
  ucs_status_ptr_t req = lib().ucp_put_nbx(g.ep[pe], copy.get(), n, r.addr, r.rkey, &prm);  // before copy moves
  keep_pending("put", req, pe, std::move(copy), n);
}

// Returns without waiting: the request (if UCX did not complete it in place) is kept
// and completed by the next quiet, which is when the source may be reused.
void ucx_put_nbi(State& s, void* dest, const void* src, size_t n, int pe) {
  mark_dirty(pe);
  ucp_request_param_t prm{};
  const Remote r = remote(dest, pe);
  keep_pending("put_nbi", lib().ucp_put_nbx(g.ep[pe], src, n, r.addr, r.rkey, &prm), pe, nullptr, n);
}

void ucx_get(State& s, void* dest, const void* src, size_t n, int pe) {
  note_transport_op();
  ucp_request_param_t prm{};
  const Remote r = remote(src, pe);
  wait("get", lib().ucp_get_nbx(g.ep[pe], dest, n, r.addr, r.rkey, &prm), pe);
}

void ucx_fence(State&) {
  if (g.worker) check("ucp_worker_fence", lib().ucp_worker_fence(g.worker));
}

void ucx_quiet(State& s) {
  // A get or fetching atomic is complete when its request is; only puts and
  // non-fetching atomics need the flush (exchange: a put racing with this quiet on
  // another thread keeps the flag set for the next quiet).
  if (!g.worker || !g.dirty.exchange(false, std::memory_order_acquire)) return;
  std::vector<Ucx::Pending> pending;
  ucs_status_t failed = UCS_OK;
  {
    std::lock_guard<std::mutex> lock(g.pending_mu);
    pending.swap(g.pending);
    g.pending_bytes = 0;
    std::swap(failed, g.failed_pending);
  }
  // One flush per written endpoint, all started before any is waited for, so they
  // overlap like a worker flush would; one deadline for the whole quiet.
  std::vector<std::pair<ucs_status_ptr_t, int>> flushes;

  for (int p = 0; p < s.npes; ++p) {
    if (!g.ep[p] || !g.dirty_pe[p].exchange(0, std::memory_order_relaxed)) continue;
    ucp_request_param_t prm{};
    flushes.emplace_back(lib().ucp_ep_flush_nbx(g.ep[p], &prm), p);
  }
  const Clock::time_point deadline = deadline_from_now();
  for (auto& f : flushes) wait("quiet (flush)", f.first, f.second, deadline);
  for (auto& r : pending) wait("put or atomic set", r.req, r.pe, deadline);  // done by the flush; frees
  check("a put or atomic set (freed before this quiet)", failed);
}

void ucx_progress(State&) { progress_hook(); }

int ucx_wakeup_fd(State&) { return g.worker ? g.efd : -1; }

// Events the worker reports through its fd: incoming tcp data, a shared-memory peer's
// signal. Peers in another network namespace of the same machine reach this PE's
// shared-memory transports without a signal (UCX's datagram to an abstract socket
// does not cross namespaces), so the proxy's doze stays bounded by
// PROXY_IDLE_SLEEP_MAX_US whatever this says.
bool ucx_wakeup_arm(State&) { return g.worker && g.efd >= 0 && lib().ucp_worker_arm(g.worker) == UCS_OK; }

}  // namespace

const Transport kUcxTransport = {"ucx",        kCapRma | kCapAmo, ucx_available, ucx_can_reach, ucx_put,
                                 ucx_get,      ucx_amo,           ucx_fence,     ucx_quiet,     ucx_setup,
                                 ucx_put_nbi,  ucx_progress,      ucx_teardown,  ucx_gpu_atomics_check,
                                 ucx_wakeup_fd, ucx_wakeup_arm};

}  // namespace pyshmem
