// cuda/gpu_module.cpp: modules and launches on the GPU (see cuda/gpu_module.h).
#include "cuda/gpu_module.h"

#include "core/error.h"
#include "cuda/driver.h"
#include "cuda/gpu_heap.h"

namespace pyshmem {

const cuda::Driver& gpu_use(const char* call);  // cuda/gpu_heap.cpp: the context, made current

uint64_t gpu_module_load(const std::string& image, const char* call) {
  const cuda::Driver& d = gpu_use(call);
  CUmodule mod = nullptr;
  PYSHMEM_CU_CHECK(d, call, cuModuleLoadData, &mod, image.data());
  try {
    gpu_state_upload(reinterpret_cast<uint64_t>(mod), false, call);
  } catch (...) {
    d.cuModuleUnload(mod);
    throw;
  }
  return reinterpret_cast<uint64_t>(mod);
}

uint64_t gpu_module_function(uint64_t module, const std::string& name, const char* call) {
  const cuda::Driver& d = gpu_use(call);
  CUfunction fn = nullptr;
  const CUresult r = d.cuModuleGetFunction(&fn, reinterpret_cast<CUmodule>(module), name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND)
    fail(PYSHMEM_ERR_INVALID_ARG, call, "the module has no kernel '" + name + "'; kernels must be extern \"C\"");
  cuda::check(d, r, call, "cuModuleGetFunction");
  return reinterpret_cast<uint64_t>(fn);
}

void gpu_module_unload(uint64_t module) {
  if (!gpu_active()) return;
  gpu_use("cuda.Module").cuModuleUnload(reinterpret_cast<CUmodule>(module));
}

void gpu_launch(uint64_t function, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                uint64_t stream, const std::vector<std::string>& args, const char* call) {
  const cuda::Driver& d = gpu_use(call);
  std::vector<void*> params;
  params.reserve(args.size());
  for (const std::string& a : args) params.push_back(const_cast<char*>(a.data()));
  PYSHMEM_CU_CHECK(d, call, cuLaunchKernel, reinterpret_cast<CUfunction>(function), grid[0], grid[1], grid[2],
                   block[0], block[1], block[2], shared_bytes, reinterpret_cast<CUstream>(stream),
                   params.empty() ? nullptr : params.data(), nullptr);
  if (!stream) PYSHMEM_CU_CHECK(d, call, cuCtxSynchronize);
}

}  // namespace pyshmem
