// pyshmem/cpu_cuda_vmm.h: CUDA's virtual memory management (cuMemCreate,
// cuMemAddressReserve, cuMemMap, cuMemSetAccess ...) on the CPU build (included by
// pyshmem/cpu_cuda_driver.h), with CUDA's rules:
// - cuMemCreate makes physical memory: an anonymous memory file (memfd) of `size`
//   bytes, a multiple of the granularity (the page size; 2 MiB recommended), exportable
//   as a POSIX file descriptor (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; fabric handles
//   are CUDA_ERROR_NOT_SUPPORTED: there is no multi-node NVLink).
// - cuMemAddressReserve reserves addresses that nothing may touch; cuMemMap maps a
//   handle there, still inaccessible; cuMemSetAccess makes it readable (and writable):
//   a load or store before that faults, as on a GPU. Mapped ranges are device memory to
//   the runtime's copies.
// - A mapping holds its handle: cuMemRelease may come right after cuMemMap; the memory
//   goes when the last mapping is unmapped and the handle released.
#pragma once

#include <sys/stat.h>

typedef unsigned long long CUmemGenericAllocationHandle;
typedef enum CUmemAllocationType_enum {
  CU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
  CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
  CU_MEM_ALLOCATION_TYPE_MANAGED = 0x2,
  CU_MEM_ALLOCATION_TYPE_MAX = 0x7FFFFFFF
} CUmemAllocationType;
typedef enum CUmemAllocationHandleType_enum {
  CU_MEM_HANDLE_TYPE_NONE = 0x0,
  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
  CU_MEM_HANDLE_TYPE_WIN32 = 0x2,
  CU_MEM_HANDLE_TYPE_WIN32_KMT = 0x4,
  CU_MEM_HANDLE_TYPE_FABRIC = 0x8,
  CU_MEM_HANDLE_TYPE_MAX = 0x7FFFFFFF
} CUmemAllocationHandleType;
typedef enum CUmemLocationType_enum {
  CU_MEM_LOCATION_TYPE_INVALID = 0x0,
  CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
  CU_MEM_LOCATION_TYPE_HOST = 0x2,
  CU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
  CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4,
  CU_MEM_LOCATION_TYPE_MAX = 0x7FFFFFFF
} CUmemLocationType;
typedef enum CUmemAccess_flags_enum {
  CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
  CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
  CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
  CU_MEM_ACCESS_FLAGS_PROT_MAX = 0x7FFFFFFF
} CUmemAccess_flags;
typedef enum CUmemAllocationGranularity_flags_enum {
  CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
  CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1
} CUmemAllocationGranularity_flags;
typedef struct CUmemLocation_st {
  CUmemLocationType type;
  int id;
} CUmemLocation;
typedef struct CUmemAllocationProp_st {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;
typedef struct CUmemAccessDesc_st {
  CUmemLocation location;
  CUmemAccess_flags flags;
} CUmemAccessDesc;

namespace pyshmem {
namespace cpu {
namespace vmm {

constexpr size_t kRecommended = 2u << 20;

struct Physical {
  int fd;
  size_t size;
  int refs;  // the handle itself (until cuMemRelease) + one per mapping
  CUmemAllocationProp prop;
};
struct Mapping {
  size_t size;
  CUmemGenericAllocationHandle handle;
  size_t offset;
  int prot;  // as cuMemSetAccess set it (PROT_NONE until then)
};
struct Vmm {
  std::mutex mu;
  CUmemGenericAllocationHandle next = 1;
  std::map<CUmemGenericAllocationHandle, Physical> handles;
  std::map<uintptr_t, size_t> reservations;  // base -> size
  std::map<uintptr_t, Mapping> mappings;     // base -> mapping
};
inline Vmm& vmm() {
  static Vmm* v = new Vmm;  // never freed: handles outlive static destructors
  return *v;
}
inline size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

inline void drop_ref(Vmm& v, CUmemGenericAllocationHandle h) {  // caller holds v.mu
  auto it = v.handles.find(h);
  if (it != v.handles.end() && --it->second.refs == 0) {
    close(it->second.fd);
    v.handles.erase(it);
  }
}
// The reservation holding [a, a + size), or end().
inline std::map<uintptr_t, size_t>::iterator reservation_of(Vmm& v, uintptr_t a, size_t size) {
  auto it = v.reservations.upper_bound(a);
  if (it == v.reservations.begin()) return v.reservations.end();
  --it;
  return a + size <= it->first + it->second ? it : v.reservations.end();
}
inline bool overlaps_mapping(Vmm& v, uintptr_t a, size_t size) {
  auto it = v.mappings.lower_bound(a);
  if (it != v.mappings.end() && it->first < a + size) return true;
  if (it == v.mappings.begin()) return false;
  --it;
  return it->first + it->second.size > a;
}
inline CUresult check_location(const CUmemLocation& loc, const char* call) {
  if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE) {
    if (loc.id < 0 || loc.id >= rt::device_count()) return drv::fail(CUDA_ERROR_INVALID_DEVICE, call, "location.id is no device");
    return CUDA_SUCCESS;
  }
  if (loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
      loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return CUDA_SUCCESS;  // the CPU build's device memory is host memory anyway
  return drv::fail(CUDA_ERROR_INVALID_VALUE, call, "location.type is not a device or host location");
}

}  // namespace vmm
}  // namespace cpu
}  // namespace pyshmem

/// The granularity sizes and addresses must be multiples of: the page size
/// (CU_MEM_ALLOC_GRANULARITY_MINIMUM) or 2 MiB (_RECOMMENDED).
inline CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                              CUmemAllocationGranularity_flags option) {
  namespace vmm = pyshmem::cpu::vmm;
  PYSHMEM_CU_INIT("cuMemGetAllocationGranularity");
  if (!granularity || !prop)
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemGetAllocationGranularity", "NULL");
  if (CUresult e = vmm::check_location(prop->location, "cuMemGetAllocationGranularity")) return e;
  *granularity = option == CU_MEM_ALLOC_GRANULARITY_RECOMMENDED ? vmm::kRecommended : vmm::page();
  return CUDA_SUCCESS;
}

/// Physical memory of `size` bytes (zero-filled), a multiple of the minimum granularity;
/// `flags` must be 0.
inline CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                            unsigned long long flags) {
  namespace vmm = pyshmem::cpu::vmm;
  namespace drv = pyshmem::cpu::drv;
  const char* call = "cuMemCreate";
  PYSHMEM_CU_INIT(call);
  if (!handle || !prop || flags) return drv::fail(CUDA_ERROR_INVALID_VALUE, call, "NULL handle or prop, or flags != 0");
  if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
    return drv::fail(CUDA_ERROR_INVALID_VALUE, call, "prop->type must be CU_MEM_ALLOCATION_TYPE_PINNED");
  if (CUresult e = vmm::check_location(prop->location, call)) return e;
  if (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC)
    return drv::fail(CUDA_ERROR_NOT_SUPPORTED, call,
                     "fabric handles need a multi-node NVLink fabric, which the CPU build has not "
                     "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is 0); request "
                     "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
  if (prop->requestedHandleTypes & ~static_cast<unsigned>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return drv::fail(CUDA_ERROR_NOT_SUPPORTED, call, "only POSIX file-descriptor handles exist on this system");
  if (!size || size % vmm::page()) {
    char m[128];
    snprintf(m, sizeof m, "size %zu is not a positive multiple of the granularity (%zu bytes)", size, vmm::page());
    return drv::fail(CUDA_ERROR_INVALID_VALUE, call, m);
  }
  const int fd = memfd_create("pyshmem-cuMemCreate", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (fd >= 0) close(fd);
    return drv::fail(CUDA_ERROR_OUT_OF_MEMORY, call, strerror(errno));
  }
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  *handle = v.next++;
  v.handles[*handle] = vmm::Physical{fd, size, 1, *prop};
  return CUDA_SUCCESS;
}

/// Releases the handle; mapped memory stays until unmapped.
inline CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  namespace vmm = pyshmem::cpu::vmm;
  PYSHMEM_CU_INIT("cuMemRelease");
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  if (!v.handles.count(handle))
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemRelease", "not an allocation handle");
  vmm::drop_ref(v, handle);
  return CUDA_SUCCESS;
}

/// Reserves `size` bytes of addresses (a multiple of the granularity), aligned to
/// `alignment` (0: the granularity) and at `addr` when that range is free; nothing may
/// touch them until mapped and given access.
inline CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                    unsigned long long flags) {
  namespace vmm = pyshmem::cpu::vmm;
  namespace drv = pyshmem::cpu::drv;
  const char* call = "cuMemAddressReserve";
  PYSHMEM_CU_INIT(call);
  const size_t pg = vmm::page();
  if (!ptr || flags || !size || size % pg || (alignment & (alignment - 1)))
    return drv::fail(CUDA_ERROR_INVALID_VALUE, call,
                     "NULL ptr, flags != 0, or size not a positive multiple of the granularity, or alignment not a "
                     "power of two");
  const size_t align = alignment > pg ? alignment : pg;
  const size_t span = size + align - pg;
  void* hint = reinterpret_cast<void*>(addr);
  void* p = mmap(hint, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return drv::fail(CUDA_ERROR_OUT_OF_MEMORY, call, strerror(errno));
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (a + align - 1) / align * align;
  if (aligned > a) munmap(p, aligned - a);
  if (aligned + size < a + span) munmap(reinterpret_cast<void*>(aligned + size), a + span - aligned - size);
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  v.reservations[aligned] = size;
  *ptr = aligned;
  return CUDA_SUCCESS;
}

/// Frees a reservation made by cuMemAddressReserve (ptr, size as returned); nothing may
/// be mapped in it any more.
inline CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  namespace vmm = pyshmem::cpu::vmm;
  PYSHMEM_CU_INIT("cuMemAddressFree");
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  auto it = v.reservations.find(ptr);
  if (it == v.reservations.end() || it->second != size)
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemAddressFree",
                                   "not a reservation of cuMemAddressReserve (pointer and size as it returned them)");
  if (vmm::overlaps_mapping(v, ptr, size))
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemAddressFree", "memory is still mapped there; "
                                                                                 "cuMemUnmap it first");
  munmap(reinterpret_cast<void*>(ptr), size);
  v.reservations.erase(it);
  return CUDA_SUCCESS;
}

/// Maps `size` bytes of `handle` from `offset` at `ptr`, inside a reservation and over
/// nothing already mapped; inaccessible until cuMemSetAccess. `flags` must be 0.
inline CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                         unsigned long long flags) {
  namespace vmm = pyshmem::cpu::vmm;
  namespace drv = pyshmem::cpu::drv;
  const char* call = "cuMemMap";
  PYSHMEM_CU_INIT(call);
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  auto h = v.handles.find(handle);
  if (h == v.handles.end()) return drv::fail(CUDA_ERROR_INVALID_HANDLE, call, "not an allocation handle");
  const size_t pg = vmm::page();
  if (flags || !size || size % pg || offset % pg || ptr % pg || offset + size > h->second.size)
    return drv::fail(CUDA_ERROR_INVALID_VALUE, call,
                     "size, offset and ptr must be multiples of the granularity, within the allocation; flags 0");
  if (vmm::reservation_of(v, ptr, size) == v.reservations.end())
    return drv::fail(CUDA_ERROR_INVALID_VALUE, call, "the range is not inside a cuMemAddressReserve reservation");
  if (vmm::overlaps_mapping(v, ptr, size)) return drv::fail(CUDA_ERROR_ALREADY_MAPPED, call, "already mapped there");
  void* p = mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->second.fd,
                 static_cast<off_t>(offset));
  if (p == MAP_FAILED) return drv::fail(CUDA_ERROR_MAP_FAILED, call, strerror(errno));
  ++h->second.refs;
  v.mappings[ptr] = vmm::Mapping{size, handle, offset, PROT_NONE};
  pyshmem::cpu::rt::register_device_range(reinterpret_cast<void*>(ptr), size);
  return CUDA_SUCCESS;
}

/// Unmaps what cuMemMap mapped at `ptr` (the whole mapping); the addresses stay reserved.
inline CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  namespace vmm = pyshmem::cpu::vmm;
  PYSHMEM_CU_INIT("cuMemUnmap");
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  auto it = v.mappings.find(ptr);
  if (it == v.mappings.end() || it->second.size != size)
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemUnmap",
                                   "not a mapping of cuMemMap (its pointer and size)");
  mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  pyshmem::cpu::rt::unregister_device_range(reinterpret_cast<void*>(ptr));
  vmm::drop_ref(v, it->second.handle);
  v.mappings.erase(it);
  return CUDA_SUCCESS;
}

/// Gives access to mapped memory: CU_MEM_ACCESS_FLAGS_PROT_READWRITE, _READ or _NONE for
/// the devices of this host (one memory: the widest access asked for applies to all).
inline CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  namespace vmm = pyshmem::cpu::vmm;
  namespace drv = pyshmem::cpu::drv;
  const char* call = "cuMemSetAccess";
  PYSHMEM_CU_INIT(call);
  if (!desc || !count) return drv::fail(CUDA_ERROR_INVALID_VALUE, call, "no access descriptors");
  int prot = PROT_NONE;
  for (size_t i = 0; i < count; ++i) {
    if (CUresult e = vmm::check_location(desc[i].location, call)) return e;
    if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) prot |= PROT_READ | PROT_WRITE;
    else if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ) prot |= PROT_READ;
    else if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE) return drv::fail(CUDA_ERROR_INVALID_VALUE, call, "bad flags");
  }
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  // Every byte of the range must be mapped.
  for (uintptr_t a = ptr; a < ptr + size;) {
    auto it = v.mappings.upper_bound(a);
    if (it == v.mappings.begin()) return drv::fail(CUDA_ERROR_INVALID_VALUE, call, "the range is not all mapped");
    --it;
    if (a >= it->first + it->second.size) return drv::fail(CUDA_ERROR_INVALID_VALUE, call, "the range is not all mapped");
    a = it->first + it->second.size;
  }
  if (mprotect(reinterpret_cast<void*>(ptr), size, prot) != 0) return drv::fail(CUDA_ERROR_INVALID_VALUE, call, strerror(errno));
  for (auto it = v.mappings.lower_bound(ptr); it != v.mappings.end() && it->first < ptr + size; ++it)
    it->second.prot = prot;
  return CUDA_SUCCESS;
}

/// The handle of the allocation mapped at `addr` (any address inside the mapping); the
/// caller releases it with cuMemRelease.
inline CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  namespace vmm = pyshmem::cpu::vmm;
  PYSHMEM_CU_INIT("cuMemRetainAllocationHandle");
  if (!handle) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemRetainAllocationHandle", "NULL");
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  auto it = v.mappings.upper_bound(a);
  if (it == v.mappings.begin() || (--it, a >= it->first + it->second.size))
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemRetainAllocationHandle",
                                   "nothing is mapped there by cuMemMap");
  ++v.handles[it->second.handle].refs;
  *handle = it->second.handle;
  return CUDA_SUCCESS;
}

/// The properties the allocation was created with.
inline CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  namespace vmm = pyshmem::cpu::vmm;
  PYSHMEM_CU_INIT("cuMemGetAllocationPropertiesFromHandle");
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  auto it = v.handles.find(handle);
  if (!prop || it == v.handles.end())
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, "cuMemGetAllocationPropertiesFromHandle", "bad handle");
  *prop = it->second.prop;
  return CUDA_SUCCESS;
}

/// A new file descriptor of the allocation (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, in
/// *(int*)shareableHandle), which another process of this host imports.
inline CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                             CUmemAllocationHandleType handleType, unsigned long long flags) {
  namespace vmm = pyshmem::cpu::vmm;
  const char* call = "cuMemExportToShareableHandle";
  PYSHMEM_CU_INIT(call);
  if (!shareableHandle || flags) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, call, "NULL or flags != 0");
  if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return pyshmem::cpu::drv::fail(CUDA_ERROR_NOT_SUPPORTED, call, "only POSIX file-descriptor handles");
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  auto it = v.handles.find(handle);
  if (it == v.handles.end()) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, call, "not an allocation handle");
  if (!(it->second.prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, call,
                                   "the allocation was not created with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
  const int fd = fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return pyshmem::cpu::drv::fail(CUDA_ERROR_OPERATING_SYSTEM, call, strerror(errno));
  *static_cast<int*>(shareableHandle) = fd;
  return CUDA_SUCCESS;
}

/// An allocation handle for a file descriptor from cuMemExportToShareableHandle (passed
/// as (void*)(uintptr_t)fd, as CUDA takes it); the descriptor stays the caller's.
inline CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                               CUmemAllocationHandleType shHandleType) {
  namespace vmm = pyshmem::cpu::vmm;
  const char* call = "cuMemImportFromShareableHandle";
  PYSHMEM_CU_INIT(call);
  if (!handle) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, call, "handle is NULL");
  if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return pyshmem::cpu::drv::fail(CUDA_ERROR_NOT_SUPPORTED, call, "only POSIX file-descriptor handles");
  const int given = static_cast<int>(reinterpret_cast<uintptr_t>(osHandle));
  struct stat st;
  if (fstat(given, &st) != 0) return pyshmem::cpu::drv::fail(CUDA_ERROR_INVALID_VALUE, call, strerror(errno));
  const int fd = fcntl(given, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return pyshmem::cpu::drv::fail(CUDA_ERROR_OPERATING_SYSTEM, call, strerror(errno));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = pyshmem::cpu::rt::t_device;
  vmm::Vmm& v = vmm::vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  *handle = v.next++;
  v.handles[*handle] = vmm::Physical{fd, static_cast<size_t>(st.st_size), 1, prop};
  return CUDA_SUCCESS;
}
