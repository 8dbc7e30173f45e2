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

#ifdef __cplusplus
}
#endif

#endif /* PYSHMEM_PYSHMEM_GPU_H */
