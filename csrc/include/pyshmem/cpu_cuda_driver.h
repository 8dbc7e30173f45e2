// pyshmem/cpu_cuda_driver.h: a subset of CUDA's driver API (<cuda.h>: cu* calls,
// CUresult) for programs built for the CPU (pyshmem-nvcc --cpu), over pyshmem's CPU CUDA
// runtime (pyshmem/cpu_cuda_runtime.h): the same devices, memory, streams and events,
// so driver and runtime handles mix as they do in CUDA (a CUstream is a cudaStream_t).
// Header-only; names, values and signatures are CUDA's (driver API level CUDA_VERSION).
//
// - Initialisation: cuInit(0), or any use of the runtime (which initialises the driver in
//   CUDA too); before either, calls return CUDA_ERROR_NOT_INITIALIZED.
// - Contexts: each device has one context, its primary context, current on every host
//   thread whose current device it is (cudaSetDevice and cuCtxSetCurrent are the same
//   choice); cuCtxCreate returns the primary context (one context per device).
// - Modules (pyshmem/cpu_cuda_module.h): a "cubin" is a shared object that
//   `pyshmem-nvcc --cpu -cubin` builds from a .cu file; cuModuleGetFunction finds its
//   kernels by name, cuLaunchKernel runs them on the CPU runner, on the runtime's streams.
// - Virtual memory management (pyshmem/cpu_cuda_vmm.h): cuMemCreate is a memfd,
//   cuMemAddressReserve an inaccessible reservation, cuMemMap/cuMemSetAccess map it.
// - Errors: every call returns CUDA's code; a failure prints "pyshmem: <call>: <why>
//   (<CUDA_ERROR_...>)" to stderr, as the runtime's calls do. The driver API has no last
//   error: these calls leave the runtime's cudaGetLastError alone. A kernel fault is the
//   runtime's sticky error, CUDA_ERROR_LAUNCH_FAILED from every later synchronising call.
#pragma once

#include "pyshmem/cpu_cuda_runtime.h"
#include "pyshmem/cpu_launch.h"

// The driver API level whose names and semantics this subset follows.
#define CUDA_VERSION 12040
#ifndef CUDAAPI
#define CUDAAPI
#endif

#define PYSHMEM_CU_ERRORS(X)                                                                  \
  X(CUDA_SUCCESS, 0, "no error")                                                              \
  X(CUDA_ERROR_INVALID_VALUE, 1, "invalid argument")                                          \
  X(CUDA_ERROR_OUT_OF_MEMORY, 2, "out of memory")                                             \
  X(CUDA_ERROR_NOT_INITIALIZED, 3, "initialization error (call cuInit first)")                \
  X(CUDA_ERROR_DEINITIALIZED, 4, "driver shutting down")                                      \
  X(CUDA_ERROR_NO_DEVICE, 100, "no CUDA-capable device is detected")                          \
  X(CUDA_ERROR_INVALID_DEVICE, 101, "invalid device ordinal")                                 \
  X(CUDA_ERROR_INVALID_IMAGE, 200, "device kernel image is invalid")                          \
  X(CUDA_ERROR_INVALID_CONTEXT, 201, "invalid device context")                                \
  X(CUDA_ERROR_MAP_FAILED, 205, "mapping of buffer object failed")                            \
  X(CUDA_ERROR_UNMAP_FAILED, 206, "unmapping of buffer object failed")                        \
  X(CUDA_ERROR_ALREADY_MAPPED, 208, "resource already mapped")                                \
  X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209, "no kernel image is available for this device")        \
  X(CUDA_ERROR_NOT_MAPPED, 211, "resource not mapped")                                        \
  X(CUDA_ERROR_INVALID_SOURCE, 300, "device kernel image is invalid")                         \
  X(CUDA_ERROR_FILE_NOT_FOUND, 301, "file not found")                                         \
  X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, 302, "shared object symbol not found")         \
  X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303, "shared object initialization failed")         \
  X(CUDA_ERROR_OPERATING_SYSTEM, 304, "OS call failed or operation not supported on this OS") \
  X(CUDA_ERROR_INVALID_HANDLE, 400, "invalid resource handle")                                \
  X(CUDA_ERROR_ILLEGAL_STATE, 401, "the operation cannot be performed in the present state")  \
  X(CUDA_ERROR_NOT_FOUND, 500, "named symbol not found")                                      \
  X(CUDA_ERROR_NOT_READY, 600, "device not ready")                                            \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, 700, "an illegal memory access was encountered")              \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701, "too many resources requested for launch")       \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, 702, "the launch timed out and was terminated")                 \
  X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704, "peer access is already enabled")            \
  X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705, "peer access has not been enabled")              \
  X(CUDA_ERROR_ASSERT, 710, "device-side assert triggered")                                   \
  X(CUDA_ERROR_LAUNCH_FAILED, 719, "unspecified launch failure")                              \
  X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720, "too many blocks in cooperative launch")    \
  X(CUDA_ERROR_NOT_PERMITTED, 800, "operation not permitted")                                 \
  X(CUDA_ERROR_NOT_SUPPORTED, 801, "operation not supported")                                 \
  X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900, "operation not permitted when stream is capturing") \
  X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901, "operation failed due to a previous error during capture") \
  X(CUDA_ERROR_TIMEOUT, 909, "wait operation timed out")                                      \
  X(CUDA_ERROR_UNKNOWN, 999, "unknown error")

#define PYSHMEM_CU_ENUM_ITEM(name, value, text) name = value,
typedef enum cudaError_enum { PYSHMEM_CU_ERRORS(PYSHMEM_CU_ENUM_ITEM) } CUresult;
#undef PYSHMEM_CU_ENUM_ITEM

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUuuid_st CUuuid;
typedef void (*CUhostFn)(void* userData);

typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14,
  CU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
  CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
  CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79,
  CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
  CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID = 85,
  CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 86,
  CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90,
  CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98,
  CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99,
  CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100,
  CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118,
  CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120,
  CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128,
  CU_DEVICE_ATTRIBUTE_NUMA_CONFIG = 130,
  CU_DEVICE_ATTRIBUTE_NUMA_ID = 131,
  CU_DEVICE_ATTRIBUTE_MPS_ENABLED = 133,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134
} CUdevice_attribute;

typedef enum CUstream_flags_enum { CU_STREAM_DEFAULT = 0x0, CU_STREAM_NON_BLOCKING = 0x1 } CUstream_flags;
typedef enum CUevent_flags_enum {
  CU_EVENT_DEFAULT = 0x0,
  CU_EVENT_BLOCKING_SYNC = 0x1,
  CU_EVENT_DISABLE_TIMING = 0x2,
  CU_EVENT_INTERPROCESS = 0x4
} CUevent_flags;
typedef enum CUctx_flags_enum {
  CU_CTX_SCHED_AUTO = 0x00,
  CU_CTX_SCHED_SPIN = 0x01,
  CU_CTX_SCHED_YIELD = 0x02,
  CU_CTX_SCHED_BLOCKING_SYNC = 0x04,
  CU_CTX_BLOCKING_SYNC = 0x04,
  CU_CTX_SCHED_MASK = 0x07,
  CU_CTX_MAP_HOST = 0x08,
  CU_CTX_LMEM_RESIZE_TO_MAX = 0x10,
  CU_CTX_SYNC_MEMOPS = 0x80,
  CU_CTX_FLAGS_MASK = 0xFF
} CUctx_flags;
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04

namespace pyshmem {
namespace cpu {
namespace drv {

inline std::atomic<bool> g_initialised{false};

inline const char* error_name(CUresult e) {
#define PYSHMEM_CU_NAME_CASE(name, value, text) \
  case name:                                    \
    return #name;
  switch (e) { PYSHMEM_CU_ERRORS(PYSHMEM_CU_NAME_CASE) }
#undef PYSHMEM_CU_NAME_CASE
  return nullptr;
}
inline const char* error_text(CUresult e) {
#define PYSHMEM_CU_TEXT_CASE(name, value, text) \
  case name:                                    \
    return text;
  switch (e) { PYSHMEM_CU_ERRORS(PYSHMEM_CU_TEXT_CASE) }
#undef PYSHMEM_CU_TEXT_CASE
  return nullptr;
}

/// Prints "pyshmem: <call>: <message> (<CUDA_ERROR_...>)" (when message is not NULL) and
/// returns `e`.
inline CUresult fail(CUresult e, const char* call, const char* message) {
  if (message) fprintf(stderr, "pyshmem: %s: %s (%s)\n", call, message, error_name(e) ? error_name(e) : "?");
  return e;
}

/// The driver's code for a runtime error (CUDA numbers most alike; the rest map to the
/// driver's nearest).
inline CUresult from_runtime(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return CUDA_SUCCESS;
    case cudaErrorMemoryAllocation: return CUDA_ERROR_OUT_OF_MEMORY;
    case cudaErrorInitializationError: return CUDA_ERROR_NOT_INITIALIZED;
    case cudaErrorCudartUnloading: return CUDA_ERROR_DEINITIALIZED;
    case cudaErrorInvalidDeviceFunction: return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorInvalidSymbol: return CUDA_ERROR_NOT_FOUND;
    case cudaErrorStartupFailure: return CUDA_ERROR_UNKNOWN;
    default: {
      const CUresult r = static_cast<CUresult>(static_cast<int>(e));
      return error_name(r) ? r : CUDA_ERROR_INVALID_VALUE;
    }
  }
}

/// Runs a runtime call for the driver API: its result as a CUresult, the runtime's
/// last error as it was (the driver API has none).
template <class F>
inline CUresult via_runtime(F call) {
  const cudaError_t saved = rt::t_last_error;
  const cudaError_t e = call();
  rt::t_last_error = saved;
  return from_runtime(e);
}

/// CUDA_ERROR_NOT_INITIALIZED (with a message naming `call`) until cuInit or the
/// runtime initialised the driver.
inline CUresult check_init(const char* call) {
  if (g_initialised.load(std::memory_order_acquire) || rt::g_runtime_used.load(std::memory_order_acquire))
    return CUDA_SUCCESS;
  return fail(CUDA_ERROR_NOT_INITIALIZED, call, "the driver API is not initialised: call cuInit(0) first");
}

// One context per device: its primary context.
struct Context {
  int device;
};
inline Context* context_of(int device) {
  static std::mutex m;
  static std::map<int, Context*> contexts;  // never freed: handles stay valid
  std::lock_guard<std::mutex> lock(m);
  Context*& c = contexts[device];
  if (!c) c = new Context{device};
  return c;
}

}  // namespace drv
}  // namespace cpu
}  // namespace pyshmem

struct CUctx_st : pyshmem::cpu::drv::Context {};

#define PYSHMEM_CU_INIT(call)                                                  \
  do {                                                                         \
    if (CUresult pyshmem_init_ = ::pyshmem::cpu::drv::check_init(call)) return pyshmem_init_; \
  } while (0)

// ---- Errors and initialisation --------------------------------------------------------

/// CUDA's name of `error` in *pStr; CUDA_ERROR_INVALID_VALUE (and NULL) for a code
/// outside the list.
inline CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = pyshmem::cpu::drv::error_name(error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
/// A description of `error` in *pStr; CUDA_ERROR_INVALID_VALUE (and NULL) for a code
/// outside the list.
inline CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = pyshmem::cpu::drv::error_text(error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/// Initialises the driver API; `Flags` must be 0.
inline CUresult cuInit(unsigned int Flags) {
  if (Flags) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuInit", "Flags must be 0");
  pyshmem::cpu::drv::g_initialised.store(true, std::memory_order_release);
  return CUDA_SUCCESS;
}
/// The driver API level (CUDA_VERSION).
inline CUresult cuDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDriverGetVersion", "NULL");
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

// ---- Devices ------------------------------------------------------------------------------

inline CUresult cuDeviceGetCount(int* count) {
  PYSHMEM_CU_INIT("cuDeviceGetCount");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaGetDeviceCount(count); });
}
/// The device of ordinal `ordinal` (the runtime's device numbers).
inline CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  PYSHMEM_CU_INIT("cuDeviceGet");
  if (!device) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGet", "device is NULL");
  if (ordinal < 0 || ordinal >= pyshmem::cpu::rt::device_count())
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet", "no such device ordinal");
  *device = ordinal;
  return CUDA_SUCCESS;
}
inline CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  PYSHMEM_CU_INIT("cuDeviceGetName");
  if (!name || len <= 0) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetName", "bad buffer");
  cudaDeviceProp p;
  if (CUresult e = pyshmem::cpu::drv::via_runtime([&] { return cudaGetDeviceProperties(&p, dev); })) return e;
  snprintf(name, static_cast<size_t>(len), "%s", p.name);
  return CUDA_SUCCESS;
}
/// The device's memory: the host's physical memory.
inline CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  PYSHMEM_CU_INIT("cuDeviceTotalMem");
  if (!bytes) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceTotalMem", "bytes is NULL");
  cudaDeviceProp p;
  if (CUresult e = pyshmem::cpu::drv::via_runtime([&] { return cudaGetDeviceProperties(&p, dev); })) return e;
  *bytes = p.totalGlobalMem;
  return CUDA_SUCCESS;
}
/// One attribute (pyshmem::cpu::rt::device_attribute); CUDA_ERROR_INVALID_VALUE with a
/// message for one this runtime does not answer.
inline CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  PYSHMEM_CU_INIT("cuDeviceGetAttribute");
  if (!pi) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute", "pi is NULL");
  cudaDeviceProp p;
  if (CUresult e = pyshmem::cpu::drv::via_runtime([&] { return cudaGetDeviceProperties(&p, dev); })) return e;
  if (!pyshmem::cpu::rt::device_attribute(static_cast<int>(attrib), p, pi)) {
    char m[96];
    snprintf(m, sizeof m, "device attribute %d is not provided by pyshmem's CPU runtime", static_cast<int>(attrib));
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute", m);
  }
  return CUDA_SUCCESS;
}
inline CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  PYSHMEM_CU_INIT("cuDeviceComputeCapability");
  if (!major || !minor) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceComputeCapability", "NULL");
  cudaDeviceProp p;
  if (CUresult e = pyshmem::cpu::drv::via_runtime([&] { return cudaGetDeviceProperties(&p, dev); })) return e;
  *major = p.major, *minor = p.minor;
  return CUDA_SUCCESS;
}
/// The device's UUID (cudaDeviceProp::uuid; NVML's nvmlDeviceGetUUID shows it as text).
inline CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  PYSHMEM_CU_INIT("cuDeviceGetUuid");
  if (!uuid) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetUuid", "uuid is NULL");
  if (dev < 0 || dev >= pyshmem::cpu::rt::device_count())
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGetUuid", "no such device");
  pyshmem::cpu::rt::device_uuid(dev, uuid->bytes);
  return CUDA_SUCCESS;
}
inline CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) { return cuDeviceGetUuid(uuid, dev); }
/// "0000:<ordinal>:00.0", the PCI id the CPU build gives device `dev`.
inline CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  PYSHMEM_CU_INIT("cuDeviceGetPCIBusId");
  if (!pciBusId || len <= 0) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetPCIBusId", "bad buffer");
  if (dev < 0 || dev >= pyshmem::cpu::rt::device_count())
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGetPCIBusId", "no such device");
  snprintf(pciBusId, static_cast<size_t>(len), "0000:%02x:00.0", dev);
  return CUDA_SUCCESS;
}
/// Every pair of devices of this host can reach each other's memory (it is one memory).
inline CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  PYSHMEM_CU_INIT("cuDeviceCanAccessPeer");
  const int n = pyshmem::cpu::rt::device_count();
  if (!canAccessPeer) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceCanAccessPeer", "NULL");
  if (dev < 0 || dev >= n || peerDev < 0 || peerDev >= n)
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceCanAccessPeer", "no such device");
  *canAccessPeer = dev != peerDev;
  return CUDA_SUCCESS;
}

// ---- Contexts -------------------------------------------------------------------------------

/// The device's primary context (always active).
inline CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  PYSHMEM_CU_INIT("cuDevicePrimaryCtxRetain");
  if (!pctx) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDevicePrimaryCtxRetain", "pctx is NULL");
  if (dev < 0 || dev >= pyshmem::cpu::rt::device_count())
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_DEVICE, "cuDevicePrimaryCtxRetain", "no such device");
  *pctx = static_cast<CUcontext>(pyshmem::cpu::drv::context_of(dev));
  return CUDA_SUCCESS;
}
inline CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  PYSHMEM_CU_INIT("cuDevicePrimaryCtxRelease");
  if (dev < 0 || dev >= pyshmem::cpu::rt::device_count())
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_DEVICE, "cuDevicePrimaryCtxRelease", "no such device");
  return CUDA_SUCCESS;
}
inline CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  PYSHMEM_CU_INIT("cuDevicePrimaryCtxGetState");
  if (!flags || !active) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuDevicePrimaryCtxGetState", "NULL");
  if (dev < 0 || dev >= pyshmem::cpu::rt::device_count())
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_DEVICE, "cuDevicePrimaryCtxGetState", "no such device");
  *flags = 0, *active = 1;
  return CUDA_SUCCESS;
}
/// The device's one context (the primary context), made current; `flags` as CUDA's
/// (scheduling flags behave alike: host waits block).
inline CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  PYSHMEM_CU_INIT("cuCtxCreate");
  if (flags & ~static_cast<unsigned>(CU_CTX_FLAGS_MASK))
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuCtxCreate", "unknown flags");
  if (CUresult e = cuDevicePrimaryCtxRetain(pctx, dev)) return e;
  pyshmem::cpu::rt::t_device = dev;
  return CUDA_SUCCESS;
}
inline CUresult cuCtxDestroy(CUcontext ctx) {
  PYSHMEM_CU_INIT("cuCtxDestroy");
  if (!ctx) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxDestroy", "ctx is NULL");
  return CUDA_SUCCESS;
}
/// The current device's context (this host thread's, as cudaSetDevice chose it).
inline CUresult cuCtxGetCurrent(CUcontext* pctx) {
  PYSHMEM_CU_INIT("cuCtxGetCurrent");
  if (!pctx) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuCtxGetCurrent", "pctx is NULL");
  *pctx = static_cast<CUcontext>(pyshmem::cpu::drv::context_of(pyshmem::cpu::rt::t_device));
  return CUDA_SUCCESS;
}
/// Makes ctx's device this host thread's current device (as cudaSetDevice does).
inline CUresult cuCtxSetCurrent(CUcontext ctx) {
  PYSHMEM_CU_INIT("cuCtxSetCurrent");
  if (ctx) pyshmem::cpu::rt::t_device = ctx->device;
  return CUDA_SUCCESS;
}
inline CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxSetCurrent(ctx); }
inline CUresult cuCtxPopCurrent(CUcontext* pctx) {
  PYSHMEM_CU_INIT("cuCtxPopCurrent");
  if (pctx) *pctx = static_cast<CUcontext>(pyshmem::cpu::drv::context_of(pyshmem::cpu::rt::t_device));
  return CUDA_SUCCESS;
}
inline CUresult cuCtxGetDevice(CUdevice* device) {
  PYSHMEM_CU_INIT("cuCtxGetDevice");
  if (!device) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuCtxGetDevice", "device is NULL");
  *device = pyshmem::cpu::rt::t_device;
  return CUDA_SUCCESS;
}
/// cudaDeviceSynchronize: waits for all streams; the sticky error if one is set.
inline CUresult cuCtxSynchronize(void) {
  PYSHMEM_CU_INIT("cuCtxSynchronize");
  return pyshmem::cpu::drv::via_runtime([] { return cudaDeviceSynchronize(); });
}

// ---- Memory (the runtime's: cudaMalloc, cudaMemcpy ...) ------------------------------------

inline CUresult cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) {
  PYSHMEM_CU_INIT("cuMemAlloc");
  if (!dptr) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc", "dptr is NULL");
  if (!bytesize) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc", "bytesize is 0");
  void* p = nullptr;
  const CUresult e = pyshmem::cpu::drv::via_runtime([&] { return cudaMalloc(&p, bytesize); });
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return e;
}
inline CUresult cuMemFree(CUdeviceptr dptr) {
  PYSHMEM_CU_INIT("cuMemFree");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaFree(reinterpret_cast<void*>(dptr)); });
}
inline CUresult cuMemAllocHost(void** pp, size_t bytesize) {
  PYSHMEM_CU_INIT("cuMemAllocHost");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaMallocHost(pp, bytesize); });
}
inline CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  PYSHMEM_CU_INIT("cuMemHostAlloc");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaHostAlloc(pp, bytesize, Flags); });
}
inline CUresult cuMemFreeHost(void* p) {
  PYSHMEM_CU_INIT("cuMemFreeHost");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaFreeHost(p); });
}
inline CUresult cuMemGetInfo(size_t* free, size_t* total) {
  PYSHMEM_CU_INIT("cuMemGetInfo");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaMemGetInfo(free, total); });
}
/// Synchronous copies (unified addressing: the kind follows from the pointers).
inline CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  PYSHMEM_CU_INIT("cuMemcpy");
  return pyshmem::cpu::drv::via_runtime([&] {
    return cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), ByteCount, cudaMemcpyDefault);
  });
}
inline CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return cuMemcpy(dstDevice, reinterpret_cast<CUdeviceptr>(srcHost), ByteCount);
}
inline CUresult cuMemcpyDtoH(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return cuMemcpy(reinterpret_cast<CUdeviceptr>(dstHost), srcDevice, ByteCount);
}
inline CUresult cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return cuMemcpy(dstDevice, srcDevice, ByteCount);
}
/// Asynchronous copies: cudaMemcpyAsync's behaviour by where the pointers point.
inline CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  PYSHMEM_CU_INIT("cuMemcpyAsync");
  return pyshmem::cpu::drv::via_runtime([&] {
    return cudaMemcpyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), ByteCount,
                           cudaMemcpyDefault, hStream);
  });
}
inline CUresult cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream) {
  return cuMemcpyAsync(dstDevice, reinterpret_cast<CUdeviceptr>(srcHost), ByteCount, hStream);
}
inline CUresult cuMemcpyDtoHAsync(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dstHost), srcDevice, ByteCount, hStream);
}
inline CUresult cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return cuMemcpyAsync(dstDevice, srcDevice, ByteCount, hStream);
}

namespace pyshmem {
namespace cpu {
namespace drv {
// cuMemsetD8/16/32: N elements of `value` from dst, ordered like cudaMemset (stream
// `s`'s work when async, else legacy-stream work the host waits for).
template <class T>
inline CUresult fill(const char* call, CUdeviceptr dst, T value, size_t n, bool async, CUstream s) {
  if (CUresult e = check_init(call)) return e;
  if (dst % alignof(T)) return fail(CUDA_ERROR_INVALID_VALUE, call, "dstDevice is not aligned to the element size");
  T* p = reinterpret_cast<T*>(dst);
  auto work = [p, value, n] { std::fill(p, p + n, value); };
  return via_runtime([&] {
    return async ? rt::stream_enqueue(s, call, [work] { work(); return cudaSuccess; }) : rt::run_sync(call, work);
  });
}
}  // namespace drv
}  // namespace cpu
}  // namespace pyshmem

inline CUresult cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return pyshmem::cpu::drv::fill("cuMemsetD8", dstDevice, uc, N, false, nullptr);
}
inline CUresult cuMemsetD16(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return pyshmem::cpu::drv::fill("cuMemsetD16", dstDevice, us, N, false, nullptr);
}
inline CUresult cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return pyshmem::cpu::drv::fill("cuMemsetD32", dstDevice, ui, N, false, nullptr);
}
inline CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return pyshmem::cpu::drv::fill("cuMemsetD8Async", dstDevice, uc, N, true, hStream);
}
inline CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
  return pyshmem::cpu::drv::fill("cuMemsetD16Async", dstDevice, us, N, true, hStream);
}
inline CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return pyshmem::cpu::drv::fill("cuMemsetD32Async", dstDevice, ui, N, true, hStream);
}

// ---- Streams and events (the runtime's) -----------------------------------------------------

inline CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  PYSHMEM_CU_INIT("cuStreamCreate");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaStreamCreateWithFlags(phStream, Flags); });
}
inline CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  PYSHMEM_CU_INIT("cuStreamCreateWithPriority");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaStreamCreateWithPriority(phStream, flags, priority); });
}
inline CUresult cuStreamDestroy(CUstream hStream) {
  PYSHMEM_CU_INIT("cuStreamDestroy");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaStreamDestroy(hStream); });
}
inline CUresult cuStreamSynchronize(CUstream hStream) {
  PYSHMEM_CU_INIT("cuStreamSynchronize");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaStreamSynchronize(hStream); });
}
inline CUresult cuStreamQuery(CUstream hStream) {
  PYSHMEM_CU_INIT("cuStreamQuery");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaStreamQuery(hStream); });
}
inline CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  PYSHMEM_CU_INIT("cuStreamWaitEvent");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaStreamWaitEvent(hStream, hEvent, Flags); });
}
inline CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  PYSHMEM_CU_INIT("cuLaunchHostFunc");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaLaunchHostFunc(hStream, fn, userData); });
}
inline CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  PYSHMEM_CU_INIT("cuEventCreate");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaEventCreateWithFlags(phEvent, Flags); });
}
inline CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  PYSHMEM_CU_INIT("cuEventRecord");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaEventRecord(hEvent, hStream); });
}
inline CUresult cuEventSynchronize(CUevent hEvent) {
  PYSHMEM_CU_INIT("cuEventSynchronize");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaEventSynchronize(hEvent); });
}
inline CUresult cuEventQuery(CUevent hEvent) {
  PYSHMEM_CU_INIT("cuEventQuery");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaEventQuery(hEvent); });
}
inline CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  PYSHMEM_CU_INIT("cuEventElapsedTime");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaEventElapsedTime(pMilliseconds, hStart, hEnd); });
}
inline CUresult cuEventDestroy(CUevent hEvent) {
  PYSHMEM_CU_INIT("cuEventDestroy");
  return pyshmem::cpu::drv::via_runtime([&] { return cudaEventDestroy(hEvent); });
}

#include "pyshmem/cpu_cuda_module.h"
#include "pyshmem/cpu_cuda_vmm.h"
