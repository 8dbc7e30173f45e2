// proxy/proxy.cpp: the proxy thread: drains this PE's FIFO and executes each request
// through the transport table.
#include "proxy/proxy.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/backoff.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "cuda/gpu_heap.h"
#include "cuda/gpu_watch.h"
#include "proxy/fifo.h"
#include "transport/transport.h"
#include "core/trace.h"
#include "order/order_check.h"

namespace pyshmem {
namespace {

// Idle polls after a request, of a proxy that every source of work can wake (see Proxy::run).
constexpr long kShortSpin = 64;

const char* kind_name(int kind) {
  switch (kind) {
    case PYSHMEM_REQ_PUT: return "put";
    case PYSHMEM_REQ_GET: return "get";
    case PYSHMEM_REQ_P: return "p";
    case PYSHMEM_REQ_PUT_SIGNAL: return "put_signal";
    case PYSHMEM_REQ_AMO: return "atomic";
    case PYSHMEM_REQ_FENCE: return "fence";
    case PYSHMEM_REQ_QUIET: return "quiet";
    case PYSHMEM_REQ_G: return "g";
    default: return "unknown";
  }
}

// One ring and the heap its requests refer to: the host heap (CPU producers), or the
// GPU heap (the ring in pinned memory that GPU kernels push to).
struct Lane {
  Lane(uint32_t slots, uint64_t timeout_ns, const RingMemory* memory, char* base, size_t size, bool gpu)
      : ring(slots, timeout_ns, memory), base(base), size(size), gpu(gpu) {}
  FifoRing ring;
  char* base;   // my segment of that heap
  size_t size;  // bytes per segment
  bool gpu;
};

class Proxy {
 public:
  Proxy(State& s, uint32_t slots, uint64_t timeout_ns, const RingMemory* gpu_memory) : s_(s) {
    lanes_.push_back(std::make_unique<Lane>(slots, timeout_ns, nullptr, s.heap.my_base, s.heap.size, false));
    if (gpu_memory) {
      lanes_.push_back(std::make_unique<Lane>(slots, timeout_ns, gpu_memory, reinterpret_cast<char*>(s.gpu_base),
                                              s.gpu_size, true));
      gpu_watch_start();  // launches from now on are watched (see run)
    }
    for (const Transport* t : s.route)
      if (t && std::find(transports_.begin(), transports_.end(), t) == transports_.end()) transports_.push_back(t);
    thread_ = std::thread([this] { run(); });
  }

  pyshmem_proxy_fifo* fifo(bool gpu = false) {
    for (auto& l : lanes_)
      if (l->gpu == gpu) return l->ring.fifo();
    return nullptr;
  }
  std::vector<pyshmem_proxy_fifo*> fifos() {
    std::vector<pyshmem_proxy_fifo*> out;
    for (auto& l : lanes_) out.push_back(l->ring.fifo());
    return out;
  }

  // Returns false when requests were still pending at the deadline.
  bool stop(std::chrono::steady_clock::time_point deadline) {
    deadline_ = deadline;
    stop_.store(true, std::memory_order_release);
    lanes_[0]->ring.ring_doorbell();
    thread_.join();
    if (lanes_.size() > 1) gpu_watch_stop();
    return drained_;
  }

 private:
  void run() {
    t_proxy_thread = true;
    pthread_setname_np(pthread_self(), "pyshmem-proxy");  // for top -H, perf, and the idle-CPU test
    try {
      gpu_thread_attach();  // GPU addresses go to transports and GPU writes get flushed from here
    } catch (const Error& e) {
      fail(e.status(), std::string("proxy: ") + e.what());
      return;
    }
    pyshmem_fifo_entry req[PYSHMEM_FIFO_MAX_SLOTS];
    Backoff idle(0, 0);
    long idle_rounds = 0;
    int arm_refused = 0;  // a transport's wakeup_arm said "work pending" this many times in a row
    uint64_t last_ops = 0, last_own = 0, last_productive = 0;
    // Not a Python thread: never run the interrupt hook here. Progress is polled below.
    long doze_ns = 0;  // set below, before the first doze
    bool after_request = false;  // a request came since the last doze
    auto busy = [&] {
      idle = Backoff(s_.config.SPIN_ITERS, s_.config.WAIT_SLEEP_MAX_US);
      idle.uninterruptible().without_progress();
      idle_rounds = 0;
      doze_ns = 0;
      arm_refused = 0;
    };
    busy();
    // After polling a while, doze until a host producer rings the host ring's doorbell,
    // or incoming transport traffic that needs this PE's progress (UCX's emulated
    // atomics and puts over tcp complete only when the target progresses) makes the
    // transport's event fd readable, or the doze times out. The proxy is this PE's
    // progress engine while its own threads compute or sleep in a wait.
    //
    // GPU kernels cannot ring a doorbell, so with a GPU ring the proxy does not doze
    // while watched GPU work is in flight (kernels pyshmem launched, streams handed to
    // pyshmem.cuda.watch_stream: cuda/gpu_watch.h), nor for PROXY_GPU_LINGER_US after a
    // GPU kernel's last request (kernels launched elsewhere usually push more); a GPU
    // kernel's request otherwise waits out the doze, at most PROXY_IDLE_SLEEP_MAX_US.
    //
    // How long it polls first: after a request from a ring, when every source of work
    // can wake it (no GPU ring, every transport has an event fd) and the host has a CPU
    // per PE, only kShortSpin rounds: the answer a request's producer waits for comes
    // from another PE, and a proxy polling on takes the CPU from the PE's own thread
    // that is about to answer (measured, one PE and 2 CPUs per host, two hosts:
    // device-API ping-pong over tcp 55-59 us with 64 rounds, 81-130 us with 164,
    // 280-340 us with 2064). Otherwise SPIN_ITERS + 64 rounds (SPIN_ITERS is 100 when
    // PEs outnumber CPUs): more traffic usually follows (a collective's next message),
    // and dozing between its messages made 4 PEs on 2 CPUs 1.7x slower in an 8-byte
    // reduction and a device-API barrier.
    //
    // An idle proxy must not cost a core (target: < 1 % of one; each timed-out doze is a
    // UCX progress call): each idle doze is twice the last, from WAIT_SLEEP_MAX_US up to
    // PROXY_IDLE_SLEEP_MAX_US; a request or a progress event starts over from polling.
    // While this PE's own threads issue operations the doze stays at its shortest, and
    // while they issue operations or progress the transport in a wait it ignores the
    // transport's events (each would wake it to contend for the worker with them).
    std::vector<const Transport*> wakers;  // the transports whose event fds a doze waits on
    bool wakeable = lanes_.size() == 1;    // every source of work can wake a doze
    for (const Transport* t : transports_) {
      if (!t->progress) continue;
      if (t->wakeup_fd && t->wakeup_fd(s_) >= 0)
        wakers.push_back(t);
      else
        wakeable = false;
    }
    const long long_spin = s_.config.SPIN_ITERS + 64;
    const long short_spin = wakeable && !s_.cpus_oversubscribed ? kShortSpin : long_spin;
    const long doze_min_ns = std::max<long>(1000, static_cast<long>(s_.config.WAIT_SLEEP_MAX_US) * 1000);
    const long doze_max_ns = std::max<long>(doze_min_ns, static_cast<long>(s_.config.PROXY_IDLE_SLEEP_MAX_US) * 1000);
    const bool gpu_ring = lanes_.size() > 1;
    const int64_t gpu_linger_ns = std::max<int64_t>(0, static_cast<int64_t>(s_.config.PROXY_GPU_LINGER_US)) * 1000;
    int64_t last_gpu_request_ns = 0;
    for (;;) {
      bool worked = false;
      for (auto& lane : lanes_) {
        const int k = lane->ring.poll(req);
        if (k < 0) {
          fail(PYSHMEM_ERR_INTERNAL, "proxy: malformed request in the FIFO (unknown kind)");
          return;
        }
        if (k == 0) continue;
        try {
          flush_ = false;
          const bool complete = execute(*lane, req);
          // Data a transport wrote into GPU memory is visible to kernels before they
          // learn the get is done (GPUDirect RDMA writes may land late otherwise).
          if (flush_) gpu_flush_writes("proxy");
          lane->ring.retire(k, complete);
          if (lane->gpu) last_gpu_request_ns = monotonic_ns();
        } catch (const Error& e) {
          fail(e.status(), std::string("proxy: ") + kind_name(pyshmem_fifo_header_kind(req[0].w1)) +
                               (lane->gpu ? " request from a GPU kernel: " : " request: ") + e.what());
          return;
        }
        worked = true;
      }
      if (worked) {
        busy();
        after_request = true;
        continue;
      }
      if (stop_.load(std::memory_order_acquire)) {
        if (std::all_of(lanes_.begin(), lanes_.end(), [](const auto& l) { return l->ring.idle(); })) {
          drained_ = true;
          return;
        }
        if (std::chrono::steady_clock::now() > deadline_) return;
      }
      // Poll the transport only while this PE's own threads leave it alone (they
      // progress it themselves while they issue operations).
      const uint64_t ops = g_transport_ops.load(std::memory_order_relaxed);
      const bool host_busy = ops != last_ops;
      last_ops = ops;
      const uint64_t own = g_own_progress.load(std::memory_order_relaxed);
      const bool own_progress = own != last_own;
      last_own = own;
      // The PE is not idle while its threads work: doze no longer than the shortest, so
      // the proxy takes the transport's progress over soon after they stop.
      if (host_busy) doze_ns = 0;
      const progress_hook_t progress = g_progress_hook;
      // Progress unless this PE's own threads are applying traffic (core/backoff.h).
      const uint64_t productive = g_own_productive.load(std::memory_order_relaxed);
      const bool own_applying =
          g_cpu_per_pe && productive != last_productive && g_own_sleepers.load(std::memory_order_relaxed) == 0;
      last_productive = productive;
      if (!host_busy && !own_applying && progress && progress() > 0) {
        busy();
        continue;
      }
      // The ordering check's held operations are delivered while the proxy idles too,
      // so a kernel waiting for the answer to its own held put gets it.
      if (s_.order) {
        try {
          if (order_progress() > 0) continue;
        } catch (const Error& e) {  // a transport failed applying a held operation
          fail(e.status(), std::string("proxy: applying a held operation (PYSHMEM_ORDER_CHECK): ") + e.what());
          return;
        }
      }
      if (++idle_rounds < (after_request ? short_spin : long_spin)) {
        idle.pause();
        continue;
      }
      if (gpu_ring && (gpu_watch_busy() || (last_gpu_request_ns && monotonic_ns() - last_gpu_request_ns < gpu_linger_ns))) {
        busy();  // a GPU kernel may push at any moment: poll on
        continue;
      }
      check_global_exit();
      int fds[8];
      int n = 0;
      if (!host_busy && !own_progress) {
        bool armed = true;
        for (const Transport* t : wakers) {
          if (n == 8 || !t->wakeup_arm(s_)) {
            armed = false;
            break;
          }
          fds[n++] = t->wakeup_fd(s_);
        }
        // Work pending: progress it first, but only once in a row (a transport that
        // keeps refusing would otherwise keep the proxy polling); then doze on a timer.
        if (!armed && arm_refused++ == 0) continue;
        if (!armed) n = 0;
        if (armed) arm_refused = 0;
      }
      doze_ns = doze_ns ? std::min(doze_max_ns, doze_ns * 2) : doze_min_ns;
      lanes_[0]->ring.doze(doze_ns, fds, n);
      after_request = false;
    }
  }

  void fail(int status, const std::string& msg) {
    log_debug("%s", msg.c_str());
    for (auto& l : lanes_) l->ring.fail(status, msg);
  }

  // The symmetric address at segment offset `off` in this PE's segment of the lane's
  // heap, checked to hold `len` bytes (requests come from device code: never trust
  // them blindly).
  char* sym_at(const Lane& lane, uint64_t off, uint64_t len, int pe) const {
    if (pe < 0 || pe >= s_.npes || !s_.route[pe])
      fail_inner(PYSHMEM_ERR_PE_RANGE, nullptr,
                 "target PE " + std::to_string(pe) + " is out of range; valid PEs are 0.." +
                     std::to_string(s_.npes - 1) + " (n_pes() == " + std::to_string(s_.npes) + ")");
    if (lane.gpu && (s_.route[pe]->caps & kCapLoadStore))
      fail_inner(PYSHMEM_ERR_INVALID_ARG, nullptr,
                 "PE " + std::to_string(pe) +
                     " shares this node: GPU kernels reach its GPU heap by load/store, not through the proxy "
                     "(device code built with other pyshmem headers?)");
    if (off > lane.size || len > lane.size - off)
      fail_inner(PYSHMEM_ERR_NOT_SYMMETRIC, nullptr,
                 "target range (offset " + std::to_string(off) + ", " + std::to_string(len) +
                     " bytes) is not in the symmetric " + (lane.gpu ? "GPU heap" : "heap") +
                     ": pass symmetric arrays (pyshmem.cuda.zeros/empty, pyshmem.zeros/empty) to the kernel");
    return lane.base + off;
  }

  void result(Lane& lane, uint64_t value) {
    if (!lane.ring.put_result(lane.ring.ticket(), value))
      fail_inner(PYSHMEM_ERR_TIMEOUT, nullptr,
                 "a result cell was not released by its previous owner within PYSHMEM_PROXY_TIMEOUT (a producer "
                 "stopped waiting for its fetched value: a kernel killed mid-operation?)");
  }

  // Executes one request. Returns true when it is complete at its target on return.
  bool execute(Lane& lane, const pyshmem_fifo_entry* r) {
    const int kind = pyshmem_fifo_header_kind(r[0].w1);
    const int pe = pyshmem_fifo_header_pe(r[0].w1);
    const uint32_t arg = pyshmem_fifo_header_arg(r[0].w1);
    const uint64_t off = r[0].w0;
    const TraceSpan span(kTraceProxy, kind_name(kind), pe, kind == PYSHMEM_REQ_PUT || kind == PYSHMEM_REQ_GET ? r[1].w1 : 0);
    switch (kind) {
      case PYSHMEM_REQ_PUT: {
        const uint64_t n = r[1].w1;
        if (order_holds(s_, pe)) {
          order_put(s_, sym_at(lane, off, n, pe), reinterpret_cast<const void*>(r[1].w0), n, pe, /*nbi=*/arg == 1);
          return false;  // held: complete after a QUIET
        }
        s_.route[pe]->put(s_, sym_at(lane, off, n, pe), reinterpret_cast<const void*>(r[1].w0), n, pe);
        break;
      }
      case PYSHMEM_REQ_GET: {
        const uint64_t n = r[1].w1;
        if (order_holds(s_, pe) && arg == 1) {
          order_get_nbi(s_, reinterpret_cast<void*>(r[1].w0), sym_at(lane, off, n, pe), n, pe);
          return false;
        }
        if (order_holds(s_, pe)) order_blocking(s_, pe);
        s_.route[pe]->get(s_, reinterpret_cast<void*>(r[1].w0), sym_at(lane, off, n, pe), n, pe);
        flush_ = lane.gpu;
        break;
      }
      case PYSHMEM_REQ_P:
      case PYSHMEM_REQ_G: {
        if (arg != 1 && arg != 2 && arg != 4 && arg != 8)
          fail_inner(PYSHMEM_ERR_INVALID_ARG, nullptr,
                     std::string(kind_name(kind)) + " of " + std::to_string(arg) +
                         " bytes: p/g move 1, 2, 4 or 8 bytes; use put/get for other sizes");
        uint64_t bits = kind == PYSHMEM_REQ_P ? r[1].w0 : 0;  // little-endian hosts only, like the rest of pyshmem
        if (kind == PYSHMEM_REQ_P && order_holds(s_, pe)) {
          order_put(s_, sym_at(lane, off, arg, pe), &bits, arg, pe, /*nbi=*/false);
          return false;
        }
        if (order_holds(s_, pe)) order_blocking(s_, pe);
        if (kind == PYSHMEM_REQ_P) {
          s_.route[pe]->put(s_, sym_at(lane, off, arg, pe), &bits, arg, pe);
          break;
        }
        s_.route[pe]->get(s_, &bits, sym_at(lane, off, arg, pe), arg, pe);
        result(lane, bits);
        return true;  // a get: complete on return
      }
      case PYSHMEM_REQ_PUT_SIGNAL: {
        const uint64_t n = r[1].w1;
        const Transport* t = s_.route[pe];
        char* dest = sym_at(lane, off, n, pe);
        char* sig = sym_at(lane, r[2].w1, sizeof(uint64_t), pe);
        if (arg != PYSHMEM_SIGNAL_SET && arg != PYSHMEM_SIGNAL_ADD)
          fail_inner(PYSHMEM_ERR_INVALID_ARG, nullptr,
                     "signal operator " + std::to_string(arg) + " is not SIGNAL_SET or SIGNAL_ADD");
        const uint64_t value = r[2].w0;
        const AmoArgs update{arg == PYSHMEM_SIGNAL_ADD ? PYSHMEM_AMO_ADD : PYSHMEM_AMO_SET, PYSHMEM_UINT64, sig, &value,
                             nullptr, nullptr, pe};
        if (order_holds(s_, pe)) {
          order_put_signal(s_, dest, reinterpret_cast<const void*>(r[1].w0), n, update);  // the signal after its data
          return false;
        }
        t->put(s_, dest, reinterpret_cast<const void*>(r[1].w0), n, pe);
        if (!order_guarantee_broken(kBrokenPutSignal)) t->fence(s_);  // the data before the signal
        t->amo(s_, update);
        break;
      }
      case PYSHMEM_REQ_AMO: {
        const int op = static_cast<int>(arg & 0xff), dtype = static_cast<int>((arg >> 8) & 0xff);
        if (op > PYSHMEM_AMO_XOR)
          fail_inner(PYSHMEM_ERR_INVALID_ARG, nullptr,
                     "unknown atomic operation " + std::to_string(op) +
                         " (device code built with other pyshmem headers?)");
        const size_t size = PYSHMEM_DTYPE_SIZE(dtype);
        const uint64_t value = r[1].w0, cond = r[2].w0;
        const bool fetching = r[1].w1 != 0;
        uint64_t old = 0;
        const AmoArgs amo{op, dtype, sym_at(lane, off, size, pe), &value, &cond, fetching ? &old : nullptr, pe};
        if (order_holds(s_, pe)) {
          if (!fetching) {
            order_amo(s_, amo);
            return false;
          }
          order_blocking(s_, pe, amo.dest);
        }
        s_.route[pe]->amo(s_, amo);
        if (fetching) result(lane, old);
        break;
      }
      case PYSHMEM_REQ_FENCE:
        if (s_.order) order_fence(s_);
        if (order_guarantee_broken(kBrokenFence)) return false;
        for (const Transport* t : transports_) t->fence(s_);
        return false;  // ordering only; completion is quiet's business
      case PYSHMEM_REQ_QUIET:
        if (s_.order) order_quiet(s_);
        if (!order_guarantee_broken(kBrokenQuiet))
          for (const Transport* t : transports_) t->quiet(s_);
        for (auto& l : lanes_) l->ring.mark_complete();
        return true;
    }
    // Load/store transports complete on return; others wait for a QUIET request.
    return (s_.route[pe]->caps & kCapLoadStore) != 0;
  }

  State& s_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<const Transport*> transports_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::chrono::steady_clock::time_point deadline_{};
  bool drained_ = false;
  bool flush_ = false;  // the request being executed wrote into GPU memory
};

std::unique_ptr<Proxy> g_proxy;  // one per process, like the runtime state

// A process that exits without finalize (an uncaught exception, sys.exit) still stops
// the thread before the runtime state it uses is destroyed: registered with atexit
// after the state exists, this runs before the state's destructor.
void proxy_stop_at_exit() {
  if (!g_proxy) return;
  g_proxy->stop(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  g_proxy.reset();
}

}  // namespace

bool proxy_all(const State& s) { return s.config.PROXY_ALL || s.config.ORDER_CHECK; }

void proxy_start(State& s, const RingMemory* gpu_memory) {
  bool needed = proxy_all(s);
  for (int p = 0; p < s.npes && !needed; ++p) needed = !s.route[p] || !(s.route[p]->caps & kCapLoadStore);
  if (!needed || g_proxy) return;
  if (s.config.PROXY_FIFO_SLOTS < PYSHMEM_FIFO_MAX_SLOTS || s.config.PROXY_FIFO_SLOTS > (1 << 30))
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
         "PYSHMEM_PROXY_FIFO_SLOTS=" + std::to_string(s.config.PROXY_FIFO_SLOTS) + " must be between " +
             std::to_string(PYSHMEM_FIFO_MAX_SLOTS) + " and 2^30");
  if (!(s.config.PROXY_TIMEOUT > 0))
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init", "PYSHMEM_PROXY_TIMEOUT must be a positive number of seconds");
  const auto timeout_ns = static_cast<uint64_t>(s.config.PROXY_TIMEOUT * 1e9);
  // GPU kernels need a ring of their own only when some PE's GPU heap is not mapped
  // here (another node): same-node GPU heaps are reached by load/store.
  bool gpu_needed = false;
  for (int p = 0; p < s.npes && gpu_memory && s.gpu_size; ++p)
    gpu_needed = gpu_needed || (s.route[p] && !(s.route[p]->caps & kCapLoadStore));
  g_proxy = std::make_unique<Proxy>(s, static_cast<uint32_t>(s.config.PROXY_FIFO_SLOTS), timeout_ns,
                                    gpu_needed ? gpu_memory : nullptr);
  static bool at_exit_registered = false;
  if (!at_exit_registered) at_exit_registered = std::atexit(proxy_stop_at_exit) == 0;
  log_debug("proxy: started (%u slots%s)", g_proxy->fifo()->capacity, gpu_needed ? ", and a ring for GPU kernels" : "");
}

void proxy_stop(State& s) {
  if (!g_proxy) return;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(s.config.PROXY_TIMEOUT));
  const bool drained = g_proxy->stop(deadline);
  const uint32_t status = g_proxy->fifo()->status;
  const std::string message = g_proxy->fifo()->message;
  g_proxy.reset();
  if (status) fail(static_cast<pyshmem_status>(status), "pyshmem.finalize", message);
  if (!drained)
    fail(PYSHMEM_ERR_TIMEOUT, "pyshmem.finalize",
         "device-API requests were still queued for the proxy after PYSHMEM_PROXY_TIMEOUT seconds "
         "(a producer reserved FIFO slots and never wrote them)");
}

void proxy_wait_executed(State& s, const char* call) {
  if (!g_proxy) return;
  for (pyshmem_proxy_fifo* f : g_proxy->fifos()) {
    const uint64_t head = __atomic_load_n(&f->head, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&f->tail, __ATOMIC_ACQUIRE) >= head) continue;
    Backoff b(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(s.config.PROXY_TIMEOUT));
    while (__atomic_load_n(&f->tail, __ATOMIC_ACQUIRE) < head) {
      if (const uint32_t st = __atomic_load_n(&f->status, __ATOMIC_ACQUIRE))
        fail(static_cast<pyshmem_status>(st), call, f->message);
      if (std::chrono::steady_clock::now() > deadline)
        fail(PYSHMEM_ERR_TIMEOUT, call,
             "device-API requests queued for the proxy were not executed within PYSHMEM_PROXY_TIMEOUT seconds "
             "(the proxy is stuck on an unreachable PE?); raise PYSHMEM_PROXY_TIMEOUT only for links that slow");
      b.pause();
    }
  }
}

pyshmem_proxy_fifo* proxy_fifo(const State&, bool gpu) { return g_proxy ? g_proxy->fifo(gpu) : nullptr; }

}  // namespace pyshmem
