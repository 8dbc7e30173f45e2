// fake_cuda/memory.cpp - the fake CUDA driver's memory: physical allocations backed by
// memfds (exportable as file descriptors to other processes), reserved address ranges
// and mappings, access rights, plain and pinned allocations, and the classification of
// addresses (device / pinned host / pageable host) the asynchronous copies use. See
// tests/cpp/fake_cuda_driver.cpp for what the fake is.
#include "fake_cuda.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#pragma GCC visibility push(hidden)

namespace fakecuda {
namespace {

constexpr size_t kGranularity = size_t{2} << 20;  // 2 MiB, minimum and recommended

// `device` is the GPU the memory is "on": kept in the memfd's name (fake-cuda-dev<N>), so
// a process that imports the fd knows it too (cuMemGetAllocationPropertiesFromHandle).
struct Allocation { int fd; size_t size; bool exportable; int device; };

using RangeMap = std::map<uintptr_t, size_t>;  // base address -> length

std::mutex g_mutex;  // guards every table below
std::map<CUmemGenericAllocationHandle, Allocation> g_allocations;
CUmemGenericAllocationHandle g_next_handle = 1;
RangeMap g_reservations;   // cuMemAddressReserve
RangeMap g_mappings;       // cuMemMap
RangeMap g_plain_allocs;   // cuMemAlloc
RangeMap g_pinned;         // cuMemHostAlloc
RangeMap g_module_ranges;  // fake module globals

bool is_granular(size_t n) { return n != 0 && n % kGranularity == 0; }

// True when [p, p+n) lies inside one entry of `m`.
bool inside_one(const RangeMap& m, uintptr_t p, size_t n) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return false;
  --it;
  size_t skip = p - it->first;
  return skip < it->second && n <= it->second - skip;
}

// True when any entry of `m` intersects [p, p+n).
bool overlaps(const RangeMap& m, uintptr_t p, size_t n) {
  auto it = m.lower_bound(p);
  if (it != m.end() && it->first < p + n) return true;
  if (it == m.begin()) return false;
  --it;
  return it->first + it->second > p;
}

// True when [p, p+n) is covered by back-to-back mappings. With `exact`, the
// range must also start and end on mapping boundaries (cuMemUnmap's rule).
bool mapped_range(uintptr_t p, size_t n, bool exact) {
  if (n == 0 || p + n < p) return false;
  auto it = g_mappings.upper_bound(p);
  if (it == g_mappings.begin()) return false;
  --it;
  if (exact && it->first != p) return false;
  uintptr_t cursor = it->first;
  for (; it != g_mappings.end() && it->first == cursor; ++it) {
    cursor = it->first + it->second;
    if (cursor >= p + n) return !exact || cursor == p + n;
  }
  return false;
}

void erase_range(RangeMap& m, uintptr_t p, size_t n) {
  m.erase(m.lower_bound(p), m.lower_bound(p + n));
}

}  // namespace

Where classify(CUdeviceptr p, size_t) {
  // By the first byte: a copy may span several back-to-back ranges of one kind.
  std::lock_guard<std::mutex> lock(g_mutex);
  if (inside_one(g_reservations, p, 1) || inside_one(g_plain_allocs, p, 1) || inside_one(g_module_ranges, p, 1))
    return Where::kDevice;
  if (inside_one(g_pinned, p, 1)) return Where::kPinned;
  return Where::kPageable;
}

void add_device_range(uintptr_t base, size_t n) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_module_ranges[base] = n;
}

void remove_device_range(uintptr_t base) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_module_ranges.erase(base);
}

// ---- physical allocations and fd sharing ------------------------------------

CUresult fake_cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                            CUmemAllocationGranularity_flags) {
  return prop == nullptr ? done_if_init(CUDA_ERROR_INVALID_VALUE) : put(granularity, kGranularity);
}

CUmemGenericAllocationHandle add_allocation(int fd, size_t size, bool exportable, int device) {
  CUmemGenericAllocationHandle h = g_next_handle++;
  g_allocations[h] = Allocation{fd, size, exportable, device};
  return h;
}

// The device in the name of memfd `fd` ("/memfd:fake-cuda-dev<N> (deleted)"), or 0.
int device_of_memfd(int fd) {
  char link[64], target[256] = {};
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  if (readlink(link, target, sizeof target - 1) < 0) return 0;
  const char* at = std::strstr(target, "fake-cuda-dev");
  return at ? std::atoi(at + std::strlen("fake-cuda-dev")) : 0;
}

CUresult fake_cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                          const CUmemAllocationProp* prop, unsigned long long) {
  REQUIRE_CONTEXT();
  if (handle == nullptr || prop == nullptr || !is_granular(size)) return CUDA_ERROR_INVALID_VALUE;
  const bool rdma = prop->allocFlags.gpuDirectRDMACapable != 0;
  FAKE_LOG("dev=%d bytes=%zu rdma=%d", prop->location.id, size, rdma ? 1 : 0);
  if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !valid_device(prop->location.id))
    return CUDA_ERROR_INVALID_VALUE;
  if (rdma && !gdr_supported()) return CUDA_ERROR_NOT_SUPPORTED;
  char memfd_name[32];
  std::snprintf(memfd_name, sizeof memfd_name, "fake-cuda-dev%d", prop->location.id);
  int fd = memfd_create(memfd_name, MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  bool exportable = (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
  std::lock_guard<std::mutex> lock(g_mutex);
  *handle = add_allocation(fd, size, exportable, prop->location.id);
  FAKE_LOG("handle=%llu", static_cast<unsigned long long>(*handle));
  return CUDA_SUCCESS;
}

CUresult fake_cuMemRelease(CUmemGenericAllocationHandle handle) {
  REQUIRE_CONTEXT();
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_allocations.find(handle);
  if (it == g_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  close(it->second.fd);  // existing mmaps keep the memory alive
  g_allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemExportToShareableHandle(void* shareable, CUmemGenericAllocationHandle handle,
                                           CUmemAllocationHandleType type, unsigned long long) {
  REQUIRE_CONTEXT();
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  if (shareable == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_allocations.find(handle);
  if (it == g_allocations.end() || !it->second.exportable) return CUDA_ERROR_INVALID_VALUE;
  int fd = fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int*>(shareable) = fd;
  return CUDA_SUCCESS;
}

CUresult fake_cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* os_handle,
                                             CUmemAllocationHandleType type) {
  REQUIRE_CONTEXT();
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int fd = fcntl(static_cast<int>(reinterpret_cast<uintptr_t>(os_handle)), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
  struct stat st;
  if (fstat(fd, &st) != 0 || !is_granular(static_cast<size_t>(st.st_size))) {
    close(fd);
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  *handle = add_allocation(fd, static_cast<size_t>(st.st_size), true, device_of_memfd(fd));
  return CUDA_SUCCESS;
}

CUresult fake_cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  REQUIRE_CONTEXT();
  if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_allocations.find(handle);
  if (it == g_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  *prop = CUmemAllocationProp{};
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop->location.id = it->second.device;
  prop->requestedHandleTypes = it->second.exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  FAKE_LOG("handle=%llu dev=%d", static_cast<unsigned long long>(handle), it->second.device);
  return CUDA_SUCCESS;
}

// ---- virtual address space --------------------------------------------------

CUresult fake_cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr,
                                  unsigned long long) {
  REQUIRE_CONTEXT();
  if (ptr == nullptr || !is_granular(size)) return CUDA_ERROR_INVALID_VALUE;
  if ((alignment & (alignment - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (alignment < kGranularity) alignment = kGranularity;
  size_t span = size + alignment;
  if (span < size) return CUDA_ERROR_INVALID_VALUE;
  void* raw = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t base = (start + alignment - 1) & ~(uintptr_t{alignment} - 1);
  if (base > start) munmap(raw, base - start);
  if (base + size < start + span) munmap(host(base + size), start + span - (base + size));
  std::lock_guard<std::mutex> lock(g_mutex);
  g_reservations[base] = size;
  *ptr = base;
  FAKE_LOG("ptr=0x%llx bytes=%zu", static_cast<unsigned long long>(base), size);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  REQUIRE_CONTEXT();
  drain_all();
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_reservations.find(ptr);
  if (it == g_reservations.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
  munmap(host(ptr), size);
  erase_range(g_mappings, ptr, size);  // anything still mapped goes with it
  g_reservations.erase(it);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                       CUmemGenericAllocationHandle handle, unsigned long long) {
  REQUIRE_CONTEXT();
  FAKE_LOG("ptr=0x%llx bytes=%zu handle=%llu", static_cast<unsigned long long>(ptr), size,
             static_cast<unsigned long long>(handle));
  if (!is_granular(size) || ptr % kGranularity != 0 || offset % kGranularity != 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_allocations.find(handle);
  if (it == g_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  const Allocation& a = it->second;
  if (offset > a.size || size > a.size - offset) return CUDA_ERROR_INVALID_VALUE;
  if (!inside_one(g_reservations, ptr, size) || overlaps(g_mappings, ptr, size))
    return CUDA_ERROR_INVALID_VALUE;
  void* got = mmap(host(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, a.fd, static_cast<off_t>(offset));
  if (got == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  g_mappings[ptr] = size;
  return CUDA_SUCCESS;
}

CUresult fake_cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  REQUIRE_CONTEXT();
  if (desc == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
  std::string devices;  // for the log
  int prot = PROT_NONE;
  for (size_t i = 0; i < count; ++i) {
    if (log_active()) devices += (i ? "," : "") + std::to_string(desc[i].location.id);
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !valid_device(desc[i].location.id))
      return CUDA_ERROR_INVALID_VALUE;
    switch (desc[i].flags) {
      case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: prot = PROT_READ | PROT_WRITE; break;
      case CU_MEM_ACCESS_FLAGS_PROT_READ: prot |= PROT_READ; break;
      case CU_MEM_ACCESS_FLAGS_PROT_NONE: break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  FAKE_LOG("ptr=0x%llx bytes=%zu devices=%s", static_cast<unsigned long long>(ptr), size, devices.c_str());
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!mapped_range(ptr, size, false)) return CUDA_ERROR_INVALID_VALUE;
  return mprotect(host(ptr), size, prot) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_cuMemUnmap(CUdeviceptr ptr, size_t size) {
  REQUIRE_CONTEXT();
  drain_all();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!mapped_range(ptr, size, true)) return CUDA_ERROR_INVALID_VALUE;
  void* got = mmap(host(ptr), size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (got == MAP_FAILED) return CUDA_ERROR_UNKNOWN;
  erase_range(g_mappings, ptr, size);
  return CUDA_SUCCESS;
}

// ---- plain and pinned allocations, pointer queries --------------------------

CUresult fake_cuMemAlloc(CUdeviceptr* dptr, size_t size) {
  REQUIRE_CONTEXT();
  if (dptr == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (posix_memalign(&p, 256, size) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_plain_allocs[reinterpret_cast<uintptr_t>(p)] = size;
  *dptr = reinterpret_cast<uintptr_t>(p);
  FAKE_LOG("bytes=%zu ptr=%p", size, p);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemFree(CUdeviceptr dptr) {
  REQUIRE_CONTEXT();
  drain_all();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_plain_allocs.erase(dptr) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(host(dptr));
  return CUDA_SUCCESS;
}

// Pinned host memory mapped into the "device": ordinary memory (the same address on
// both sides, as with unified addressing on a real GPU), remembered as pinned.
CUresult fake_cuMemHostAlloc(void** pp, size_t size, unsigned int flags) {
  REQUIRE_CONTEXT();
  if (pp == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (posix_memalign(pp, 4096, size) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_pinned[reinterpret_cast<uintptr_t>(*pp)] = size;
  FAKE_LOG("bytes=%zu flags=0x%x ptr=%p", size, flags, *pp);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemFreeHost(void* p) {
  REQUIRE_CONTEXT();
  FAKE_LOG("ptr=%p", p);
  drain_all();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_pinned.erase(reinterpret_cast<uintptr_t>(p)) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(p);
  return CUDA_SUCCESS;
}

CUresult fake_cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  REQUIRE_INIT();
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_NOT_SUPPORTED;
  switch (classify(ptr, 1)) {
    case Where::kDevice: *static_cast<CUmemorytype*>(data) = CU_MEMORYTYPE_DEVICE; return CUDA_SUCCESS;
    case Where::kPinned: *static_cast<CUmemorytype*>(data) = CU_MEMORYTYPE_HOST; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;  // memory CUDA does not know
  }
}

}  // namespace fakecuda

#pragma GCC visibility pop
