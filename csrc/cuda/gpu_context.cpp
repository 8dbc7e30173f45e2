// cuda/gpu_context.cpp: device choice, context scope and the private stream (see
// cuda/gpu_context.h).
#include "cuda/gpu_context.h"

#include "core/error.h"

namespace pyshmem {
namespace cuda {
namespace {

Gpu g_gpu;

int device_of_current_context(const Driver& d) {
  CUcontext cur = nullptr;
  if (d.cuCtxGetCurrent(&cur) != CUDA_SUCCESS || !cur) return -1;
  CUdevice dev = -1;
  return d.cuCtxGetDevice(&dev) == CUDA_SUCCESS ? static_cast<int>(dev) : -1;
}

}  // namespace

Gpu& gpu() { return g_gpu; }

void gpu_open(const Driver* d, long requested, int local_rank, const char* call) {
  Gpu& g = g_gpu;
  g.d = d;
  PYSHMEM_CU_CHECK(*d, call, cuDeviceGetCount, &g.device_count);
  const int framework = device_of_current_context(*d);
  if (requested >= 0) {
    g.device = static_cast<int>(requested);
    g.chosen_by = "PYSHMEM_CUDA_DEVICE";
  } else if (framework >= 0) {
    g.device = framework;
    g.chosen_by = "the CUDA context current at init";
  } else {
    g.device = local_rank % g.device_count;
    g.chosen_by = "the PE's rank on its node";
  }
  if (g.device >= g.device_count)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "PYSHMEM_CUDA_DEVICE=" + std::to_string(g.device) + " but this node has " + std::to_string(g.device_count) +
             " GPU(s); set it to 0.." + std::to_string(g.device_count - 1) +
             ", or unset it so each PE uses its framework's current device or picks one by its rank on the node");
  CUdevice dev = 0;
  PYSHMEM_CU_CHECK(*d, call, cuDeviceGet, &dev, g.device);
  char name[256] = {};
  d->cuDeviceGetName(name, sizeof name - 1, dev);
  g.name = name;
  int rdma = 0;
  if (d->cuDeviceGetAttribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, dev) != CUDA_SUCCESS)
    rdma = 0;
  g.rdma_capable = rdma != 0;
  if (g.stream) {  // init again after finalize: the previous run's stream goes
    GpuScope old(call);
    d->cuStreamDestroy(g.stream);
    g.stream = nullptr;
  }
  PYSHMEM_CU_CHECK(*d, call, cuDevicePrimaryCtxRetain, &g.ctx, dev);
  GpuScope scope(call);
  PYSHMEM_CU_CHECK(*d, call, cuStreamCreate, &g.stream, CU_STREAM_NON_BLOCKING);
}

GpuScope::GpuScope(const char* call) {
  const Gpu& g = g_gpu;
  CUcontext cur = nullptr;
  if (g.d->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == g.ctx) return;
  PYSHMEM_CU_CHECK(*g.d, call, cuCtxPushCurrent, g.ctx);
  pushed_ = true;
}

GpuScope::~GpuScope() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  g_gpu.d->cuCtxPopCurrent(&popped);
}

void copy_sync(CUdeviceptr dst, CUdeviceptr src, size_t n, const char* call) {
  if (n == 0) return;
  const Gpu& g = g_gpu;
  PYSHMEM_CU_CHECK(*g.d, call, cuMemcpyAsync, dst, src, n, g.stream);
  PYSHMEM_CU_CHECK(*g.d, call, cuStreamSynchronize, g.stream);
}

void memset_sync(CUdeviceptr dst, unsigned char value, size_t n, const char* call) {
  if (n == 0) return;
  const Gpu& g = g_gpu;
  PYSHMEM_CU_CHECK(*g.d, call, cuMemsetD8Async, dst, value, n, g.stream);
  PYSHMEM_CU_CHECK(*g.d, call, cuStreamSynchronize, g.stream);
}

void flush_rdma_writes(const char* call) {
  const Gpu& g = g_gpu;
  PYSHMEM_CU_CHECK(*g.d, call, cuFlushGPUDirectRDMAWrites, CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                   CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
}

std::vector<int> accessors_of(int owner) {
  const Gpu& g = g_gpu;
  std::vector<int> out;
  for (int dev = 0; dev < g.device_count; ++dev) {
    int can = dev == owner;
    if (!can && g.d->cuDeviceCanAccessPeer(&can, dev, owner) != CUDA_SUCCESS) can = 0;
    if (can) out.push_back(dev);
  }
  return out;
}

}  // namespace cuda
}  // namespace pyshmem
