// bootstrap/bootstrap.h: out-of-band exchange of small byte blobs between the PEs of a
// job, used at init and for collective bookkeeping (allocation checks). Not a data path.
//
// All operations are collective: every PE of the job calls them in the same order.
// Data is raw bytes; nothing received from the network is ever interpreted beyond
// length-prefixed blobs (no pickling, no code).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"

namespace pyshmem {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every PE contributes one blob; returns all blobs indexed by PE. Blocking.
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;
  // Returns root's blob on every PE (others' `mine` is ignored). Blocking.
  virtual std::string bcast(const std::string& mine, int root) = 0;
  // Returns once every PE has called barrier(). Blocking.
  virtual void barrier() = 0;
};

// Picks the bootstrap from the configuration: a trivial one for a single PE, the
// authenticated TCP rendezvous (bootstrap/tcp.cpp) otherwise.
std::unique_ptr<Bootstrap> bootstrap_create(const Config& config);

std::unique_ptr<Bootstrap> bootstrap_tcp_create(const Config& config);

// When PYSHMEM_PE/PYSHMEM_NPES are unset, takes rank and size from the environment of
// srun, mpirun/oshrun, Hydra/PMI or torchrun (bootstrap/launcher_env.cpp). Throws
// BOOTSTRAP with what to set when such a launcher started more than one PE without
// PYSHMEM_BOOTSTRAP_ADDR or PYSHMEM_JOB_SECRET.
void adopt_launcher_env(Config* c);

}  // namespace pyshmem
