// fake_cuda_driver.cpp - a test-only stand-in for the NVIDIA CUDA driver (libcuda.so).
//
// Why: pyshmem's CUDA backend host logic (the virtual-memory-management heap,
// exporting allocations as file descriptors to other processes, copies) should
// be testable on machines without a GPU. pyshmem loads the driver with
// dlopen(path) and resolves every entry point through cuGetProcAddress_v2, so
// pointing it at this library instead of libcuda.so exercises that logic on CPU.
//
// What it does: "device memory" is ordinary host memory. cuMemCreate backs each
// allocation with a memfd; cuMemAddressReserve reserves PROT_NONE address space;
// cuMemMap maps the memfd into it; cuMemSetAccess mprotects; exported handles
// are dup'ed memfds, so another process can import and map the same bytes.
// Copies and memsets are memcpy/memset (async variants run synchronously).
// Environment: FAKE_CUDA_DEVICES=N (default 1) sets the device count;
// FAKE_CUDA_INIT_ERROR=N makes every cuInit return (CUresult)N.
//
// What it does not do: run kernels (cuModuleLoadData, cuModuleGetGlobal,
// cuLibraryGetGlobal, cuModuleGetFunction, cuLaunchKernel, cuModuleUnload return
// CUDA_ERROR_NOT_SUPPORTED), model streams, events, peer access or real
// device/host address separation. Only the base names listed in kTable below
// are resolvable; the only exported symbol is cuGetProcAddress_v2.
//
// Build (from the repository root):
//   g++ -std=c++17 -O1 -Wall -Wextra -shared -fPIC -I/usr/local/cuda/include tests/cpp/fake_cuda_driver.cpp -o /tmp/libfakecuda.so

#include <cuda.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace {

constexpr size_t kGranularity = size_t{2} << 20;  // 2 MiB, minimum and recommended
constexpr int kMaxDevices = 64;

struct Allocation { int fd; size_t size; bool exportable; };

using RangeMap = std::map<uintptr_t, size_t>;  // base address -> length

std::mutex g_mutex;  // guards every table below
std::atomic<bool> g_initialized{false};
std::map<CUmemGenericAllocationHandle, Allocation> g_allocations;
CUmemGenericAllocationHandle g_next_handle = 1;
RangeMap g_reservations;  // cuMemAddressReserve
RangeMap g_mappings;      // cuMemMap
RangeMap g_plain_allocs;  // cuMemAlloc
char g_context_tags[kMaxDevices];  // &g_context_tags[dev] is dev's primary context
char g_stream_tag;                 // every stream is &g_stream_tag
thread_local CUcontext t_current_context = nullptr;  // per thread, as in CUDA

#define REQUIRE_INIT() do { if (!g_initialized.load()) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

// What an entry point with nothing to do returns.
CUresult done_if_init(CUresult result = CUDA_SUCCESS) {
  return g_initialized.load() ? result : CUDA_ERROR_NOT_INITIALIZED;
}

// An entry point whose whole job is to write one value through `out`.
template <typename T>
CUresult put(T* out, T value) {
  REQUIRE_INIT();
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = value;
  return CUDA_SUCCESS;
}

bool env_int(const char* name, long* out) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0') return false;
  *out = value;
  return true;
}

int device_count() {
  long n = 1;
  if (!env_int("FAKE_CUDA_DEVICES", &n) || n < 0) n = 1;
  return n > kMaxDevices ? kMaxDevices : static_cast<int>(n);
}

bool valid_device(int dev) { return dev >= 0 && dev < device_count(); }
bool is_granular(size_t n) { return n != 0 && n % kGranularity == 0; }
void* host(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

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

// ---- initialisation, devices, contexts --------------------------------------

CUresult fake_cuInit(unsigned int) {
  long code = 0;
  if (env_int("FAKE_CUDA_INIT_ERROR", &code) && code != 0) return static_cast<CUresult>(code);
  g_initialized.store(true);
  return CUDA_SUCCESS;
}

CUresult fake_cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetCount(int* count) { return put(count, device_count()); }

CUresult fake_cuDeviceGet(CUdevice* device, int ordinal) {
  return valid_device(ordinal) ? put(device, ordinal) : done_if_init(CUDA_ERROR_INVALID_DEVICE);
}

CUresult fake_cuDeviceGetAttribute(int* value, CUdevice_attribute attrib, CUdevice dev) {
  REQUIRE_INIT();
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 4; break;
    default: *value = 0; break;  // includes COMPUTE_CAPABILITY_MINOR
  }
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetName(char* name, int len, CUdevice dev) {
  REQUIRE_INIT();
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, static_cast<size_t>(len), "%s", "Fake CUDA device (pyshmem tests)");
  return CUDA_SUCCESS;
}

CUresult fake_cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  if (!valid_device(dev)) return done_if_init(CUDA_ERROR_INVALID_DEVICE);
  return put(ctx, reinterpret_cast<CUcontext>(&g_context_tags[dev]));
}

CUresult fake_cuDevicePrimaryCtxRelease(CUdevice dev) {
  return done_if_init(valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
}

CUresult fake_cuCtxSetCurrent(CUcontext ctx) {
  REQUIRE_INIT();
  t_current_context = ctx;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxGetCurrent(CUcontext* ctx) { return put(ctx, t_current_context); }

CUresult fake_cuCtxSynchronize() { return done_if_init(); }

// ---- error strings ----------------------------------------------------------

struct ErrorText { CUresult code; const char* name; const char* text; };

constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

CUresult lookup_error(CUresult code, const char** out, bool want_name) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (const ErrorText& e : kErrors) {
    if (e.code == code) {
      *out = want_name ? e.name : e.text;
      return CUDA_SUCCESS;
    }
  }
  *out = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_cuGetErrorString(CUresult code, const char** text) { return lookup_error(code, text, false); }
CUresult fake_cuGetErrorName(CUresult code, const char** name) { return lookup_error(code, name, true); }

// ---- physical allocations and fd sharing ------------------------------------

CUresult fake_cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                            CUmemAllocationGranularity_flags) {
  return prop == nullptr ? done_if_init(CUDA_ERROR_INVALID_VALUE) : put(granularity, kGranularity);
}

CUmemGenericAllocationHandle add_allocation(int fd, size_t size, bool exportable) {
  CUmemGenericAllocationHandle h = g_next_handle++;
  g_allocations[h] = Allocation{fd, size, exportable};
  return h;
}

CUresult fake_cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                          const CUmemAllocationProp* prop, unsigned long long) {
  REQUIRE_INIT();
  if (handle == nullptr || prop == nullptr || !is_granular(size)) return CUDA_ERROR_INVALID_VALUE;
  if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !valid_device(prop->location.id))
    return CUDA_ERROR_INVALID_VALUE;
  int fd = memfd_create("fake-cuda", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  bool exportable = (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
  std::lock_guard<std::mutex> lock(g_mutex);
  *handle = add_allocation(fd, size, exportable);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemRelease(CUmemGenericAllocationHandle handle) {
  REQUIRE_INIT();
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_allocations.find(handle);
  if (it == g_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  close(it->second.fd);  // existing mmaps keep the memory alive
  g_allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemExportToShareableHandle(void* shareable, CUmemGenericAllocationHandle handle,
                                           CUmemAllocationHandleType type, unsigned long long) {
  REQUIRE_INIT();
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
  REQUIRE_INIT();
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
  *handle = add_allocation(fd, static_cast<size_t>(st.st_size), true);
  return CUDA_SUCCESS;
}

// ---- virtual address space --------------------------------------------------

CUresult fake_cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr,
                                  unsigned long long) {
  REQUIRE_INIT();
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
  return CUDA_SUCCESS;
}

CUresult fake_cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  REQUIRE_INIT();
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
  REQUIRE_INIT();
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
  REQUIRE_INIT();
  if (desc == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
  int prot = PROT_NONE;
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !valid_device(desc[i].location.id))
      return CUDA_ERROR_INVALID_VALUE;
    switch (desc[i].flags) {
      case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: prot = PROT_READ | PROT_WRITE; break;
      case CU_MEM_ACCESS_FLAGS_PROT_READ: prot |= PROT_READ; break;
      case CU_MEM_ACCESS_FLAGS_PROT_NONE: break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!mapped_range(ptr, size, false)) return CUDA_ERROR_INVALID_VALUE;
  return mprotect(host(ptr), size, prot) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_cuMemUnmap(CUdeviceptr ptr, size_t size) {
  REQUIRE_INIT();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!mapped_range(ptr, size, true)) return CUDA_ERROR_INVALID_VALUE;
  void* got = mmap(host(ptr), size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (got == MAP_FAILED) return CUDA_ERROR_UNKNOWN;
  erase_range(g_mappings, ptr, size);
  return CUDA_SUCCESS;
}

// ---- plain allocations, copies, streams, pointer queries --------------------

CUresult fake_cuMemAlloc(CUdeviceptr* dptr, size_t size) {
  REQUIRE_INIT();
  if (dptr == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (posix_memalign(&p, 256, size) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_plain_allocs[reinterpret_cast<uintptr_t>(p)] = size;
  *dptr = reinterpret_cast<uintptr_t>(p);
  return CUDA_SUCCESS;
}

// Pinned host memory mapped into the "device": ordinary memory (the same address on
// both sides, as with unified addressing on a real GPU).
CUresult fake_cuMemHostAlloc(void** pp, size_t size, unsigned int) {
  REQUIRE_INIT();
  if (pp == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (posix_memalign(pp, 4096, size) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
  return CUDA_SUCCESS;
}

CUresult fake_cuMemFreeHost(void* p) {
  std::free(p);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemFree(CUdeviceptr dptr) {
  REQUIRE_INIT();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_plain_allocs.erase(dptr) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(host(dptr));
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  REQUIRE_INIT();
  if (n != 0) std::memcpy(host(dst), host(src), n);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
  return fake_cuMemcpy(dst, reinterpret_cast<uintptr_t>(src), n);
}
CUresult fake_cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) {
  return fake_cuMemcpy(reinterpret_cast<uintptr_t>(dst), src, n);
}
CUresult fake_cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) { return fake_cuMemcpy(dst, src, n); }
CUresult fake_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  return fake_cuMemcpy(dst, src, n);  // synchronous is a valid implementation
}

CUresult fake_cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n) {
  REQUIRE_INIT();
  if (n != 0) std::memset(host(dst), value, n);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream) {
  return fake_cuMemsetD8(dst, value, n);
}

CUresult fake_cuStreamCreate(CUstream* stream, unsigned int) {
  return put(stream, reinterpret_cast<CUstream>(&g_stream_tag));
}

CUresult fake_cuStreamDestroy(CUstream) { return done_if_init(); }
CUresult fake_cuStreamSynchronize(CUstream) { return done_if_init(); }

CUresult fake_cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  REQUIRE_INIT();
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_NOT_SUPPORTED;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!inside_one(g_reservations, ptr, 1) && !inside_one(g_plain_allocs, ptr, 1))
    return CUDA_ERROR_INVALID_VALUE;
  *static_cast<CUmemorytype*>(data) = CU_MEMORYTYPE_DEVICE;
  return CUDA_SUCCESS;
}

// ---- modules and kernels: not supported --------------------------------------

constexpr CUresult kNoKernels = CUDA_ERROR_NOT_SUPPORTED;
CUresult fake_cuModuleLoadData(CUmodule*, const void*) { return done_if_init(kNoKernels); }
CUresult fake_cuModuleUnload(CUmodule) { return done_if_init(kNoKernels); }
CUresult fake_cuModuleGetFunction(CUfunction*, CUmodule, const char*) { return done_if_init(kNoKernels); }
CUresult fake_cuModuleGetGlobal(CUdeviceptr*, size_t*, CUmodule, const char*) {
  return done_if_init(kNoKernels);
}
CUresult fake_cuLibraryGetGlobal(CUdeviceptr*, size_t*, CUlibrary, const char*) {
  return done_if_init(kNoKernels);
}
CUresult fake_cuLaunchKernel(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, unsigned int, CUstream, void**, void**) {
  return done_if_init(kNoKernels);
}

// ---- symbol table -----------------------------------------------------------

// F is the type of the function cuda.h declares for the base name (after its
// versioning macros, e.g. cuMemAlloc -> cuMemAlloc_v2), so a fake whose
// signature differs from the real one fails to compile.
template <typename F>
void* entry(F fn) { return reinterpret_cast<void*>(fn); }

#define FAKE_ENTRY(name) {#name, entry<decltype(&name)>(&fake_##name)}

struct Symbol { const char* name; void* fn; };

const Symbol kTable[] = {
    FAKE_ENTRY(cuInit), FAKE_ENTRY(cuDriverGetVersion), FAKE_ENTRY(cuDeviceGetCount),
    FAKE_ENTRY(cuDeviceGet), FAKE_ENTRY(cuDeviceGetAttribute), FAKE_ENTRY(cuDeviceGetName),
    FAKE_ENTRY(cuDevicePrimaryCtxRetain), FAKE_ENTRY(cuDevicePrimaryCtxRelease),
    FAKE_ENTRY(cuCtxSetCurrent), FAKE_ENTRY(cuCtxGetCurrent), FAKE_ENTRY(cuCtxSynchronize),
    FAKE_ENTRY(cuGetErrorString), FAKE_ENTRY(cuGetErrorName),
    FAKE_ENTRY(cuMemGetAllocationGranularity), FAKE_ENTRY(cuMemCreate), FAKE_ENTRY(cuMemRelease),
    FAKE_ENTRY(cuMemExportToShareableHandle), FAKE_ENTRY(cuMemImportFromShareableHandle),
    FAKE_ENTRY(cuMemAddressReserve), FAKE_ENTRY(cuMemAddressFree), FAKE_ENTRY(cuMemMap),
    FAKE_ENTRY(cuMemSetAccess), FAKE_ENTRY(cuMemUnmap), FAKE_ENTRY(cuMemAlloc),
    FAKE_ENTRY(cuMemFree), FAKE_ENTRY(cuMemcpy), FAKE_ENTRY(cuMemcpyHtoD),
    FAKE_ENTRY(cuMemcpyDtoH), FAKE_ENTRY(cuMemcpyDtoD), FAKE_ENTRY(cuMemcpyAsync),
    FAKE_ENTRY(cuMemsetD8), FAKE_ENTRY(cuMemsetD8Async), FAKE_ENTRY(cuStreamCreate),
    FAKE_ENTRY(cuStreamDestroy), FAKE_ENTRY(cuStreamSynchronize),
    FAKE_ENTRY(cuPointerGetAttribute), FAKE_ENTRY(cuModuleLoadData),
    FAKE_ENTRY(cuModuleGetGlobal), FAKE_ENTRY(cuModuleGetFunction), FAKE_ENTRY(cuLaunchKernel),
    FAKE_ENTRY(cuModuleUnload), FAKE_ENTRY(cuLibraryGetGlobal), FAKE_ENTRY(cuMemHostAlloc),
    FAKE_ENTRY(cuMemFreeHost),
};

#undef FAKE_ENTRY

}  // namespace

// The one exported symbol: pyshmem dlsym's it and resolves everything else here.
extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int, cuuint64_t, CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (const Symbol& s : kTable) {
    if (std::strcmp(s.name, symbol) == 0) {
      *pfn = s.fn;
      if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  }
  *pfn = nullptr;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
