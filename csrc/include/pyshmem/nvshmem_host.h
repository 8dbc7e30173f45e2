/* pyshmem/nvshmem_host.h: NVSHMEM's host API (nvshmem_init, nvshmem_malloc, the
 * _on_stream forms, nvshmemx_collective_launch, ...) for programs built for the CPU
 * (pyshmem-nvcc --cpu), over pyshmem's host C API (pyshmem/pyshmem.h), its CUDA runtime
 * subset on the CPU (pyshmem/cpu_cuda_runtime.h) and its CPU kernel launches
 * (pyshmem/cpu_launch.h). Included by <nvshmem.h> (pyshmem/nvshmem_base.h).
 *
 * On the CPU build a host thread calls the same functions a kernel calls: the device
 * API's (nvshmem_int_put, nvshmem_quiet, nvshmem_barrier_all ... from main() are the
 * device API run by the host thread, with its completion and ordering rules). The
 * _on_stream forms are stream work: they run in the stream's order, after the kernels and
 * copies enqueued before them, and return at once.
 *
 * Errors: the calls that return a status return 0 for success, and otherwise print
 * pyshmem's message (what, which call, which PE, how to fix) to stderr and return
 * nonzero; nvshmem_init, which returns nothing, ends the process with status 1 when the
 * runtime cannot start (as NVSHMEM does).
 *
 * Compiled where PYSHMEM_CPU_PROGRAM is defined (pyshmem-nvcc --cpu defines it and puts
 * pyshmem/cpu_program_include on the path): kernels built from Python need none of it. */
#ifndef PYSHMEM_NVSHMEM_HOST_H
#define PYSHMEM_NVSHMEM_HOST_H

#if defined(PYSHMEM_CPU_PROGRAM) && !defined(__CUDACC__) && !defined(__CUDACC_RTC__)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pyshmem/cpu_cuda_runtime.h"
#include "pyshmem/cpu_launch.h"
#include "pyshmem/pyshmem.h"

#define PYSHMEM_NVSHMEM_ON_STREAM 1

/* nvshmemx_init_attr's flags (pyshmem's numbers; use the names). */
#define NVSHMEMX_INIT_THREAD_PES 1
#define NVSHMEMX_INIT_WITH_MPI_COMM 2
#define NVSHMEMX_INIT_WITH_SHMEM 4
#define NVSHMEMX_INIT_WITH_UNIQUEID 8
#define NVSHMEMX_SUCCESS 0
#define NVSHMEMX_ERROR_INTERNAL 1
#define NVSHMEMX_ERROR_NOT_SUPPORTED 2
#define NVSHMEM_STATUS_NOT_INITIALIZED 0
#define NVSHMEM_STATUS_IS_BOOTSTRAPPED 1
#define NVSHMEM_STATUS_IS_INITIALIZED 2
#define NVSHMEM_MAX_NAME_LEN 256

typedef struct {
  void* mpi_comm; /* MPI_Comm* with NVSHMEMX_INIT_WITH_MPI_COMM */
} nvshmemx_init_attr_t;
#define NVSHMEMX_INIT_ATTR_INITIALIZER {nullptr}
typedef pyshmem_team_config nvshmem_team_config_t;
#define NVSHMEM_TEAM_NUM_CONTEXTS PYSHMEM_TEAM_NUM_CONTEXTS

namespace pyshmem {
namespace nvshmem_host {
inline int report_failure(const char* call) {
  fprintf(stderr, "pyshmem: %s failed: %s\n", call, pyshmem_last_error());
  return NVSHMEMX_ERROR_INTERNAL;
}
inline int unsupported(const char* call, const char* why) {
  fprintf(stderr, "pyshmem: %s is not supported: %s (docs/nvshmem.md)\n", call, why);
  return NVSHMEMX_ERROR_NOT_SUPPORTED;
}
inline int& init_status() {
  static int s = NVSHMEM_STATUS_NOT_INITIALIZED;
  return s;
}
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

/* nvshmem_init with attributes. flags 0 or NVSHMEMX_INIT_THREAD_PES: nvshmem_init.
 * NVSHMEMX_INIT_WITH_MPI_COMM: the PEs are the job's MPI ranks as the MPI launcher
 * numbered them (pyshmem's bootstrap reads mpirun's and srun's environment); a
 * communicator other than MPI_COMM_WORLD is not supported. NVSHMEMX_INIT_WITH_UNIQUEID
 * and _WITH_SHMEM: not supported (pyshmem has no unique-id bootstrap). Returns 0, or
 * NVSHMEMX_ERROR_NOT_SUPPORTED with a message. */
inline int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t* attr) {
  if (flags & (NVSHMEMX_INIT_WITH_UNIQUEID | NVSHMEMX_INIT_WITH_SHMEM))
    return ::pyshmem::nvshmem_host::unsupported(
        "nvshmemx_init_attr", "NVSHMEMX_INIT_WITH_UNIQUEID and NVSHMEMX_INIT_WITH_SHMEM have no pyshmem equivalent; "
                              "start the PEs with shmemrun (or mpirun/srun) and call nvshmem_init()");
  if (flags & NVSHMEMX_INIT_WITH_MPI_COMM) {
#if defined(MPI_VERSION)  /* <mpi.h> included before <nvshmem.h> */
    if (!attr || !attr->mpi_comm || *static_cast<MPI_Comm*>(attr->mpi_comm) != MPI_COMM_WORLD)
#endif
      return ::pyshmem::nvshmem_host::unsupported(
          "nvshmemx_init_attr", "NVSHMEMX_INIT_WITH_MPI_COMM needs attr->mpi_comm pointing at MPI_COMM_WORLD (and "
                                "<mpi.h> included before <nvshmem.h>); pyshmem takes the PEs from the MPI launcher's "
                                "environment, so nvshmem_init() does the same");
  }
  nvshmem_init();
  return 0;
}
inline int nvshmemx_init_status() { return ::pyshmem::nvshmem_host::init_status(); }

/* Collective: waits for this PE's streams (their kernels may still use the heap), then
 * barrier and unmap the heap. */
inline void nvshmem_finalize() {
  cudaDeviceSynchronize();
  if (pyshmem_finalize() != 0) ::pyshmem::nvshmem_host::report_failure("nvshmem_finalize");
  ::pyshmem::nvshmem_host::init_status() = NVSHMEM_STATUS_NOT_INITIALIZED;
}

inline void nvshmem_info_get_version(int* major, int* minor) {
  *major = NVSHMEM_MAJOR_VERSION;
  *minor = NVSHMEM_MINOR_VERSION;
}
/* Writes "pyshmem" (NUL-terminated, NVSHMEM_MAX_NAME_LEN bytes at most). */
inline void nvshmem_info_get_name(char* name) { snprintf(name, NVSHMEM_MAX_NAME_LEN, "%s", NVSHMEM_VENDOR_STRING); }

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
/* Not supported: pyshmem's symmetric memory is its heap. Returns nonzero. */
inline int nvshmemx_buffer_register(void*, size_t) {
  return ::pyshmem::nvshmem_host::unsupported("nvshmemx_buffer_register",
                                              "allocate symmetric buffers with nvshmem_malloc");
}
inline int nvshmemx_buffer_unregister(void*) {
  return ::pyshmem::nvshmem_host::unsupported("nvshmemx_buffer_unregister",
                                              "allocate symmetric buffers with nvshmem_malloc");
}
/* Not supported; returns NULL. */
inline void* nvshmemx_buffer_register_symmetric(void*, size_t, int) {
  ::pyshmem::nvshmem_host::unsupported("nvshmemx_buffer_register_symmetric",
                                       "allocate symmetric buffers with nvshmem_malloc");
  return nullptr;
}
inline int nvshmemx_buffer_unregister_symmetric(void*, size_t) {
  return ::pyshmem::nvshmem_host::unsupported("nvshmemx_buffer_unregister_symmetric",
                                              "allocate symmetric buffers with nvshmem_malloc");
}

/* ---- teams (host only): collective over parent; see pyshmem_team_split_strided ---- */
inline int nvshmem_team_split_strided(nvshmem_team_t parent, int start, int stride, int size,
                                      const nvshmem_team_config_t* config, long config_mask, nvshmem_team_t* new_team) {
  int t = PYSHMEM_TEAM_INVALID;
  const int rc = pyshmem_team_split_strided(parent, start, stride, size, config, config_mask, &t);
  *new_team = t;
  return rc == 0 ? 0 : ::pyshmem::nvshmem_host::report_failure("nvshmem_team_split_strided");
}
inline int nvshmem_team_split_2d(nvshmem_team_t parent, int xrange, const nvshmem_team_config_t* xconfig, long xmask,
                                 nvshmem_team_t* xteam, const nvshmem_team_config_t* yconfig, long ymask,
                                 nvshmem_team_t* yteam) {
  int x = PYSHMEM_TEAM_INVALID, y = PYSHMEM_TEAM_INVALID;
  const int rc = pyshmem_team_split_2d(parent, xrange, xconfig, xmask, yconfig, ymask, &x, &y);
  *xteam = x;
  *yteam = y;
  return rc == 0 ? 0 : ::pyshmem::nvshmem_host::report_failure("nvshmem_team_split_2d");
}
inline void nvshmem_team_destroy(nvshmem_team_t team) {
  if (pyshmem_team_destroy(team) != 0) ::pyshmem::nvshmem_host::report_failure("nvshmem_team_destroy");
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

#endif /* CPU build */
#endif /* PYSHMEM_NVSHMEM_HOST_H */
