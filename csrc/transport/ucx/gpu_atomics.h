// transport/ucx/gpu_atomics.h: which UCX transports can do atomics on GPU memory.
//
// UCX runs an atomic either in the NIC (InfiniBand/RoCE verbs transports: rc_verbs,
// rc_mlx5, dc_mlx5; with GPUDirect RDMA the NIC updates GPU memory directly) or in
// software, by the target process's CPU after an active message (tcp and the
// shared-memory transports posix, sysv, cma, xpmem). A CPU cannot access memory of a
// GPU heap (cuMem VMM allocations are not mapped for the host), so only the first kind
// works for atomics and signals on another node's GPU heap.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace pyshmem {

// "" when one of `transports` (the names UCX reports for an endpoint, ucp_ep_query)
// performs atomics in the NIC; otherwise why atomics on GPU memory cannot go there and
// what to do, naming the transports.
inline std::string ucx_gpu_atomics_problem(const std::vector<std::string>& transports) {
  std::vector<std::string> seen;
  std::string names;
  for (const std::string& t : transports) {
    if (t.rfind("rc", 0) == 0 || t.rfind("dc", 0) == 0) return "";
    if (std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
    seen.push_back(t);
    names += (names.empty() ? "" : ", ") + t;
  }
  return "UCX reaches that PE through " + (names.empty() ? std::string("no reported transport") : names) +
         ", which run atomics in software on the target's CPU, and a CPU cannot access a GPU heap. Atomics and "
         "signals on GPU memory of another node need an InfiniBand or RoCE transport that does them in the NIC "
         "(rc_mlx5, dc_mlx5 or rc_verbs with GPUDirect RDMA: a UCX with verbs support and UCX_TLS allowing rc or "
         "dc); or keep the atomic's target in a host array";
}

}  // namespace pyshmem
