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
// CUDA threads a launch's blocks may have in all for every block to be resident at once
// (each CUDA thread is a fiber with its own stack; a cooperative launch beyond it is
// cudaErrorCooperativeLaunchTooLarge): 2^17, e.g. 128 blocks of 1024 threads or 4096 of 32.
constexpr int kMaxResidentThreads = 1 << 17;
// Blocks of `block_threads` threads per "SM" such that blocks x SMs stays within one
// launch's limits, blocks and threads (rounded down: with 3 CPUs, 1365 x 3 fits in 4096
// where 1366 x 3 would not).
inline int blocks_per_sm(int block_threads = 1) {
  const int blocks = kMaxResidentThreads / block_threads;
  return (blocks < kMaxBlocksPerLaunch ? blocks : kMaxBlocksPerLaunch) / sm_count();
}
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

// A UUID for device `ordinal` of this machine: a hash of /etc/machine-id (else the host
// name) and the ordinal, so every process of the machine agrees on it.
inline void device_uuid(int ordinal, char out[16]) {
  char id[256] = {0};
  if (FILE* f = fopen("/etc/machine-id", "r")) {
    if (!fgets(id, sizeof id, f)) id[0] = 0;
    fclose(f);
  }
  if (!id[0]) gethostname(id, sizeof id - 1);
  uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  for (int half = 0; half < 2; ++half) {
    for (const char* c = id; *c; ++c) h[half] = (h[half] ^ static_cast<unsigned char>(*c)) * 0x100000001b3ull;
    h[half] = (h[half] ^ static_cast<uint64_t>(ordinal + half * 7919)) * 0x100000001b3ull;
  }
  memcpy(out, h, 16);
}
// NVML's text form of device_uuid, "CPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
inline void device_uuid_text(int ordinal, char* out, size_t n) {
  unsigned char u[16];
  device_uuid(ordinal, reinterpret_cast<char*>(u));
  snprintf(out, n, "CPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
           u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

inline cudaError_t check_device(int device, const char* call) {
  g_runtime_used.store(true, std::memory_order_release);
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
  pyshmem::cpu::rt::g_runtime_used.store(true, std::memory_order_release);
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
/// maxBlocksPerMultiProcessor = 4096 / multiProcessorCount, maxThreadsPerMultiProcessor =
/// 2^17 / multiProcessorCount (all blocks of a launch resident: pyshmem::cpu::rt::
/// kMaxResidentThreads), memory = physical memory.
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  namespace rt = pyshmem::cpu::rt;
  if (!prop) return rt::record_error(cudaErrorInvalidValue, "cudaGetDeviceProperties", "prop is NULL");
  if (cudaError_t e = rt::check_device(device, "cudaGetDeviceProperties")) return e;
  memset(prop, 0, sizeof *prop);
  snprintf(prop->name, sizeof prop->name, "pyshmem CPU device (fibers)");
  rt::device_uuid(device, prop->uuid.bytes);
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
  prop->maxThreadsPerMultiProcessor = rt::kMaxResidentThreads / sms;
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

namespace pyshmem {
namespace cpu {
namespace rt {
/// The value of device attribute `attr` (CUDA's number: cudaDeviceAttr and the driver's
/// CUdevice_attribute share them) of a device with properties `p`; false for an
/// attribute this runtime does not answer. Capabilities the CPU build has are 1
/// (unified addressing, managed and pageable memory, host atomics, cooperative launch,
/// the virtual memory management and POSIX file-descriptor handles of pyshmem's
/// cuMem* calls); what it lacks is 0 (GPUDirect RDMA, fabric handles, MPS, ECC).
inline bool device_attribute(int attr, const cudaDeviceProp& p, int* value) {
  switch (attr) {
    case 1: *value = p.maxThreadsPerBlock; return true;
    case 2: *value = p.maxThreadsDim[0]; return true;
    case 3: *value = p.maxThreadsDim[1]; return true;
    case 4: *value = p.maxThreadsDim[2]; return true;
    case 5: *value = p.maxGridSize[0]; return true;
    case 6: *value = p.maxGridSize[1]; return true;
    case 7: *value = p.maxGridSize[2]; return true;
    case 8: *value = static_cast<int>(p.sharedMemPerBlock); return true;
    case 9: *value = static_cast<int>(p.totalConstMem); return true;
    case 10: *value = p.warpSize; return true;
    case 11: *value = static_cast<int>(p.memPitch); return true;
    case 12: *value = p.regsPerBlock; return true;
    case 13: *value = p.clockRate; return true;
    case 14: *value = static_cast<int>(p.textureAlignment); return true;
    case 15: *value = 1; return true;  // copies overlap kernels (stream work runs concurrently)
    case 16: *value = p.multiProcessorCount; return true;
    case 17: *value = 0; return true;  // no run-time limit on kernels
    case 18: *value = p.integrated; return true;
    case 19: *value = p.canMapHostMemory; return true;
    case 20: *value = 0; return true;  // compute mode: default (several processes may use it)
    case 31: *value = p.concurrentKernels; return true;
    case 32: *value = p.ECCEnabled; return true;
    case 33: *value = p.pciBusID; return true;
    case 34: *value = p.pciDeviceID; return true;
    case 35: *value = 0; return true;  // TCC driver: Windows only
    case 36: *value = 0; return true;  // memory clock: not known for host memory
    case 37: *value = 0; return true;  // memory bus width: not known
    case 38: *value = p.l2CacheSize; return true;
    case 39: *value = p.maxThreadsPerMultiProcessor; return true;
    case 40: *value = p.asyncEngineCount; return true;
    case 41: *value = p.unifiedAddressing; return true;
    case 50: *value = p.pciDomainID; return true;
    case 75: *value = p.major; return true;
    case 76: *value = p.minor; return true;
    case 78: *value = p.streamPrioritiesSupported; return true;
    case 79: case 80: *value = 1; return true;  // caches: the CPU's
    case 81: *value = static_cast<int>(p.sharedMemPerMultiprocessor); return true;
    case 82: *value = p.regsPerMultiprocessor; return true;
    case 83: *value = p.managedMemory; return true;
    case 84: *value = 0; return true;
    case 85: *value = 0; return true;
    case 86: *value = p.hostNativeAtomicSupported; return true;
    case 88: *value = p.pageableMemoryAccess; return true;
    case 89: *value = p.concurrentManagedAccess; return true;
    case 90: *value = p.computePreemptionSupported; return true;
    case 91: *value = 1; return true;  // registered host memory: the same address
    case 95: *value = p.cooperativeLaunch; return true;
    case 97: *value = static_cast<int>(p.sharedMemPerBlockOptin); return true;
    case 98: *value = 0; return true;
    case 99: *value = p.hostRegisterSupported; return true;
    case 100: *value = 1; return true;  // pageable memory through the host's page tables
    case 101: *value = p.directManagedMemAccessFromHost; return true;
    case 102: *value = 1; return true;  // cuMemCreate / cuMemAddressReserve / cuMemMap
    case 103: *value = 1; return true;  // POSIX file-descriptor handles (memfd)
    case 106: *value = p.maxBlocksPerMultiProcessor; return true;
    case 111: *value = static_cast<int>(p.reservedSharedMemPerBlock); return true;
    case 115: *value = p.memoryPoolsSupported; return true;
    case 116: *value = 0; return true;  // no GPUDirect RDMA
    case 117: *value = 0; return true;
    case 118: *value = 0; return true;
    case 120: *value = p.clusterLaunch; return true;
    case 125: *value = 0; return true;
    case 128: *value = 0; return true;  // no fabric (multi-node NVLink) handles
    case 130: *value = 0; return true;  // NUMA config: none (the device is the host)
    case 131: *value = -1; return true;
    case 133: *value = 0; return true;  // no MPS
    case 134: *value = -1; return true;  // host NUMA id: -1, as CUDA answers without NUMA
    default: return false;
  }
}
}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

/// One attribute of cudaGetDeviceProperties' answer (pyshmem::cpu::rt::device_attribute
/// says which); any other attribute is cudaErrorInvalidValue with a message.
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  namespace rt = pyshmem::cpu::rt;
  if (!value) return rt::record_error(cudaErrorInvalidValue, "cudaDeviceGetAttribute", "value is NULL");
  cudaDeviceProp p;
  if (cudaError_t e = cudaGetDeviceProperties(&p, device)) return e;
  if (!rt::device_attribute(static_cast<int>(attr), p, value)) {
    char m[96];
    snprintf(m, sizeof m, "device attribute %d is not provided by pyshmem's CPU runtime", static_cast<int>(attr));
    return rt::record_error(cudaErrorInvalidValue, "cudaDeviceGetAttribute", m);
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

/// Blocks of `blockSize` threads that can be resident per "SM": min(4096, 2^17 /
/// blockSize) / SMs, so that blocks x SMs is a grid whose blocks all run at once (the
/// cooperative-launch recipe) for 1 <= blockSize <= 1024 and dynamicSMemSize <= 48 KiB; 0
/// beyond those limits (success, as CUDA answers); cudaErrorInvalidValue for blockSize
/// < 1 or NULL numBlocks.
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                                 size_t dynamicSMemSize) {
  namespace rt = pyshmem::cpu::rt;
  const char* call = "cudaOccupancyMaxActiveBlocksPerMultiprocessor";
  if (!numBlocks) return rt::record_error(cudaErrorInvalidValue, call, "numBlocks is NULL");
  if (!func) return rt::record_error(cudaErrorInvalidDeviceFunction, call, "func is NULL");
  if (blockSize < 1) return rt::record_error(cudaErrorInvalidValue, call, "blockSize < 1");
  *numBlocks = blockSize > 1024 || dynamicSMemSize > static_cast<size_t>(rt::kSharedPerBlock)
                   ? 0
                   : rt::blocks_per_sm(blockSize);
  return cudaSuccess;
}
template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, T func, int blockSize,
                                                                 size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, reinterpret_cast<const void*>(func), blockSize,
                                                       dynamicSMemSize);
}
