/* pyshmem/nvshmem_host_gpu_calls.h: NVSHMEM's RMA, atomic, signal, wait and collective
 * functions called from the host code of a program built for the GPU (pyshmem-nvcc
 * --gpu): the host branch of the generated functions (PYSHMEM_NV_HOST_BRANCH in
 * pyshmem/nvshmem_base.h; the generator picks the form by the op table's kind,
 * csrc/nvshmem/gen_nvshmem.py), over the GPU heap's C API (pyshmem/pyshmem_gpu.h).
 * Included by pyshmem/nvshmem_host_gpu.h where nvcc compiles.
 *
 * Completion: every call is complete on return, which is what NVSHMEM promises or more
 * (a blocking put returns when the source may be reused, an _nbi form or a non-fetching
 * atomic is complete by the next quiet, a fetching atomic returns its value):
 *  - put/get, p/g, iput/iget, putmem/getmem and their _nbi forms copy through the CUDA
 *    driver (pyshmem_gpu_put/get) on pyshmem's own stream. The local side may be host
 *    memory (pageable or pinned) or device memory. They are not ordered after work still
 *    queued on the program's streams, as NVSHMEM's host calls are not: synchronise the
 *    stream first;
 *  - put_signal copies, then updates the signal: the data is in place before it;
 *  - atomics and signal_op run the device function in a kernel of one thread on this
 *    host thread's stream and wait for it; a PE whose GPU memory takes no atomics from
 *    this PE is refused before the launch (a kernel that traps would end the context);
 *  - wait_until, test, signal_fetch, signal_wait_until and the wait sets poll by copying
 *    the local variables (pyshmem_gpu_wait_*), so they never queue behind a kernel;
 *    status arrays, indices and comparison values are host memory, as in NVSHMEM's host
 *    calls;
 *  - collectives run the _block variant in a kernel of one block
 *    (PYSHMEM_ON_STREAM_BLOCK_THREADS threads) and wait for it; every member calls, as on
 *    the device.
 * These functions return no status (NVSHMEM's neither), so a failure prints pyshmem's
 * message naming the call and ends the job (status 1), rather than leave the other PEs
 * waiting for this one. */
#ifndef PYSHMEM_NVSHMEM_HOST_GPU_CALLS_H
#define PYSHMEM_NVSHMEM_HOST_GPU_CALLS_H

#include <stdio.h>

#include <type_traits>

#include "pyshmem/pyshmem_gpu.h"

namespace pyshmem {
namespace nvshmem_gpu_host {

/* Prints the failed call with pyshmem's message and ends the job (status 1). */
[[noreturn]] inline void fail(const char* call) {
  int pe = -1;
  pyshmem_my_pe(&pe);
  fprintf(stderr, "pyshmem: %s failed on PE %d: %s\n", call, pe, pyshmem_last_error());
  fflush(stderr);
  pyshmem_global_exit(1);
  abort();
}
[[noreturn]] inline void fail_cuda(const char* call, const char* what, cudaError_t e) {
  ::pyshmem::nvshmem_host::cuda_failure(call, what, e);
  pyshmem_global_exit(1);
  abort();
}

/* pyshmem_dtype of T (the wait types: integers; floats for completeness). */
template <class T>
constexpr int dtype() {
  static_assert(std::is_arithmetic<T>::value && sizeof(T) <= 8, "a wait variable is an integer of up to 8 bytes");
  return (std::is_floating_point<T>::value ? 0x20 : std::is_signed<T>::value ? 0 : 0x10) | int(sizeof(T));
}

/* ---- copies through the driver ---- */
inline void put(const char* call, void* dest, const void* source, size_t nbytes, int pe) {
  if (pyshmem_gpu_put(dest, source, nbytes, pe, nullptr) != 0) fail(call);
}
inline void get(const char* call, void* dest, const void* source, size_t nbytes, int pe) {
  if (pyshmem_gpu_get(dest, source, nbytes, pe, nullptr) != 0) fail(call);
}
template <class T>
inline T get_value(const char* call, const T* source, int pe) {
  T value;
  get(call, &value, source, sizeof value, pe);
  return value;
}
/* Strided: one copy per element (strides in elements, as NVSHMEM's). */
inline void iput(const char* call, void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                 size_t elem, int pe) {
  for (size_t i = 0; i < nelems; ++i)
    put(call, static_cast<char*>(dest) + ptrdiff_t(i) * dst * ptrdiff_t(elem),
        static_cast<const char*>(source) + ptrdiff_t(i) * sst * ptrdiff_t(elem), elem, pe);
}
inline void iget(const char* call, void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                 size_t elem, int pe) {
  for (size_t i = 0; i < nelems; ++i)
    get(call, static_cast<char*>(dest) + ptrdiff_t(i) * dst * ptrdiff_t(elem),
        static_cast<const char*>(source) + ptrdiff_t(i) * sst * ptrdiff_t(elem), elem, pe);
}

/* nvshmem_ptr from host code: the address kernels use for pe's copy, or NULL. */
inline void* ptr(const char* call, const void* dest, int pe) {
  void* at = nullptr;
  if (pyshmem_gpu_ptr(dest, pe, &at) != 0) fail(call);
  return at;
}

/* ---- kernels run from the host ---- */

/* This host thread's stream and pinned result slot (made on first use, on the device
 * nvshmem_init set up; kept for the thread's life). */
struct Lane {
  cudaStream_t stream = nullptr;
  void* result = nullptr;
};
inline Lane& lane(const char* call) {
  thread_local Lane l;
  if (!l.stream) {
    cudaError_t e = cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaMallocHost(&l.result, 64);
    if (e != cudaSuccess) fail_cuda(call, "making this thread's stream for host calls", e);
  }
  return l;
}
inline void finish(const char* call, cudaStream_t stream) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) fail_cuda(call, "the kernel launch", e);
  e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) fail_cuda(call, "the kernel", e);
}
inline void check_atomics(const char* call, int pe) {
  if (pe >= 0 && pyshmem_gpu_atomics_check(pe) != 0) fail(call);
}
/* Runs `kernel` (threads threads, one block) with args and waits for it; pe >= 0: an
 * atomic or signal toward pe, checked first. */
template <class... P, class... A>
inline void launch(const char* call, int pe, unsigned threads, void (*kernel)(P...), A... args) {
  check_atomics(call, pe);
  ::pyshmem::nvshmem_host::require_state_device(call);
  Lane& l = lane(call);
  kernel<<<1, threads, 0, l.stream>>>(args...);
  finish(call, l.stream);
}
/* The same for a kernel of one thread that stores its result through its last parameter. */
template <class R, class... P, class... A>
inline R launch_result(const char* call, int pe, void (*kernel)(P...), A... args) {
  static_assert(sizeof(R) <= 64, "a result fits the pinned slot");
  check_atomics(call, pe);
  ::pyshmem::nvshmem_host::require_state_device(call);
  Lane& l = lane(call);
  R* result = static_cast<R*>(l.result);
  kernel<<<1, 1, 0, l.stream>>>(args..., result);
  finish(call, l.stream);
  return *result;
}

template <int D>
__global__ void signal_op_kernel(uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {
  ::pyshmem::signal_op(sig_addr, signal, sig_op, pe);
}
/* put, then the signal: the data is complete at pe before the signal changes. */
inline void put_signal(const char* call, void* dest, const void* source, size_t nbytes, uint64_t* sig_addr,
                       uint64_t signal, int sig_op, int pe) {
  check_atomics(call, pe);  // before the data moves: all or nothing
  put(call, dest, source, nbytes, pe);
  launch(call, pe, 1, signal_op_kernel<0>, sig_addr, signal, sig_op, pe);
}

/* ---- waits: polls that copy the local variables ---- */
inline uint64_t signal_fetch(const char* call, const uint64_t* sig_addr) {
  uint64_t value = 0;
  if (pyshmem_gpu_signal_fetch(sig_addr, &value) != 0) fail(call);
  return value;
}
inline uint64_t signal_wait_until(const char* call, const uint64_t* sig_addr, int cmp, uint64_t cmp_value) {
  uint64_t value = 0;
  if (pyshmem_gpu_signal_wait_until(sig_addr, cmp, cmp_value, &value) != 0) fail(call);
  return value;
}
template <class T>
inline void wait_until(const char* call, const T* ivar, int cmp, T cmp_value) {
  if (pyshmem_gpu_wait_until(ivar, dtype<T>(), cmp, &cmp_value) != 0) fail(call);
}
template <class T>
inline int test(const char* call, const T* ivar, int cmp, T cmp_value) {
  int satisfied = 0;
  if (pyshmem_gpu_test(ivar, dtype<T>(), cmp, &cmp_value, &satisfied) != 0) fail(call);
  return satisfied;
}
/* The wait sets (mode 0 all, 1 any, 2 some; R: the NVSHMEM function's result type). */
template <class T, class R>
inline R wait_set(const char* call, int mode, bool blocking, bool vector, const T* ivars, size_t nelems,
                  size_t* indices, const int* status, int cmp, const T* values) {
  size_t result = 0;
  if (pyshmem_gpu_wait_vector(mode, blocking, ivars, nelems, status, dtype<T>(), cmp, values, vector, indices,
                              &result) != 0)
    fail(call);
  if constexpr (!std::is_void<R>::value) return static_cast<R>(result);
}

}  // namespace nvshmem_gpu_host
}  // namespace pyshmem

#endif /* PYSHMEM_NVSHMEM_HOST_GPU_CALLS_H */
