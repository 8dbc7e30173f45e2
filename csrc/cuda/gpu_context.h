// cuda/gpu_context.h: the GPU, CUDA context and private stream that pyshmem's host side
// works in (cuda backend; internal to csrc/cuda and needs <cuda.h>).
//
// Why a private stream: CUDA's synchronous calls (cuMemcpy, cuMemsetD8) run on the
// legacy default stream. They return before the work is done for device-to-device
// copies, pageable host-to-device copies and memsets, and they queue behind every
// kernel on the legacy stream (and on blocking streams), so a host call made while a
// user kernel spins on the default stream would never finish. pyshmem's own copies,
// fills and helper kernels therefore go on one non-blocking stream of its own and wait
// for that stream only: they are complete on return and independent of user streams.
//
// Why push/pop: host API calls come from the user's threads, where a framework (Numba,
// CuPy, PyTorch) may have its own context current; pyshmem makes its context current
// for the duration of a call (GpuScope) and restores the caller's.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

#include "cuda/driver.h"

namespace pyshmem {
namespace cuda {

struct Gpu {
  const Driver* d = nullptr;
  int device = -1;         // ordinal
  int device_count = 0;
  std::string name;        // "NVIDIA H200"
  std::string chosen_by;   // why this device: "PYSHMEM_CUDA_DEVICE", "the current context", "local rank"
  CUcontext ctx = nullptr;  // the device's primary context (shared with Numba, CuPy, PyTorch)
  CUstream stream = nullptr;  // pyshmem's private non-blocking stream
  bool rdma_capable = false;  // GPUDirect RDMA on VMM allocations
};

// The process's GPU (valid after gpu_open).
Gpu& gpu();

// Chooses the GPU and opens it: `requested` >= 0 is PYSHMEM_CUDA_DEVICE; else the device
// of the context current on the calling thread (a framework picked it), else
// local_rank % count. Retains the primary context and creates the private stream.
// Leaves the calling thread's current context as it was. Throws naming `call`.
void gpu_open(const Driver* d, long requested, int local_rank, const char* call);

// Makes pyshmem's context current on this thread for the scope's lifetime (push), and
// restores the caller's (pop); nothing to do when it is current already.
class GpuScope {
 public:
  explicit GpuScope(const char* call);
  ~GpuScope();
  GpuScope(const GpuScope&) = delete;
  GpuScope& operator=(const GpuScope&) = delete;
  const Driver& d() const { return *gpu().d; }

 private:
  bool pushed_ = false;
};

// Copies / fills on the private stream and waits for that stream: complete on return
// (the bytes are at `dst`, `src` may be reused), whatever the kinds of memory. Call
// inside a GpuScope.
void copy_sync(CUdeviceptr dst, CUdeviceptr src, size_t n, const char* call);
void memset_sync(CUdeviceptr dst, unsigned char value, size_t n, const char* call);

// Waits until GPUDirect RDMA writes into this GPU's memory that completed at the NIC
// (UCX gets) are visible to kernels, before their completion is published. Inside a
// GpuScope, or on a thread attached with gpu_thread_attach.
void flush_rdma_writes(const char* call);

// The devices that can be granted access to memory on device `owner` (owner itself and
// its peer-capable devices).
std::vector<int> accessors_of(int owner);

}  // namespace cuda
}  // namespace pyshmem
