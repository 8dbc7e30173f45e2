// host/c_api_gpu.cpp: the C ABI of the GPU symmetric heap (include/pyshmem/pyshmem_gpu.h)
// over the cuda backend (cuda/gpu_heap.h).
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/state.h"
#include "cuda/gpu_heap.h"
#include "cuda/gpu_module.h"
#include "host/c_api_guard.h"
#include "host/host.h"
#include "pyshmem/pyshmem_gpu.h"

namespace {
using namespace pyshmem;

// Init first (NOT_INIT), then a GPU heap (NOT_IMPLEMENTED with the backend's reason).
void require_gpu_heap(const char* call) {
  require_init(call);
  if (!gpu_active())
    fail(PYSHMEM_ERR_NOT_IMPLEMENTED, call,
         "this PE has no GPU heap: the backend is " + gpu_describe() +
             "; run on a machine with a GPU (PYSHMEM_BACKEND=cuda), or build the program for the CPU "
             "(pyshmem-nvcc --cpu)");
}
}  // namespace

using pyshmem::capi::guard;

extern "C" {

int pyshmem_gpu_device(int* out) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_device");
    *out = pyshmem::gpu_device_ordinal();
  });
}

int pyshmem_gpu_malloc(size_t size, size_t alignment, int clear, void** out) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_malloc");
    *out = reinterpret_cast<void*>(pyshmem::gpu_malloc(size, alignment, clear != 0, "pyshmem_gpu_malloc"));
  });
}

int pyshmem_gpu_free(void* ptr) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_free");
    pyshmem::gpu_free(reinterpret_cast<uint64_t>(ptr), "pyshmem_gpu_free");
  });
}

int pyshmem_gpu_device_state(pyshmem_device_state* out) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_device_state");
    *out = *pyshmem::gpu_device_state();
  });
}

int pyshmem_gpu_watch_stream(void* stream) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_watch_stream");
    pyshmem::gpu_watch_user_stream(reinterpret_cast<uint64_t>(stream), "pyshmem_gpu_watch_stream");
  });
}

}  // extern "C"
