// What a CUDA program sees when something goes wrong on the CPU build: CUDA error codes
// with a message naming the call, never a crash. Checked by tests/pe/test_nvshmem_programs.py
// (each line "check <name>: ok"; the kernel-fault message on stderr).
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>

static int failures = 0;
static void check(const char* name, bool ok) {
  printf("check %s: %s\n", name, ok ? "ok" : "WRONG");
  failures += !ok;
}

__global__ void fine(int* out) { out[threadIdx.x] = threadIdx.x; }

__global__ void faulty(int* out) {
  if (blockIdx.x == 1 && threadIdx.x == 3) __trap();
  out[threadIdx.x] = 1;
}

int main() {
  nvshmem_init();
  int* out = nullptr;
  check("cudaMalloc", cudaMalloc(&out, 64 * sizeof(int)) == cudaSuccess);

  fine<<<1, 2048>>>(out);  // more than 1024 threads per block
  check("too many threads is cudaErrorInvalidConfiguration", cudaGetLastError() == cudaErrorInvalidConfiguration);
  check("the last error was cleared", cudaGetLastError() == cudaSuccess);

  int not_a_kernel = 0;
  void* args[] = {&out};
  check("cudaLaunchKernel of a non-kernel is cudaErrorInvalidDeviceFunction",
        cudaLaunchKernel((const void*)&not_a_kernel, dim3(1), dim3(1), args, 0, 0) == cudaErrorInvalidDeviceFunction);
  check("cudaLaunchKernel of a kernel by address",
        cudaLaunchKernel((const void*)fine, dim3(1), dim3(32), args, 0, 0) == cudaSuccess &&
            cudaDeviceSynchronize() == cudaSuccess);
  int host[32] = {};
  check("its result", cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess && host[31] == 31);

  cudaEvent_t e;
  check("an interprocess event is cudaErrorNotSupported",
        cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming) == cudaErrorNotSupported);
  check("cudaFree of a pointer not from cudaMalloc is cudaErrorInvalidValue", cudaFree(host) == cudaErrorInvalidValue);
  check("nvshmemx_buffer_unregister of a buffer never registered is an error", nvshmemx_buffer_unregister(host) != 0);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  check("nvshmemx_init_attr with a unique id but no id set is an invalid value",
        nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) == NVSHMEMX_ERROR_INVALID_VALUE);
  nvshmemx_uniqueid_t forged = NVSHMEMX_UNIQUEID_INITIALIZER;
  check("an id nvshmemx_get_uniqueid did not make is refused",
        nvshmemx_set_attr_uniqueid_args(0, 2, &forged, &attr) == 0 &&
            nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) == NVSHMEMX_ERROR_INVALID_VALUE);
  check("a rank out of range is refused", nvshmemx_set_attr_uniqueid_args(2, 2, &forged, &attr) != 0);
  check("joining an OpenSHMEM runtime is not supported",
        nvshmemx_init_attr(NVSHMEMX_INIT_WITH_SHMEM, &attr) == NVSHMEMX_ERROR_NOT_SUPPORTED);

  cudaGetLastError();  // clears the errors above
  check("a faulty kernel's launch itself succeeds",
        cudaLaunchKernel((const void*)faulty, dim3(2), dim3(32), args, 0, 0) == cudaSuccess);
  check("the kernel's fault is cudaErrorLaunchFailure at the next synchronisation",
        cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  check("and sticks", cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost) == cudaErrorLaunchFailure);
  printf("PE %d of %d: errors %s\n", nvshmem_my_pe(), nvshmem_n_pes(), failures ? "FAILED" : "OK");
  nvshmem_finalize();
  return failures ? 1 : 0;
}
