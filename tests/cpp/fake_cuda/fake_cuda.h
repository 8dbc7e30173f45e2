// fake_cuda/fake_cuda.h - what the parts of the fake CUDA driver share (see
// tests/cpp/fake_cuda_driver.cpp for what the fake is, its environment variables and
// its call-log format). Everything here has hidden visibility: the library exports only
// cuGetProcAddress_v2 and the fake_cuda_* test hooks.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

#pragma GCC visibility push(hidden)

namespace fakecuda {

constexpr int kMaxDevices = 64;

// ---- fake_cuda_driver.cpp: initialisation, contexts, address classes ---------

extern std::atomic<bool> g_initialized;

bool env_int(const char* name, long* out);
double env_double(const char* name, double fallback);
bool valid_device(int dev);

// The device of the calling thread's current context, -1 when there is none.
int current_device();

// CUDA_SUCCESS when the calling thread may make a call that needs a context:
// the driver is initialised (else NOT_INITIALIZED), a context is current (else
// INVALID_CONTEXT) and that context has no sticky error (else that error).
CUresult need_context();

// False with FAKE_CUDA_GDR=0 (no GPUDirect RDMA on VMM allocations).
bool gdr_supported();

#define REQUIRE_INIT() do { if (!::fakecuda::g_initialized.load()) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
#define REQUIRE_CONTEXT() \
  do { CUresult need_ = ::fakecuda::need_context(); if (need_ != CUDA_SUCCESS) return need_; } while (0)

// What an entry point with nothing to do returns.
inline CUresult done_if_init(CUresult result = CUDA_SUCCESS) {
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

inline void* host(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
inline CUdeviceptr dptr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

enum class Where { kDevice, kPinned, kPageable };
// Where [p, p+n) lives: device = inside a cuMemAddressReserve range, a cuMemAlloc
// block or a fake module's global; pinned = inside a cuMemHostAlloc block; else pageable.
Where classify(CUdeviceptr p, size_t n);

// Fake module globals are "device" memory (modules.cpp registers them).
void add_device_range(uintptr_t base, size_t n);
void remove_device_range(uintptr_t base);

// ---- streams.cpp: asynchronous execution -------------------------------------

// One unit of work on a stream; returns CUDA_SUCCESS or an error that becomes
// sticky for the context (device) it was enqueued from.
using Work = std::function<CUresult()>;

// Resolves a stream handle (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or one from
// cuStreamCreate); false for an unknown handle.
bool stream_known(CUstream s);

// Enqueues work on s (ordering rules in streams.cpp); with `wait`, returns only once
// it completed (and then returns its result). Under FAKE_CUDA_SYNC=1 runs it at once.
// `s` must be known (stream_known). Returns the sticky error of the calling context
// when there is one.
CUresult enqueue(CUstream s, Work work, bool wait);

// Waits until every op enqueued so far (on any stream) completed; for calls that
// free memory that pending ops may still touch.
void drain_all();

// Sticky error of a device's context (CUDA_SUCCESS when none).
CUresult sticky_error(int dev);
void set_sticky_error(int dev, CUresult r);

// Enqueued-but-unfinished ops in the process.
int pending_ops();

// ---- log.cpp: the call log (FAKE_CUDA_LOG) -----------------------------------

bool log_enabled();
// True while the calling thread is inside a logged call (FAKE_CUDA_LOG set).
bool log_active();
// Appends " <formatted>" to the calling thread's line of the call being made (no-op
// when no call is being logged). Use FAKE_LOG: it evaluates nothing when the log is off.
void log_detail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#define FAKE_LOG(...) do { if (::fakecuda::log_active()) ::fakecuda::log_detail(__VA_ARGS__); } while (0)
const char* stream_text(CUstream s);  // e.g. "0x0"; valid until the next call on this thread

// One logged entry-point call: the line is started on construction (pid, tid, the
// device of the current context, the name), details are added with log_detail and the
// line is written with one write() by end(), with " rc=<code>".
class CallLog {
 public:
  explicit CallLog(const char* name) : on_(log_enabled()) {
    if (on_) begin(name);
  }
  CUresult end(CUresult r) {
    if (on_) finish(r);
    return r;
  }

 private:
  void begin(const char* name);
  void finish(CUresult r);
  bool on_;
};

// ---- entry points defined outside fake_cuda_driver.cpp ------------------------

// memory.cpp
CUresult fake_cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                            CUmemAllocationGranularity_flags option);
CUresult fake_cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                          unsigned long long flags);
CUresult fake_cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult fake_cuMemExportToShareableHandle(void* shareable, CUmemGenericAllocationHandle handle,
                                           CUmemAllocationHandleType type, unsigned long long flags);
CUresult fake_cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* os_handle,
                                             CUmemAllocationHandleType type);
CUresult fake_cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle);
CUresult fake_cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                  unsigned long long flags);
CUresult fake_cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult fake_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                       unsigned long long flags);
CUresult fake_cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count);
CUresult fake_cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult fake_cuMemAlloc(CUdeviceptr* dptr, size_t size);
CUresult fake_cuMemFree(CUdeviceptr dptr);
CUresult fake_cuMemHostAlloc(void** pp, size_t size, unsigned int flags);
CUresult fake_cuMemFreeHost(void* p);
CUresult fake_cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr);

// streams.cpp
CUresult fake_cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult fake_cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n);
CUresult fake_cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n);
CUresult fake_cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult fake_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream);
CUresult fake_cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n);
CUresult fake_cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream);
CUresult fake_cuStreamCreate(CUstream* stream, unsigned int flags);
CUresult fake_cuStreamDestroy(CUstream stream);
CUresult fake_cuStreamSynchronize(CUstream stream);
CUresult fake_cuStreamQuery(CUstream stream);
CUresult fake_cuCtxSynchronize();

// events.cpp
CUresult fake_cuEventCreate(CUevent* event, unsigned int flags);
CUresult fake_cuEventRecord(CUevent event, CUstream stream);
CUresult fake_cuEventQuery(CUevent event);
CUresult fake_cuEventDestroy(CUevent event);

// modules.cpp
CUresult fake_cuModuleLoadData(CUmodule* module, const void* image);
CUresult fake_cuModuleUnload(CUmodule module);
CUresult fake_cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name);
CUresult fake_cuModuleGetGlobal(CUdeviceptr* ptr, size_t* bytes, CUmodule module, const char* name);
CUresult fake_cuLibraryGetGlobal(CUdeviceptr* ptr, size_t* bytes, CUlibrary library, const char* name);
CUresult fake_cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                             unsigned int by, unsigned int bz, unsigned int shared_bytes, CUstream stream,
                             void** params, void** extra);
CUresult fake_cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
                                        CUstream stream, void** params);

}  // namespace fakecuda

#pragma GCC visibility pop
