// host/c_api_gpu.cpp: the C ABI of the GPU symmetric heap (include/pyshmem/pyshmem_gpu.h)
// over the cuda backend (cuda/gpu_heap.h).
#include <cstdint>
#include <string>
#include <vector>

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

int pyshmem_gpu_put(void* dest, const void* source, size_t nbytes, int pe, void* stream) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_put");
    pyshmem::gpu_put(reinterpret_cast<uint64_t>(dest), reinterpret_cast<uint64_t>(source), nbytes, pe,
                     reinterpret_cast<uint64_t>(stream), "pyshmem_gpu_put");
  });
}

int pyshmem_gpu_get(void* dest, const void* source, size_t nbytes, int pe, void* stream) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_get");
    pyshmem::gpu_get(reinterpret_cast<uint64_t>(dest), reinterpret_cast<uint64_t>(source), nbytes, pe,
                     reinterpret_cast<uint64_t>(stream), "pyshmem_gpu_get");
  });
}

int pyshmem_gpu_ptr(const void* dest, int pe, void** out) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_ptr");
    *out = reinterpret_cast<void*>(pyshmem::gpu_peer_address(reinterpret_cast<uint64_t>(dest), pe, "pyshmem_gpu_ptr"));
  });
}

int pyshmem_gpu_atomics_check(int pe) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_atomics_check");
    require_pe("pyshmem_gpu_atomics_check", pe);
    const std::string problem = pyshmem::gpu_atomics_problem(pe);
    if (!problem.empty())
      fail(PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem_gpu_atomics_check",
           "an atomic or signal on PE " + std::to_string(pe) + "'s GPU memory: " + problem);
  });
}

int pyshmem_gpu_wait_until(const void* ivar, int dtype, int cmp, const void* value) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_wait_until");
    pyshmem::gpu_wait_until(reinterpret_cast<uint64_t>(ivar), dtype, cmp, value, "pyshmem_gpu_wait_until");
  });
}

int pyshmem_gpu_test(const void* ivar, int dtype, int cmp, const void* value, int* out) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_test");
    *out = pyshmem::gpu_test(reinterpret_cast<uint64_t>(ivar), dtype, cmp, value, "pyshmem_gpu_test") ? 1 : 0;
  });
}

int pyshmem_gpu_signal_fetch(const uint64_t* sig, uint64_t* out) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_signal_fetch");
    *out = pyshmem::gpu_signal_fetch(reinterpret_cast<uint64_t>(sig), "pyshmem_gpu_signal_fetch");
  });
}

int pyshmem_gpu_signal_wait_until(const uint64_t* sig, int cmp, uint64_t value, uint64_t* out) {
  return guard([&] {
    require_gpu_heap("pyshmem_gpu_signal_wait_until");
    *out = pyshmem::gpu_signal_wait_until(reinterpret_cast<uint64_t>(sig), cmp, value, "pyshmem_gpu_signal_wait_until");
  });
}

int pyshmem_gpu_wait_vector(int mode, int blocking, const void* ivars, size_t nelems, const int* status, int dtype,
                            int cmp, const void* values, int vector, size_t* indices, size_t* out) {
  return guard([&] {
    const char* call = "pyshmem_gpu_wait_vector";
    require_gpu_heap(call);
    if (mode < pyshmem::kWaitAll || mode > pyshmem::kWaitSome)
      fail(PYSHMEM_ERR_INVALID_ARG, call, "mode " + std::to_string(mode) + " is not 0 (all), 1 (any) or 2 (some)");
    if (mode == pyshmem::kWaitSome && nelems && !indices)
      fail(PYSHMEM_ERR_INVALID_ARG, call, "the some forms need `indices` (nelems entries)");
    std::vector<size_t> found;
    *out = pyshmem::gpu_wait_vector(static_cast<pyshmem::WaitMode>(mode), blocking != 0,
                                    reinterpret_cast<uint64_t>(ivars), nelems, status, dtype, cmp, values, vector != 0,
                                    mode == pyshmem::kWaitSome ? &found : nullptr, call);
    for (size_t i = 0; i < found.size(); ++i) indices[i] = found[i];
  });
}

}  // extern "C"
