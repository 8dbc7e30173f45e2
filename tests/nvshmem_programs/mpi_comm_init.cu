// nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM) on a communicator other than
// MPI_COMM_WORLD: the world's ranks split by parity, and each half is a job of its own
// whose PEs are the half's ranks. <mpi.h> comes after <nvshmem.h> here on purpose (the
// order must not matter). A ring put inside each job, then a sum that shows the jobs
// are apart. Built with MPI's flags and run under mpirun by
// tests/pe/test_nvshmem_compat.py.
#include <cstdio>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <mpi.h>

#include "cuda_check.h"

__global__ void ring_put(int* data, int value, int to) { nvshmem_int_p(data, value, to); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world = 0, nworld = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_size(MPI_COMM_WORLD, &nworld);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, world % 2, world, &half);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(half, &rank);
  MPI_Comm_size(half, &nranks);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  attr.mpi_comm = &half;
  if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int failures = me != rank || npes != nranks;
  int* data = static_cast<int*>(nvshmem_calloc(1, sizeof(int)));
  int* sum = static_cast<int*>(nvshmem_malloc(sizeof(int)));
  ring_put<<<1, 1>>>(data, world, (me + 1) % npes);
  CUDA_CHECK(cudaDeviceSynchronize());
  nvshmem_barrier_all();
  nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, sum, data, 1);
  int got = 0, want = 0;
  CUDA_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
  for (int w = world % 2; w < nworld; w += 2) want += w;  // this half's world ranks
  failures += got != want;
  printf("world %d: PE %d of %d: mpi comm init %s (sum %d)\n", world, me, npes, failures ? "FAILED" : "OK", got);
  nvshmem_free(data);
  nvshmem_free(sum);
  nvshmem_finalize();
  MPI_Comm_free(&half);
  MPI_Finalize();
  return failures ? 1 : 0;
}
