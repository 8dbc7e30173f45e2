// cuda/gpu_module.cpp: modules and launches on the GPU (see cuda/gpu_module.h).
#include "cuda/gpu_module.h"

#include "core/error.h"
#include "cuda/driver.h"
#include "cuda/gpu_context.h"
#include "cuda/gpu_heap.h"
#include "cuda/gpu_watch.h"

namespace pyshmem {


uint64_t gpu_module_load(const std::string& image, const char* call) {
  gpu_require(call);
  cuda::GpuScope scope(call);
  const cuda::Driver& d = scope.d();
  CUmodule mod = nullptr;
  PYSHMEM_CU_CHECK(d, call, cuModuleLoadData, &mod, image.data());
  try {
    gpu_state_upload(reinterpret_cast<uint64_t>(mod), false, call);  // in pyshmem's context: the scope's
  } catch (...) {
    d.cuModuleUnload(mod);
    throw;
  }
  return reinterpret_cast<uint64_t>(mod);
}

uint64_t gpu_module_function(uint64_t module, const std::string& name, const char* call) {
  gpu_require(call);
  cuda::GpuScope scope(call);
  CUfunction fn = nullptr;
  const CUresult r = scope.d().cuModuleGetFunction(&fn, reinterpret_cast<CUmodule>(module), name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND)
    fail(PYSHMEM_ERR_INVALID_ARG, call, "the module has no kernel '" + name + "'; kernels must be extern \"C\"");
  cuda::check(scope.d(), r, call, "cuModuleGetFunction");
  return reinterpret_cast<uint64_t>(fn);
}

void gpu_module_unload(uint64_t module) {
  if (!gpu_active()) return;
  cuda::GpuScope scope("cuda.Module");
  scope.d().cuModuleUnload(reinterpret_cast<CUmodule>(module));
}

void gpu_launch(uint64_t function, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                uint64_t stream, const std::vector<std::string>& args, bool cooperative, const char* call) {
  gpu_require(call);
  cuda::GpuScope scope(call);
  const cuda::Driver& d = scope.d();
  std::vector<void*> params;
  params.reserve(args.size());
  for (const std::string& a : args) params.push_back(const_cast<char*>(a.data()));
  // stream 0 is the legacy default stream, ordered after the caller's earlier work
  // there; waiting on that stream alone leaves kernels on other streams running.
  const CUstream on = stream ? reinterpret_cast<CUstream>(stream) : CU_STREAM_LEGACY;
  void** kernel_params = params.empty() ? nullptr : params.data();
  if (cooperative)
    PYSHMEM_CU_CHECK(d, call, cuLaunchCooperativeKernel, reinterpret_cast<CUfunction>(function), grid[0], grid[1],
                     grid[2], block[0], block[1], block[2], shared_bytes, on, kernel_params);
  else
    PYSHMEM_CU_CHECK(d, call, cuLaunchKernel, reinterpret_cast<CUfunction>(function), grid[0], grid[1], grid[2],
                     block[0], block[1], block[2], shared_bytes, on, kernel_params, nullptr);
  // The kernel may push requests to the proxy's GPU ring: the proxy polls until it ends.
  gpu_watch_stream(reinterpret_cast<uint64_t>(on), call);
  if (!stream) PYSHMEM_CU_CHECK(d, call, cuStreamSynchronize, on);
}

uint64_t gpu_private_stream(const char* call) {
  gpu_require(call);
  return reinterpret_cast<uint64_t>(cuda::gpu().stream);
}

void gpu_watch_user_stream(uint64_t stream, const char* call) {
  gpu_require(call);
  cuda::GpuScope scope(call);
  gpu_watch_stream(stream, call);
}

void gpu_stream_synchronize(uint64_t stream, const char* call) {
  gpu_require(call);
  cuda::GpuScope scope(call);
  PYSHMEM_CU_CHECK(scope.d(), call, cuStreamSynchronize, reinterpret_cast<CUstream>(stream));
}

}  // namespace pyshmem
