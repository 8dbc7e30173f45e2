// NVSHMEM's unique-id initialisation with no launcher: N processes started by hand (the
// test starts them as plain processes, without shmemrun or MPI). Rank 0 makes the id
// with nvshmemx_get_uniqueid and hands its 128 bytes to the others through a file, as a
// program would through MPI_Bcast or a store; every rank passes its rank and the count
// to nvshmemx_set_attr_uniqueid_args and starts with
// nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID). Then a ring put, a reduction and a
// barrier check the job, and that the job secret is not left in the environment.
//   uid_init <rank> <nranks> <id file> [--tamper]
// --tamper (a rank other than 0): flips a byte of the id's secret first, so the
// rendezvous must refuse this process.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "cuda_check.h"

__global__ void ring_put(int* data, int me, int npes) { nvshmem_int_p(data, 100 + me, (me + 1) % npes); }

static bool read_id(const char* path, nvshmemx_uniqueid_t* id) {
  FILE* f = fopen(path, "rb");
  if (!f) return false;
  const bool ok = fread(id, sizeof *id, 1, f) == 1;
  fclose(f);
  return ok;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s <rank> <nranks> <id file> [--tamper]\n", argv[0]);
    return 2;
  }
  const int rank = atoi(argv[1]), nranks = atoi(argv[2]);
  const char* path = argv[3];
  const bool tamper = argc > 4 && strcmp(argv[4], "--tamper") == 0;
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (rank == 0) {
    if (nvshmemx_get_uniqueid(&id) != 0) return 3;
    const std::string tmp = std::string(path) + ".tmp";
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) != 0 || rename(tmp.c_str(), path) != 0) return 4;
  } else {
    for (int tries = 0; !read_id(path, &id); ++tries) {
      if (tries > 3000) return 5;  // 30 s
      usleep(10000);
    }
    if (tamper) id.internal[10] ^= 1;  // a byte of the secret
  }
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr) != 0) return 6;
  if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) return 7;
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int failures = 0;
  if (me != rank || npes != nranks) {
    fprintf(stderr, "rank %d of %d became PE %d of %d\n", rank, nranks, me, npes);
    ++failures;
  }
  if (getenv("PYSHMEM_JOB_SECRET")) {
    fprintf(stderr, "PE %d: the job secret outlived init\n", me);
    ++failures;
  }
  int* data = static_cast<int*>(nvshmem_calloc(1, sizeof(int)));
  int* sum = static_cast<int*>(nvshmem_malloc(sizeof(int)));
  ring_put<<<1, 1>>>(data, me, npes);
  CUDA_CHECK(cudaDeviceSynchronize());
  nvshmem_barrier_all();
  int got = 0;
  CUDA_CHECK(cudaMemcpy(&got, data, sizeof got, cudaMemcpyDeviceToHost));
  if (got != 100 + (me + npes - 1) % npes) {
    fprintf(stderr, "PE %d: ring put gave %d\n", me, got);
    ++failures;
  }
  nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, sum, data, 1);
  CUDA_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
  if (got != 100 * npes + npes * (npes - 1) / 2) {
    fprintf(stderr, "PE %d: the reduction gave %d\n", me, got);
    ++failures;
  }
  nvshmem_free(data);
  nvshmem_free(sum);
  printf("PE %d of %d: uid init %s\n", me, npes, failures ? "FAILED" : "OK");
  nvshmem_finalize();
  return failures ? 1 : 0;
}
