// host/sync.cpp: fence, quiet and the barriers over all PEs (the barrier itself is the
// team layer's world_sync, team/team.h).
#include "core/trace.h"
#include "host/check.h"
#include "order/order_check.h"
#include "proxy/complete.h"
#include "team/team.h"
#include "transport/transport.h"

namespace pyshmem {

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
  complete_all(s, "pyshmem.quiet");
}

void barrier_all(const char* call) {
  require_init(call);
  const TraceSpan span(kTraceColl, call, -1, 0);
  quiet();
  world_sync(state(), call);
}

void sync_all(const char* call) {
  require_init(call);
  const TraceSpan span(kTraceColl, call, -1, 0);
  world_sync(state(), call);
}

}  // namespace pyshmem
