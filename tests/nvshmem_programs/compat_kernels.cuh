// A kernel defined in a header and a helper that launches it with <<<...>>>, as utility
// headers of CUDA programs (NVSHMEM's perftest among them) do. Included by cuda_compat.cu.
#pragma once

#include <cuda_runtime.h>

__global__ void header_double(int* v, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) v[i] *= 2;
}

inline cudaError_t launch_header_double(int* v, int n, cudaStream_t stream) {
  header_double<<<1, 64, 0, stream>>>(v, n);
  return cudaGetLastError();
}
