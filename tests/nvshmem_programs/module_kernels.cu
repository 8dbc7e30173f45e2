// Kernels for a module loaded with the driver API (module_host.cu), built as NVIDIA's
// perftest builds its cubins: `pyshmem-nvcc --cpu -cubin module_kernels.cu -o
// module_kernels.cubin`. A kernel with C linkage that calls NVSHMEM, a C++ kernel in a
// namespace, the float instantiation of a template kernel, and one that syncs its grid.
#include <cooperative_groups.h>
#include <cstdint>
#include <nvshmem.h>

extern "C" __global__ void ring_put(int* dest, int value) {
  const int me = nvshmem_my_pe(), next = (me + 1) % nvshmem_n_pes();
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    nvshmem_int_p(dest, value + me, next);
    nvshmem_quiet();
  }
}

namespace ops {
__global__ void scale(int* data, int factor) { data[threadIdx.x] *= factor; }
}  // namespace ops

template <class T>
__global__ void twice(T* data, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) data[i] = 2 * data[i];
}
template __global__ void twice<float>(float*, int);

// Packed arguments of mixed sizes and alignments (cuLaunchKernel's `extra` buffer).
extern "C" __global__ void packed(int64_t* out, char c, int64_t big, short s) { out[0] = c + big + s; }

extern "C" __global__ void grid_sum(int* out) {
  namespace cg = cooperative_groups;
  if (threadIdx.x == 0) atomicAdd(out, int(blockIdx.x) + 1);
  cg::this_grid().sync();
  if (threadIdx.x == 0 && blockIdx.x == 0) out[1] = out[0];
}
