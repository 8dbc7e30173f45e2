// proxy/complete.cpp: see complete.h.
#include "proxy/complete.h"

#include "core/hang.h"
#include "core/state.h"
#include "order/order_check.h"
#include "proxy/proxy.h"
#include "transport/transport.h"

namespace pyshmem {

void complete_all(State& s, const char* call) {
  const WaitInfo info{call, nullptr, -1, -1, 0, -1};
  const WaitScope scope(info);
  proxy_wait_executed(s, call);  // this PE's device-API requests are part of "every operation"
  if (s.order) order_quiet(s);
  if (order_guarantee_broken(kBrokenQuiet)) return;
  for (const Transport* const* t = kTransports; *t; ++t)
    if ((*t)->quiet) (*t)->quiet(s);
}

}  // namespace pyshmem
