/* pyshmem/nvshmem_host_gpu.h: the target-specific half of NVSHMEM's host API for
 * programs built for the GPU (pyshmem-nvcc --gpu: nvcc with PYSHMEM_GPU_PROGRAM; included
 * by pyshmem/nvshmem_host.h): init and finalize, the symmetric heap (pyshmem's GPU heap,
 * pyshmem/pyshmem_gpu.h), the _on_stream forms as one-block kernels on the caller's
 * stream, and nvshmemx_collective_launch as CUDA's cooperative launch.
 *
 * Kernels reach the runtime through pyshmem_d_state, the device state in each CUDA
 * module (pyshmem/device/common.cuh): nvshmem_init copies it there, into every
 * translation unit's copy (each registers itself below; pyshmem-nvcc --gpu builds with
 * -rdc=true, defines PYSHMEM_DEVICE_STATE_EXTERN in every source and links one unit of
 * its own that defines the state, so they all share it).
 *
 * Host code calls NVSHMEM's RMA, atomic, signal, wait and collective functions as it does
 * with NVSHMEM: pyshmem/nvshmem_host_gpu_calls.h has their host forms. A host-only
 * translation unit (a .cpp, compiled by the host compiler) gets this file without
 * device code: nvshmem_init fills the state of the units nvcc compiled. */
#ifndef PYSHMEM_NVSHMEM_HOST_GPU_H
#define PYSHMEM_NVSHMEM_HOST_GPU_H

#include <cuda.h>
#include <cuda_runtime.h>

#include <vector>

#include "pyshmem/pyshmem_gpu.h"

/* The generated _on_stream forms (<nvshmem.h>) for this target: kernels of
 * PYSHMEM_ON_STREAM_BLOCK_THREADS threads for the cooperative operations (their _block
 * variant), of one thread for the rest. */
#define PYSHMEM_NVSHMEM_ON_STREAM_GPU 1
#ifndef PYSHMEM_ON_STREAM_BLOCK_THREADS
#define PYSHMEM_ON_STREAM_BLOCK_THREADS 256
#endif

namespace pyshmem {
namespace nvshmem_host {
/* How to fill one translation unit's pyshmem_d_state (see the file comment). */
typedef cudaError_t (*StateCopy)(const pyshmem_device_state*);
inline std::vector<StateCopy>& state_copies() {
  static std::vector<StateCopy> copies;
  return copies;
}
inline int add_state_copy(StateCopy copy) {
  state_copies().push_back(copy);
  return 0;
}
#if defined(__CUDACC__) /* a host-only unit (a .cpp) has no device code, so no state */
namespace {
/* This translation unit's: a static initialiser registers it before main. */
cudaError_t copy_state_to_this_unit(const pyshmem_device_state* st) {
  return cudaMemcpyToSymbol(pyshmem_d_state, st, sizeof *st);
}
[[maybe_unused]] const int this_unit_registered = add_state_copy(&copy_state_to_this_unit);
}  // namespace
#endif

inline int cuda_failure(const char* call, const char* what, cudaError_t e) {
  fprintf(stderr, "pyshmem: %s: %s failed: %s (%s)\n", call, what, cudaGetErrorString(e), cudaGetErrorName(e));
  return NVSHMEMX_ERROR_INTERNAL;
}
/* The device nvshmem_init copied the state to (-1 before). */
inline int& state_device() {
  static int device = -1;
  return device;
}
/* Before a launch that uses the device API: the CUDA runtime's current device must be
 * the one whose kernels got the state (elsewhere pyshmem_d_state is zeros). Else the
 * job ends with a message naming both (status 1): a PE that stops taking part in a
 * collective would leave the others waiting. */
inline void require_state_device(const char* call) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == state_device()) return;
  fprintf(stderr,
          "pyshmem: %s: the current CUDA device is %d, but nvshmem_init set up pyshmem on device %d (only its kernels "
          "can use NVSHMEM): call cudaSetDevice(%d), or choose the device with PYSHMEM_CUDA_DEVICE or a cudaSetDevice "
          "before nvshmem_init\n",
          call, current, state_device(), state_device());
  pyshmem_global_exit(1);
}
/* After the launch of an _on_stream form: a launch that failed ends the job with CUDA's
 * error naming `call` (status 1; the other PEs would wait for this one forever).
 * Returns 0 otherwise. */
inline int launched(const char* call) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return 0;
  cuda_failure(call, "the kernel launch", e);
  pyshmem_global_exit(1);
  return NVSHMEMX_ERROR_INTERNAL;
}
/* Waits for this PE's GPU work (its kernels may still use the heap). When that work
 * failed (a kernel trapped), the job ends with CUDA's error naming `call` (status 1):
 * the other PEs may be waiting for this one. */
inline void finish_gpu_work(const char* call) {
  const cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return;
  cuda_failure(call, "this PE's GPU work", e);
  pyshmem_global_exit(1);
}
}  // namespace nvshmem_host
}  // namespace pyshmem

/* ---- setup ---- */

/* Collective: starts the runtime with its GPU heap (PYSHMEM_BACKEND=cuda unless the
 * environment says otherwise), makes pyshmem's GPU the CUDA runtime's current device
 * (PYSHMEM_CUDA_DEVICE, else the device current before the call, else node rank modulo
 * the GPU count: cudaSetDevice(mype_node % count) afterwards agrees), and copies the
 * device state into this program's GPU code (that device's: the _on_stream forms and
 * nvshmemx_collective_launch end the job when another device is current). Complete on return: kernels launched
 * afterwards on any stream see it. Ends the process (status 1, with the reason) when
 * it cannot start, e.g. on a machine with no GPU (build with --cpu there). */
inline void nvshmem_init() {
  setenv("PYSHMEM_BACKEND", "cuda", 0);  // fail at init, naming why, not at the first nvshmem_malloc
  // The GPU heap is device memory from init on: pyshmem's default (1 GiB), more when
  // NVSHMEM_SYMMETRIC_SIZE asks for it (+64 MiB for the allocator's alignment).
  ::pyshmem::nvshmem_host::adopt_nvshmem_environment("PYSHMEM_CUDA_SYMMETRIC_SIZE", size_t(1) << 30,
                                                     size_t(64) << 20);
  // Host code's nvshmem_my_pe/n_pes, team queries and barriers read the host's state.
  int dev = -1;
  pyshmem_device_state st;
  if (pyshmem_init() != 0 || pyshmem_device_state_get(&::pyshmem::detail::h_state) != 0 ||
      pyshmem_gpu_device(&dev) != 0 || pyshmem_gpu_device_state(&st) != 0) {
    fprintf(stderr, "pyshmem: nvshmem_init failed: %s\n(this program was built for the GPU, with pyshmem-nvcc --gpu; "
                    "to run it with no GPU, build it with pyshmem-nvcc --cpu)\n",
            pyshmem_last_error());
    exit(1);
  }
  cudaError_t e = cudaSetDevice(dev);
  for (size_t i = 0; e == cudaSuccess && i < ::pyshmem::nvshmem_host::state_copies().size(); ++i)
    e = ::pyshmem::nvshmem_host::state_copies()[i](&st);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    ::pyshmem::nvshmem_host::cuda_failure("nvshmem_init", "copying the device state to the program's GPU code", e);
    exit(1);
  }
  ::pyshmem::nvshmem_host::state_device() = dev;
  ::pyshmem::nvshmem_host::init_status() = NVSHMEM_STATUS_IS_INITIALIZED;
}

/* Collective: waits for this PE's GPU work (its kernels may still use the heap), then
 * barrier and release the runtime. When that work failed (a kernel trapped), the job
 * ends with CUDA's error (status 1) instead: the other PEs may be waiting for it. */
inline void nvshmem_finalize() {
  ::pyshmem::nvshmem_host::finish_gpu_work("nvshmem_finalize");
  if (pyshmem_finalize() != 0) ::pyshmem::nvshmem_host::report_failure("nvshmem_finalize");
  ::pyshmem::nvshmem_host::init_status() = NVSHMEM_STATUS_NOT_INITIALIZED;
}

/* ---- symmetric memory in the GPU heap (collective; all PEs succeed or all fail). ----
 * NULL on failure, with the reason printed (PYSHMEM_CUDA_SYMMETRIC_SIZE sizes the heap). */
inline void* nvshmem_malloc(size_t size) {
  void* p = nullptr;
  return pyshmem_gpu_malloc(size, 0, 0, &p) == 0 ? p
                                                  : (::pyshmem::nvshmem_host::report_failure("nvshmem_malloc"), nullptr);
}
inline void* nvshmem_calloc(size_t count, size_t size) {
  void* p = nullptr;
  if (size && count > SIZE_MAX / size) {
    fprintf(stderr, "pyshmem: nvshmem_calloc failed: count * size overflows (count %zu, size %zu)\n", count, size);
    return nullptr;
  }
  return pyshmem_gpu_malloc(count * size, 0, 1, &p) == 0
             ? p
             : (::pyshmem::nvshmem_host::report_failure("nvshmem_calloc"), nullptr);
}
inline void* nvshmem_align(size_t alignment, size_t size) {
  void* p = nullptr;
  return pyshmem_gpu_malloc(size, alignment, 0, &p) == 0
             ? p
             : (::pyshmem::nvshmem_host::report_failure("nvshmem_align"), nullptr);
}
/* Collective: waits for this PE's GPU work (a kernel still queued could otherwise write
 * into the next object given the same memory), quiet, then release; NULL does nothing. */
inline void nvshmem_free(void* ptr) {
  if (!ptr) return;
  ::pyshmem::nvshmem_host::finish_gpu_work("nvshmem_free");
  if (pyshmem_gpu_free(ptr) != 0) ::pyshmem::nvshmem_host::report_failure("nvshmem_free");
}

/* ---- user buffers: not provided on the GPU build (its symmetric memory is the GPU heap;
 * docs/design.md's feature status). Each prints why and fails. ---- */
inline int nvshmemx_buffer_register(void*, size_t) {
  return ::pyshmem::nvshmem_host::unsupported("nvshmemx_buffer_register",
                                              "the GPU build registers no user buffers: allocate with nvshmem_malloc");
}
inline int nvshmemx_buffer_unregister(void*) {
  return ::pyshmem::nvshmem_host::unsupported("nvshmemx_buffer_unregister",
                                              "the GPU build registers no user buffers: allocate with nvshmem_malloc");
}
inline void* nvshmemx_buffer_register_symmetric(void*, size_t, int) {
  ::pyshmem::nvshmem_host::unsupported("nvshmemx_buffer_register_symmetric",
                                       "the GPU build maps no user buffers into the symmetric heap: allocate with "
                                       "nvshmem_malloc");
  return nullptr;
}
inline int nvshmemx_buffer_unregister_symmetric(void*, size_t) {
  return ::pyshmem::nvshmem_host::unsupported("nvshmemx_buffer_unregister_symmetric",
                                              "the GPU build maps no user buffers into the symmetric heap");
}

/* ---- kernels of modules loaded with cuModuleLoad (pyshmem-nvcc --gpu -cubin) ---- */

/* Copies this PE's device state into the module's pyshmem_d_state (a module built with
 * pyshmem-nvcc --gpu -cubin defines it), so its kernels can call NVSHMEM. After
 * nvshmem_init, with the module's context current; complete on return. Returns 0, or
 * nonzero with the reason printed. The program links the driver (-lcuda). */
inline int nvshmemx_cumodule_init(CUmodule module) {
  if (!module) {
    fprintf(stderr, "pyshmem: nvshmemx_cumodule_init: module is NULL\n");
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  pyshmem_device_state st;
  if (::pyshmem::nvshmem_host::init_status() != NVSHMEM_STATUS_IS_INITIALIZED || pyshmem_gpu_device_state(&st) != 0) {
    fprintf(stderr, "pyshmem: nvshmemx_cumodule_init: call nvshmem_init first\n");
    return NVSHMEMX_ERROR_INTERNAL;
  }
  CUdeviceptr where = 0;
  size_t bytes = 0;
  CUresult r = cuModuleGetGlobal(&where, &bytes, module, "pyshmem_d_state");
  if (r != CUDA_SUCCESS || bytes != sizeof st) {
    fprintf(stderr, "pyshmem: nvshmemx_cumodule_init: the module has no pyshmem_d_state of %zu bytes (CUresult %d); "
                    "build it with pyshmem-nvcc --gpu -cubin\n", sizeof st, static_cast<int>(r));
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  r = cuMemcpyHtoD(where, &st, sizeof st);
  if (r != CUDA_SUCCESS) {
    fprintf(stderr, "pyshmem: nvshmemx_cumodule_init: copying the device state failed (CUresult %d)\n",
            static_cast<int>(r));
    return NVSHMEMX_ERROR_INTERNAL;
  }
  return 0;
}
/* Nothing to release: returns 0 (NULL: nonzero). */
inline int nvshmemx_cumodule_finalize(CUmodule module) { return module ? 0 : NVSHMEMX_ERROR_INVALID_VALUE; }

/* ---- kernels that synchronise with other PEs ---- */

/* Launches `func` as a cooperative kernel (cudaLaunchCooperativeKernel: all blocks
 * resident at once, this_grid().sync() allowed) on `stream`, and has the proxy thread
 * poll for its requests until it ends (pyshmem_gpu_watch_stream); args[i] points at
 * argument i. Returns 0, or nonzero with CUDA's error printed (e.g. a grid larger than
 * nvshmemx_collective_launch_query_gridsize's). */
inline int nvshmemx_collective_launch(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                                      cudaStream_t stream) {
  ::pyshmem::nvshmem_host::require_state_device("nvshmemx_collective_launch");
  const cudaError_t e = cudaLaunchCooperativeKernel(func, grid, block, args, shared_mem, stream);
  if (e != cudaSuccess)
    return ::pyshmem::nvshmem_host::cuda_failure("nvshmemx_collective_launch", "cudaLaunchCooperativeKernel", e);
  /* The kernel may reach other nodes through the proxy: it polls until the kernel ends. */
  if (pyshmem_gpu_watch_stream(stream) == 0) return 0;
  ::pyshmem::nvshmem_host::report_failure("nvshmemx_collective_launch");
  return 1;
}
#if defined(__CUDACC__)
#include "pyshmem/nvshmem_host_gpu_calls.h"
#endif
#endif /* PYSHMEM_NVSHMEM_HOST_GPU_H */
