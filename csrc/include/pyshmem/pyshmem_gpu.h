/* pyshmem/pyshmem_gpu.h: the host C API of pyshmem's GPU symmetric heap (the cuda
 * backend: PYSHMEM_BACKEND=cuda, or auto on a node where every PE sees a GPU). It is what
 * a CUDA program built with pyshmem-nvcc --gpu (pyshmem/nvshmem_host_gpu.h) calls; from
 * Python the same heap is pyshmem.cuda.
 *
 * Conventions are pyshmem.h's: a pyshmem_status (0 = PYSHMEM_SUCCESS), results through
 * the trailing output arguments, pyshmem_last_error() for the message. Every function
 * fails with PYSHMEM_ERR_NOT_IMPLEMENTED, saying why, when this PE has no GPU heap (the
 * backend is cpu, or pyshmem was built without the CUDA headers), and with
 * PYSHMEM_ERR_NOT_INIT before pyshmem_init(). */
#ifndef PYSHMEM_PYSHMEM_GPU_H
#define PYSHMEM_PYSHMEM_GPU_H

#include <stddef.h>

#include "pyshmem/device_state.h"
#include "pyshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA device ordinal this PE's GPU heap lives on (PYSHMEM_CUDA_DEVICE, else the
 * device of the context current at init, else node rank modulo the GPU count). pyshmem
 * uses that device's primary context, which the CUDA runtime shares. */
int pyshmem_gpu_device(int* ordinal_out);

/* Collective, like pyshmem_malloc: `size` bytes of the GPU symmetric heap at the same
 * offset on every PE, aligned to `alignment` (0: 64 bytes; else a power of two), zeroed
 * when `clear` is nonzero (complete on return: peers may write into it once this
 * returns). Ends with an agreement of all PEs: all succeed or all fail
 * (PYSHMEM_ERR_NOMEM names PYSHMEM_CUDA_SYMMETRIC_SIZE). A size of 0 gives a valid,
 * distinct address. */
int pyshmem_gpu_malloc(size_t size, size_t alignment, int clear, void** ptr_out);

/* Collective: completes this PE's operations (quiet), then releases `ptr`, an address
 * pyshmem_gpu_malloc returned and not yet freed (PYSHMEM_ERR_INVALID_ARG otherwise, on
 * every PE). */
int pyshmem_gpu_free(void* ptr);

/* Copies into *state_out the device state that GPU kernels read (addresses in the GPU
 * heap, the GPU's team table and proxy ring): what a CUDA module's pyshmem_d_state must
 * hold before its kernels call the device API. Constant from init to finalize (team
 * splits update the table it points to, not the state). */
int pyshmem_gpu_device_state(pyshmem_device_state* state_out);

/* Tells this PE's proxy thread that kernels enqueued on `stream` (a cudaStream_t or
 * CUstream; NULL: the legacy default stream) so far may push device-API requests for
 * PEs on other nodes: the proxy polls its GPU ring without dozing until that work
 * completes (a CUDA event recorded on the stream now), instead of noticing a request
 * only at the end of a doze (up to PYSHMEM_PROXY_IDLE_SLEEP_MAX_US after a quiet
 * period). nvshmemx_collective_launch calls it; call it after a plain <<<...>>> launch
 * of such a kernel. Returns at once; does nothing when no peer's GPU heap is on another
 * node. PYSHMEM_ERR_OS when the driver refuses the event. */
int pyshmem_gpu_watch_stream(void* stream);

/* ---- host-initiated operations on the GPU heap (NVSHMEM's host-side RMA, signals and
 * waits in programs built with pyshmem-nvcc --gpu) ---- */

/* Copies `nbytes` from `source` into PE pe's copy of the symmetric GPU object at `dest`
 * (put), or from PE pe's copy of `source` into `dest` (get). The local side may be any
 * address CUDA copies (device memory, pinned or pageable host memory: unified
 * addressing). stream NULL: on pyshmem's own stream, complete on return (the source
 * may be reused; a put's data is in pe's memory, a get's in dest), not ordered with
 * work still queued on the caller's streams. Otherwise enqueued on `stream` (a
 * cudaStream_t or CUstream) and complete in its order. A peer on another node is
 * reached through its transport (the stream is synchronised first; complete on
 * return). NOT_SYMMETRIC for a symmetric side outside the GPU heap, INVALID_ARG for a
 * PE out of range. */
int pyshmem_gpu_put(void* dest, const void* source, size_t nbytes, int pe, void* stream);
int pyshmem_gpu_get(void* dest, const void* source, size_t nbytes, int pe, void* stream);

/* *ptr_out: the address at which this PE's kernels load and store PE pe's copy of the
 * symmetric GPU object at `dest` (NVSHMEM's nvshmem_ptr from host code), or NULL when
 * pe's GPU heap is not mapped here (another node). NOT_SYMMETRIC / INVALID_ARG as put's. */
int pyshmem_gpu_ptr(const void* dest, int pe, void** ptr_out);

/* "" (returns 0) when atomics and signals from this PE can reach PE pe's GPU heap (same
 * node, or a transport that does atomics in GPU memory); else NOT_IMPLEMENTED with the
 * reason in pyshmem_last_error(). Ask before a kernel does such an atomic from host
 * code: a request the transport refuses traps the kernel, which ends the context. */
int pyshmem_gpu_atomics_check(int pe);

/* wait_until / test / signal_fetch / signal_wait_until on this PE's copy of a symmetric
 * GPU variable (dtype and cmp as pyshmem_wait_until's): each poll copies it to the host,
 * so they see what kernels stored with system scope and what peers delivered, and they
 * never queue behind a kernel. Acquire operations, as on the host heap. */
int pyshmem_gpu_wait_until(const void* ivar, int dtype, int cmp, const void* value);
int pyshmem_gpu_test(const void* ivar, int dtype, int cmp, const void* value, int* satisfied_out);
int pyshmem_gpu_signal_fetch(const uint64_t* sig_addr, uint64_t* value_out);
int pyshmem_gpu_signal_wait_until(const uint64_t* sig_addr, int cmp, uint64_t value, uint64_t* value_out);

/* The wait sets on `nelems` contiguous symmetric GPU variables at `ivars` (host/wait.cpp's
 * semantics): mode 0 all, 1 any, 2 some; blocking 0 tests once. status (host memory,
 * nullable) leaves out the entries whose status is nonzero; values points at one value,
 * or at nelems (vector nonzero), in host memory. *result_out: all: 1/0; any: an index or
 * SIZE_MAX; some: how many, their indices written to `indices` (host memory, nelems
 * entries; may be NULL for the other modes). */
int pyshmem_gpu_wait_vector(int mode, int blocking, const void* ivars, size_t nelems, const int* status, int dtype,
                            int cmp, const void* values, int vector, size_t* indices, size_t* result_out);

#ifdef __cplusplus
}
#endif

#endif /* PYSHMEM_PYSHMEM_GPU_H */
