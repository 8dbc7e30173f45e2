// transport/ucx/ucx_none.cpp: the ucx row of the transport table in builds without the
// UCX headers (the libucx wheel was not installed at build time).
#include "core/state.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {
bool ucx_available(std::string* why) {
  *why = "pyshmem was built without UCX (install libucx-cu13 and reinstall pyshmem); PEs on other nodes cannot be "
         "reached";
  return false;
}
bool ucx_can_reach(const State& s, int pe) { return s.node_of_pe[pe] != s.node_of_pe[s.pe]; }
}  // namespace

const Transport kUcxTransport = {"ucx",   kCapRma | kCapAmo, ucx_available, ucx_can_reach, nullptr, nullptr,
                                 nullptr, nullptr,           nullptr,       nullptr,       nullptr, nullptr,
                                 nullptr, nullptr,           nullptr,       nullptr};

}  // namespace pyshmem
