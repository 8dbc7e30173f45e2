#include <cstring>

#include "core/error.h"
#include "core/state.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

// The inter-node transport has its row already so that routing and error messages are
// final; its operations arrive with the UCX work (issue 4).
bool ucx_available(std::string* why) {
  *why = "the UCX transport is not built yet; PEs on other nodes cannot be reached";
  return false;
}
bool ucx_can_reach(const State&, int) { return false; }

const Transport kUcxTransport = {"ucx", kCapRma | kCapAmo, ucx_available, ucx_can_reach,
                                 nullptr, nullptr, nullptr, nullptr, nullptr};

}  // namespace

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
      fail(PYSHMEM_ERR_NOT_IMPLEMENTED, "init",
           "no transport reaches PE " + std::to_string(pe) + " (" + reasons +
               "). Run all PEs on one node for now");
  }
}

std::string transport_describe() {
  std::string out;
  for (const Transport* const* t = kTransports; *t; ++t) {
    std::string why;
    bool ok = (*t)->available(&why);
    out += std::string(out.empty() ? "" : "\n") + (*t)->name + ": " + (ok ? "available" : why);
  }
  return out;
}

}  // namespace pyshmem
