// fake_cuda/modules.cpp - fake modules and kernels, so that host logic around modules
// and launches can be tested without a GPU.
//
// cuModuleLoadData accepts only a NUL-terminated text whose first line is
// FAKECUDA-MODULE; every other image (cubin, PTX, fatbin) fails with
// CUDA_ERROR_NOT_SUPPORTED. The following lines (blank ones and '#' comments skipped):
//   global <name> <bytes>          a zero-filled global in "device" memory
//   kernel <name> <kind> [<arg>]   a kernel, one of the kinds below
// Kinds (run when the launch op runs on its stream; parameters are copied at launch):
//   copy_global <global>  (u64 dst)        copies the whole global to dst
//   wait_flag             (u64 flag_ptr)   spins (100 us sleeps) until *(uint64_t*)flag_ptr
//                         != 0 (acquire), at most FAKE_CUDA_KERNEL_TIMEOUT_S seconds
//                         (default 30), then records a sticky CUDA_ERROR_LAUNCH_TIMEOUT
//   store_u64             (u64 ptr, u64 v) stores v at ptr (release)
//   proxy_p <global>      (u64 dest, u64 value, u64 pe) what a GPU kernel's 8-byte
//                         device-API p to a PE on another node does: reads pyshmem's
//                         device state from the module's <global> (pyshmem_d_state,
//                         which pyshmem fills at load), pushes a P request for `dest`
//                         (a symmetric GPU-heap address) on its proxy ring exactly as
//                         the device API does (pyshmem/proxy_fifo.h: no doorbell, as
//                         from a GPU), and returns once the proxy executed it, at most
//                         FAKE_CUDA_KERNEL_TIMEOUT_S seconds (else LAUNCH_TIMEOUT)
// A malformed module text gives CUDA_ERROR_INVALID_IMAGE.
#include "fake_cuda.h"

#include "pyshmem/device_state.h"

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fakecuda {
namespace {

enum class Kind { kCopyGlobal, kWaitFlag, kStoreU64, kProxyP };

struct KindInfo { const char* name; Kind kind; size_t params; bool needs_arg; };
constexpr KindInfo kKinds[] = {
    {"copy_global", Kind::kCopyGlobal, 1, true},
    {"wait_flag", Kind::kWaitFlag, 1, false},
    {"store_u64", Kind::kStoreU64, 2, false},
    {"proxy_p", Kind::kProxyP, 3, true},
};  // every parameter is 8 bytes
constexpr size_t kMaxParams = 3;

struct Global { void* ptr; size_t size; };

struct Kernel {
  std::string name;
  const KindInfo* kind;
  std::string arg;
  Global global{nullptr, 0};  // copy_global's source, proxy_p's device state
};

struct Module {
  std::map<std::string, Global> globals;
  std::map<std::string, std::unique_ptr<Kernel>> kernels;
};

std::mutex g_modules_mutex;
std::set<Module*> g_modules;
std::set<const Kernel*> g_kernels;

void free_globals(Module& m) {
  for (auto& kv : m.globals) {
    remove_device_range(reinterpret_cast<uintptr_t>(kv.second.ptr));
    std::free(kv.second.ptr);
  }
  m.globals.clear();
}

bool is_fake_module(const char* text) {
  static const char kMagic[] = "FAKECUDA-MODULE";
  const size_t n = sizeof kMagic - 1;
  return std::strncmp(text, kMagic, n) == 0 && (text[n] == '\0' || text[n] == '\n' || text[n] == '\r');
}

// Parses the lines after the first; false on a malformed line.
bool parse(const char* text, Module& m) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // FAKECUDA-MODULE
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string what, name, third, extra;
    if (!(words >> what) || what[0] == '#') continue;
    if (!(words >> name)) return false;
    if (what == "global") {
      char* end = nullptr;
      if (!(words >> third) || words >> extra) return false;
      unsigned long long bytes = std::strtoull(third.c_str(), &end, 10);
      if (*end != '\0' || bytes == 0 || m.globals.count(name)) return false;
      void* p = nullptr;
      if (posix_memalign(&p, 256, bytes) != 0) return false;
      std::memset(p, 0, bytes);
      m.globals[name] = Global{p, static_cast<size_t>(bytes)};
      add_device_range(reinterpret_cast<uintptr_t>(p), bytes);
    } else if (what == "kernel") {
      if (!(words >> third) || m.kernels.count(name)) return false;
      auto k = std::make_unique<Kernel>();
      k->name = name;
      k->kind = nullptr;
      for (const KindInfo& info : kKinds)
        if (third == info.name) k->kind = &info;
      if (k->kind == nullptr) return false;
      if (k->kind->needs_arg && !(words >> k->arg)) return false;
      if (words >> extra) return false;
      m.kernels[name] = std::move(k);
    } else {
      return false;
    }
  }
  for (auto& kv : m.kernels) {  // copy_global may name a global declared after it
    Kernel& k = *kv.second;
    if (k.kind->kind != Kind::kCopyGlobal && k.kind->kind != Kind::kProxyP) continue;
    auto g = m.globals.find(k.arg);
    if (g == m.globals.end()) return false;
    k.global = g->second;
  }
  return true;
}

double kernel_timeout_s() { return env_double("FAKE_CUDA_KERNEL_TIMEOUT_S", 30.0); }

std::chrono::steady_clock::time_point kernel_deadline() {
  return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(kernel_timeout_s()));
}

// Waits (100 us sleeps) until *counter >= target; false at the deadline.
bool wait_at_least(const uint64_t* counter, uint64_t target, std::chrono::steady_clock::time_point deadline) {
  while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < target) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

// The device API's proxy p of 8 bytes, as a GPU thread runs it (device/proxy.cuh).
CUresult proxy_p(const Kernel& k, uint64_t dest, uint64_t value, uint64_t pe) {
  if (k.global.size != sizeof(pyshmem_device_state)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  const auto* st = static_cast<const pyshmem_device_state*>(k.global.ptr);
  pyshmem_proxy_fifo* f = st->proxy;
  if (f == nullptr) return CUDA_ERROR_ILLEGAL_ADDRESS;  // a device-side trap: no proxy ring
  const uint64_t offset = dest - (st->heap_base + static_cast<uint64_t>(st->my_pe) * st->heap_stride);
  const pyshmem_fifo_entry req[2] = {
      {offset, pyshmem_fifo_header_w1(PYSHMEM_REQ_P, static_cast<int>(pe), 8u)}, {value, 0}};
  const uint32_t cap = f->capacity;
  const uint64_t t = __atomic_fetch_add(&f->head, 2, __ATOMIC_RELAXED);
  const auto deadline = kernel_deadline();
  if (t + 2 > cap && !wait_at_least(&f->tail, t + 2 - cap, deadline)) return CUDA_ERROR_LAUNCH_TIMEOUT;
  for (uint64_t i = 0; i < 2; ++i) {
    pyshmem_fifo_entry& slot = f->entries[(t + i) & (cap - 1)];
    __atomic_store_n(&slot.w0, req[i].w0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot.w1, (req[i].w1 & PYSHMEM_FIFO_PAYLOAD_MASK) | pyshmem_fifo_lap_flag(t + i, cap),
                     __ATOMIC_RELEASE);
  }
  if (!wait_at_least(&f->tail, t + 2, deadline)) return CUDA_ERROR_LAUNCH_TIMEOUT;
  return __atomic_load_n(&f->status, __ATOMIC_ACQUIRE) ? CUDA_ERROR_LAUNCH_FAILED : CUDA_SUCCESS;
}

CUresult run_kernel(const Kernel& k, const uint64_t* p) {
  switch (k.kind->kind) {
    case Kind::kCopyGlobal:
      std::memcpy(host(p[0]), k.global.ptr, k.global.size);
      return CUDA_SUCCESS;
    case Kind::kStoreU64:
      __atomic_store_n(static_cast<uint64_t*>(host(p[0])), p[1], __ATOMIC_RELEASE);
      return CUDA_SUCCESS;
    case Kind::kWaitFlag:
      return wait_at_least(static_cast<uint64_t*>(host(p[0])), 1, kernel_deadline()) ? CUDA_SUCCESS
                                                                                     : CUDA_ERROR_LAUNCH_TIMEOUT;
    case Kind::kProxyP:
      return proxy_p(k, p[0], p[1], p[2]);
  }
  return CUDA_ERROR_LAUNCH_FAILED;
}

}  // namespace

CUresult fake_cuModuleLoadData(CUmodule* module, const void* image) {
  CUresult r = need_context();
  if (r != CUDA_SUCCESS) return r;
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const char* text = static_cast<const char*>(image);
  if (!is_fake_module(text)) {
    FAKE_LOG("image=not-fake");
    return CUDA_ERROR_NOT_SUPPORTED;  // real cubins/PTX: this fake runs no GPU code
  }
  auto m = std::make_unique<Module>();
  if (!parse(text, *m)) {
    free_globals(*m);
    FAKE_LOG("image=malformed");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  std::lock_guard<std::mutex> lock(g_modules_mutex);
  for (auto& kv : m->kernels) g_kernels.insert(kv.second.get());
  *module = reinterpret_cast<CUmodule>(m.get());
  FAKE_LOG("module=%p globals=%zu kernels=%zu", static_cast<void*>(m.get()), m->globals.size(), m->kernels.size());
  g_modules.insert(m.release());
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleUnload(CUmodule module) {
  CUresult r = need_context();
  FAKE_LOG("module=%p", static_cast<void*>(module));
  if (r != CUDA_SUCCESS) return r;
  Module* m = reinterpret_cast<Module*>(module);
  {
    std::lock_guard<std::mutex> lock(g_modules_mutex);
    if (g_modules.erase(m) == 0) return CUDA_ERROR_INVALID_HANDLE;
    for (auto& kv : m->kernels) g_kernels.erase(kv.second.get());
  }
  drain_all();  // launches of its kernels may still be pending
  free_globals(*m);
  delete m;
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
  CUresult r = need_context();
  FAKE_LOG("name=%s", name ? name : "(null)");
  if (r != CUDA_SUCCESS) return r;
  if (fn == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_modules_mutex);
  Module* m = reinterpret_cast<Module*>(module);
  if (!g_modules.count(m)) return CUDA_ERROR_INVALID_HANDLE;
  auto it = m->kernels.find(name);
  if (it == m->kernels.end()) return CUDA_ERROR_NOT_FOUND;
  *fn = reinterpret_cast<CUfunction>(it->second.get());
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleGetGlobal(CUdeviceptr* ptr, size_t* bytes, CUmodule module, const char* name) {
  CUresult r = need_context();
  FAKE_LOG("name=%s", name ? name : "(null)");
  if (r != CUDA_SUCCESS) return r;
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_modules_mutex);
  Module* m = reinterpret_cast<Module*>(module);
  if (!g_modules.count(m)) return CUDA_ERROR_INVALID_HANDLE;
  auto it = m->globals.find(name);
  if (it == m->globals.end()) return CUDA_ERROR_NOT_FOUND;
  if (ptr != nullptr) *ptr = dptr(it->second.ptr);
  if (bytes != nullptr) *bytes = it->second.size;
  FAKE_LOG("ptr=%p bytes=%zu", it->second.ptr, it->second.size);
  return CUDA_SUCCESS;
}

CUresult fake_cuLibraryGetGlobal(CUdeviceptr*, size_t*, CUlibrary, const char*) {
  return g_initialized.load() ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult fake_cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                             unsigned int by, unsigned int bz, unsigned int shared_bytes, CUstream stream,
                             void** params, void** extra) {
  CUresult r = need_context();
  if (r != CUDA_SUCCESS) return r;
  const Kernel* k = reinterpret_cast<const Kernel*>(f);
  {
    std::lock_guard<std::mutex> lock(g_modules_mutex);
    if (!g_kernels.count(k)) return CUDA_ERROR_INVALID_HANDLE;
  }
  FAKE_LOG("function=%s kind=%s stream=%s grid=%u,%u,%u block=%u,%u,%u shmem=%u", k->name.c_str(), k->kind->name,
             stream_text(stream), gx, gy, gz, bx, by, bz, shared_bytes);
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0) return CUDA_ERROR_INVALID_VALUE;
  if (extra != nullptr) return CUDA_ERROR_NOT_SUPPORTED;  // only kernelParams
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!stream_known(stream)) return CUDA_ERROR_INVALID_HANDLE;
  std::array<uint64_t, kMaxParams> copied{};  // the parameters, copied now as CUDA does
  for (size_t i = 0; i < k->kind->params; ++i) {
    if (params[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(&copied[i], params[i], sizeof(uint64_t));
  }
  return enqueue(stream, [k, copied] { return run_kernel(*k, copied.data()); }, false);
}

// A scripted kernel has no blocks to make resident, so a cooperative launch is an
// ordinary one (logged on a cuLaunchCooperativeKernel line with the same details).
CUresult fake_cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
                                        CUstream stream, void** params) {
  return fake_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared_bytes, stream, params, nullptr);
}

}  // namespace fakecuda
