// pyshmem/cpu_cuda_runtime.h: a subset of the CUDA runtime API implemented on the CPU,
// header-only, so that the host code of a .cu program (cudaMalloc, cudaMemcpy, streams,
// events ...) compiles with a host compiler next to its kernels (pyshmem/cpu_kernel.h)
// and behaves as CUDA specifies. <cuda_runtime.h>, <cuda_runtime_api.h> and <cuda.h> of
// pyshmem/cpu_program_include/ include it; `pyshmem-nvcc --cpu` compiles a program as
//
//   g++ -std=c++17 -x c++ -include pyshmem/cpu_kernel.h -I<pyshmem>/cpu_program_include -I<pyshmem>/cpu_include
//       -I<pyshmem include> -I<cccl include> prog.cu -pthread
//
// The model:
// - The "device" is this process: one device per node-local PE (pyshmem runs one
//   process per PE), its memory ordinary host memory, so every pointer is valid on both
//   sides and copies of any kind are memmove. Enum values, struct field names and
//   signatures are CUDA's; values reported are honest for a CPU.
// - Kernels run on the CPU runner (pyshmem/cpu_kernel.h): every block of a launch at
//   once, each block on its own OS thread, at most 4096 blocks per launch (MAX_BLOCKS in
//   pyshmem/_cpu_kernels.py). Occupancy answers are derived from that limit, so a grid of
//   "blocks per SM x SMs" (the cooperative-launch recipe) always fits in one launch.
// - Streams keep CUDA's ordering and asynchrony (pyshmem/cpu_cuda_streams.h): each
//   stream has a worker OS thread running its work in order; the legacy default stream
//   synchronises with blocking streams; asynchronous calls return at once.
// - Errors: every call returns CUDA's code and records a failure as this host thread's
//   last error (cudaGetLastError). A failure of asynchronous work (a kernel fault) is
//   sticky: every later synchronising call returns it, as CUDA's context errors do.
//   Messages naming the call go to stderr, prefixed "pyshmem: ".
// - Files: this one (types, errors, the hooks pyshmem's glue uses), cpu_cuda_device.h
//   (devices, kernel attributes, occupancy), cpu_cuda_streams.h (streams, events,
//   synchronisation), cpu_cuda_memory.h (allocation, copies, reset).
// - Calls outside the subset do not exist (a compile error), or where declared return
//   cudaErrorNotSupported with a message naming the call.
#pragma once

#if defined(__CUDACC__)
#error "pyshmem/cpu_cuda_runtime.h is the CPU build's CUDA runtime; nvcc uses the toolkit's"
#endif

// That this file is on the include path as <cuda_runtime_api.h> makes libcu++ (CCCL)
// believe it is compiled with the CUDA toolkit: it includes this header early, from its
// own configuration, before pyshmem/cpu_kernel.h's types exist. Its toolkit-only
// __half/__nv_bfloat16 support stays off, as it is in a CPU build without this
// directory (pyshmem's <cuda_fp16.h> is not CCCL's).
#ifndef CCCL_DISABLE_FP16_SUPPORT
#define CCCL_DISABLE_FP16_SUPPORT
#endif
#ifndef CCCL_DISABLE_BF16_SUPPORT
#define CCCL_DISABLE_BF16_SUPPORT
#endif

// libstdc++'s <memory> spells __attribute__((__noinline__)), which pyshmem/cpu_kernel.h's
// CUDA keyword macro would break: the library headers are read with it set aside (and
// their include guards then keep later includes of them working too).
#pragma push_macro("__noinline__")
#undef __noinline__
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#pragma pop_macro("__noinline__")

// Tells a program (and tests) that it is built against this CPU runtime.
#define PYSHMEM_CPU_CUDA_RUNTIME 1
// The runtime API level whose semantics this subset follows.
#define CUDART_VERSION 12040
#ifndef CUDARTAPI
#define CUDARTAPI
#endif
#ifndef CUDART_CB
#define CUDART_CB
#endif

// ---- Error codes: name, CUDA's value, our description --------------------------------
#define PYSHMEM_CUDA_ERRORS(X)                                                          \
  X(cudaSuccess, 0, "no error")                                                         \
  X(cudaErrorInvalidValue, 1, "an argument is out of range or NULL")                    \
  X(cudaErrorMemoryAllocation, 2, "out of memory")                                      \
  X(cudaErrorInitializationError, 3, "initialisation failed")                           \
  X(cudaErrorCudartUnloading, 4, "the runtime is shutting down")                        \
  X(cudaErrorInvalidConfiguration, 9, "invalid launch configuration")                   \
  X(cudaErrorInvalidPitchValue, 12, "a pitch is smaller than the row width")            \
  X(cudaErrorInvalidSymbol, 13, "invalid device symbol")                                \
  X(cudaErrorInvalidHostPointer, 16, "invalid host pointer")                            \
  X(cudaErrorInvalidDevicePointer, 17, "invalid device pointer")                        \
  X(cudaErrorInvalidMemcpyDirection, 21, "invalid copy direction (cudaMemcpyKind)")     \
  X(cudaErrorMissingConfiguration, 52, "launch configuration missing")                  \
  X(cudaErrorInvalidDeviceFunction, 98, "not a device function")                        \
  X(cudaErrorNoDevice, 100, "no device available")                                      \
  X(cudaErrorInvalidDevice, 101, "device ordinal out of range")                         \
  X(cudaErrorStartupFailure, 127, "runtime startup failed")                             \
  X(cudaErrorInvalidKernelImage, 200, "invalid kernel image")                           \
  X(cudaErrorInvalidResourceHandle, 400, "invalid or destroyed stream/event handle")    \
  X(cudaErrorIllegalState, 401, "operation not allowed in the current state")           \
  X(cudaErrorNotReady, 600, "work not yet complete")                                    \
  X(cudaErrorIllegalAddress, 700, "a kernel accessed an illegal address")               \
  X(cudaErrorLaunchOutOfResources, 701, "too many resources requested for the launch")  \
  X(cudaErrorLaunchTimeout, 702, "the kernel ran too long")                             \
  X(cudaErrorAssert, 710, "a device-side assert failed")                                \
  X(cudaErrorLaunchFailure, 719, "the kernel failed")                                   \
  X(cudaErrorCooperativeLaunchTooLarge, 720, "too many blocks for a cooperative launch") \
  X(cudaErrorNotPermitted, 800, "operation not permitted")                              \
  X(cudaErrorNotSupported, 801, "operation not supported by pyshmem's CPU runtime")     \
  X(cudaErrorStreamCaptureUnsupported, 900, "operation not permitted when stream is capturing") \
  X(cudaErrorStreamCaptureInvalidated, 901, "the capture was invalidated by an earlier error") \
  X(cudaErrorStreamCaptureMerge, 902, "two captures would be merged")                  \
  X(cudaErrorStreamCaptureUnmatched, 903, "the capture was not begun on this stream")  \
  X(cudaErrorStreamCaptureUnjoined, 904, "a forked stream did not join the capture back") \
  X(cudaErrorStreamCaptureIsolation, 905, "a dependency on work outside the capture")  \
  X(cudaErrorStreamCaptureImplicit, 906, "an implicit dependency on the legacy stream") \
  X(cudaErrorCapturedEvent, 907, "not permitted on an event recorded in a capture")    \
  X(cudaErrorStreamCaptureWrongThread, 908, "the capture was begun in another thread") \
  X(cudaErrorTimeout, 909, "wait timed out")                                            \
  X(cudaErrorUnknown, 999, "unknown error")

#define PYSHMEM_CUDA_ENUM_ITEM(name, value, text) name = value,
enum cudaError { PYSHMEM_CUDA_ERRORS(PYSHMEM_CUDA_ENUM_ITEM) };
#undef PYSHMEM_CUDA_ENUM_ITEM
typedef enum cudaError cudaError_t;

// ---- Types and flags (CUDA's values) ---------------------------------------------------
typedef struct CUstream_st* cudaStream_t;  // defined in pyshmem/cpu_cuda_streams.h
typedef struct CUevent_st* cudaEvent_t;
typedef void(CUDART_CB* cudaHostFn_t)(void* userData);
typedef void(CUDART_CB* cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void* userData);

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04
#define cudaEventWaitDefault 0x00
#define cudaEventWaitExternal 0x01
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceMapHost 0x08
#define cudaDeviceLmemResizeToMax 0x10
#define cudaDeviceMask 0xff
#define cudaCpuDeviceId ((int)-1)
#define cudaInvalidDeviceId ((int)-2)

struct CUuuid_st {
  char bytes[16];
};
typedef struct CUuuid_st cudaUUID_t;

// The fields of CUDA's struct that this runtime fills (CUDA's names and types).
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;  // kHz; CUDA 13 dropped this field, programs written for 12 still read it
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int asyncEngineCount;
  int unifiedAddressing;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int hostNativeAtomicSupported;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int cooperativeLaunch;
  size_t sharedMemPerBlockOptin;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int memoryPoolsSupported;
  int clusterLaunch;
};

struct cudaFuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
};

struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxPitch = 11,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrTextureAlignment = 14,
  cudaDevAttrGpuOverlap = 15,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrKernelExecTimeout = 17,
  cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19,
  cudaDevAttrComputeMode = 20,
  cudaDevAttrConcurrentKernels = 31,
  cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrTccDriver = 35,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrAsyncEngineCount = 40,
  cudaDevAttrUnifiedAddressing = 41,
  cudaDevAttrPciDomainId = 50,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrStreamPrioritiesSupported = 78,
  cudaDevAttrGlobalL1CacheSupported = 79,
  cudaDevAttrLocalL1CacheSupported = 80,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrManagedMemory = 83,
  cudaDevAttrIsMultiGpuBoard = 84,
  cudaDevAttrMultiGpuBoardGroupID = 85,
  cudaDevAttrHostNativeAtomicSupported = 86,
  cudaDevAttrPageableMemoryAccess = 88,
  cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrComputePreemptionSupported = 90,
  cudaDevAttrCanUseHostPointerForRegisteredMem = 91,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrCanFlushRemoteWrites = 98,
  cudaDevAttrHostRegisterSupported = 99,
  cudaDevAttrPageableMemoryAccessUsesHostPageTables = 100,
  cudaDevAttrDirectManagedMemAccessFromHost = 101,
  // 102 and 103 have driver names only (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_
  // SUPPORTED, ..._HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED); both are answered.
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
  cudaDevAttrReservedSharedMemoryPerBlock = 111,
  cudaDevAttrMemoryPoolsSupported = 115,
  cudaDevAttrGPUDirectRDMASupported = 116,
  cudaDevAttrGPUDirectRDMAFlushWritesOptions = 117,
  cudaDevAttrGPUDirectRDMAWritesOrdering = 118,
  cudaDevAttrClusterLaunch = 120,
  cudaDevAttrIpcEventSupport = 125,
  cudaDevAttrNumaConfig = 130,
  cudaDevAttrNumaId = 131,
  cudaDevAttrMpsEnabled = 133,
  cudaDevAttrHostNumaId = 134
};

// ---- Errors ---------------------------------------------------------------------------

/// CUDA's enum name of `error` ("cudaErrorInvalidValue"); "unrecognized error code" for
/// a value outside the list above.
inline const char* cudaGetErrorName(cudaError_t error) {
#define PYSHMEM_CUDA_NAME_CASE(name, value, text) \
  case name:                                      \
    return #name;
  switch (error) { PYSHMEM_CUDA_ERRORS(PYSHMEM_CUDA_NAME_CASE) }
#undef PYSHMEM_CUDA_NAME_CASE
  return "unrecognized error code";
}

/// A one-line description of `error`.
inline const char* cudaGetErrorString(cudaError_t error) {
#define PYSHMEM_CUDA_TEXT_CASE(name, value, text) \
  case name:                                      \
    return text;
  switch (error) { PYSHMEM_CUDA_ERRORS(PYSHMEM_CUDA_TEXT_CASE) }
#undef PYSHMEM_CUDA_TEXT_CASE
  return "unrecognized error code";
}

namespace pyshmem {
namespace cpu {
namespace rt {

// This host thread's last error (CUDA keeps it per thread).
inline thread_local cudaError_t t_last_error = cudaSuccess;

// Process-wide state. Allocated once and never freed on purpose: stream workers may
// still be blocked on its mutex while static destructors run at exit.
struct Stream;
struct Alloc {
  size_t size;
  cudaMemoryType type;
};
struct State {
  std::mutex mu;
  std::condition_variable cv;  // any stream finished an item (waiters re-check their target)
  cudaError_t sticky = cudaSuccess;
  std::map<uintptr_t, Alloc> allocs;  // cudaMalloc/cudaMallocHost/... blocks by address
  // Device memory this runtime did not allocate (pyshmem's symmetric heap, registered by
  // nvshmem_init): [lo, hi) ranges, so copies tell it from pageable host memory.
  std::vector<std::pair<uintptr_t, uintptr_t>> device_ranges;
};
// Set by the first runtime call that needs the runtime's state or a device: CUDA's
// runtime initialises the driver then, so the driver API (pyshmem/cpu_cuda_driver.h)
// works without cuInit from that point on.
inline std::atomic<bool> g_runtime_used{false};
inline State& state() {
  static State* s = (g_runtime_used.store(true, std::memory_order_release), new State);
  return *s;
}

/// Sets this host thread's last error to `err` (cudaSuccess and cudaErrorNotReady are
/// not errors and leave it) and, when `message` is not NULL, prints
/// "pyshmem: <call>: <message> (<error name>)" to stderr. Returns `err`.
inline cudaError_t record_error(cudaError_t err, const char* call, const char* message) {
  if (err != cudaSuccess && err != cudaErrorNotReady) t_last_error = err;
  if (message) fprintf(stderr, "pyshmem: %s: %s (%s)\n", call, message, cudaGetErrorName(err));
  return err;
}

/// Makes `err` sticky (the first one wins): every later synchronising call
/// (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy,
/// cudaMemset, cudaFree ...) and every later enqueuing call returns it, and stream work
/// not yet started is skipped, as CUDA does after a kernel fault. `message` is printed
/// once, prefixed "pyshmem: ". cudaDeviceReset clears it.
inline void set_sticky_error(cudaError_t err, const char* message) {
  if (err == cudaSuccess) return;
  State& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.sticky != cudaSuccess) return;
  s.sticky = err;
  fprintf(stderr, "pyshmem: %s\n", message ? message : cudaGetErrorName(err));
  t_last_error = err;
  s.cv.notify_all();
}

// The sticky error (cudaSuccess when none), recorded as the calling thread's last error.
inline cudaError_t sticky(const char* call) {
  State& s = state();
  cudaError_t e;
  {
    std::lock_guard<std::mutex> lk(s.mu);
    e = s.sticky;
  }
  return record_error(e, call, nullptr);
}

// A call this runtime declares but cannot do on the CPU.
inline cudaError_t not_supported(const char* call, const char* why) {
  return record_error(cudaErrorNotSupported, call, why);
}

}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

/// Returns and clears this host thread's last error; a sticky error (see
/// pyshmem::cpu::rt::set_sticky_error) is returned again every time, as in CUDA.
inline cudaError_t cudaGetLastError(void) {
  cudaError_t e = pyshmem::cpu::rt::t_last_error;
  pyshmem::cpu::rt::t_last_error = cudaSuccess;
  if (e == cudaSuccess) {
    std::lock_guard<std::mutex> lk(pyshmem::cpu::rt::state().mu);
    e = pyshmem::cpu::rt::state().sticky;
  }
  return e;
}

/// This host thread's last error (or the sticky error), without clearing it.
inline cudaError_t cudaPeekAtLastError(void) {
  cudaError_t e = pyshmem::cpu::rt::t_last_error;
  if (e == cudaSuccess) {
    std::lock_guard<std::mutex> lk(pyshmem::cpu::rt::state().mu);
    e = pyshmem::cpu::rt::state().sticky;
  }
  return e;
}

#include "pyshmem/cpu_cuda_device.h"
#include "pyshmem/cpu_cuda_streams.h"
#include "pyshmem/cpu_cuda_memory.h"
