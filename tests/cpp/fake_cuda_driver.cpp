// fake_cuda_driver.cpp - a test-only stand-in for the NVIDIA CUDA driver (libcuda.so).
//
// Why: pyshmem's CUDA backend host logic (the virtual-memory-management heap, exporting
// allocations as file descriptors to other processes, copies, streams, module loading
// and launches) should be testable on machines without a GPU, including the parts that
// are only correct because of how CUDA orders asynchronous work. pyshmem loads the
// driver with dlopen(path) and resolves every entry point through cuGetProcAddress_v2,
// so pointing it at this library instead of libcuda.so exercises that logic on CPU.
//
// Sources: this file (initialisation, devices, contexts, the symbol table, the test
// hooks) and fake_cuda/*.cpp (memory.cpp: allocations, fd sharing, address ranges and
// their classes; streams.cpp: asynchronous execution, copies, memsets; events.cpp:
// events; modules.cpp: fake modules and kernels; log.cpp: the call log).
// Build (from the repository root):
//   g++ -std=c++17 -O1 -Wall -Wextra -pthread -shared -fPIC -I/usr/local/cuda/include
//       -Icsrc/include tests/cpp/fake_cuda_driver.cpp tests/cpp/fake_cuda/*.cpp -o /tmp/libfakecuda.so
// (csrc/include: pyshmem's device state and proxy ring, for the proxy_p fake kernel)
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
//   cuMemsetD8Async(s), cuLaunchKernel(s), cuLaunchCooperativeKernel(s): enqueued
//   cuStreamSynchronize(s): waits for what was enqueued on s; cuCtxSynchronize: on every
//   stream; cuStreamQuery(s): CUDA_SUCCESS or CUDA_ERROR_NOT_READY.
//   cuEventRecord(e, s): enqueued; cuEventQuery(e): CUDA_SUCCESS once the latest record
//   ran (or there was none), else CUDA_ERROR_NOT_READY (events.cpp).
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
//   cuEventCreate flags=0x<f> event=0x<h>; cuEventRecord event=0x<h> stream=0x<h>;
//   cuEventQuery/Destroy event=0x<h>
//   cuLaunchKernel function=<name> kind=<kind> stream=0x<h> grid=x,y,z block=x,y,z shmem=<n>
//                  (cuLaunchCooperativeKernel: the same details)
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
// Not modelled: event timing and waits, peer access beyond cuDeviceCanAccessPeer, real device/host
// address separation, a legacy stream per context (one per process), fork.

#include "fake_cuda/fake_cuda.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#pragma GCC visibility push(hidden)

namespace fakecuda {

std::atomic<bool> g_initialized{false};

namespace {

char g_context_tags[kMaxDevices];  // &g_context_tags[dev] is dev's primary context
thread_local std::vector<CUcontext> t_contexts;  // the context stack, per thread as in CUDA

int device_count() {
  long n = 1;
  if (!env_int("FAKE_CUDA_DEVICES", &n) || n < 0) n = 1;
  return n > kMaxDevices ? kMaxDevices : static_cast<int>(n);
}

// The device whose primary context ctx is, or -1.
int context_device(CUcontext ctx) {
  const char* p = reinterpret_cast<const char*>(ctx);
  if (p < g_context_tags || p >= g_context_tags + kMaxDevices) return -1;
  int dev = static_cast<int>(p - g_context_tags);
  return valid_device(dev) ? dev : -1;
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

bool gdr_supported() {
  long v = 1;
  return !env_int("FAKE_CUDA_GDR", &v) || v != 0;
}

int current_device() { return t_contexts.empty() ? -1 : context_device(t_contexts.back()); }

CUresult need_context() {
  REQUIRE_INIT();
  if (t_contexts.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  return sticky_error(current_device());
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
    FAKE_ENTRY(cuLaunchCooperativeKernel), FAKE_ENTRY(cuModuleUnload), FAKE_ENTRY(cuLibraryGetGlobal),
    FAKE_ENTRY(cuEventCreate), FAKE_ENTRY(cuEventRecord), FAKE_ENTRY(cuEventQuery), FAKE_ENTRY(cuEventDestroy),
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
