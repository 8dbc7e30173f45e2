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
    (defined(PYSHMEM_GPU_PROGRAM) && !defined(__CUDACC_RTC__)) /* nvcc, or a .cpp's host compiler */
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
/* NVSHMEM's status codes (its numbers). */
enum nvshmemx_status {
  NVSHMEMX_SUCCESS = 0,
  NVSHMEMX_ERROR_INVALID_VALUE,
  NVSHMEMX_ERROR_OUT_OF_MEMORY,
  NVSHMEMX_ERROR_NOT_SUPPORTED,
  NVSHMEMX_ERROR_SYMMETRY,
  NVSHMEMX_ERROR_GPU_NOT_SELECTED,
  NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED,
  NVSHMEMX_ERROR_INTERNAL,
  NVSHMEMX_ERROR_SENTINEL = 0x7fffffff
};

/* The message macros NVSHMEM's <nvshmemx.h> makes visible: "file:function:line: " and
 * the formatted message on stderr (WARN: on stdout); _EXIT then ends the process, the
 * _JMP forms set `status` to `err` and jump to `label` (the _NULL/_EQ/_NE/_NZ forms when
 * their condition holds). */
#define NVSHMEMI_ERROR_PRINT(...)                                    \
  do {                                                               \
    fprintf(stderr, "%s:%s:%d: ", __FILE__, __FUNCTION__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                                    \
    fprintf(stderr, "\n");                                           \
  } while (0)
#define NVSHMEMI_ERROR_EXIT(...)     \
  do {                               \
    NVSHMEMI_ERROR_PRINT(__VA_ARGS__); \
    exit(-1);                        \
  } while (0)
#define NVSHMEMI_WARN_PRINT(...)    \
  do {                              \
    fprintf(stdout, "WARN: ");      \
    fprintf(stdout, __VA_ARGS__);   \
    fprintf(stdout, "\n");          \
  } while (0)
#define NVSHMEMI_ERROR_JMP(status, err, label, ...)                              \
  do {                                                                           \
    fprintf(stderr, "%s:%d: non-zero status: %d ", __FILE__, __LINE__, (int)(err)); \
    fprintf(stderr, __VA_ARGS__);                                                \
    fprintf(stderr, "\n");                                                       \
    status = err;                                                                \
    goto label;                                                                  \
  } while (0)
#define NVSHMEMI_NULL_ERROR_JMP(var, status, err, label, ...) \
  do {                                                        \
    if ((var) == NULL) NVSHMEMI_ERROR_JMP(status, err, label, __VA_ARGS__); \
  } while (0)
#define NVSHMEMI_EQ_ERROR_JMP(status, expected, err, label, ...) \
  do {                                                           \
    if ((status) == (expected)) NVSHMEMI_ERROR_JMP(status, err, label, __VA_ARGS__); \
  } while (0)
#define NVSHMEMI_NE_ERROR_JMP(status, expected, err, label, ...) \
  do {                                                           \
    if ((status) != (expected)) NVSHMEMI_ERROR_JMP(status, err, label, __VA_ARGS__); \
  } while (0)
#define NVSHMEMI_NZ_ERROR_JMP(status, err, label, ...) \
  do {                                                 \
    if ((status) != 0) NVSHMEMI_ERROR_JMP(status, err, label, __VA_ARGS__); \
  } while (0)
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
  struct {
    struct {
      const void* id; /* nvshmemx_uniqueid_t*: nvshmemx_set_attr_uniqueid_args sets these */
      int myrank;
      int nranks;
    } uid_args;
  } args;
} nvshmemx_init_attr_t;
#define NVSHMEMX_INIT_ATTR_INITIALIZER {nullptr, {{nullptr, -1, -1}}}
/* The MPI bootstrap: pyshmem-nvcc compiles it into programs that link MPI (-lmpi ...),
 * with the program's <mpi.h> (pyshmem/nvshmem_mpi_bootstrap.cpp); absent otherwise. */
extern "C" int pyshmem_nvshmem_mpi_comm_init(void* mpi_comm) __attribute__((weak));
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
/* A size as NVSHMEM's environment takes it: a number (a fraction too) and an optional
 * K, M, G or T (binary multiples; "KiB", "KB" ... alike). False when it is none. */
inline bool parse_nvshmem_size(const char* text, size_t* out) {
  char* end = nullptr;
  const double v = strtod(text, &end);
  if (end == text || v < 0) return false;
  double scale = 1;
  switch (*end | 0x20) {
    case 'k': scale = 1024.0, ++end; break;
    case 'm': scale = 1024.0 * 1024, ++end; break;
    case 'g': scale = 1024.0 * 1024 * 1024, ++end; break;
    case 't': scale = 1024.0 * 1024 * 1024 * 1024, ++end; break;
    default: break;
  }
  if ((*end | 0x20) == 'i') ++end;
  if ((*end | 0x20) == 'b') ++end;
  if (*end) return false;
  *out = static_cast<size_t>(v * scale);
  return true;
}
/* Sizes pyshmem's heap (`pyshmem_var`: PYSHMEM_SYMMETRIC_SIZE or
 * PYSHMEM_CUDA_SYMMETRIC_SIZE) for an NVSHMEM program, unless the variable is set: at
 * least `floor` bytes, and at least NVSHMEM_SYMMETRIC_SIZE plus `margin` when the program
 * set that. NVSHMEM promises a heap at least that large and grows it as the program
 * allocates, so programs (NVIDIA's perftest among them) set it to exactly what they
 * allocate; pyshmem's heap is reserved at init, so it takes the margin for the
 * allocator's alignment and the program's smaller allocations on top. */
inline void adopt_nvshmem_environment(const char* pyshmem_var, size_t floor, size_t margin) {
  const char* mine = getenv(pyshmem_var);
  if (mine && *mine) return;
  size_t bytes = floor, asked = 0;
  const char* text = getenv("NVSHMEM_SYMMETRIC_SIZE");
  if (text && *text && !parse_nvshmem_size(text, &asked))
    fprintf(stderr, "pyshmem: NVSHMEM_SYMMETRIC_SIZE=%s is not a size (bytes, with K, M, G or T); it is ignored\n",
            text);
  else if (text && *text && asked + margin > bytes)
    bytes = asked + margin;
  char value[32];
  snprintf(value, sizeof value, "%zu", bytes);
  setenv(pyshmem_var, value, 1);
}
}  // namespace nvshmem_host
}  // namespace pyshmem

#if defined(PYSHMEM_CPU_PROGRAM) && !defined(__CUDACC__)
#include "pyshmem/nvshmem_host_cpu.h"
#else
#include "pyshmem/nvshmem_host_gpu.h"
#endif
#include "pyshmem/nvshmem_host_uid.h"

/* nvshmem_init with attributes. flags 0 or NVSHMEMX_INIT_THREAD_PES: nvshmem_init.
 * NVSHMEMX_INIT_WITH_UNIQUEID: the PEs are the processes that pass the same id
 * (pyshmem/nvshmem_host_uid.h), numbered by their myrank. NVSHMEMX_INIT_WITH_MPI_COMM:
 * the PEs are the ranks of *attr->mpi_comm (any communicator: rank 0 makes a unique id
 * and MPI_Bcast hands it to the others), in programs linked with MPI (-lmpi), where
 * pyshmem-nvcc compiles that bootstrap. NVSHMEMX_INIT_WITH_SHMEM: not supported (no
 * OpenSHMEM runtime to join). Returns 0, or nonzero with a message (nothing started). */
inline int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t* attr) {
  if (flags & NVSHMEMX_INIT_WITH_SHMEM)
    return ::pyshmem::nvshmem_host::unsupported(
        "nvshmemx_init_attr", "NVSHMEMX_INIT_WITH_SHMEM has no pyshmem equivalent (there is no OpenSHMEM runtime to "
                              "join); start the PEs with shmemrun (or mpirun/srun) and call nvshmem_init()");
  if ((flags & NVSHMEMX_INIT_WITH_UNIQUEID) && (flags & NVSHMEMX_INIT_WITH_MPI_COMM))
    return ::pyshmem::nvshmem_host::unsupported("nvshmemx_init_attr",
                                                "NVSHMEMX_INIT_WITH_UNIQUEID and _WITH_MPI_COMM exclude each other");
  if (flags & NVSHMEMX_INIT_WITH_UNIQUEID) {
    if (!attr) return ::pyshmem::nvshmem_host::unsupported("nvshmemx_init_attr", "NVSHMEMX_INIT_WITH_UNIQUEID needs attr");
    return ::pyshmem::nvshmem_host::init_with_uniqueid(static_cast<const nvshmemx_uniqueid_t*>(attr->args.uid_args.id),
                                                       attr->args.uid_args.myrank, attr->args.uid_args.nranks);
  }
  if (flags & NVSHMEMX_INIT_WITH_MPI_COMM) {
    if (!attr || !attr->mpi_comm)
      return ::pyshmem::nvshmem_host::unsupported("nvshmemx_init_attr",
                                                  "NVSHMEMX_INIT_WITH_MPI_COMM needs attr->mpi_comm (an MPI_Comm*)");
    if (!pyshmem_nvshmem_mpi_comm_init)
      return ::pyshmem::nvshmem_host::unsupported(
          "nvshmemx_init_attr", "NVSHMEMX_INIT_WITH_MPI_COMM: this program does not link MPI; build it with MPI's "
                                "flags (e.g. $(mpicxx --showme:compile) $(mpicxx --showme:link), which include -lmpi) "
                                "so that pyshmem-nvcc adds its MPI bootstrap");
    return pyshmem_nvshmem_mpi_comm_init(attr->mpi_comm);
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

/* The largest grid of `block` threads and `shared_mem` dynamic shared bytes per block
 * that nvshmemx_collective_launch runs with all blocks resident: the occupancy of `func`
 * (cudaOccupancyMaxActiveBlocksPerMultiprocessor) times the device's multiprocessors. On
 * a GPU that is CUDA's answer; on the CPU build every block of a launch is resident (its
 * own OS thread), up to 4096 blocks of at most 1024 threads and 48 KiB of dynamic shared
 * memory, so the answer is 4096 rounded down to a multiple of the CPUs (0 beyond those
 * limits). Returns 0, or nonzero with the error printed. */
inline int nvshmemx_collective_launch_query_gridsize(const void* func, dim3 block, void** args, size_t shared_mem,
                                                     int* gridsize) {
  (void)args;
  *gridsize = 0;
  int dev = 0, per_sm = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, int(block.x * block.y * block.z), shared_mem);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess) {
    fprintf(stderr, "pyshmem: nvshmemx_collective_launch_query_gridsize: the occupancy query failed: %s (%s)\n",
            cudaGetErrorString(e), cudaGetErrorName(e));
    return NVSHMEMX_ERROR_INTERNAL;
  }
  *gridsize = per_sm * sms;
  return 0;
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
