// bootstrap/launcher_env.cpp: rank and size from the launcher that started the PE, when
// it was not shmemrun (which sets PYSHMEM_PE/PYSHMEM_NPES itself).
//
// Slurm's srun, Open MPI's mpirun/oshrun, Hydra/PMI launchers (MPICH, Intel MPI) and
// torchrun each publish the rank and size in their own variables. The rendezvous still
// needs PYSHMEM_BOOTSTRAP_ADDR (an address of rank 0's host; torchrun: MASTER_ADDR and
// MASTER_PORT + 1 by default) and PYSHMEM_JOB_SECRET, the same on every rank: no
// launcher provides a secret, and the bootstrap accepts only peers that present one.
#include <cstdlib>
#include <string>

#include "bootstrap/bootstrap.h"
#include "core/error.h"

namespace pyshmem {
namespace {

struct LauncherVars {
  const char* name;
  const char* rank;
  const char* size;
  const char* marker;  // must also be set (generic names like RANK need a witness)
};

const LauncherVars kLaunchers[] = {
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_ID"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", nullptr},
    {"pmi", "PMI_RANK", "PMI_SIZE", nullptr},
    {"torchrun", "RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID"},
};

bool read_int(const char* var, long long* out) {
  const char* v = std::getenv(var);
  if (!v || !*v) return false;
  char* end = nullptr;
  *out = std::strtoll(v, &end, 10);
  if (*end)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init", std::string(var) + "='" + v +
             "' is not an integer; the launcher that started this process sets it: fix or unset it");
  return true;
}

}  // namespace

void adopt_launcher_env(Config* c) {
  if (std::getenv("PYSHMEM_PE") || std::getenv("PYSHMEM_NPES")) return;  // shmemrun, or set by hand
  for (const LauncherVars& l : kLaunchers) {
    long long rank = 0, size = 0;
    if ((l.marker && !std::getenv(l.marker)) || !read_int(l.rank, &rank) || !read_int(l.size, &size)) continue;
    c->PE = rank;
    c->NPES = size;
    if (c->LAUNCHER.empty()) c->LAUNCHER = l.name;
    if (size > 1 && c->BOOTSTRAP_ADDR.empty() && std::string(l.name) == "torchrun") {
      long long port = 0;
      const char* host = std::getenv("MASTER_ADDR");
      if (host && read_int("MASTER_PORT", &port)) c->BOOTSTRAP_ADDR = std::string(host) + ":" + std::to_string(port + 1);
    }
    if (size > 1 && (c->BOOTSTRAP_ADDR.empty() || c->JOB_SECRET.empty()))
      fail(PYSHMEM_ERR_BOOTSTRAP, "pyshmem.init",
           std::string("started by ") + l.name + " as rank " + std::to_string(rank) + " of " + std::to_string(size) +
               ": set PYSHMEM_BOOTSTRAP_ADDR=host:port (a free port on an address of rank 0's host) and "
               "PYSHMEM_JOB_SECRET (the same 64 hex digits on every rank, e.g. from python -c \"import secrets; "
               "print(secrets.token_hex(32))\") in the job's environment, or (with mpi4py) start with "
               "pyshmem.init(mpi=MPI.COMM_WORLD)");
    return;
  }
}

}  // namespace pyshmem
