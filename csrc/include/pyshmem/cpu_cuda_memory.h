// pyshmem/cpu_cuda_memory.h: memory management and copies of pyshmem's CPU CUDA runtime
// (included by pyshmem/cpu_cuda_runtime.h). "Device" memory is host memory, so copies
// accept pointers from anywhere (pyshmem's symmetric heap included) and every
// cudaMemcpyKind is a memmove; allocations are tracked so that freeing a pointer this
// runtime did not allocate is cudaErrorInvalidValue, as in CUDA.
#pragma once

namespace pyshmem {
namespace cpu {
namespace rt {

constexpr size_t kDeviceAlign = 256;  // CUDA's cudaMalloc alignment
constexpr size_t kHostAlign = 4096;   // page-locked host memory comes in pages

inline cudaError_t allocate(void** ptr, size_t size, cudaMemoryType type, const char* call) {
  if (!ptr) return record_error(cudaErrorInvalidValue, call, "the pointer argument is NULL");
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;  // CUDA: success, and a NULL pointer
  const size_t align = type == cudaMemoryTypeHost ? kHostAlign : kDeviceAlign;
  if (size > SIZE_MAX - align) return record_error(cudaErrorMemoryAllocation, call, "size too large");
  const size_t rounded = (size + align - 1) / align * align;
  void* p = aligned_alloc(align, rounded);
  if (!p) {
    char m[96];
    snprintf(m, sizeof m, "cannot allocate %zu bytes", size);
    return record_error(cudaErrorMemoryAllocation, call, m);
  }
  std::lock_guard<std::mutex> lk(state().mu);
  state().allocs[reinterpret_cast<uintptr_t>(p)] = Alloc{size, type};
  *ptr = p;
  return cudaSuccess;
}

// Frees `ptr` if this runtime allocated it with one of `types`; waits for all stream
// work first, since CUDA's free synchronises the device (pending copies may use it).
inline cudaError_t release(void* ptr, std::initializer_list<cudaMemoryType> types, const char* call) {
  if (cudaError_t e = cudaDeviceSynchronize()) return e;
  if (!ptr) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lk(state().mu);
    auto it = state().allocs.find(reinterpret_cast<uintptr_t>(ptr));
    bool ok = it != state().allocs.end();
    if (ok) {
      ok = false;
      for (auto t : types) ok = ok || it->second.type == t;
    }
    if (!ok) return record_error(cudaErrorInvalidValue, call, "not a pointer this allocator returned, or already freed");
    state().allocs.erase(it);
  }
  free(ptr);
  return cudaSuccess;
}

inline cudaError_t check_kind(cudaMemcpyKind kind, const char* call) {
  if (static_cast<unsigned>(kind) > static_cast<unsigned>(cudaMemcpyDefault))
    return record_error(cudaErrorInvalidMemcpyDirection, call, "kind is not a cudaMemcpyKind");
  return cudaSuccess;
}

inline cudaError_t check_copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind, const char* call) {
  if (cudaError_t e = check_kind(kind, call)) return e;
  if (count && (!dst || !src)) return record_error(cudaErrorInvalidValue, call, "NULL pointer");
  return cudaSuccess;
}

inline cudaError_t check_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            cudaMemcpyKind kind, const char* call) {
  if (cudaError_t e = check_kind(kind, call)) return e;
  if (width > dpitch || width > spitch) return record_error(cudaErrorInvalidPitchValue, call, "width exceeds a pitch");
  if (width && height && (!dst || !src)) return record_error(cudaErrorInvalidValue, call, "NULL pointer");
  return cudaSuccess;
}

inline void copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height) {
  for (size_t r = 0; r < height; ++r)
    memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
}

}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

// ---- Allocation ---------------------------------------------------------------------------

/// Allocates `size` bytes (not cleared), 256-byte aligned; size 0 gives NULL and
/// cudaSuccess. cudaErrorMemoryAllocation when memory runs out.
inline cudaError_t cudaMalloc(void** devPtr, size_t size) {
  return pyshmem::cpu::rt::allocate(devPtr, size, cudaMemoryTypeDevice, "cudaMalloc");
}
template <class T>
inline cudaError_t cudaMalloc(T** devPtr, size_t size) {
  return cudaMalloc(reinterpret_cast<void**>(devPtr), size);
}

/// Managed memory is the same host memory. `flags`: cudaMemAttachGlobal or cudaMemAttachHost.
inline cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags = cudaMemAttachGlobal) {
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
    return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaMallocManaged", "unknown flags");
  return pyshmem::cpu::rt::allocate(devPtr, size, cudaMemoryTypeManaged, "cudaMallocManaged");
}
template <class T>
inline cudaError_t cudaMallocManaged(T** devPtr, size_t size, unsigned int flags = cudaMemAttachGlobal) {
  return cudaMallocManaged(reinterpret_cast<void**>(devPtr), size, flags);
}

/// "Page-locked" host memory: page-aligned host memory (all flags accepted; mapped
/// memory's device pointer is the same address).
inline cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  if (flags & ~0xfu) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaHostAlloc", "unknown flags");
  return pyshmem::cpu::rt::allocate(pHost, size, cudaMemoryTypeHost, "cudaHostAlloc");
}
inline cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return pyshmem::cpu::rt::allocate(ptr, size, cudaMemoryTypeHost, "cudaMallocHost");
}
inline cudaError_t cudaMallocHost(void** ptr, size_t size, unsigned int flags) {  // CUDA's C++ overload
  return cudaHostAlloc(ptr, size, flags);
}
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, size_t size, unsigned int flags = 0) {
  return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
inline cudaError_t cudaHostAlloc(T** ptr, size_t size, unsigned int flags) {
  return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}

/// For mapped host memory: the same address (host and device share one address space).
inline cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  if (!pDevice || !pHost || flags)
    return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaHostGetDevicePointer", "NULL pointer or flags != 0");
  *pDevice = pHost;
  return cudaSuccess;
}

/// Waits for all stream work (CUDA's free synchronises), then frees memory from
/// cudaMalloc or cudaMallocManaged. NULL: cudaSuccess (the cudaFree(0) idiom); any
/// other pointer, or one freed already: cudaErrorInvalidValue.
inline cudaError_t cudaFree(void* devPtr) {
  return pyshmem::cpu::rt::release(devPtr, {cudaMemoryTypeDevice, cudaMemoryTypeManaged}, "cudaFree");
}

/// Like cudaFree, for memory from cudaMallocHost or cudaHostAlloc.
inline cudaError_t cudaFreeHost(void* ptr) {
  return pyshmem::cpu::rt::release(ptr, {cudaMemoryTypeHost}, "cudaFreeHost");
}

/// Stream-ordered allocation: the memory exists from the call on (earlier than CUDA
/// promises, which is allowed); cudaFreeAsync frees it in `stream`'s order.
inline cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t stream) {
  {
    std::lock_guard<std::mutex> lk(pyshmem::cpu::rt::state().mu);
    if (!pyshmem::cpu::rt::find_stream(stream))
      return pyshmem::cpu::rt::record_error(cudaErrorInvalidResourceHandle, "cudaMallocAsync", "unknown stream");
  }
  return pyshmem::cpu::rt::allocate(devPtr, size, cudaMemoryTypeDevice, "cudaMallocAsync");
}
template <class T>
inline cudaError_t cudaMallocAsync(T** devPtr, size_t size, cudaStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void**>(devPtr), size, stream);
}
inline cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t stream) {
  namespace rt = pyshmem::cpu::rt;
  if (!devPtr) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lk(rt::state().mu);
    auto it = rt::state().allocs.find(reinterpret_cast<uintptr_t>(devPtr));
    if (it == rt::state().allocs.end() || it->second.type != cudaMemoryTypeDevice)
      return rt::record_error(cudaErrorInvalidValue, "cudaFreeAsync", "not a pointer from cudaMalloc/cudaMallocAsync");
    rt::state().allocs.erase(it);  // at once, so a second free is refused now
  }
  return rt::stream_enqueue(stream, "cudaFreeAsync", [devPtr] {
    free(devPtr);
    return cudaSuccess;
  });
}

/// free = available physical memory, total = physical memory.
inline cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  if (!free || !total) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaMemGetInfo", "NULL pointer");
  *free = pyshmem::cpu::rt::physical_memory(true);
  *total = pyshmem::cpu::rt::physical_memory(false);
  return cudaSuccess;
}

/// What `ptr` is: type Device/Managed/Host inside a block this runtime allocated
/// (device and host pointers both `ptr`), else cudaMemoryTypeUnregistered with NULL
/// pointers (CUDA 11+ behaviour), device = the current device.
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  namespace rt = pyshmem::cpu::rt;
  if (!attributes) return rt::record_error(cudaErrorInvalidValue, "cudaPointerGetAttributes", "attributes is NULL");
  *attributes = cudaPointerAttributes{cudaMemoryTypeUnregistered, rt::t_device, nullptr, nullptr};
  std::lock_guard<std::mutex> lk(rt::state().mu);
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  auto it = rt::state().allocs.upper_bound(a);
  if (it == rt::state().allocs.begin()) return cudaSuccess;
  --it;
  if (a >= it->first + it->second.size) return cudaSuccess;
  attributes->type = it->second.type;
  attributes->devicePointer = attributes->hostPointer = const_cast<void*>(ptr);
  return cudaSuccess;
}

// ---- Copies and fills -------------------------------------------------------------------

/// Synchronous copy: legacy-stream work (after earlier work of it and of the blocking
/// streams) that the host waits for. cudaErrorInvalidMemcpyDirection for a bad `kind`;
/// the sticky error if one is set.
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  if (cudaError_t e = pyshmem::cpu::rt::check_copy(dst, src, count, kind, "cudaMemcpy")) return e;
  return pyshmem::cpu::rt::run_sync("cudaMemcpy", [=] { memmove(dst, src, count); });
}

namespace pyshmem {
namespace cpu {
namespace rt {
// Registers [base, base + bytes) as device memory (pyshmem's symmetric heap).
inline void register_device_range(const void* base, size_t bytes) {
  std::lock_guard<std::mutex> lk(state().mu);
  const uintptr_t lo = reinterpret_cast<uintptr_t>(base);
  state().device_ranges.emplace_back(lo, lo + bytes);
}
// Forgets the device range that starts at `base` (cuMemUnmap of a mapping).
inline void unregister_device_range(const void* base) {
  std::lock_guard<std::mutex> lk(state().mu);
  auto& v = state().device_ranges;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].first == reinterpret_cast<uintptr_t>(base)) {
      v.erase(v.begin() + static_cast<long>(i));
      return;
    }
}
// Where a pointer points, as CUDA's copies tell: memory of cudaMalloc (or managed) or a
// registered device range; page-locked host memory (cudaMallocHost, cudaHostAlloc); or
// pageable host memory (anything else: the stack, malloc, new, globals).
enum class Where { device, pinned, pageable };
inline Where where(const void* ptr) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lk(state().mu);
  for (const auto& r : state().device_ranges)
    if (a >= r.first && a < r.second) return Where::device;
  auto it = state().allocs.upper_bound(a);
  if (it == state().allocs.begin()) return Where::pageable;
  --it;
  if (a >= it->first + it->second.size) return Where::pageable;
  return it->second.type == cudaMemoryTypeHost ? Where::pinned : Where::device;
}
}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

/// Asynchronous copy, with CUDA's host-side behaviour by where the pointers point
/// (whatever `kind` says, as with unified addressing): device <-> device and page-locked
/// host <-> device are `stream` work and return at once; from pageable host memory to
/// device memory the source is copied at the call (it may be reused on return) and the
/// rest is stream work; to pageable host memory from device memory, and between two
/// host buffers, the call returns once the copy is done (after the stream's earlier work).
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                   cudaStream_t stream = 0) {
  namespace rt = pyshmem::cpu::rt;
  if (cudaError_t e = rt::check_copy(dst, src, count, kind, "cudaMemcpyAsync")) return e;
  const rt::Where to = rt::where(dst), from = rt::where(src);
  const bool to_host = to != rt::Where::device, from_host = from != rt::Where::device;
  if (to == rt::Where::pageable || from == rt::Where::pageable) {
    std::lock_guard<std::mutex> lk(rt::state().mu);
    auto s = rt::find_stream(stream);
    if (s && s->capture)
      return rt::refuse_in_capture({s->capture}, cudaErrorStreamCaptureUnsupported, "cudaMemcpyAsync",
                                   "a copy to or from pageable host memory cannot be captured (use cudaMallocHost "
                                   "memory); the capture is invalidated");
  }
  if ((to == rt::Where::pageable && !from_host) || (to_host && from_host)) {
    if (cudaError_t e = rt::stream_enqueue(stream, "cudaMemcpyAsync", [=] {
          memmove(dst, src, count);
          return cudaSuccess;
        }))
      return e;
    return cudaStreamSynchronize(stream);
  }
  if (from == rt::Where::pageable && count) {
    std::shared_ptr<char> staged(static_cast<char*>(malloc(count)), free);
    if (!staged) return rt::record_error(cudaErrorMemoryAllocation, "cudaMemcpyAsync", "cannot stage the pageable source");
    memcpy(staged.get(), src, count);
    return rt::stream_enqueue(stream, "cudaMemcpyAsync", [=] {
      memcpy(dst, staged.get(), count);
      return cudaSuccess;
    });
  }
  return rt::stream_enqueue(stream, "cudaMemcpyAsync", [=] {
    memmove(dst, src, count);
    return cudaSuccess;
  });
}

/// Synchronous fill of `count` bytes with (unsigned char)value; ordered like cudaMemcpy.
inline cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  if (count && !devPtr) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaMemset", "devPtr is NULL");
  return pyshmem::cpu::rt::run_sync("cudaMemset", [=] { memset(devPtr, value, count); });
}

/// Asynchronous fill: `stream` work, returns at once.
inline cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream = 0) {
  if (count && !devPtr) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaMemsetAsync", "devPtr is NULL");
  return pyshmem::cpu::rt::stream_enqueue(stream, "cudaMemsetAsync", [=] {
    memset(devPtr, value, count);
    return cudaSuccess;
  });
}

/// `height` rows of `width` bytes between pitched buffers; cudaErrorInvalidPitchValue
/// when width exceeds a pitch. Synchronous like cudaMemcpy.
inline cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                                cudaMemcpyKind kind) {
  namespace rt = pyshmem::cpu::rt;
  if (cudaError_t e = rt::check_2d(dst, dpitch, src, spitch, width, height, kind, "cudaMemcpy2D")) return e;
  return rt::run_sync("cudaMemcpy2D", [=] { rt::copy_2d(dst, dpitch, src, spitch, width, height); });
}
inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t stream = 0) {
  namespace rt = pyshmem::cpu::rt;
  if (cudaError_t e = rt::check_2d(dst, dpitch, src, spitch, width, height, kind, "cudaMemcpy2DAsync")) return e;
  return rt::stream_enqueue(stream, "cudaMemcpy2DAsync", [=] {
    rt::copy_2d(dst, dpitch, src, spitch, width, height);
    return cudaSuccess;
  });
}

/// __device__/__constant__ variables are ordinary globals here: copies to and from
/// `symbol` + `offset` (CUDA's C++ template forms), synchronous like cudaMemcpy.
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  if (offset > sizeof(T) || count > sizeof(T) - offset)
    return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaMemcpyToSymbol", "beyond the symbol's size");
  return cudaMemcpy(reinterpret_cast<char*>(const_cast<T*>(&symbol)) + offset, src, count, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  if (offset > sizeof(T) || count > sizeof(T) - offset)
    return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaMemcpyFromSymbol", "beyond the symbol's size");
  return cudaMemcpy(dst, reinterpret_cast<const char*>(&symbol) + offset, count, kind);
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void** devPtr, const T& symbol) {
  if (!devPtr) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaGetSymbolAddress", "devPtr is NULL");
  *devPtr = const_cast<T*>(&symbol);
  return cudaSuccess;
}

// ---- Reset ---------------------------------------------------------------------------------

/// Waits for all stream work, then frees everything the allocation calls returned,
/// destroys all streams and events, and clears the sticky and last errors.
inline cudaError_t cudaDeviceReset(void) {
  namespace rt = pyshmem::cpu::rt;
  std::vector<uintptr_t> blocks;
  {
    std::unique_lock<std::mutex> lk(rt::state().mu);
    std::vector<rt::Target> ts{{rt::streams().legacy, rt::streams().legacy->enqueued}};
    for (auto& s : rt::streams().live) ts.emplace_back(s, s->enqueued);
    rt::state().cv.wait(lk, [&] { return rt::reached(ts); });
    for (auto& a : rt::state().allocs) blocks.push_back(a.first);
    rt::state().allocs.clear();
    for (auto& h : rt::streams().handles) h.second->destroyed = true;
    rt::streams().handles.clear();
    auto& live = rt::streams().live;  // streams without a worker retire now, others when it exits
    for (size_t i = live.size(); i-- > 0;)
      if (!live[i]->worker) live.erase(live.begin() + static_cast<long>(i));
    rt::streams().events.clear();
    rt::state().sticky = cudaSuccess;
    rt::state().cv.notify_all();  // idle workers of the destroyed streams exit
  }
  for (uintptr_t b : blocks) free(reinterpret_cast<void*>(b));
  rt::t_last_error = cudaSuccess;
  return cudaSuccess;
}
