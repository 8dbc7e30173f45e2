// Which UCX transports pyshmem lets do atomics on another node's GPU heap
// (transport/ucx/gpu_atomics.h): NIC atomics (verbs rc/dc) yes; software atomics on the
// target's CPU (tcp, shared memory) no, with a message naming the transports.
#include "transport/ucx/gpu_atomics.h"

#include <cstdio>
#include <cstdlib>

#define REQUIRE(cond)                                                        \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

using pyshmem::ucx_gpu_atomics_problem;

int main() {
  REQUIRE(ucx_gpu_atomics_problem({"rc_mlx5", "cuda_copy"}).empty());
  REQUIRE(ucx_gpu_atomics_problem({"tcp", "dc_mlx5"}).empty());
  REQUIRE(ucx_gpu_atomics_problem({"rc_verbs"}).empty());
  const std::string tcp = ucx_gpu_atomics_problem({"tcp", "tcp", "cuda_copy"});
  REQUIRE(tcp.find("through tcp, cuda_copy, which run atomics in software") != std::string::npos);
  REQUIRE(tcp.find("rc_mlx5, dc_mlx5 or rc_verbs") != std::string::npos);
  REQUIRE(!ucx_gpu_atomics_problem({"sysv", "posix", "cma"}).empty());
  REQUIRE(!ucx_gpu_atomics_problem({"ud_mlx5"}).empty());  // UD has no RDMA atomics
  REQUIRE(ucx_gpu_atomics_problem({}).find("no reported transport") != std::string::npos);
  std::puts("test_ucx_gpu_atomics: OK");
  return 0;
}
