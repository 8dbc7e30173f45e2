// The all-reduce of examples/tp_allreduce.py as a CUDA C++ kernel on the pyshmem device
// API: one block per PE sums `y` in place over a team (rows of a tensor-parallel group).
// The same file compiles with nvcc for a GPU and with the host compiler for the CPU build.
#include <pyshmem/device.cuh>

extern "C" __global__ void allreduce(float* y, unsigned long long n, int team) {
  pyshmem::sum_reduce_block(team, y, y, static_cast<size_t>(n));
}
