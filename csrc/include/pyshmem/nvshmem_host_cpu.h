/* pyshmem/nvshmem_host_cpu.h: the target-specific half of NVSHMEM's host API for
 * programs built for the CPU (pyshmem-nvcc --cpu; included by pyshmem/nvshmem_host.h):
 * init and finalize, the symmetric heap (pyshmem's host heap, which the CUDA runtime
 * subset treats as device memory), the _on_stream forms as stream work, and
 * nvshmemx_collective_launch on the CPU kernel launches (pyshmem/cpu_launch.h).
 *
 * On the CPU build a host thread calls the same functions a kernel calls: the device
 * API's (nvshmem_int_put, nvshmem_quiet, nvshmem_barrier_all ... from main() are the
 * device API run by the host thread, with its completion and ordering rules). The
 * _on_stream forms are stream work: they run in the stream's order, after the kernels and
 * copies enqueued before them, and return at once. */
#ifndef PYSHMEM_NVSHMEM_HOST_CPU_H
#define PYSHMEM_NVSHMEM_HOST_CPU_H

#include "pyshmem/cpu_cuda_runtime.h"
#include "pyshmem/cpu_launch.h"

/* The generated _on_stream forms (<nvshmem.h>) for this target. */
#define PYSHMEM_NVSHMEM_ON_STREAM 1

namespace pyshmem {
namespace nvshmem_host {
/* Enqueues host work on `stream` (the _on_stream forms). */
template <class F>
inline void on_stream(cudaStream_t stream, const char* call, F work) {
  ::pyshmem::cpu::rt::stream_enqueue(stream, call, [work]() -> cudaError_t {
    work();
    return cudaSuccess;
  });
}
}  // namespace nvshmem_host
}  // namespace pyshmem

/* ---- setup ---- */

/* Collective: starts the runtime (PYSHMEM_* set by shmemrun, or a job of one PE), binds
 * this program's device API to it, and makes cudaGetDeviceCount report one device per
 * PE of this node. Ends the process (status 1, with the reason) when it cannot start. */
inline void nvshmem_init() {
  if (pyshmem_init() != 0) {
    ::pyshmem::nvshmem_host::report_failure("nvshmem_init");
    exit(1);
  }
  if (::pyshmem::device_init() != 0) {
    ::pyshmem::nvshmem_host::report_failure("nvshmem_init");
    exit(1);
  }
  // The symmetric heap is device memory to the CUDA runtime (copies to and from it).
  const pyshmem_device_state* st = ::pyshmem::detail::h_state;
  ::pyshmem::cpu::rt::register_device_range(reinterpret_cast<const void*>(st->heap_base),
                                            static_cast<size_t>(st->heap_stride) * static_cast<size_t>(st->n_pes));
  int node_pes = 1;
  pyshmem_team_n_pes(PYSHMEM_TEAM_SHARED, &node_pes);
  ::pyshmem::cpu::rt::g_node_pes = node_pes;
  ::pyshmem::nvshmem_host::init_status() = NVSHMEM_STATUS_IS_INITIALIZED;
}

/* Collective: waits for this PE's streams (their kernels may still use the heap), then
 * barrier and unmap the heap. */
inline void nvshmem_finalize() {
  cudaDeviceSynchronize();
  if (pyshmem_finalize() != 0) ::pyshmem::nvshmem_host::report_failure("nvshmem_finalize");
  ::pyshmem::nvshmem_host::init_status() = NVSHMEM_STATUS_NOT_INITIALIZED;
}

/* ---- symmetric memory (collective; each ends with a barrier). NULL on failure. ---- */
inline void* nvshmem_malloc(size_t size) {
  void* p = nullptr;
  return pyshmem_malloc(size, &p) == 0 ? p : (::pyshmem::nvshmem_host::report_failure("nvshmem_malloc"), nullptr);
}
inline void* nvshmem_calloc(size_t count, size_t size) {
  void* p = nullptr;
  return pyshmem_calloc(count, size, &p) == 0 ? p : (::pyshmem::nvshmem_host::report_failure("nvshmem_calloc"), nullptr);
}
inline void* nvshmem_align(size_t alignment, size_t size) {
  void* p = nullptr;
  return pyshmem_align(alignment, size, &p) == 0 ? p : (::pyshmem::nvshmem_host::report_failure("nvshmem_align"), nullptr);
}
inline void nvshmem_free(void* ptr) {
  if (pyshmem_free(ptr) != 0) ::pyshmem::nvshmem_host::report_failure("nvshmem_free");
}
/* ---- kernels that synchronise with other PEs ---- */

/* Launches `func` as a cooperative kernel (all blocks resident at once, this_grid().sync()
 * allowed) on `stream`; args[i] points at argument i. Returns 0, or nonzero with the
 * CUDA error printed (a bad shape, an unknown kernel). */
inline int nvshmemx_collective_launch(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                                      cudaStream_t stream) {
  const cudaError_t e = ::pyshmem::cpu::launch_by_address("nvshmemx_collective_launch", func, grid, block, args,
                                                          shared_mem, stream, true);
  return e == cudaSuccess ? 0 : NVSHMEMX_ERROR_INTERNAL;
}
/* The largest grid nvshmemx_collective_launch runs with all blocks resident: on the CPU
 * build, one block per online CPU (a cooperative launch accepts up to 4096, each block an
 * OS thread, but more than the CPUs only time-share them). */
inline int nvshmemx_collective_launch_query_gridsize(const void* func, dim3 block, void** args, size_t shared_mem,
                                                     int* gridsize) {
  (void)func;
  (void)args;
  (void)shared_mem;
  if (uint64_t(block.x) * block.y * block.z > 1024) {
    *gridsize = 0;
    return NVSHMEMX_ERROR_INTERNAL;
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  *gridsize = static_cast<int>(cpus > 0 ? cpus : 1);
  return 0;
}

#endif /* PYSHMEM_NVSHMEM_HOST_CPU_H */
