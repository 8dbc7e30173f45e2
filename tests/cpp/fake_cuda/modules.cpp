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
// A malformed module text gives CUDA_ERROR_INVALID_IMAGE.
#include "fake_cuda.h"

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

enum class Kind { kCopyGlobal, kWaitFlag, kStoreU64 };

struct KindInfo { const char* name; Kind kind; size_t params; bool needs_arg; };
constexpr KindInfo kKinds[] = {
    {"copy_global", Kind::kCopyGlobal, 1, true},
    {"wait_flag", Kind::kWaitFlag, 1, false},
    {"store_u64", Kind::kStoreU64, 2, false},
};  // every parameter is 8 bytes

struct Global { void* ptr; size_t size; };

struct Kernel {
  std::string name;
  const KindInfo* kind;
  std::string arg;
  Global global{nullptr, 0};  // copy_global's source
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
    if (k.kind->kind != Kind::kCopyGlobal) continue;
    auto g = m.globals.find(k.arg);
    if (g == m.globals.end()) return false;
    k.global = g->second;
  }
  return true;
}

double kernel_timeout_s() { return env_double("FAKE_CUDA_KERNEL_TIMEOUT_S", 30.0); }

CUresult run_kernel(const Kernel& k, const uint64_t* p) {
  switch (k.kind->kind) {
    case Kind::kCopyGlobal:
      std::memcpy(host(p[0]), k.global.ptr, k.global.size);
      return CUDA_SUCCESS;
    case Kind::kStoreU64:
      __atomic_store_n(static_cast<uint64_t*>(host(p[0])), p[1], __ATOMIC_RELEASE);
      return CUDA_SUCCESS;
    case Kind::kWaitFlag: {
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(kernel_timeout_s()));
      while (__atomic_load_n(static_cast<uint64_t*>(host(p[0])), __ATOMIC_ACQUIRE) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) return CUDA_ERROR_LAUNCH_TIMEOUT;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      return CUDA_SUCCESS;
    }
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
  std::array<uint64_t, 2> copied{};  // the parameters, copied now as CUDA does
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
