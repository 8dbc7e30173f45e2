#include "bootstrap/bootstrap.h"

#include "core/error.h"

namespace pyshmem {
namespace {

class SingleBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> allgather(const std::string& mine) override { return {mine}; }
  std::string bcast(const std::string& mine, int) override { return mine; }
  void barrier() override {}
};

}  // namespace

std::unique_ptr<Bootstrap> bootstrap_create(const Config& launcher_config) {
  Config config = launcher_config;
  adopt_launcher_env(&config);  // srun, mpirun, Hydra, torchrun
  if (config.NPES < 1)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init", "PYSHMEM_NPES=" + std::to_string(config.NPES) + " must be >= 1");
  if (config.PE < 0 || config.PE >= config.NPES)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
         "PYSHMEM_PE=" + std::to_string(config.PE) + " is outside 0.." + std::to_string(config.NPES - 1) +
             " (PYSHMEM_NPES=" + std::to_string(config.NPES) +
             "); give every process a distinct PYSHMEM_PE in that range and the same PYSHMEM_NPES, or start "
             "the PEs with shmemrun -n N");
  if (config.NPES == 1) return std::make_unique<SingleBootstrap>();
  return bootstrap_tcp_create(config);
}

}  // namespace pyshmem
