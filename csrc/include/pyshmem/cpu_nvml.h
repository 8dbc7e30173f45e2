// pyshmem/cpu_nvml.h: the subset of NVML (the NVIDIA Management Library, <nvml.h>) that
// NVSHMEM programs call, for programs built for the CPU (pyshmem-nvcc --cpu puts
// pyshmem/cpu_program_include/nvml.h first on the include path). Header-only; the names,
// values and structure layouts are NVML's (API version 12), the answers honest for the
// CPU build's devices (pyshmem/cpu_cuda_device.h: one per node-local PE, all in this
// host's memory):
// - nvmlDeviceGetCount: the devices cudaGetDeviceCount reports; handles by index, by
//   UUID and by PCI bus id ("00000000:<ordinal>:00.0", the ids cudaGetDeviceProperties
//   gives: domain 0, bus = ordinal, device 0).
// - name and UUID: cudaGetDeviceProperties' ("pyshmem CPU device (fibers)", a UUID of
//   this machine and the ordinal, "CPU-" prefixed where NVML writes "GPU-").
// - clocks: the CPU's maximum clock (MHz) where the kernel reports it, else
//   NVML_ERROR_NOT_SUPPORTED; memory: the host's physical memory.
// - P2P status: OK for every capability between devices of this host (they share its
//   memory: loads, stores and atomics reach every local PE's heap).
// - fabric (multi-node NVLink) info: state NVML_GPU_FABRIC_STATE_NOT_SUPPORTED.
// Every call returns NVML_ERROR_UNINITIALIZED before nvmlInit (and after the last
// nvmlShutdown), NVML_ERROR_INVALID_ARGUMENT for NULL pointers and unknown handles.
// Programs that dlopen("libnvidia-ml.so.1") instead find no library on a machine without
// NVIDIA's driver, as they would there.
#pragma once

#include <stdio.h>
#include <string.h>

#include "pyshmem/cpu_cuda_runtime.h"

#define NVML_API_VERSION 12
#define NVML_API_VERSION_STR "12"
#define nvmlInit nvmlInit_v2
#define nvmlDeviceGetPciInfo nvmlDeviceGetPciInfo_v3
#define nvmlDeviceGetCount nvmlDeviceGetCount_v2
#define nvmlDeviceGetHandleByIndex nvmlDeviceGetHandleByIndex_v2
#define nvmlDeviceGetHandleByPciBusId nvmlDeviceGetHandleByPciBusId_v2

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_GPU_FABRIC_UUID_LEN 16
#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_STATE_NOT_STARTED 1
#define NVML_GPU_FABRIC_STATE_IN_PROGRESS 2
#define NVML_GPU_FABRIC_STATE_COMPLETED 3
#define NVML_STRUCT_VERSION(data, ver) (unsigned int)(sizeof(nvml##data##_v##ver##_t) | (ver << 24U))

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st* nvmlDevice_t;

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
  NVML_CLOCK_COUNT
} nvmlClockType_t;

typedef enum nvmlGpuP2PStatus_enum {
  NVML_P2P_STATUS_OK = 0,
  NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED,
  NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED,
  NVML_P2P_STATUS_GPU_NOT_SUPPORTED,
  NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED,
  NVML_P2P_STATUS_DISABLED_BY_REGKEY,
  NVML_P2P_STATUS_NOT_SUPPORTED,
  NVML_P2P_STATUS_UNKNOWN
} nvmlGpuP2PStatus_t;

typedef enum nvmlGpuP2PCapsIndex_enum {
  NVML_P2P_CAPS_INDEX_READ = 0,
  NVML_P2P_CAPS_INDEX_WRITE = 1,
  NVML_P2P_CAPS_INDEX_NVLINK = 2,
  NVML_P2P_CAPS_INDEX_ATOMICS = 3,
  NVML_P2P_CAPS_INDEX_PCI = 4,
  NVML_P2P_CAPS_INDEX_PROP = NVML_P2P_CAPS_INDEX_PCI,
  NVML_P2P_CAPS_INDEX_UNKNOWN = 5
} nvmlGpuP2PCapsIndex_t;

typedef unsigned char nvmlGpuFabricState_t;
typedef struct {
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
} nvmlGpuFabricInfo_t;
typedef struct {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
  unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
typedef nvmlGpuFabricInfo_v2_t nvmlGpuFabricInfoV_t;
#define nvmlGpuFabricInfo_v2 NVML_STRUCT_VERSION(GpuFabricInfo, 2)

namespace pyshmem {
namespace cpu {
namespace nvml {
// nvmlInit/nvmlShutdown reference count (NVML counts them too).
inline std::atomic<int> g_inits{0};
// One handle per device ordinal: the handle is the address of its slot.
constexpr int kMaxDevices = 4096;
inline char g_handles[kMaxDevices];

inline nvmlDevice_t handle(int ordinal) { return reinterpret_cast<nvmlDevice_t>(&g_handles[ordinal]); }
// The ordinal of a handle, or -1 for one that is not a device of this host.
inline int ordinal(nvmlDevice_t h) {
  const char* p = reinterpret_cast<const char*>(h);
  if (p < g_handles || p >= g_handles + kMaxDevices) return -1;
  const int i = static_cast<int>(p - g_handles);
  return i < rt::device_count() ? i : -1;
}
inline nvmlReturn_t check(nvmlDevice_t h, const void* out) {
  if (g_inits.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!out || ordinal(h) < 0) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}
inline void bus_id(int ordinal, char* out, size_t n) { snprintf(out, n, "00000000:%02X:00.0", ordinal); }
}  // namespace nvml
}  // namespace cpu
}  // namespace pyshmem

/// Starts NVML (reference counted with nvmlShutdown). Always NVML_SUCCESS.
inline nvmlReturn_t nvmlInit_v2(void) {
  ++pyshmem::cpu::nvml::g_inits;
  return NVML_SUCCESS;
}
inline nvmlReturn_t nvmlInitWithFlags(unsigned int) { return nvmlInit_v2(); }
/// Ends one nvmlInit; NVML_ERROR_UNINITIALIZED when none is open.
inline nvmlReturn_t nvmlShutdown(void) {
  int n = pyshmem::cpu::nvml::g_inits.load();
  while (n > 0 && !pyshmem::cpu::nvml::g_inits.compare_exchange_weak(n, n - 1)) {
  }
  return n > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

/// NVML's text for `result`.
inline const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    default: return "Unknown Error";
  }
}

/// "pyshmem-<version> (CPU build)", the driver this build stands for.
inline nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (pyshmem::cpu::nvml::g_inits.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  const int n = snprintf(version, length, "pyshmem CPU build, CUDA API %d", CUDART_VERSION);
  return n < 0 || static_cast<unsigned>(n) >= length ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}
inline nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  if (pyshmem::cpu::nvml::g_inits.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  *version = CUDART_VERSION;
  return NVML_SUCCESS;
}

/// The devices cudaGetDeviceCount reports (one per node-local PE).
inline nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (pyshmem::cpu::nvml::g_inits.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(pyshmem::cpu::rt::device_count());
  return NVML_SUCCESS;
}
inline nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (pyshmem::cpu::nvml::g_inits.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!device || index >= static_cast<unsigned>(pyshmem::cpu::rt::device_count())) return NVML_ERROR_INVALID_ARGUMENT;
  *device = pyshmem::cpu::nvml::handle(static_cast<int>(index));
  return NVML_SUCCESS;
}
/// By "domain:bus:device.function" in hex, with or without the domain (as NVML takes it).
inline nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device) {
  if (pyshmem::cpu::nvml::g_inits.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!pciBusId || !device) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) {
    domain = 0;
    if (sscanf(pciBusId, "%x:%x.%x", &bus, &dev, &fn) != 3) return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (domain != 0 || dev != 0 || fn != 0 || bus >= static_cast<unsigned>(pyshmem::cpu::rt::device_count()))
    return NVML_ERROR_NOT_FOUND;
  *device = pyshmem::cpu::nvml::handle(static_cast<int>(bus));
  return NVML_SUCCESS;
}
inline nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (pyshmem::cpu::nvml::g_inits.load() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < pyshmem::cpu::rt::device_count(); ++i) {
    char text[NVML_DEVICE_UUID_BUFFER_SIZE];
    pyshmem::cpu::rt::device_uuid_text(i, text, sizeof text);
    if (strcmp(text, uuid) == 0) {
      *device = pyshmem::cpu::nvml::handle(i);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}
inline nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device, index)) return r;
  *index = static_cast<unsigned>(pyshmem::cpu::nvml::ordinal(device));
  return NVML_SUCCESS;
}
inline nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device, name)) return r;
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, pyshmem::cpu::nvml::ordinal(device));
  const int n = snprintf(name, length, "%s", p.name);
  return n < 0 || static_cast<unsigned>(n) >= length ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}
inline nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device, uuid)) return r;
  char text[NVML_DEVICE_UUID_BUFFER_SIZE];
  pyshmem::cpu::rt::device_uuid_text(pyshmem::cpu::nvml::ordinal(device), text, sizeof text);
  const int n = snprintf(uuid, length, "%s", text);
  return n < 0 || static_cast<unsigned>(n) >= length ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}
inline nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device, pci)) return r;
  const int i = pyshmem::cpu::nvml::ordinal(device);
  memset(pci, 0, sizeof *pci);
  pci->bus = static_cast<unsigned>(i);
  pyshmem::cpu::nvml::bus_id(i, pci->busId, sizeof pci->busId);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", i);
  return NVML_SUCCESS;
}
inline nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device, memory)) return r;
  memory->total = pyshmem::cpu::rt::physical_memory(false);
  memory->free = pyshmem::cpu::rt::physical_memory(true);
  memory->used = memory->total > memory->free ? memory->total - memory->free : 0;
  return NVML_SUCCESS;
}
/// The CPU's maximum clock in MHz for every clock type (the kernel's cpufreq figure);
/// NVML_ERROR_NOT_SUPPORTED where the system does not tell it.
inline nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device, clock)) return r;
  if (type < NVML_CLOCK_GRAPHICS || type >= NVML_CLOCK_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  const int khz = pyshmem::cpu::rt::clock_khz();
  if (khz <= 0) return NVML_ERROR_NOT_SUPPORTED;
  *clock = static_cast<unsigned>(khz / 1000);
  return NVML_SUCCESS;
}
inline nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  return nvmlDeviceGetMaxClockInfo(device, type, clock);
}
/// OK for every capability: the devices of this host share its memory.
inline nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t caps,
                                           nvmlGpuP2PStatus_t* p2pStatus) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device1, p2pStatus)) return r;
  if (pyshmem::cpu::nvml::ordinal(device2) < 0 || caps < NVML_P2P_CAPS_INDEX_READ ||
      caps >= NVML_P2P_CAPS_INDEX_UNKNOWN)
    return NVML_ERROR_INVALID_ARGUMENT;
  *p2pStatus = NVML_P2P_STATUS_OK;
  return NVML_SUCCESS;
}
/// No multi-node NVLink fabric: state NVML_GPU_FABRIC_STATE_NOT_SUPPORTED.
inline nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t* info) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device, info)) return r;
  memset(info, 0, sizeof *info);
  info->status = NVML_SUCCESS;
  info->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
  return NVML_SUCCESS;
}
/// As nvmlDeviceGetGpuFabricInfo, for info->version == nvmlGpuFabricInfo_v2
/// (NVML_ERROR_ARGUMENT_VERSION_MISMATCH otherwise).
inline nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t* info) {
  if (nvmlReturn_t r = pyshmem::cpu::nvml::check(device, info)) return r;
  if (info->version != nvmlGpuFabricInfo_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const unsigned version = info->version;
  memset(info, 0, sizeof *info);
  info->version = version;
  info->status = NVML_SUCCESS;
  info->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
  return NVML_SUCCESS;
}
