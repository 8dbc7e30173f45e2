/* pyshmem/nvshmem_host.h: NVSHMEM's host API (nvshmem_init, nvshmem_malloc, the
 * _on_stream forms, nvshmemx_collective_launch, ...) for whole programs built with
 * pyshmem-nvcc, over pyshmem's host C API (pyshmem/pyshmem.h). Included by <nvshmem.h>
 * (pyshmem/nvshmem_base.h). This file holds what both targets share (constants,
 * nvshmemx_init_attr, the info calls, the refusals, team splits); the target's own half
 * comes first:
 *  - pyshmem/nvshmem_host_cpu.h (pyshmem-nvcc --cpu, PYSHMEM_CPU_PROGRAM, a host compiler):
 *    the symmetric heap is the host heap, streams are the CPU CUDA runtime subset's
 *    (pyshmem/cpu_cuda_runtime.h), kernels run on the CPU (pyshmem/cpu_launch.h);
 *  - pyshmem/nvshmem_host_gpu.h (pyshmem-nvcc --gpu, PYSHMEM_GPU_PROGRAM, nvcc): the
 *    symmetric heap is pyshmem's GPU heap (pyshmem/pyshmem_gpu.h), streams and launches
 *    are CUDA's.
 *
 * Errors: the calls that return a status return 0 for success, and otherwise print
 * pyshmem's message (what, which call, which PE, how to fix) to stderr and return
 * nonzero; nvshmem_init, which returns nothing, ends the process with status 1 when the
 * runtime cannot start (as NVSHMEM does).
 *
 * Kernels built from Python (pyshmem.cuda.Module, the CPU build of pyshmem.cuda.launch)
 * define neither macro and get none of this. */
#ifndef PYSHMEM_NVSHMEM_HOST_H
#define PYSHMEM_NVSHMEM_HOST_H

#if (defined(PYSHMEM_CPU_PROGRAM) && !defined(__CUDACC__)) || \
    (defined(PYSHMEM_GPU_PROGRAM) && defined(__CUDACC__) && !defined(__CUDACC_RTC__))
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pyshmem/pyshmem.h"

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
#define NVSHMEM_THREAD_SINGLE 0
#define NVSHMEM_THREAD_FUNNELED 1
#define NVSHMEM_THREAD_SERIALIZED 2
#define NVSHMEM_THREAD_MULTIPLE 3

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
}  // namespace nvshmem_host
}  // namespace pyshmem

#if defined(PYSHMEM_CPU_PROGRAM) && !defined(__CUDACC__)
#include "pyshmem/nvshmem_host_cpu.h"
#else
#include "pyshmem/nvshmem_host_gpu.h"
#endif

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

/* nvshmem_init, reporting the thread level provided: always NVSHMEM_THREAD_MULTIPLE
 * (every one-sided call may come from any thread; allocation and collectives from one
 * thread of the PE at a time). Returns 0, or NVSHMEMX_ERROR_NOT_SUPPORTED for a
 * `requested` that is no NVSHMEM_THREAD_* level (nothing is started then). */
inline int nvshmem_init_thread(int requested, int* provided) {
  if (requested < NVSHMEM_THREAD_SINGLE || requested > NVSHMEM_THREAD_MULTIPLE)
    return ::pyshmem::nvshmem_host::unsupported("nvshmem_init_thread",
                                                "requested must be one of NVSHMEM_THREAD_SINGLE/FUNNELED/SERIALIZED/MULTIPLE");
  nvshmem_init();
  if (provided) *provided = NVSHMEM_THREAD_MULTIPLE;
  return 0;
}
inline void nvshmem_query_thread(int* provided) { *provided = NVSHMEM_THREAD_MULTIPLE; }

/* Ends every PE of the job with exit status `status` (pyshmem_global_exit); does not
 * return. */
inline void nvshmem_global_exit(int status) { pyshmem_global_exit(status); }

/* pyshmem's own version (NVSHMEM reports its library's here; nvshmem_info_get_version
 * gives the API version this layer follows). */
inline void nvshmemx_vendor_get_version_info(int* major, int* minor, int* patch) {
  *major = PYSHMEM_VERSION_MAJOR;
  *minor = PYSHMEM_VERSION_MINOR;
  *patch = PYSHMEM_VERSION_PATCH;
}

inline void nvshmem_info_get_version(int* major, int* minor) {
  *major = NVSHMEM_MAJOR_VERSION;
  *minor = NVSHMEM_MINOR_VERSION;
}
/* Writes "pyshmem" (NUL-terminated, NVSHMEM_MAX_NAME_LEN bytes at most). */
inline void nvshmem_info_get_name(char* name) { snprintf(name, NVSHMEM_MAX_NAME_LEN, "%s", NVSHMEM_VENDOR_STRING); }

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

#endif /* a program built with pyshmem-nvcc */
#endif /* PYSHMEM_NVSHMEM_HOST_H */
