// fake_cuda_driver.cpp - a test-only stand-in for the NVIDIA CUDA driver (libcuda.so).
//
// Why: pyshmem's CUDA backend host logic (the virtual-memory-management heap, exporting
// allocations as file descriptors to other processes, copies, streams, module loading
// and launches) should be testable on machines without a GPU, including the parts that
// are only correct because of how CUDA orders asynchronous work. pyshmem loads the
// driver with dlopen(path) and resolves every entry point through cuGetProcAddress_v2,
// so pointing it at this library instead of libcuda.so exercises that logic on CPU.
//
// Sources: this file (initialisation, devices, contexts, memory, the symbol table, the
// test hooks) and fake_cuda/*.cpp (streams.cpp: asynchronous execution, copies,
// memsets; modules.cpp: fake modules and kernels; log.cpp: the call log).
// Build (from the repository root):
//   g++ -std=c++17 -O1 -Wall -Wextra -pthread -shared -fPIC -I/usr/local/cuda/include
//       tests/cpp/fake_cuda_driver.cpp tests/cpp/fake_cuda/*.cpp -o /tmp/libfakecuda.so
//
// Memory: "device memory" is ordinary host memory in the same address space.
// cuMemCreate backs each allocation with a memfd; cuMemAddressReserve reserves PROT_NONE
// address space; cuMemMap maps the memfd into it; cuMemSetAccess mprotects; exported
// handles are dup'ed memfds, so another process can import and map the same bytes. The
// memfd's name carries the allocation's device (fake-cuda-dev<N>), so an importer's
// cuMemGetAllocationPropertiesFromHandle reports the GPU the memory is on.
// Addresses are classified as "device" (inside a cuMemAddressReserve range, a cuMemAlloc
// block or a fake module's global), "pinned host" (inside a cuMemHostAlloc block) or
// "pageable host" (anything else).
//
// Asynchrony (CUDA's documented "API synchronization behavior"; streams.cpp has the
// stream model and the legacy-stream ordering rules). Synchronous calls use the legacy
// stream:
//   cuMemcpy / cuMemcpyHtoD / cuMemcpyDtoH / cuMemcpyDtoD
//     HtoH              done at once
//     DtoH              enqueued, returns once it completed
//     DtoD              enqueued, returns at once
//     HtoD-pageable     the source is copied now, the write enqueued; returns at once
//     HtoD-pinned       enqueued, returns once it completed
//   cuMemsetD8          device memory: enqueued, returns at once; host: returns once done
//   cuMemcpyAsync(s)    DtoH to pageable memory: enqueued, returns once completed; HtoH:
//                       at once; HtoD-pageable: source copied now, enqueued; else enqueued
//                       (the source is read when the op runs)
//   cuMemsetD8Async(s), cuLaunchKernel(s): enqueued
//   cuStreamSynchronize(s): waits for what was enqueued on s; cuCtxSynchronize: on every
//   stream; cuStreamQuery(s): CUDA_SUCCESS or CUDA_ERROR_NOT_READY.
//   cuMemFree, cuMemFreeHost, cuMemUnmap, cuMemAddressFree, cuModuleUnload first wait
//   until every pending op completed (they may touch that memory).
// An op's error (a wait_flag kernel that timed out) is sticky for the context (device)
// it was enqueued from: every later call that needs that context returns it, starting
// with the next cuStreamSynchronize/cuCtxSynchronize.
//
// Contexts: a per-thread context stack as in CUDA (cuCtxSetCurrent replaces the top, or
// pops it when given NULL; cuCtxPushCurrent/cuCtxPopCurrent; popping an empty stack is
// CUDA_ERROR_INVALID_CONTEXT). A device's primary context is &g_context_tags[dev].
// Calls that need a context (memory allocation, mapping, copies, memsets, streams,
// modules, launches, cuFlushGPUDirectRDMAWrites, cuMemHostAlloc/cuMemFreeHost,
// cuCtxSynchronize) return CUDA_ERROR_INVALID_CONTEXT on a thread with none; device
// queries, cuMemGetAllocationGranularity and cuPointerGetAttribute do not need one.
//
// Environment:
//   FAKE_CUDA_DEVICES=N           device count (default 1)
//   FAKE_CUDA_INIT_ERROR=N        every cuInit returns (CUresult)N
//   FAKE_CUDA_SYNC=1              fully synchronous: every op runs on the calling thread
//   FAKE_CUDA_DELAY_US=N          each op first sleeps a random [0, N] us (default 2000)
//   FAKE_CUDA_SEED=N              seed of those delays (default: the pid, so PEs differ)
//   FAKE_CUDA_KERNEL_TIMEOUT_S=X  how long a wait_flag kernel spins (default 30)
//   FAKE_CUDA_GDR=0               no GPUDirect RDMA: the two GDR device attributes are 0
//                                 and cuMemCreate with allocFlags.gpuDirectRDMACapable
//                                 fails with CUDA_ERROR_NOT_SUPPORTED (default: 1)
//   FAKE_CUDA_LOG=<path>          the call log, below
//
// Call log: with FAKE_CUDA_LOG set, every call of an entry point in kTable appends one
// line (O_APPEND, one write() per line, so processes can share the file):
//   <pid> <tid> <dev> <name>[ <key>=<value>...] rc=<CUresult>
// <dev> is the device of the calling thread's current context when the call starts (-1:
// none); <name> the base name (cuMemcpy, not cuMemcpy_v2). Keys by call:
//   copies         stream=0x<h> kind=<HtoH|DtoH|DtoD|HtoD-pageable|HtoD-pinned>
//                  bytes=<n> dst=0x<a> src=0x<a> wait=<1: returned once done|0>
//   memsets        stream=0x<h> kind=<D|H-pinned|H-pageable> bytes=<n> dst=0x<a>
//                  value=0x<v> wait=<0|1>
//   cuStreamCreate flags=0x<f> stream=0x<h>; cuStreamDestroy/Synchronize/Query stream=0x<h>
//   cuLaunchKernel function=<name> kind=<kind> stream=0x<h> grid=x,y,z block=x,y,z shmem=<n>
//   cuMemCreate    dev=<d> bytes=<n> rdma=<0|1> handle=<h>
//   cuMemSetAccess ptr=0x<a> bytes=<n> devices=<d>[,<d>...]
//   cuFlushGPUDirectRDMAWrites target=<t> scope=<s>
//   cuCtxSetCurrent/cuCtxPushCurrent/cuCtxPopCurrent ctx_dev=<device of that context, -1: NULL>
//   cuDevicePrimaryCtxRetain/Release dev=<d>; cuMemAlloc/cuMemHostAlloc bytes=<n> ptr=0x<a>
//   cuModuleLoadData module=<p> globals=<n> kernels=<n> (or image=not-fake|malformed);
//   cuModuleGetFunction/GetGlobal name=<name>
// Streams print as 0x0 (legacy), 0x1 (CU_STREAM_LEGACY), 0x2 (CU_STREAM_PER_THREAD) or
// the handle cuStreamCreate returned. With FAKE_CUDA_LOG unset nothing is formatted.
//
// Test hooks (extern "C", for ctypes after ctypes.CDLL(path)):
//   int fake_cuda_set_current_device(int dev)  cuInit if needed, retain dev's primary
//       context and make it current on this thread (as a framework choosing a device
//       before pyshmem.init); returns a CUresult
//   int fake_cuda_current_device(void)         device of this thread's current context, -1
//   int fake_cuda_pending(void)                enqueued-but-unfinished ops in the process
// The only exported CUDA symbol is cuGetProcAddress_v2; only the base names in kTable
// resolve.
//
// Not modelled: events, peer access beyond cuDeviceCanAccessPeer, real device/host
// address separation, a legacy stream per context (one per process), fork.

#include "fake_cuda/fake_cuda.h"

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
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)

namespace fakecuda {

std::atomic<bool> g_initialized{false};

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
char g_context_tags[kMaxDevices];  // &g_context_tags[dev] is dev's primary context
thread_local std::vector<CUcontext> t_contexts;  // the context stack, per thread as in CUDA

#define REQUIRE_INIT() do { if (!g_initialized.load()) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
#define REQUIRE_CONTEXT() do { CUresult need_ = need_context(); if (need_ != CUDA_SUCCESS) return need_; } while (0)

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

int device_count() {
  long n = 1;
  if (!env_int("FAKE_CUDA_DEVICES", &n) || n < 0) n = 1;
  return n > kMaxDevices ? kMaxDevices : static_cast<int>(n);
}

bool gdr_supported() {
  long v = 1;
  return !env_int("FAKE_CUDA_GDR", &v) || v != 0;
}

bool is_granular(size_t n) { return n != 0 && n % kGranularity == 0; }

// The device whose primary context ctx is, or -1.
int context_device(CUcontext ctx) {
  const char* p = reinterpret_cast<const char*>(ctx);
  if (p < g_context_tags || p >= g_context_tags + kMaxDevices) return -1;
  int dev = static_cast<int>(p - g_context_tags);
  return valid_device(dev) ? dev : -1;
}

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

// ---- shared helpers (fake_cuda/fake_cuda.h) ----------------------------------------

bool env_int(const char* name, long* out) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0') return false;
  *out = value;
  return true;
}

double env_double(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  return *end == '\0' && value >= 0 ? value : fallback;
}

bool valid_device(int dev) { return dev >= 0 && dev < device_count(); }

int current_device() { return t_contexts.empty() ? -1 : context_device(t_contexts.back()); }

CUresult need_context() {
  REQUIRE_INIT();
  if (t_contexts.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  return sticky_error(current_device());
}

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

namespace {

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
  FAKE_LOG("attrib=%d dev=%d", static_cast<int>(attrib), dev);
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *value = gdr_supported() ? 1 : 0; break;
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

CUresult fake_cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer) {
  REQUIRE_INIT();
  if (can == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev) || !valid_device(peer)) return CUDA_ERROR_INVALID_DEVICE;
  *can = dev != peer ? 1 : 0;  // a device is not its own peer, as in CUDA
  return CUDA_SUCCESS;
}

CUresult fake_cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  FAKE_LOG("dev=%d", dev);
  if (!valid_device(dev)) return done_if_init(CUDA_ERROR_INVALID_DEVICE);
  return put(ctx, reinterpret_cast<CUcontext>(&g_context_tags[dev]));
}

CUresult fake_cuDevicePrimaryCtxRelease(CUdevice dev) {
  FAKE_LOG("dev=%d", dev);
  return done_if_init(valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
}

CUresult fake_cuCtxSetCurrent(CUcontext ctx) {
  REQUIRE_INIT();
  FAKE_LOG("ctx_dev=%d", context_device(ctx));
  if (ctx == nullptr) {  // unbinds: pops the top, if any
    if (!t_contexts.empty()) t_contexts.pop_back();
    return CUDA_SUCCESS;
  }
  if (context_device(ctx) < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (t_contexts.empty()) t_contexts.push_back(ctx);
  else t_contexts.back() = ctx;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxGetCurrent(CUcontext* ctx) {
  return put(ctx, t_contexts.empty() ? CUcontext{nullptr} : t_contexts.back());
}

CUresult fake_cuCtxPushCurrent(CUcontext ctx) {
  REQUIRE_INIT();
  FAKE_LOG("ctx_dev=%d", context_device(ctx));
  if (context_device(ctx) < 0) return CUDA_ERROR_INVALID_CONTEXT;
  t_contexts.push_back(ctx);
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxPopCurrent(CUcontext* ctx) {
  REQUIRE_INIT();
  if (t_contexts.empty()) {
    FAKE_LOG("ctx_dev=-1");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  CUcontext top = t_contexts.back();
  t_contexts.pop_back();
  FAKE_LOG("ctx_dev=%d", context_device(top));
  if (ctx != nullptr) *ctx = top;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxGetDevice(CUdevice* device) {
  REQUIRE_INIT();
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (t_contexts.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  *device = current_device();
  return CUDA_SUCCESS;
}

CUresult fake_cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
                                         CUflushGPUDirectRDMAWritesScope scope) {
  REQUIRE_CONTEXT();
  FAKE_LOG("target=%d scope=%d", static_cast<int>(target), static_cast<int>(scope));
  if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX) return CUDA_ERROR_INVALID_VALUE;
  if (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER && scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES)
    return CUDA_ERROR_INVALID_VALUE;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  return CUDA_SUCCESS;
}

// ---- error strings ----------------------------------------------------------

struct ErrorText { CUresult code; const char* name; const char* text; };

constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
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

// ---- symbol table -----------------------------------------------------------

// Each entry is a wrapper that logs the call (log.cpp) around fake_<name>. `fake` is
// passed only so that its type is checked: F is the type of the function cuda.h
// declares for the base name (after its versioning macros, e.g. cuMemAlloc ->
// cuMemAlloc_v2), so a fake whose signature differs from the real one fails to compile.
template <typename F>
void* entry(F fake, F logged) {
  (void)fake;
  return reinterpret_cast<void*>(logged);
}

#define FAKE_ENTRY(name)                                                                 \
  {#name, entry<decltype(&name)>(&fake_##name, [](auto... args) -> CUresult {            \
     CallLog log(#name);                                                                 \
     return log.end(fake_##name(args...));                                              \
   })}

struct Symbol { const char* name; void* fn; };

const Symbol kTable[] = {
    FAKE_ENTRY(cuInit), FAKE_ENTRY(cuDriverGetVersion), FAKE_ENTRY(cuDeviceGetCount),
    FAKE_ENTRY(cuDeviceGet), FAKE_ENTRY(cuDeviceGetAttribute), FAKE_ENTRY(cuDeviceGetName),
    FAKE_ENTRY(cuDeviceCanAccessPeer), FAKE_ENTRY(cuDevicePrimaryCtxRetain),
    FAKE_ENTRY(cuDevicePrimaryCtxRelease), FAKE_ENTRY(cuCtxSetCurrent), FAKE_ENTRY(cuCtxGetCurrent),
    FAKE_ENTRY(cuCtxPushCurrent), FAKE_ENTRY(cuCtxPopCurrent), FAKE_ENTRY(cuCtxGetDevice),
    FAKE_ENTRY(cuCtxSynchronize), FAKE_ENTRY(cuGetErrorString), FAKE_ENTRY(cuGetErrorName),
    FAKE_ENTRY(cuMemGetAllocationGranularity), FAKE_ENTRY(cuMemCreate), FAKE_ENTRY(cuMemRelease),
    FAKE_ENTRY(cuMemGetAllocationPropertiesFromHandle),
    FAKE_ENTRY(cuMemExportToShareableHandle), FAKE_ENTRY(cuMemImportFromShareableHandle),
    FAKE_ENTRY(cuMemAddressReserve), FAKE_ENTRY(cuMemAddressFree), FAKE_ENTRY(cuMemMap),
    FAKE_ENTRY(cuMemSetAccess), FAKE_ENTRY(cuMemUnmap), FAKE_ENTRY(cuMemAlloc),
    FAKE_ENTRY(cuMemFree), FAKE_ENTRY(cuMemHostAlloc), FAKE_ENTRY(cuMemFreeHost),
    FAKE_ENTRY(cuPointerGetAttribute), FAKE_ENTRY(cuFlushGPUDirectRDMAWrites),
    FAKE_ENTRY(cuMemcpy), FAKE_ENTRY(cuMemcpyHtoD), FAKE_ENTRY(cuMemcpyDtoH),
    FAKE_ENTRY(cuMemcpyDtoD), FAKE_ENTRY(cuMemcpyAsync), FAKE_ENTRY(cuMemsetD8),
    FAKE_ENTRY(cuMemsetD8Async), FAKE_ENTRY(cuStreamCreate), FAKE_ENTRY(cuStreamDestroy),
    FAKE_ENTRY(cuStreamSynchronize), FAKE_ENTRY(cuStreamQuery), FAKE_ENTRY(cuModuleLoadData),
    FAKE_ENTRY(cuModuleGetGlobal), FAKE_ENTRY(cuModuleGetFunction), FAKE_ENTRY(cuLaunchKernel),
    FAKE_ENTRY(cuModuleUnload), FAKE_ENTRY(cuLibraryGetGlobal),
};

#undef FAKE_ENTRY

}  // namespace
}  // namespace fakecuda

#pragma GCC visibility pop

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

// pyshmem dlsym's this and resolves everything else here.
FAKE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t,
                                         CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (const fakecuda::Symbol& s : fakecuda::kTable) {
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

// ---- test hooks -------------------------------------------------------------

FAKE_EXPORT int fake_cuda_set_current_device(int dev) {
  using namespace fakecuda;
  if (!g_initialized.load()) {
    CUresult r = fake_cuInit(0);
    if (r != CUDA_SUCCESS) return r;
  }
  CUcontext ctx = nullptr;
  CUresult r = fake_cuDevicePrimaryCtxRetain(&ctx, dev);
  return r != CUDA_SUCCESS ? r : fake_cuCtxSetCurrent(ctx);
}

FAKE_EXPORT int fake_cuda_current_device(void) { return fakecuda::current_device(); }

FAKE_EXPORT int fake_cuda_pending(void) { return fakecuda::pending_ops(); }
