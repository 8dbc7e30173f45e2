// What NVSHMEM programs take from CUDA's own headers, written the way such programs
// (NVIDIA's perftest and examples among them) write it: host variables named like CUDA's
// built-ins, mixed-type min/max, NVML queries, the driver API (devices, errors, virtual
// memory management), kernels and launches written inside macros and in a header,
// stream capture into CUDA graphs (NVSHMEM's _on_stream calls included), a template
// kernel through nvshmemx_collective_launch, a grid as large as
// nvshmemx_collective_launch_query_gridsize allows whose blocks wait for each other, and
// a launch whose argument array is shorter than the kernel's parameters. Every check
// says what failed; each PE ends with "PE k of n: cuda compat OK". Built with
// pyshmem-nvcc --cpu and run under shmemrun by tests/pe/test_nvshmem_compat.py.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvml.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "compat_kernels.cuh"
#include "cuda_check.h"
#include "expect.h"

#define CU_CHECK(call)                                                                                      \
  do {                                                                                                      \
    CUresult r_ = (call);                                                                                   \
    if (r_ != CUDA_SUCCESS) {                                                                               \
      const char* s_ = nullptr;                                                                             \
      cuGetErrorName(r_, &s_);                                                                              \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s_ ? s_ : "?");                  \
      exit(1);                                                                                              \
    }                                                                                                       \
  } while (0)

// Kernels written by a macro, one per element type, and a launch written inside one.
#define DEFINE_RAMP(T)                                                                                      \
  __global__ void ramp_##T(T* out, T base, int n) {                                                         \
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) out[i] = base + (T)i; \
  }
DEFINE_RAMP(int)
DEFINE_RAMP(float)
#define RAMP(T, out, base, n, stream) ramp_##T<<<2, 32, 0, stream>>>(out, base, n)

// A template kernel for nvshmemx_collective_launch: a grid-wide sync between two phases.
template <int Scale>
__global__ void grid_scaled(int* out) {
  namespace cg = cooperative_groups;
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x;
  cg::this_grid().sync();
  const int next = out[(blockIdx.x + 1) % gridDim.x];
  cg::this_grid().sync();
  if (threadIdx.x == 0) out[blockIdx.x] = Scale * (out[blockIdx.x] + next);
}

// Block b waits until block b+1 (mod the grid) arrived: only a grid whose blocks are all
// resident at once finishes.
__global__ void ring_of_blocks(unsigned* flags, unsigned* done) {
  if (threadIdx.x == 0) {
    atomicExch(&flags[blockIdx.x], 1u);
    while (atomicAdd(&flags[(blockIdx.x + 1) % gridDim.x], 0u) == 0u) {
    }
    done[blockIdx.x] = 1;
  }
}

__global__ void two_params(int* out, int second) { out[0] = 100 + second; }

__global__ void minmax_kernel(long long* out, unsigned u, int i) {
  out[0] = min(u, i);
  out[1] = max(u, i);
  out[2] = min(3.5f, 2.0);
}

static void check_nvml(int devices) {
  EXPECT(nvmlDeviceGetCount(nullptr) == NVML_ERROR_UNINITIALIZED);
  EXPECT(nvmlInit() == NVML_SUCCESS);
  unsigned count = 0;
  EXPECT(nvmlDeviceGetCount(&count) == NVML_SUCCESS && int(count) == devices);
  nvmlDevice_t h = nullptr, by_bus = nullptr, by_uuid = nullptr;
  EXPECT(nvmlDeviceGetHandleByIndex(count - 1, &h) == NVML_SUCCESS);
  char name[NVML_DEVICE_NAME_BUFFER_SIZE], uuid[NVML_DEVICE_UUID_BUFFER_SIZE];
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, int(count) - 1));
  EXPECT(nvmlDeviceGetName(h, name, sizeof name) == NVML_SUCCESS && strcmp(name, prop.name) == 0);
  EXPECT(nvmlDeviceGetUUID(h, uuid, sizeof uuid) == NVML_SUCCESS && strncmp(uuid, "CPU-", 4) == 0);
  EXPECT(nvmlDeviceGetHandleByUUID(uuid, &by_uuid) == NVML_SUCCESS && by_uuid == h);
  char bdf[64];  // as NVIDIA's perftest writes the bus id it looks up
  snprintf(bdf, sizeof bdf, "%x:%x:%x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  EXPECT(nvmlDeviceGetHandleByPciBusId(bdf, &by_bus) == NVML_SUCCESS && by_bus == h);
  nvmlPciInfo_t pci;
  EXPECT(nvmlDeviceGetPciInfo(h, &pci) == NVML_SUCCESS && int(pci.bus) == prop.pciBusID);
  nvmlGpuP2PStatus_t p2p = NVML_P2P_STATUS_UNKNOWN;
  EXPECT(nvmlDeviceGetP2PStatus(h, h, NVML_P2P_CAPS_INDEX_ATOMICS, &p2p) == NVML_SUCCESS && p2p == NVML_P2P_STATUS_OK);
  nvmlGpuFabricInfoV_t fabric = {};
  fabric.version = nvmlGpuFabricInfo_v2;
  EXPECT(nvmlDeviceGetGpuFabricInfoV(h, &fabric) == NVML_SUCCESS &&
         fabric.state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
  nvmlMemory_t mem;
  EXPECT(nvmlDeviceGetMemoryInfo(h, &mem) == NVML_SUCCESS && mem.total == prop.totalGlobalMem);
  unsigned clock = 0;
  const nvmlReturn_t c = nvmlDeviceGetMaxClockInfo(h, NVML_CLOCK_SM, &clock);
  EXPECT((c == NVML_SUCCESS && clock > 0) || c == NVML_ERROR_NOT_SUPPORTED);
  EXPECT(nvmlDeviceGetHandleByIndex(count, &h) == NVML_ERROR_INVALID_ARGUMENT);
  EXPECT(nvmlShutdown() == NVML_SUCCESS);
  EXPECT(nvmlShutdown() == NVML_ERROR_UNINITIALIZED);
}

static void check_driver(int device) {
  CU_CHECK(cuInit(0));
  CUdevice dev;
  CU_CHECK(cuDeviceGet(&dev, device));
  int sms = 0, rt_sms = 0, junk = 0;
  CU_CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&rt_sms, cudaDevAttrMultiProcessorCount, device));
  EXPECT(sms > 0 && sms == rt_sms);
  int vmm = 0, fabric = 1;
  CU_CHECK(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
  CU_CHECK(cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, dev));
  EXPECT(vmm == 1 && fabric == 0);
  EXPECT(cuDeviceGetAttribute(&junk, static_cast<CUdevice_attribute>(100000), dev) == CUDA_ERROR_INVALID_VALUE);
  size_t total = 0;
  CU_CHECK(cuDeviceTotalMem(&total, dev));
  EXPECT(total > 0);
  const char* text = nullptr;
  EXPECT(cuGetErrorName(CUDA_ERROR_NOT_FOUND, &text) == CUDA_SUCCESS && strcmp(text, "CUDA_ERROR_NOT_FOUND") == 0);
  EXPECT(cuGetErrorString(static_cast<CUresult>(123456), &text) == CUDA_ERROR_INVALID_VALUE);
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxGetCurrent(&ctx));
  CUdevice ctx_dev = -1;
  CU_CHECK(cuCtxGetDevice(&ctx_dev));
  EXPECT(ctx != nullptr && ctx_dev == device);

  // Virtual memory management: create, reserve, map, give access; a second mapping of the
  // same memory through an exported file descriptor sees the same bytes.
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t gran = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  const size_t bytes = 4 * gran;
  CUmemGenericAllocationHandle h, imported, retained;
  CU_CHECK(cuMemCreate(&h, bytes, &prop, 0));
  CUdeviceptr va = 0, va2 = 0;
  CU_CHECK(cuMemAddressReserve(&va, bytes, 0, 0, 0));
  EXPECT(cuMemMap(va + 1, gran, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);  // not aligned
  CU_CHECK(cuMemMap(va, bytes, 0, h, 0));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess(va, bytes, &access, 1));
  CU_CHECK(cuMemsetD32(va, 0xabcd1234u, bytes / 4));
  const unsigned* words = reinterpret_cast<const unsigned*>(va);
  EXPECT(words[0] == 0xabcd1234u && words[bytes / 4 - 1] == 0xabcd1234u);
  int fd = -1;
  CU_CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_CHECK(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  CU_CHECK(cuMemAddressReserve(&va2, bytes, 0, 0, 0));
  CU_CHECK(cuMemMap(va2, bytes, 0, imported, 0));
  CU_CHECK(cuMemSetAccess(va2, bytes, &access, 1));
  reinterpret_cast<unsigned*>(va)[7] = 77;
  EXPECT(reinterpret_cast<const unsigned*>(va2)[7] == 77);
  CU_CHECK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va + gran)));
  EXPECT(retained == h);
  CU_CHECK(cuMemRelease(retained));
  EXPECT(cuMemAddressFree(va, bytes) == CUDA_ERROR_INVALID_VALUE);  // still mapped
  CU_CHECK(cuMemUnmap(va, bytes));
  CU_CHECK(cuMemUnmap(va2, bytes));
  CU_CHECK(cuMemAddressFree(va, bytes));
  CU_CHECK(cuMemAddressFree(va2, bytes));
  CU_CHECK(cuMemRelease(h));
  CU_CHECK(cuMemRelease(imported));
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  EXPECT(cuMemCreate(&h, bytes, &prop, 0) == CUDA_ERROR_NOT_SUPPORTED);
}

// Capture kernels, a header's launch and a copy into a graph; launch it twice. Then the
// NVSHMEM collectives of a perftest's --cudagraph path, captured and launched twice.
static void check_graphs(int mype, int npes) {
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int n = 64;
  int *d = nullptr, *pinned = nullptr;
  CUDA_CHECK(cudaMalloc(&d, n * sizeof(int)));
  CUDA_CHECK(cudaMallocHost(&pinned, n * sizeof(int)));
  for (int i = 0; i < n; ++i) pinned[i] = -1;
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(s, &status));
  EXPECT(status == cudaStreamCaptureStatusActive);
  RAMP(int, d, 1, n, s);
  CUDA_CHECK(launch_header_double(d, n, s));
  CUDA_CHECK(cudaMemcpyAsync(pinned, d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  EXPECT(pinned[0] == -1);  // nothing ran while capturing
  size_t nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(g, nullptr, &nodes));
  EXPECT(nodes == 3);
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, NULL, NULL, 0));
  for (int rep = 0; rep < 2; ++rep) {
    for (int i = 0; i < n; ++i) pinned[i] = -1;
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    EXPECT(pinned[0] == 2 && pinned[n - 1] == 2 * n);
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(g));

  // A synchronising call during a global capture is refused and ends the capture.
  cudaGraph_t broken = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  EXPECT(cudaMemcpy(d, pinned, sizeof(int), cudaMemcpyHostToDevice) == cudaErrorStreamCaptureUnsupported);
  EXPECT(cudaStreamEndCapture(s, &broken) == cudaErrorStreamCaptureInvalidated && broken == nullptr);
  (void)cudaGetLastError();

  // NVSHMEM's collectives on a stream, captured once, launched twice.
  int* src = static_cast<int*>(nvshmem_malloc(n * sizeof(int)));
  int* dst = static_cast<int*>(nvshmem_malloc(n * sizeof(int)));
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  RAMP(int, src, mype, n, s);
  nvshmemx_barrier_all_on_stream(s);
  nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, dst, src, n, s);
  CUDA_CHECK(cudaMemcpyAsync(pinned, dst, n * sizeof(int), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  const int ranks = npes * (npes - 1) / 2;
  for (int rep = 0; rep < 2; ++rep) {
    for (int i = 0; i < n; ++i) pinned[i] = -1;
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    EXPECT(pinned[0] == ranks && pinned[n - 1] == ranks + npes * (n - 1));
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(g));
  nvshmem_barrier_all();
  nvshmem_free(src);
  nvshmem_free(dst);
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFreeHost(pinned));
  CUDA_CHECK(cudaStreamDestroy(s));
}

static void check_launches(int mype) {
  // Host variables named like CUDA's built-ins, and a launch through them.
  dim3 gridDim(2), blockDim(32);
  float* f = nullptr;
  CUDA_CHECK(cudaMalloc(&f, 256 * sizeof(float)));
  ramp_float<<<gridDim, blockDim>>>(f, 0.5f, 256);
  RAMP(float, f + 128, 1000.0f, 128, 0);
  float h[256];
  CUDA_CHECK(cudaMemcpy(h, f, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT(h[0] == 0.5f && h[127] == 127.5f && h[128] == 1000.0f && h[255] == 1127.0f);
  CUDA_CHECK(cudaFree(f));

  // Mixed-type min/max in host and kernel code, as CUDA's overloads resolve them.
  unsigned u = 5;
  int i = 7;
  EXPECT(min(u, i) == 5u && max(u, i) == 7u && min(3L, 4UL) == 3UL && max(2.0f, 1.5) == 2.0);
  long long* mm = nullptr;
  CUDA_CHECK(cudaMalloc(&mm, 3 * sizeof(long long)));
  minmax_kernel<<<1, 1>>>(mm, u, i);
  long long hm[3];
  CUDA_CHECK(cudaMemcpy(hm, mm, sizeof hm, cudaMemcpyDeviceToHost));
  EXPECT(hm[0] == 5 && hm[1] == 7 && hm[2] == 2);
  CUDA_CHECK(cudaFree(mm));

  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  // A template kernel by address through nvshmemx_collective_launch.
  int grid = 0;
  const dim3 block(32);
  EXPECT(nvshmemx_collective_launch_query_gridsize((const void*)grid_scaled<3>, block, nullptr, 0, &grid) == 0);
  EXPECT(grid >= 2);
  const int nb = grid < 64 ? grid : 64;
  int* out = nullptr;
  CUDA_CHECK(cudaMalloc(&out, nb * sizeof(int)));
  void* args[] = {&out};
  EXPECT(nvshmemx_collective_launch((const void*)grid_scaled<3>, dim3(nb), block, args, 0, s) == 0);
  int host_out[64];
  CUDA_CHECK(cudaMemcpyAsync(host_out, out, nb * sizeof(int), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  for (int b = 0; b < nb; ++b) EXPECT(host_out[b] == 3 * (b + (b + 1) % nb));
  CUDA_CHECK(cudaFree(out));

  // As many blocks of 1024 threads as the query allows, waiting for each other: all of
  // them must be resident at once, as the query promises (PE 0 only: it is large).
  if (mype == 0) {
    EXPECT(nvshmemx_collective_launch_query_gridsize((const void*)ring_of_blocks, dim3(1024), nullptr, 0, &grid) == 0);
    EXPECT(grid >= 64);  // NVIDIA's MoE example asks for 96 blocks of 1024 threads
    unsigned *flags = nullptr, *done = nullptr;
    CUDA_CHECK(cudaMalloc(&flags, grid * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&done, grid * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(flags, 0, grid * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(done, 0, grid * sizeof(unsigned)));
    void* ring_args[] = {&flags, &done};
    EXPECT(nvshmemx_collective_launch((const void*)ring_of_blocks, dim3(grid), dim3(1024), ring_args, 0, s) == 0);
    CUDA_CHECK(cudaStreamSynchronize(s));
    unsigned* hd = static_cast<unsigned*>(malloc(grid * sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(hd, done, grid * sizeof(unsigned), cudaMemcpyDeviceToHost));
    int finished = 0;
    for (int b = 0; b < grid; ++b) finished += hd[b] == 1;
    EXPECT(finished == grid);
    free(hd);
    // One block more than the query allows is refused as CUDA refuses it.
    EXPECT(nvshmemx_collective_launch((const void*)ring_of_blocks, dim3(grid + 1), dim3(1024), ring_args, 0, s) != 0);
    (void)cudaGetLastError();
    CUDA_CHECK(cudaFree(flags));
    CUDA_CHECK(cudaFree(done));
  }

  // An argument array shorter than the kernel's parameters (here ending in NULL): the
  // missing argument is zero, with a warning, instead of a crash.
  int* one = nullptr;
  CUDA_CHECK(cudaMalloc(&one, sizeof(int)));
  void* short_args[] = {&one, nullptr};
  CUDA_CHECK(cudaLaunchKernel((const void*)two_params, dim3(1), dim3(1), short_args, 0, s));
  int hv = 0;
  CUDA_CHECK(cudaMemcpyAsync(&hv, one, sizeof hv, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT(hv == 100);
  CUDA_CHECK(cudaFree(one));
  CUDA_CHECK(cudaStreamDestroy(s));
}

int main() {
  nvshmem_init();
  const int mype = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  const int device = nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % devices;
  CUDA_CHECK(cudaSetDevice(device));
  check_nvml(devices);
  check_driver(device);
  check_launches(mype);
  check_graphs(mype, npes);
  nvshmem_barrier_all();
  printf("PE %d of %d: cuda compat %s\n", mype, npes, failures ? "FAILED" : "OK");
  nvshmem_finalize();
  return failures ? 1 : 0;
}
