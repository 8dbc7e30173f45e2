// transport/registry.cpp: the table of transports, routing, collective setup.
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "core/state.h"
#include "transport/transport.h"

namespace pyshmem {

const Transport* const kTransports[] = {&kShmTransport, &kUcxTransport, nullptr};

void transport_route_all(State& s) {
  s.route.assign(s.npes, nullptr);
  for (int pe = 0; pe < s.npes; ++pe) {
    std::string reasons;
    for (const Transport* const* t = kTransports; *t; ++t) {
      std::string why;
      if (!(*t)->available(&why)) {
        reasons += std::string(reasons.empty() ? "" : "; ") + (*t)->name + ": " + why;
        continue;
      }
      if ((*t)->can_reach(s, pe)) {
        s.route[pe] = *t;
        break;
      }
      reasons += std::string(reasons.empty() ? "" : "; ") + (*t)->name + ": not on this node";
    }
    if (!s.route[pe])
      fail(PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem.init",
           "no transport reaches PE " + std::to_string(pe) + " (" + reasons +
               ")");
  }
}

namespace {
std::vector<const Transport*> g_set_up;
}

void transport_setup_all(State& s) {
  uint32_t used = 0;
  int i = 0;
  for (const Transport* const* t = kTransports; *t; ++t, ++i)
    for (int p = 0; p < s.npes; ++p)
      if (s.route[p] == *t) used |= 1u << i;
  // Setups are collective: every PE runs those that any PE needs.
  for (const std::string& other : s.boot->allgather(std::to_string(used))) used |= std::stoul(other);
  i = 0;
  for (const Transport* const* t = kTransports; *t; ++t, ++i) {
    if (!(used & (1u << i)) || !(*t)->setup) continue;
    std::string why;
    if (!(*t)->available(&why))
      fail(PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem.init", std::string((*t)->name) + " is needed by other PEs but: " + why);
    (*t)->setup(s);
    g_set_up.push_back(*t);
  }
}

void transport_teardown_all(State& s) {
  for (const Transport* t : g_set_up)
    if (t->teardown) t->teardown(s);
  g_set_up.clear();
}

std::string transport_describe() {
  std::string out;
  for (const Transport* const* t = kTransports; *t; ++t) {
    std::string why;
    bool ok = (*t)->available(&why);
    // An available transport may say more about itself (UCX: its version).
    out += std::string(out.empty() ? "" : "\n") + (*t)->name + ": " +
           (ok ? (why.empty() ? "available" : "available, " + why) : why);
  }
  return out;
}

}  // namespace pyshmem
