// pyshmem/cpu_cuda_device.h: device management, kernel attributes and occupancy of
// pyshmem's CPU CUDA runtime (included by pyshmem/cpu_cuda_runtime.h; see there for the
// model). One device per node-local PE; the properties are those of this CPU, and the
// occupancy answers follow the CPU runner: every block of a launch runs at once on its
// own OS thread, at most 4096 blocks per launch (MAX_BLOCKS in pyshmem/_cpu_kernels.py).
#pragma once

namespace pyshmem {
namespace cpu {
namespace rt {
/// Number of PEs on this node = number of devices, set by pyshmem's NVSHMEM init glue;
/// while it is 0 the count comes from PYSHMEM_NPES (set by the launcher), else 1.
inline std::atomic<int> g_node_pes{0};

inline int device_count() {
  if (int n = g_node_pes.load(std::memory_order_acquire); n > 0) return n;
  if (const char* v = getenv("PYSHMEM_NPES")) {
    char* end = nullptr;
    long n = strtol(v, &end, 10);
    if (end != v && *end == '\0' && n >= 1 && n <= (1 << 20)) return static_cast<int>(n);
  }
  return 1;
}
inline thread_local int t_device = 0;  // cudaSetDevice is per host thread, as in CUDA

constexpr int kMaxBlocksPerLaunch = 4096;  // MAX_BLOCKS of pyshmem/_cpu_kernels.py
constexpr int kSharedPerBlock = 48 * 1024;

inline int sm_count() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (n > kMaxBlocksPerLaunch ? kMaxBlocksPerLaunch : static_cast<int>(n));
}
// Blocks per "SM" such that blocks x SMs never exceeds one launch's limit (rounded
// down: with 3 CPUs, 1365 x 3 fits in 4096 where 1366 x 3 would not).
inline int blocks_per_sm() { return kMaxBlocksPerLaunch / sm_count(); }
inline size_t physical_memory(bool available) {
  long pages = sysconf(available ? _SC_AVPHYS_PAGES : _SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}
inline int clock_khz() {  // the CPU's maximum clock when the kernel tells it, else 0
  int khz = 0;
  if (FILE* f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r")) {
    if (fscanf(f, "%d", &khz) != 1) khz = 0;
    fclose(f);
  }
  return khz;
}

inline cudaError_t check_device(int device, const char* call) {
  if (device < 0 || device >= device_count()) {
    char m[96];
    snprintf(m, sizeof m, "device %d does not exist (%d device(s): one per node-local PE)", device,
             device_count());
    return record_error(cudaErrorInvalidDevice, call, m);
  }
  return cudaSuccess;
}

}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

// ---- Device management ------------------------------------------------------------------

/// Number of devices: one per node-local PE (pyshmem::cpu::rt::g_node_pes, else
/// PYSHMEM_NPES, else 1). cudaErrorInvalidValue for a NULL `count`.
inline cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaGetDeviceCount", "count is NULL");
  *count = pyshmem::cpu::rt::device_count();
  return cudaSuccess;
}

/// Makes `device` this host thread's current device; cudaErrorInvalidDevice when it is
/// not below cudaGetDeviceCount. All devices share this process's memory and streams.
inline cudaError_t cudaSetDevice(int device) {
  if (cudaError_t e = pyshmem::cpu::rt::check_device(device, "cudaSetDevice")) return e;
  pyshmem::cpu::rt::t_device = device;
  return cudaSuccess;
}

/// This host thread's current device (0 until cudaSetDevice).
inline cudaError_t cudaGetDevice(int* device) {
  if (!device) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaGetDevice", "device is NULL");
  *device = pyshmem::cpu::rt::t_device;
  return cudaSuccess;
}

/// Accepts CUDA's scheduling/mapping flags (all behave alike on the CPU: host waits
/// block on condition variables); cudaErrorInvalidValue for bits outside cudaDeviceMask.
inline cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  if (flags & ~0xffu) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaSetDeviceFlags", "unknown flags");
  return cudaSuccess;
}

/// Fills `prop` with this CPU "device": every launch's blocks run at once, one OS thread
/// each (at most 4096 per launch), multiProcessorCount = online CPUs,
/// maxBlocksPerMultiProcessor = 4096 / multiProcessorCount, memory = physical memory.
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  namespace rt = pyshmem::cpu::rt;
  if (!prop) return rt::record_error(cudaErrorInvalidValue, "cudaGetDeviceProperties", "prop is NULL");
  if (cudaError_t e = rt::check_device(device, "cudaGetDeviceProperties")) return e;
  memset(prop, 0, sizeof *prop);
  snprintf(prop->name, sizeof prop->name, "pyshmem CPU device (fibers)");
  const int sms = rt::sm_count(), per_sm = rt::blocks_per_sm();
  prop->totalGlobalMem = rt::physical_memory(false);
  prop->sharedMemPerBlock = rt::kSharedPerBlock;
  prop->sharedMemPerBlockOptin = rt::kSharedPerBlock;
  prop->sharedMemPerMultiprocessor = static_cast<size_t>(per_sm) * rt::kSharedPerBlock;
  prop->regsPerBlock = 65536;
  prop->regsPerMultiprocessor = 65536;
  prop->warpSize = 32;
  prop->memPitch = 2147483647;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = 1024, prop->maxThreadsDim[1] = 1024, prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647, prop->maxGridSize[1] = 65535, prop->maxGridSize[2] = 65535;
  prop->clockRate = rt::clock_khz();
  prop->totalConstMem = 64 * 1024;
  prop->major = 9, prop->minor = 0;
  prop->textureAlignment = 512;
  prop->multiProcessorCount = sms;
  prop->maxBlocksPerMultiProcessor = per_sm;
  prop->maxThreadsPerMultiProcessor = per_sm * 1024;
  prop->integrated = 1;  // shares the host's memory
  prop->canMapHostMemory = 1;
  prop->concurrentKernels = 1;
  prop->pciBusID = device;  // no PCI device: the ordinal, so devices stay distinguishable
  prop->asyncEngineCount = 1;
  prop->unifiedAddressing = 1;
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  prop->l2CacheSize = l2 > 0 && l2 < (1L << 30) ? static_cast<int>(l2) : 0;
  prop->managedMemory = 1;
  prop->hostNativeAtomicSupported = 1;
  prop->pageableMemoryAccess = 1;
  prop->concurrentManagedAccess = 1;
  prop->directManagedMemAccessFromHost = 1;
  prop->computePreemptionSupported = 1;  // long-running CUDA threads are preempted
  prop->cooperativeLaunch = 1;
  prop->hostRegisterSupported = 1;
  return cudaSuccess;
}

/// One attribute of cudaGetDeviceProperties' answer (the cudaDeviceAttr values listed
/// above); any other attribute is cudaErrorInvalidValue with a message.
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  namespace rt = pyshmem::cpu::rt;
  if (!value) return rt::record_error(cudaErrorInvalidValue, "cudaDeviceGetAttribute", "value is NULL");
  cudaDeviceProp p;
  if (cudaError_t e = cudaGetDeviceProperties(&p, device)) return e;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); break;
    case cudaDevAttrTotalConstantMemory: *value = static_cast<int>(p.totalConstMem); break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = p.clockRate; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrConcurrentKernels: *value = p.concurrentKernels; break;
    case cudaDevAttrPciBusId: *value = p.pciBusID; break;
    case cudaDevAttrPciDeviceId: *value = p.pciDeviceID; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = static_cast<int>(p.sharedMemPerMultiprocessor); break;
    case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(p.sharedMemPerBlockOptin); break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    default: {
      char m[96];
      snprintf(m, sizeof m, "device attribute %d is not provided by pyshmem's CPU runtime", static_cast<int>(attr));
      return rt::record_error(cudaErrorInvalidValue, "cudaDeviceGetAttribute", m);
    }
  }
  return cudaSuccess;
}

/// Stream priorities are not supported: both bounds 0 (CUDA's way of saying so).
inline cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  if (leastPriority) *leastPriority = 0;
  if (greatestPriority) *greatestPriority = 0;
  return cudaSuccess;
}

/// The API level this subset follows (CUDART_VERSION) for both.
inline cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (!runtimeVersion) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaRuntimeGetVersion", "NULL");
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaDriverGetVersion", "NULL");
  *driverVersion = CUDART_VERSION;
  return cudaSuccess;
}

// ---- Kernel attributes and occupancy ------------------------------------------------------

/// What the CPU runner gives any kernel `func`: up to 1024 threads per block, 48 KiB of
/// dynamic shared memory; sizes it cannot know (static __shared__, registers, local
/// memory) are 0. cudaErrorInvalidDeviceFunction for a NULL `func`.
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  namespace rt = pyshmem::cpu::rt;
  if (!attr) return rt::record_error(cudaErrorInvalidValue, "cudaFuncGetAttributes", "attr is NULL");
  if (!func) return rt::record_error(cudaErrorInvalidDeviceFunction, "cudaFuncGetAttributes", "func is NULL");
  memset(attr, 0, sizeof *attr);
  attr->maxThreadsPerBlock = 1024;
  attr->ptxVersion = 90, attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes = rt::kSharedPerBlock;
  attr->preferredShmemCarveout = -1;
  return cudaSuccess;
}
template <class T>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, T* entry) {
  return cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(entry));
}

/// Blocks of `blockSize` threads that can be resident per "SM": 4096 / SMs (so blocks x
/// SMs fits one launch, all blocks running at once) for 1 <= blockSize <= 1024 and
/// dynamicSMemSize <= 48 KiB; 0 beyond those limits (success, as CUDA answers);
/// cudaErrorInvalidValue for blockSize < 1 or NULL numBlocks.
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                                 size_t dynamicSMemSize) {
  namespace rt = pyshmem::cpu::rt;
  const char* call = "cudaOccupancyMaxActiveBlocksPerMultiprocessor";
  if (!numBlocks) return rt::record_error(cudaErrorInvalidValue, call, "numBlocks is NULL");
  if (!func) return rt::record_error(cudaErrorInvalidDeviceFunction, call, "func is NULL");
  if (blockSize < 1) return rt::record_error(cudaErrorInvalidValue, call, "blockSize < 1");
  *numBlocks = blockSize > 1024 || dynamicSMemSize > static_cast<size_t>(rt::kSharedPerBlock) ? 0 : rt::blocks_per_sm();
  return cudaSuccess;
}
template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, T func, int blockSize,
                                                                 size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, reinterpret_cast<const void*>(func), blockSize,
                                                       dynamicSMemSize);
}
