// The driver API's module path, as NVIDIA's perftest takes it with
// NVSHMEM_TEST_CUBIN_LIBRARY=1: cuModuleLoad of a module built with pyshmem-nvcc --cpu
// -cubin (module_kernels.cu), nvshmemx_cumodule_init, cuModuleGetFunction by the name a
// kernel is written with, by its mangled name and for a template instantiation,
// cuLaunchKernel with kernelParams and with a packed `extra` buffer, and
// cuLaunchCooperativeKernel; cuModuleLoadData from the module's bytes; the errors for a
// missing file, a file that is no module and an unknown kernel. `--no-init` launches a
// kernel that calls NVSHMEM without nvshmemx_cumodule_init: the launch fails, as
// NVSHMEM requires the call. Usage: module_host MODULE [--no-init].
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "expect.h"


int main(int argc, char** argv) {
  if (argc < 2) return 2;
  nvshmem_init();
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  EXPECT(cuInit(0) == CUDA_SUCCESS);
  CUmodule mod = nullptr, missing = nullptr, from_memory = nullptr;
  EXPECT(cuModuleLoad(&missing, "/nonexistent/k.cubin") == CUDA_ERROR_FILE_NOT_FOUND);
  EXPECT(cuModuleLoad(&missing, argv[0] /* an executable, no module */) == CUDA_ERROR_INVALID_IMAGE);
  EXPECT(cuModuleLoad(&mod, argv[1]) == CUDA_SUCCESS);
  int* dest = static_cast<int*>(nvshmem_calloc(2, sizeof(int)));
  CUfunction ring = nullptr;
  EXPECT(cuModuleGetFunction(&ring, mod, "ring_put") == CUDA_SUCCESS);
  int me_arg = me;
  void* ring_args[] = {&dest, &me_arg};
  if (argc > 2 && strcmp(argv[2], "--no-init") == 0) {
    EXPECT(cuLaunchKernel(ring, 1, 1, 1, 1, 1, 1, 0, nullptr, ring_args, nullptr) == CUDA_SUCCESS);
    const CUresult r = cuCtxSynchronize();
    printf("PE %d of %d: launch without nvshmemx_cumodule_init: %s\n", me, npes,
           r == CUDA_ERROR_LAUNCH_FAILED ? "failed as it must" : "NOT REFUSED");
    fflush(stdout);
    nvshmem_global_exit(r == CUDA_ERROR_LAUNCH_FAILED ? 3 : 1);
  }
  EXPECT(nvshmemx_cumodule_init(mod) == 0);
  nvshmem_barrier_all();
  int seed = 10;
  void* args[] = {&dest, &seed};
  EXPECT(cuLaunchKernel(ring, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr) == CUDA_SUCCESS);
  EXPECT(cuCtxSynchronize() == CUDA_SUCCESS);
  nvshmem_barrier_all();
  EXPECT(dest[0] == 10 + (me + npes - 1) % npes);

  CUfunction scale = nullptr, twice = nullptr, by_name = nullptr, unknown = nullptr;
  EXPECT(cuModuleGetFunction(&scale, mod, "_ZN3ops5scaleEPii") == CUDA_SUCCESS);  // ops::scale(int*, int)
  EXPECT(cuModuleGetFunction(&by_name, mod, "ops::scale") == CUDA_SUCCESS && by_name == scale);
  EXPECT(cuModuleGetFunction(&twice, mod, "_Z5twiceIfEvPT_i") == CUDA_SUCCESS);  // twice<float>
  EXPECT(cuModuleGetFunction(&unknown, mod, "no_such_kernel") == CUDA_ERROR_NOT_FOUND);
  const char* name = nullptr;
  EXPECT(cuFuncGetName(&name, twice) == CUDA_SUCCESS && strcmp(name, "twice<float>") == 0);
  CUdeviceptr buf = 0;
  EXPECT(cuMemAlloc(&buf, 64 * sizeof(float)) == CUDA_SUCCESS);
  std::vector<int> ints(8, 3);
  EXPECT(cuMemcpyHtoD(buf, ints.data(), 8 * sizeof(int)) == CUDA_SUCCESS);
  int factor = 5;
  void* scale_args[] = {&buf, &factor};
  EXPECT(cuLaunchKernel(scale, 1, 1, 1, 8, 1, 1, 0, nullptr, scale_args, nullptr) == CUDA_SUCCESS);
  EXPECT(cuMemcpyDtoH(ints.data(), buf, 8 * sizeof(int)) == CUDA_SUCCESS);
  EXPECT(ints[0] == 15 && ints[7] == 15);
  std::vector<float> floats(64, 1.5f);
  EXPECT(cuMemcpyHtoD(buf, floats.data(), 64 * sizeof(float)) == CUDA_SUCCESS);
  int n = 64;
  void* twice_args[] = {&buf, &n};
  EXPECT(cuLaunchKernel(twice, 1, 1, 1, 32, 1, 1, 0, nullptr, twice_args, nullptr) == CUDA_SUCCESS);
  EXPECT(cuMemcpyDtoH(floats.data(), buf, 64 * sizeof(float)) == CUDA_SUCCESS);
  EXPECT(floats[0] == 3.0f && floats[63] == 3.0f);

  // The same kernel found in a module loaded from memory.
  FILE* f = fopen(argv[1], "rb");
  std::vector<char> image;
  if (f) {
    fseek(f, 0, SEEK_END);
    image.resize(static_cast<size_t>(ftell(f)));
    fseek(f, 0, SEEK_SET);
    EXPECT(fread(image.data(), 1, image.size(), f) == image.size());
    fclose(f);
  }
  EXPECT(cuModuleLoadData(&from_memory, image.data()) == CUDA_SUCCESS);
  CUfunction packed = nullptr, grid_sum = nullptr;
  EXPECT(cuModuleGetFunction(&packed, from_memory, "packed") == CUDA_SUCCESS);
  // Arguments (int64_t*, char, int64_t, short) packed at their alignments: 8, 1 (+7), 8, 2.
  struct {
    CUdeviceptr out;
    char c;
    char pad[7];
    int64_t big;
    short s;
  } packed_args = {buf, 1, {}, 1000000000000LL, 20};
  size_t packed_size = 8 + 8 + 8 + 2;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed_args, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   CU_LAUNCH_PARAM_END};
  EXPECT(cuLaunchKernel(packed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra) == CUDA_SUCCESS);
  int64_t sum = 0;
  EXPECT(cuMemcpyDtoH(&sum, buf, sizeof sum) == CUDA_SUCCESS);
  EXPECT(sum == 1000000000021LL);
  EXPECT(cuModuleGetFunction(&grid_sum, from_memory, "grid_sum") == CUDA_SUCCESS);
  EXPECT(cuMemsetD32(buf, 0, 2) == CUDA_SUCCESS);
  void* grid_args[] = {&buf};
  EXPECT(cuLaunchCooperativeKernel(grid_sum, 8, 1, 1, 4, 1, 1, 0, nullptr, grid_args) == CUDA_SUCCESS);
  int totals[2] = {0, 0};
  EXPECT(cuMemcpyDtoH(totals, buf, sizeof totals) == CUDA_SUCCESS);
  EXPECT(totals[0] == 36 && totals[1] == 36);
  EXPECT(cuMemFree(buf) == CUDA_SUCCESS);
  EXPECT(nvshmemx_cumodule_finalize(mod) == 0);
  EXPECT(cuModuleUnload(from_memory) == CUDA_SUCCESS);
  EXPECT(cuModuleUnload(mod) == CUDA_SUCCESS);
  nvshmem_barrier_all();
  nvshmem_free(dest);
  printf("PE %d of %d: module path %s\n", me, npes, failures ? "FAILED" : "OK");
  nvshmem_finalize();
  return failures ? 1 : 0;
}
