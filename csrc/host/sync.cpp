// host/sync.cpp: fence, quiet and the barrier.
//
// The barrier is a dissemination barrier over per-round counters in every PE's system
// area: in round k PE i bumps round-k counter of PE (i + 2^k) mod n and waits until its
// own round-k counter reaches the number of barriers it has entered. Counters only grow,
// so nothing is reset between barriers; ceil(log2 n) rounds.
#include "core/backoff.h"
#include "core/trace.h"
#include "host/check.h"
#include "order/order_check.h"
#include "proxy/proxy.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

void barrier_rounds(State& s, const char* call) {
  SysArea* mine = s.heap.sys(s.pe);
  const uint64_t epoch = ++mine->barrier_epoch;  // shared with the device API's barrier
  if (s.npes == 1) return;
  const uint64_t one = 1;
  int round = 0;
  for (int dist = 1; dist < s.npes && round < PYSHMEM_SYS_BARRIER_ROUNDS; dist <<= 1, ++round) {
    int to = (s.pe + dist) % s.npes;
    // Symmetric address of the counter: same offset in every PE's system area.
    s.route[to]->amo(s, AmoArgs{PYSHMEM_AMO_ADD, PYSHMEM_UINT64, &mine->barrier[round].value, &one, nullptr,
                                nullptr, to});
    uint64_t* flag = &mine->barrier[round].value;
    if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) >= epoch) continue;
    // The PE that signals this round is the one `dist` behind.
    const WaitInfo info{call, flag, PYSHMEM_UINT64, PYSHMEM_CMP_GE, epoch, (s.pe - dist % s.npes + s.npes) % s.npes};
    const WaitScope scope(info);
    Backoff backoff(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < epoch) backoff.pause();
  }
}

}  // namespace

void fence() {
  State& s = state();
  if (!s.initialized) require_init("pyshmem.fence");
  if (s.order) order_fence(s);
  if (order_guarantee_broken(kBrokenFence)) return;
  for (const Transport* const* t = kTransports; *t; ++t)
    if ((*t)->fence) (*t)->fence(s);
}

void quiet() {
  State& s = state();
  if (!s.initialized) require_init("pyshmem.quiet");
  static const WaitInfo info{"pyshmem.quiet", nullptr, -1, -1, 0, -1};
  const WaitScope scope(info);
  proxy_wait_executed(s, "pyshmem.quiet");  // this PE's device-API requests are part of "every operation"
  if (s.order) order_quiet(s);
  if (order_guarantee_broken(kBrokenQuiet)) return;
  for (const Transport* const* t = kTransports; *t; ++t)
    if ((*t)->quiet) (*t)->quiet(s);
}

void barrier_all(const char* call) {
  require_init(call);
  const TraceSpan span(kTraceColl, call, -1, 0);
  quiet();
  barrier_rounds(state(), call);
}

void sync_all(const char* call) {
  require_init(call);
  const TraceSpan span(kTraceColl, call, -1, 0);
  barrier_rounds(state(), call);
}

}  // namespace pyshmem
