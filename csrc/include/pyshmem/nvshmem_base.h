/* pyshmem/nvshmem_base.h: the hand-written part of <nvshmem.h> (NVSHMEM's device API on
 * pyshmem's): types, constants and the untyped calls the op table has no row for. The
 * typed families are generated at build time from the op table (csrc/nvshmem/gen_nvshmem.py)
 * into the package's nvshmem_include/ directory, whose <nvshmem.h> includes this file.
 *
 * Semantics, completion and ordering are pyshmem's device API's (pyshmem/device.cuh,
 * docs/memory_model.md). Signal operators: use the names (NVSHMEM_SIGNAL_SET/ADD); their
 * numbers are pyshmem's (OpenSHMEM's), not NVSHMEM's. The host API (nvshmem_init,
 * nvshmem_malloc, the _on_stream forms, ...) is pyshmem/nvshmem_host.h, for whole programs
 * built with pyshmem-nvcc (--cpu or --gpu); kernels built from Python get the device API
 * only (docs/nvshmem.md). */
#ifndef PYSHMEM_NVSHMEM_BASE_H
#define PYSHMEM_NVSHMEM_BASE_H

/* A host-only translation unit of a program built for the GPU: a .cpp that nvcc hands to
 * the host compiler. It gets the host API, with the host-callable NVSHMEM functions
 * declared (the link step of pyshmem-nvcc --gpu defines those it calls), and none of the
 * device code, which only nvcc compiles. */
#if defined(PYSHMEM_GPU_PROGRAM) && !defined(__CUDACC__)
#define PYSHMEM_NV_HOST_ONLY_UNIT 1
#else
#define PYSHMEM_NV_HOST_ONLY_UNIT 0
#endif

#if PYSHMEM_NV_HOST_ONLY_UNIT
#include <cuda_runtime.h>

#include "pyshmem/device/host_state.h"
#define PYSHMEM_HD inline
#else
#include "pyshmem/device.cuh"
#endif
#include "pyshmem/team.h"
#include "pyshmem/types.h"

/* nvshmem_half_* and nvshmem_bfloat16_* (RMA) where the CUDA half-precision headers are
 * found (the toolkit's, or the CPU build's own in pyshmem/cpu_include). */
#if __has_include(<cuda_fp16.h>)
#include <cuda_fp16.h>
#define PYSHMEM_NVSHMEM_HAS_HALF 1
#else
#define PYSHMEM_NVSHMEM_HAS_HALF 0
#endif
#if __has_include(<cuda_bf16.h>)
#include <cuda_bf16.h>
#define PYSHMEM_NVSHMEM_HAS_BF16 1
#else
#define PYSHMEM_NVSHMEM_HAS_BF16 0
#endif

/* The NVSHMEM API version this layer follows, and that it is pyshmem's. */
#define NVSHMEM_MAJOR_VERSION 3
#define NVSHMEM_MINOR_VERSION 0
#define NVSHMEM_VENDOR_STRING "pyshmem"
#define PYSHMEM_NVSHMEM_COMPAT 1

typedef int32_t nvshmem_team_t; /* pyshmem::team_t: a team handle */
#define NVSHMEM_TEAM_WORLD PYSHMEM_TEAM_WORLD
#define NVSHMEM_TEAM_SHARED PYSHMEM_TEAM_SHARED
#define NVSHMEMX_TEAM_NODE PYSHMEM_TEAM_SHARED /* the PEs of this node: pyshmem's shared team */
#define NVSHMEM_TEAM_INVALID PYSHMEM_TEAM_INVALID

#define NVSHMEM_CMP_EQ PYSHMEM_CMP_EQ
#define NVSHMEM_CMP_NE PYSHMEM_CMP_NE
#define NVSHMEM_CMP_GT PYSHMEM_CMP_GT
#define NVSHMEM_CMP_LE PYSHMEM_CMP_LE
#define NVSHMEM_CMP_LT PYSHMEM_CMP_LT
#define NVSHMEM_CMP_GE PYSHMEM_CMP_GE
#define NVSHMEM_SIGNAL_SET PYSHMEM_SIGNAL_SET
#define NVSHMEM_SIGNAL_ADD PYSHMEM_SIGNAL_ADD

/* Where nvcc compiles, the _warp/_block variants and nvshmem_ptr are device functions
 * (PYSHMEM_NV_DEVICE), and so is everything that reaches symmetric memory in kernels
 * built from Python (pyshmem.cuda.Module). In a whole program built for the GPU
 * (PYSHMEM_NV_HOST_FORMS), the RMA, atomic, signal, wait and collective functions are
 * __host__ __device__ (PYSHMEM_NV_HOSTDEV): in device code the device API, in host code
 * (PYSHMEM_NV_HOST_BRANCH) pyshmem/nvshmem_host_gpu_calls.h's host forms. The CPU build
 * runs the device API on host threads too. */
#if defined(__CUDACC__)
#define PYSHMEM_NV_DEVICE __device__ __forceinline__
#else
#define PYSHMEM_NV_DEVICE inline
#endif
#if defined(PYSHMEM_GPU_PROGRAM) && defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#define PYSHMEM_NV_HOST_FORMS 1
#define PYSHMEM_NV_HOSTDEV __host__ __device__ __forceinline__
#else
#define PYSHMEM_NV_HOST_FORMS 0
#define PYSHMEM_NV_HOSTDEV PYSHMEM_NV_DEVICE
#endif
#if PYSHMEM_NV_HOST_FORMS && !defined(__CUDA_ARCH__)
#define PYSHMEM_NV_HOST_BRANCH 1
#else
#define PYSHMEM_NV_HOST_BRANCH 0
#endif


/* The multicast (NVLS) address of `ptr` for the team: pyshmem maps no multicast objects,
 * so NULL, which is what NVSHMEM returns for a team without multicast support; callers
 * fall back to unicast loads and stores as they must there. */
PYSHMEM_HD void* nvshmemx_mc_ptr(nvshmem_team_t, const void*) { return nullptr; }

#include "pyshmem/nvshmem_host.h"

/* Address of `dest` on `pe` for loads and stores, or NULL when pe is not reachable so.
 * From the host code of a program built for the GPU: the address this PE's kernels use
 * (device memory), as NVSHMEM's host nvshmem_ptr answers. */
#if PYSHMEM_NV_HOST_ONLY_UNIT
void* nvshmem_ptr(const void* dest, int pe);
#else
PYSHMEM_NV_HOSTDEV void* nvshmem_ptr(const void* dest, int pe) {
#if PYSHMEM_NV_HOST_BRANCH
  return ::pyshmem::nvshmem_gpu_host::ptr("nvshmem_ptr", dest, pe);
#else
  return pyshmem::ptr(dest, pe);
#endif
}
#endif

/* Maxloc over the team, NVSHMEM's one typed reduction the op table has no row for (its
 * element is a pair: value .x, location .y): dest[i] = the pair of largest value among the
 * members' source[i], of equal values the one of smallest location, for each of the
 * nreduce elements (NVSHMEM reduces element 0 only). Complete on return, as the other
 * reductions; dest and source may be the same array. */
#if !PYSHMEM_NV_HOST_ONLY_UNIT
PYSHMEM_NV_DEVICE int nvshmemx_double2_maxloc_reduce_block(nvshmem_team_t team, double2* dest, const double2* source,
                                                           size_t nreduce) {
  pyshmem::detail::reduce_impl<double2, pyshmem::detail::kReduceMaxloc, pyshmem::Coop::block>(
      "nvshmemx_double2_maxloc_reduce_block", team, dest, source, nreduce);
  return 0;
}
#endif

#endif /* PYSHMEM_NVSHMEM_BASE_H */
