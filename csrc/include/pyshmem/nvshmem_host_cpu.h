/* pyshmem/nvshmem_host_cpu.h: the target-specific half of NVSHMEM's host API for
 * programs built for the CPU (pyshmem-nvcc --cpu; included by pyshmem/nvshmem_host.h):
 * init and finalize, the symmetric heap (pyshmem's host heap, which the CUDA runtime
 * subset treats as device memory), the _on_stream forms as stream work, and
 * nvshmemx_collective_launch on the CPU kernel launches (pyshmem/cpu_launch.h).
 *
 * On the CPU build a host thread calls the same functions a kernel calls: the device
 * API's (nvshmem_int_put, nvshmem_quiet, nvshmem_barrier_all ... from main() are the
 * device API run by the host thread, with its completion and ordering rules). The
 * _on_stream forms are stream work: they run in the stream's order, after the kernels and
 * copies enqueued before them, and return at once. */
#ifndef PYSHMEM_NVSHMEM_HOST_CPU_H
#define PYSHMEM_NVSHMEM_HOST_CPU_H

#include "pyshmem/cpu_cuda_driver.h"
#include "pyshmem/cpu_cuda_runtime.h"
#include "pyshmem/cpu_launch.h"

/* The generated _on_stream forms (<nvshmem.h>) for this target. */
#define PYSHMEM_NVSHMEM_ON_STREAM 1

namespace pyshmem {
namespace nvshmem_host {
/* Enqueues host work on `stream` (the _on_stream forms). */
template <class F>
inline void on_stream(cudaStream_t stream, const char* call, F work) {
  ::pyshmem::cpu::rt::stream_enqueue(stream, call, [work]() -> cudaError_t {
    work();
    return cudaSuccess;
  });
}
}  // namespace nvshmem_host
}  // namespace pyshmem

/* ---- setup ---- */

/* Collective: starts the runtime (PYSHMEM_* set by shmemrun, or a job of one PE), binds
 * this program's device API to it, and makes cudaGetDeviceCount report one device per
 * PE of this node. Ends the process (status 1, with the reason) when it cannot start. */
inline void nvshmem_init() {
  // NVSHMEM's heap grows as a program allocates; pyshmem's is reserved at init, and on
  // the CPU build memory that is never touched costs nothing: NVSHMEM programs get 8 GiB
  // per PE, more when NVSHMEM_SYMMETRIC_SIZE asks for it (+1 GiB: see the helper).
  ::pyshmem::nvshmem_host::adopt_nvshmem_environment("PYSHMEM_SYMMETRIC_SIZE", size_t(8) << 30, size_t(1) << 30);
  if (pyshmem_init() != 0) {
    ::pyshmem::nvshmem_host::report_failure("nvshmem_init");
    exit(1);
  }
  if (::pyshmem::device_init() != 0) {
    ::pyshmem::nvshmem_host::report_failure("nvshmem_init");
    exit(1);
  }
  // The symmetric heap is device memory to the CUDA runtime (copies to and from it).
  const pyshmem_device_state* st = ::pyshmem::detail::h_state;
  ::pyshmem::cpu::rt::register_device_range(reinterpret_cast<const void*>(st->heap_base),
                                            static_cast<size_t>(st->heap_stride) * static_cast<size_t>(st->n_pes));
  int node_pes = 1;
  pyshmem_team_n_pes(PYSHMEM_TEAM_SHARED, &node_pes);
  ::pyshmem::cpu::rt::g_node_pes = node_pes;
  ::pyshmem::nvshmem_host::init_status() = NVSHMEM_STATUS_IS_INITIALIZED;
}

/* Collective: waits for this PE's streams (their kernels may still use the heap), then
 * barrier and unmap the heap. */
inline void nvshmem_finalize() {
  cudaDeviceSynchronize();
  if (pyshmem_finalize() != 0) ::pyshmem::nvshmem_host::report_failure("nvshmem_finalize");
  ::pyshmem::nvshmem_host::init_status() = NVSHMEM_STATUS_NOT_INITIALIZED;
}

/* ---- symmetric memory (collective; each ends with a barrier). NULL on failure. ---- */
inline void* nvshmem_malloc(size_t size) {
  void* p = nullptr;
  return pyshmem_malloc(size, &p) == 0 ? p : (::pyshmem::nvshmem_host::report_failure("nvshmem_malloc"), nullptr);
}
inline void* nvshmem_calloc(size_t count, size_t size) {
  void* p = nullptr;
  return pyshmem_calloc(count, size, &p) == 0 ? p : (::pyshmem::nvshmem_host::report_failure("nvshmem_calloc"), nullptr);
}
inline void* nvshmem_align(size_t alignment, size_t size) {
  void* p = nullptr;
  return pyshmem_align(alignment, size, &p) == 0 ? p : (::pyshmem::nvshmem_host::report_failure("nvshmem_align"), nullptr);
}
inline void nvshmem_free(void* ptr) {
  if (pyshmem_free(ptr) != 0) ::pyshmem::nvshmem_host::report_failure("nvshmem_free");
}
/* ---- user buffers ----
 * nvshmemx_buffer_register_symmetric maps memory the program made with cuMemCreate /
 * cuMemMap (pyshmem/cpu_cuda_vmm.h) into the symmetric heap, as NVSHMEM maps it into
 * its symmetric address range: collective (every PE, the same size); the heap gets
 * `size` bytes at the same offset on every PE, holding the buffer's contents, and from
 * then on the buffer's own addresses and the returned symmetric address are the same
 * memory (the heap's pages are mapped at the buffer's addresses too), so peers reach
 * what the program writes through either. nvshmemx_buffer_unregister_symmetric (also
 * collective) puts the contents back into the buffer's own memory and releases the heap
 * range. On the CPU build every host address can be the local side of an RMA, so
 * nvshmemx_buffer_register (a local buffer for RMA with remote PEs) only records the
 * range for the matching unregister. */
namespace pyshmem {
namespace nvshmem_host {
struct SymmetricBuffer {
  void* buffer;
  size_t size;
};
inline std::mutex& buffers_mutex() {
  static std::mutex m;
  return m;
}
inline std::map<uintptr_t, SymmetricBuffer>& symmetric_buffers() {  // by symmetric address
  static std::map<uintptr_t, SymmetricBuffer> b;
  return b;
}
inline std::map<uintptr_t, size_t>& local_buffers() {
  static std::map<uintptr_t, size_t> b;
  return b;
}
/* A collective's agreement: true on every PE when every PE passed `ok` true and the same
 * `size`; else false on every PE, with the reason printed where it arose. */
inline bool agree(const char* call, bool ok, size_t size) {
  int64_t* w = static_cast<int64_t*>(nvshmem_malloc(6 * sizeof(int64_t)));
  if (!w) return false;
  w[0] = ok ? 0 : 1;
  w[1] = static_cast<int64_t>(size);
  w[2] = -static_cast<int64_t>(size);
  ::pyshmem::max_reduce(NVSHMEM_TEAM_WORLD, w + 3, w, 3);
  const bool any_failed = w[3] != 0, same_size = w[4] == -w[5];
  if (ok && !any_failed && !same_size)
    fprintf(stderr, "pyshmem: %s on PE %d: the PEs passed different sizes (from %lld to %lld bytes); every PE must "
                    "pass the same\n", call, ::pyshmem::my_pe(), static_cast<long long>(-w[5]), static_cast<long long>(w[4]));
  nvshmem_free(w);
  return !any_failed && same_size;
}
}  // namespace nvshmem_host
}  // namespace pyshmem

/* Returns the symmetric address, or NULL on every PE with the reason printed where it
 * arose (a PE's buffer that is not the start of one readable, writable cuMemMap mapping
 * of at least `size` bytes, sizes that differ between PEs, a full heap): the PEs agree
 * before anything is mapped, so the job stays in step. `flags` must be 0. */
inline void* nvshmemx_buffer_register_symmetric(void* buf, size_t size, int flags) {
  namespace vmm = ::pyshmem::cpu::vmm;
  const char* call = "nvshmemx_buffer_register_symmetric";
  const size_t page = vmm::page();
  bool ok = buf && size && size % page == 0 && !flags;
  if (!ok)
    fprintf(stderr, "pyshmem: %s on PE %d: buf must be a cuMemMap mapping, size a positive multiple of %zu, "
                    "flags 0\n", call, ::pyshmem::my_pe(), page);
  if (ok) {
    vmm::Vmm& v = vmm::vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    auto it = v.mappings.find(reinterpret_cast<uintptr_t>(buf));
    ok = it != v.mappings.end() && it->second.size >= size && (it->second.prot & PROT_WRITE);
    if (!ok)
      fprintf(stderr, "pyshmem: %s on PE %d: %p is not the start of a readable and writable cuMemMap mapping of at "
                      "least %zu bytes (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess "
                      "..._PROT_READWRITE)\n", call, ::pyshmem::my_pe(), buf, size);
  }
  if (!::pyshmem::nvshmem_host::agree(call, ok, size)) return nullptr;
  void* sym = nvshmem_align(page, size);
  if (!sym) return nullptr;
  memcpy(sym, buf, size);
  // The heap's pages (a shared mapping) mapped again at the buffer's addresses.
  if (mremap(sym, 0, size, MREMAP_MAYMOVE | MREMAP_FIXED, buf) == MAP_FAILED) {
    fprintf(stderr, "pyshmem: %s: cannot map the symmetric range at the buffer: %s\n", call, strerror(errno));
    pyshmem_global_exit(1);  // the other PEs registered theirs: the job cannot stay in step
  }
  {
    std::lock_guard<std::mutex> lock(::pyshmem::nvshmem_host::buffers_mutex());
    ::pyshmem::nvshmem_host::symmetric_buffers()[reinterpret_cast<uintptr_t>(sym)] = {buf, size};
  }
  ::pyshmem::barrier_all();  // no PE writes another's range before its contents are in place
  return sym;
}

/* Collective: the inverse of nvshmemx_buffer_register_symmetric for the address and
 * size it returned and was given. Returns 0, or nonzero with the reason printed. */
inline int nvshmemx_buffer_unregister_symmetric(void* sym, size_t size) {
  namespace vmm = ::pyshmem::cpu::vmm;
  const char* call = "nvshmemx_buffer_unregister_symmetric";
  ::pyshmem::nvshmem_host::SymmetricBuffer b{};
  {
    std::lock_guard<std::mutex> lock(::pyshmem::nvshmem_host::buffers_mutex());
    auto& all = ::pyshmem::nvshmem_host::symmetric_buffers();
    auto it = all.find(reinterpret_cast<uintptr_t>(sym));
    if (it != all.end() && it->second.size == size) b = it->second;
  }
  if (!b.buffer)
    fprintf(stderr, "pyshmem: %s on PE %d: %p (%zu bytes) is not a buffer nvshmemx_buffer_register_symmetric "
                    "returned\n", call, ::pyshmem::my_pe(), sym, size);
  if (!::pyshmem::nvshmem_host::agree(call, b.buffer != nullptr, size)) return NVSHMEMX_ERROR_INVALID_VALUE;
  {
    std::lock_guard<std::mutex> lock(::pyshmem::nvshmem_host::buffers_mutex());
    ::pyshmem::nvshmem_host::symmetric_buffers().erase(reinterpret_cast<uintptr_t>(sym));
  }
  cudaDeviceSynchronize();  // kernels may still use it
  ::pyshmem::barrier_all();  // and peers' writes to it complete before the contents move
  int fd = -1, prot = PROT_READ | PROT_WRITE;
  size_t offset = 0;
  {
    vmm::Vmm& v = vmm::vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    auto m = v.mappings.find(reinterpret_cast<uintptr_t>(b.buffer));
    if (m != v.mappings.end()) {
      fd = v.handles[m->second.handle].fd;
      offset = m->second.offset;
      prot = m->second.prot;
    }
  }
  // The contents back into the buffer's own memory, mapped there again.
  void* own = fd >= 0 ? mmap(b.buffer, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                             static_cast<off_t>(offset))
                      : MAP_FAILED;
  if (own == MAP_FAILED) {
    fprintf(stderr, "pyshmem: %s: the buffer's own memory is gone (was it unmapped while registered?)\n", call);
    pyshmem_global_exit(1);
  }
  memcpy(b.buffer, sym, size);
  mprotect(b.buffer, size, prot);
  nvshmem_free(sym);
  return 0;
}

/* Records [addr, addr + length) for nvshmemx_buffer_unregister (see above). Returns 0. */
inline int nvshmemx_buffer_register(void* addr, size_t length) {
  if (!addr || !length) {
    fprintf(stderr, "pyshmem: nvshmemx_buffer_register: NULL address or zero length\n");
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  std::lock_guard<std::mutex> lock(::pyshmem::nvshmem_host::buffers_mutex());
  ::pyshmem::nvshmem_host::local_buffers()[reinterpret_cast<uintptr_t>(addr)] = length;
  return 0;
}
/* Forgets a range nvshmemx_buffer_register recorded; nonzero for any other address. */
inline int nvshmemx_buffer_unregister(void* addr) {
  std::lock_guard<std::mutex> lock(::pyshmem::nvshmem_host::buffers_mutex());
  if (::pyshmem::nvshmem_host::local_buffers().erase(reinterpret_cast<uintptr_t>(addr))) return 0;
  fprintf(stderr, "pyshmem: nvshmemx_buffer_unregister: %p was not registered with nvshmemx_buffer_register\n", addr);
  return NVSHMEMX_ERROR_INVALID_VALUE;
}

/* ---- kernels of modules loaded with cuModuleLoad (pyshmem-nvcc --cpu -cubin) ---- */

/* Binds the module's copy of the device API to this PE's runtime, so its kernels can call
 * NVSHMEM (as NVSHMEM requires of modules loaded with the driver API). After
 * nvshmem_init; returns 0, or nonzero with the reason printed. */
inline int nvshmemx_cumodule_init(CUmodule module) {
  if (!module) {
    fprintf(stderr, "pyshmem: nvshmemx_cumodule_init: module is NULL\n");
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  if (::pyshmem::nvshmem_host::init_status() != NVSHMEM_STATUS_IS_INITIALIZED || !::pyshmem::detail::h_state) {
    fprintf(stderr, "pyshmem: nvshmemx_cumodule_init: call nvshmem_init first\n");
    return NVSHMEMX_ERROR_INTERNAL;
  }
  if (!module->bind_state) {
    fprintf(stderr, "pyshmem: nvshmemx_cumodule_init: %s has no device state to bind (build it with pyshmem-nvcc "
                    "--cpu -cubin)\n", module->path.c_str());
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  module->bind_state(::pyshmem::detail::h_state);
  return 0;
}
/* Unbinds it: the module's kernels can no longer call NVSHMEM. Returns 0. */
inline int nvshmemx_cumodule_finalize(CUmodule module) {
  if (!module) return NVSHMEMX_ERROR_INVALID_VALUE;
  if (module->bind_state) module->bind_state(nullptr);
  return 0;
}

/* ---- kernels that synchronise with other PEs ---- */

/* Launches `func` as a cooperative kernel (all blocks resident at once, this_grid().sync()
 * allowed) on `stream`; args[i] points at argument i. Returns 0, or nonzero with the
 * CUDA error printed (a bad shape, an unknown kernel). */
inline int nvshmemx_collective_launch(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                                      cudaStream_t stream) {
  const cudaError_t e = ::pyshmem::cpu::launch_by_address("nvshmemx_collective_launch", func, grid, block, args,
                                                          shared_mem, stream, true);
  return e == cudaSuccess ? 0 : NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED;
}
#endif /* PYSHMEM_NVSHMEM_HOST_CPU_H */
