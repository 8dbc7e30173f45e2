// order/order_check.cpp: see order_check.h.
//
// Held operations sit in one queue per target PE, in issue order. Because fences only
// grow the epoch, the operations of a queue that may be applied now are a prefix: those
// in the front epoch (minus signals whose data is still held, and operations kept back
// by a reordering's delay). A delivery picks one of those at random, over all queues.
#include "order/order_check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/backoff.h"
#include "core/error.h"
#include "core/log.h"
#include "transport/transport.h"

namespace pyshmem {

using Clock = std::chrono::steady_clock;

namespace {

enum HeldKind { kHeldPut, kHeldPutNbi, kHeldIput, kHeldGetNbi, kHeldAmo };

struct HeldOp {
  HeldKind kind;
  uint64_t seq;    // issue order (1, 2, ...)
  uint64_t epoch;  // fences issued before it
  uint64_t after;  // seq of the operation it must follow (a signal's data), kAfterAll, or 0
  char* dest;
  const char* src;
  size_t nbytes;
  ptrdiff_t tst = 0;  // iput: the target's byte stride; nbytes is the element size (data: packed)
  size_t nelems = 0;
  std::vector<char> data;  // a blocking put's copy of its source
  int amo_op = 0, dtype = 0;
  uint64_t value = 0, cond = 0;
  bool has_value = false, has_cond = false;
  void* fetch = nullptr;
};

// HeldOp::after for a signal with no data of its own (a strided put_signal's, whose data
// went as an iput just before): it follows everything held toward its PE.
constexpr uint64_t kAfterAll = ~uint64_t(0);

struct PeQueue {
  std::deque<HeldOp> ops;
  uint64_t overtaker = 0;  // highest seq applied while an earlier one was held
  Clock::time_point overtaken_at{};
  uint64_t applied_epoch = 0;  // epoch of the last operation applied toward this PE
  bool applied_any = false;
};


std::string g_seed;

thread_local bool t_inside = false;  // a transport that waits calls order_progress back

}  // namespace

class OrderCheck {
 public:
  OrderCheck(State& s, uint64_t seed, long delay_us) : s_(s), rng_(seed), delay_(std::chrono::microseconds(delay_us)) {
    queues_.resize(static_cast<size_t>(s.npes));
  }

  std::mutex mu;

  // Holds `op` toward pe; returns its seq. Then (tick) a few random deliveries.
  uint64_t hold(HeldOp op, int pe, bool tick_after = true) {
    PeQueue& q = queues_[static_cast<size_t>(pe)];
    op.seq = ++seq_;
    op.epoch = epoch_;
    last_issued_ = Clock::now();
    q.ops.push_back(std::move(op));
    ++held_;
    // A bounded backlog: applying early is always allowed.
    if (held_ > kMaxHeld)
      while (held_ > kMaxHeld / 2) deliver_one(Pick{true});
    if (tick_after) tick(seq_);
    return seq_;
  }

  void fence() { ++epoch_; }

  // Random deliveries at a call: a geometric number (mean 2/3), never the operation the
  // call itself just issued, so back-to-back operations are in flight together.
  unsigned tick(uint64_t newest = 0) {
    unsigned n = 0;
    Pick pick{false};
    pick.exclude = newest;
    while (held_ && coin(0.4) && deliver_one(pick)) ++n;
    return n;
  }

  void drain() {
    while (held_) deliver_one(Pick{true});
  }

  // Applies every operation toward pe issued before the current epoch, and (amo_dest
  // not null) every held atomic on amo_dest.
  void drain_before(int pe, const void* amo_dest) {
    const PeQueue& q = queues_[static_cast<size_t>(pe)];
    Pick pick{true};
    pick.only_pe = pe;
    pick.below_epoch = epoch_;
    while (!q.ops.empty() && q.ops.front().epoch < epoch_) deliver_one(pick);
    // The caller's get or atomic goes to the transport next: after what was applied.
    if (queues_[static_cast<size_t>(pe)].applied_any) s_.route[static_cast<size_t>(pe)]->fence(s_);
    if (amo_dest) {
      pick.below_epoch = epoch_ + 1;  // what is left is in the current epoch
      Pick same = pick;
      same.amo_dest = amo_dest;
      // (A signal on that address may first need its data: then anything of pe's goes.)
      while (std::any_of(q.ops.begin(), q.ops.end(),
                         [&](const HeldOp& op) { return op.kind == kHeldAmo && op.dest == amo_dest; }))
        if (!deliver_one(same)) deliver_one(pick);
    }
    tick();
  }

  // While the PE waits: one operation, once this PE has issued none for the delay, so
  // that a wait (a barrier, sync_all) does not complete puts at once. The quiet time
  // counts from the newest operation, not each one's own age: with an age per operation,
  // a burst issued slowly (a loaded machine) had a window in which only its first
  // operation was old enough, and the idle proxy, polling, always applied it first, in
  // issue order, so a missing fence went unseen.
  unsigned progress() {
    if (!held_ || Clock::now() - last_issued_ < delay_) return 0;
    return deliver_one(Pick{false}) ? 1 : 0;
  }

 private:
  static constexpr size_t kMaxHeld = 1024;

  // Which held operations a delivery may choose from.
  struct Pick {
    bool wait;            // sleep until one is allowed when all are kept back by a delay
    int only_pe = -1;     // >= 0: only this PE's operations of epochs before below_epoch
    uint64_t below_epoch = 0;
    uint64_t exclude = 0;  // not this seq
    const void* amo_dest = nullptr;  // only atomics on this address
  };

  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  // The operations `pick` allows now: (pe, index) pairs. *wake: when operations are
  // kept back by a reordering's delay, the earliest time one may go.
  void candidates(const Pick& pick, std::vector<std::pair<int, size_t>>* out, Clock::time_point* wake) {
    out->clear();
    const Clock::time_point now = Clock::now();
    for (int pe = 0; pe < static_cast<int>(queues_.size()); ++pe) {
      if (pick.only_pe >= 0 && pe != pick.only_pe) continue;
      const PeQueue& q = queues_[static_cast<size_t>(pe)];
      if (q.ops.empty()) continue;
      const uint64_t front = q.ops.front().epoch;
      if (pick.only_pe >= 0 && front >= pick.below_epoch) continue;
      for (size_t i = 0; i < q.ops.size() && q.ops[i].epoch == front; ++i) {
        const HeldOp& op = q.ops[i];
        if (op.seq == pick.exclude) continue;
        if (pick.amo_dest && (op.kind != kHeldAmo || op.dest != pick.amo_dest)) continue;
        if (op.after == kAfterAll && i > 0) continue;
        if (op.after || op.kind == kHeldAmo) {
          // A signal waits for its data; an atomic for earlier atomics on its address.
          // Both lie earlier in this queue.
          bool blocked = false;
          for (size_t j = 0; j < i && !blocked; ++j)
            blocked = q.ops[j].seq == op.after || (op.kind == kHeldAmo && q.ops[j].kind == kHeldAmo &&
                                                   q.ops[j].dest == op.dest);
          if (blocked) continue;
        }
        if (op.seq < q.overtaker) {
          const Clock::time_point go = q.overtaken_at + delay_;
          if (now < go) {
            if (go < *wake) *wake = go;
            continue;
          }
        }
        out->emplace_back(pe, i);
      }
    }
  }

  // Applies one operation chosen at random among the candidates. Returns false when
  // none was applied.
  bool deliver_one(const Pick& pick) {
    for (;;) {
      Clock::time_point wake = Clock::time_point::max();
      candidates(pick, &cands_, &wake);
      if (!cands_.empty()) break;
      if (!pick.wait || wake == Clock::time_point::max()) return false;
      std::this_thread::sleep_until(wake);
    }
    const auto [pe, i] = cands_[std::uniform_int_distribution<size_t>(0, cands_.size() - 1)(rng_)];
    PeQueue& q = queues_[static_cast<size_t>(pe)];
    HeldOp op = std::move(q.ops[i]);
    q.ops.erase(q.ops.begin() + static_cast<ptrdiff_t>(i));
    --held_;
    if (i > 0 && op.seq > q.overtaker) {  // overtook q.ops[0..i): keep them back for a while
      q.overtaker = op.seq;  // (those it overtook then go in any order, without new waits)
      q.overtaken_at = Clock::now();
    }
    apply(op, pe);
    return true;
  }

  void apply(const HeldOp& op, int pe) {
    const Transport* t = s_.route[static_cast<size_t>(pe)];
    // What the check ordered must stay ordered in the transport (UCX stripes puts over
    // lanes; a large memcpy uses non-temporal stores): a fence before the first operation
    // of a later epoch, before a signal (after its data) and between atomics on one word.
    PeQueue& q = queues_[static_cast<size_t>(pe)];
    if (q.applied_any && (op.epoch > q.applied_epoch || op.after || op.kind == kHeldAmo)) t->fence(s_);
    q.applied_any = true;
    q.applied_epoch = std::max(q.applied_epoch, op.epoch);
    switch (op.kind) {
      case kHeldPut:
        t->put(s_, op.dest, op.data.data(), op.nbytes, pe);
        return;
      case kHeldPutNbi:
        t->put(s_, op.dest, op.src, op.nbytes, pe);
        return;
      case kHeldIput:
        for (size_t k = 0; k < op.nelems; ++k)
          t->put(s_, op.dest + static_cast<ptrdiff_t>(k) * op.tst, op.data.data() + k * op.nbytes, op.nbytes, pe);
        return;
      case kHeldGetNbi:
        t->get(s_, op.dest, op.src, op.nbytes, pe);
        return;
      case kHeldAmo:
        t->amo(s_, AmoArgs{op.amo_op, op.dtype, op.dest, op.has_value ? &op.value : nullptr,
                           op.has_cond ? &op.cond : nullptr, op.fetch, pe});
        return;
    }
  }

  State& s_;
  std::mt19937_64 rng_;
  Clock::time_point last_issued_{};  // of the newest held operation (progress)
  std::chrono::microseconds delay_;
  std::vector<PeQueue> queues_;
  std::vector<std::pair<int, size_t>> cands_;
  uint64_t seq_ = 0, epoch_ = 0;
  size_t held_ = 0;
};

namespace {

std::unique_ptr<OrderCheck> g_check;
// A stopped check stays allocated until the next start or exit: a thread still in a wait
// that loaded the hook before stop may yet look at it (and sees s.order null).
std::unique_ptr<OrderCheck> g_retired;

// Holds the check's lock (and marks the thread as inside, so a transport that waits
// and calls order_progress back does not lock again).
class Locked {
 public:
  explicit Locked(State& s) : c_(*s.order), lock_(c_.mu) { t_inside = true; }
  ~Locked() { t_inside = false; }
  OrderCheck* operator->() { return &c_; }

 private:
  OrderCheck& c_;
  std::lock_guard<std::mutex> lock_;
};

uint64_t mix(uint64_t x) {  // splitmix64: one PE's stream from the job's seed
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The runtime's own words in this PE's segment: the system area (barrier counters) and
// the team pool at the end (team synchronisation slots). Device barriers and team syncs
// through the proxy update them; they are not user operations.
bool is_runtime_word(const State& s, const void* p) {
  const char* c = static_cast<const char*>(p);
  const char* end = s.heap.my_base + s.heap.size;
  return (c >= s.heap.my_base && c < s.heap.my_base + kSysAreaBytes) ||
         (c >= end - s.team_pool_bytes && c < end);
}

}  // namespace

void order_check_start(State& s) {
  // Every PE must agree (a held operation toward a PE that does not check is fine, but a
  // job where only some PEs check is almost certainly a mistake): PE 0 decides the seed.
  std::string mine = s.config.ORDER_CHECK ? "1:" + s.config.ORDER_CHECK_SEED : "0";
  if (s.config.ORDER_CHECK && s.config.ORDER_CHECK_SEED.empty() && s.pe == 0)
    mine = "1:" + std::to_string(std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32));
  const std::string job = s.boot->bcast(s.pe == 0 ? mine : std::string(), 0);
  if ((job[0] == '1') != s.config.ORDER_CHECK)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
         std::string("PYSHMEM_ORDER_CHECK is ") + (s.config.ORDER_CHECK ? "1" : "0") + " on this PE but " +
             (job[0] == '1' ? "1" : "0") + " on PE 0; set it the same on every PE");
  if (!s.config.ORDER_CHECK) return;
  if (s.gpu_size)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
         "PYSHMEM_ORDER_CHECK=1 checks the host heap and CPU-build kernels, so it needs the cpu backend; set "
         "PYSHMEM_BACKEND=cpu (GPU memory operations complete at once and would not be checked)");
  g_seed = job.substr(2);
  uint64_t seed = 0;
  try {
    size_t used = 0;
    seed = std::stoull(g_seed, &used);
    if (used != g_seed.size()) throw std::invalid_argument(g_seed);
  } catch (const std::exception&) {
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
         "PYSHMEM_ORDER_CHECK_SEED='" + g_seed + "' is not a non-negative integer");
  }
  if (s.config.ORDER_CHECK_DELAY_US < 0)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init", "PYSHMEM_ORDER_CHECK_DELAY_US must be >= 0");
  g_check = std::make_unique<OrderCheck>(s, mix(seed ^ mix(static_cast<uint64_t>(s.pe))),
                                         static_cast<long>(s.config.ORDER_CHECK_DELAY_US));
  s.order = g_check.get();
  g_order_hook = [] { return order_progress(); };
  log_debug("ordering check: seed %s", g_seed.c_str());
}

void order_check_stop(State& s) {
  if (!s.order) return;
  g_order_hook = nullptr;
  {
    Locked c(s);
    c->drain();  // finalize's barrier applied everything; nothing may outlive the heap
  }
  s.order = nullptr;
  g_retired = std::move(g_check);
}

void order_drain(State& s) {
  if (s.order) Locked(s)->drain();
}

std::string order_check_seed() { return g_check ? g_seed : std::string(); }

void order_put(State& s, void* dest, const void* src, size_t nbytes, int pe, bool nbi) {
  HeldOp op{};
  op.kind = nbi ? kHeldPutNbi : kHeldPut;
  op.dest = static_cast<char*>(dest);
  op.src = static_cast<const char*>(src);
  op.nbytes = nbytes;
  if (!nbi) op.data.assign(op.src, op.src + nbytes);
  Locked(s)->hold(std::move(op), pe);
}

void order_iput(State& s, void* dest, const void* src, ptrdiff_t tst_bytes, ptrdiff_t sst_bytes, size_t nelems,
                size_t elem, int pe) {
  HeldOp op{};
  op.kind = kHeldIput;
  op.dest = static_cast<char*>(dest);
  op.nbytes = elem;
  op.tst = tst_bytes;
  op.nelems = nelems;
  op.data.resize(nelems * elem);
  for (size_t k = 0; k < nelems; ++k)
    std::memcpy(op.data.data() + k * elem, static_cast<const char*>(src) + static_cast<ptrdiff_t>(k) * sst_bytes, elem);
  Locked(s)->hold(std::move(op), pe);
}

void order_get_nbi(State& s, void* dest, const void* src, size_t nbytes, int pe) {
  HeldOp op{};
  op.kind = kHeldGetNbi;
  op.dest = static_cast<char*>(dest);
  op.src = static_cast<const char*>(src);
  op.nbytes = nbytes;
  Locked(s)->hold(std::move(op), pe);
}

namespace {
HeldOp amo_op(const AmoArgs& a) {
  HeldOp op{};
  op.kind = kHeldAmo;
  op.dest = static_cast<char*>(a.dest);
  op.amo_op = a.op;
  op.dtype = a.dtype;
  const size_t elem = PYSHMEM_DTYPE_SIZE(a.dtype);
  if ((op.has_value = a.value != nullptr)) std::memcpy(&op.value, a.value, elem);
  if ((op.has_cond = a.cond != nullptr)) std::memcpy(&op.cond, a.cond, elem);
  op.fetch = a.fetch;
  return op;
}
}  // namespace

void order_amo(State& s, const AmoArgs& a) {
  if (is_runtime_word(s, a.dest)) {  // a device barrier's or team sync's arrival through the proxy
    s.route[static_cast<size_t>(a.pe)]->amo(s, a);
    return;
  }
  Locked(s)->hold(amo_op(a), a.pe);
}

void order_put_signal(State& s, void* dest, const void* src, size_t nbytes, const AmoArgs& sig) {
  HeldOp data{};
  if (nbytes) {
    data.kind = kHeldPut;
    data.dest = static_cast<char*>(dest);
    data.src = static_cast<const char*>(src);
    data.nbytes = nbytes;
    data.data.assign(data.src, data.src + nbytes);
  }
  HeldOp update = amo_op(sig);
  Locked c(s);  // both under one lock: no other thread's operation comes between them
  const uint64_t data_seq = nbytes ? c->hold(std::move(data), sig.pe, /*tick_after=*/false) : kAfterAll;
  if (!order_guarantee_broken(kBrokenPutSignal)) update.after = data_seq;
  c->hold(std::move(update), sig.pe);
}

void order_blocking(State& s, int pe, const void* amo_dest) { Locked(s)->drain_before(pe, amo_dest); }

void order_fence(State& s) {
  if (order_guarantee_broken(kBrokenFence)) return;
  Locked c(s);
  c->fence();
  c->tick();
}

void order_quiet(State& s) {
  if (order_guarantee_broken(kBrokenQuiet)) return;
  Locked(s)->drain();
}

unsigned order_progress() {
  State& s = state();
  if (!s.order || t_inside) return 0;
  std::unique_lock<std::mutex> lock(s.order->mu, std::try_to_lock);
  if (!lock.owns_lock()) return 0;  // another thread is delivering
  struct Inside {
    Inside() { t_inside = true; }
    ~Inside() { t_inside = false; }
  } inside;
  return s.order->progress();
}

std::atomic<uint32_t> g_broken_guarantees{0};

bool order_break_guarantee(const std::string& what) {
  uint32_t bit;
  if (what.empty()) bit = 0;
  else if (what == "fence") bit = kBrokenFence;
  else if (what == "quiet") bit = kBrokenQuiet;
  else if (what == "put_signal") bit = kBrokenPutSignal;
  else return false;
  g_broken_guarantees.store(bit ? g_broken_guarantees.load() | bit : 0);
  return true;
}

}  // namespace pyshmem
