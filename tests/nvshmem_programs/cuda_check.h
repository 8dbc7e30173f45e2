// CUDA_CHECK for the test programs in this directory, as NVSHMEM's examples keep theirs
// in a shared utility header: a failed CUDA runtime call prints where and why, and ends
// the PE with status 1 (shmemrun then ends the job, naming the PE).
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                              \
  do {                                                                                                \
    cudaError_t err_ = (call);                                                                        \
    if (err_ != cudaSuccess) {                                                                        \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)
