// cuda/driver.cpp: loading the CUDA driver and resolving its entry points.
#include "cuda/driver.h"

#include <dlfcn.h>

#include <mutex>

#include "core/error.h"

namespace pyshmem {
namespace cuda {
namespace {

using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

Driver g_driver;
std::string g_why;
bool g_loaded = false;
std::once_flag g_once;

void load(const std::string& library) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = ::dlerror();
    g_why = "cannot load the CUDA driver '" + library + "': " + (err ? err : "unknown error") +
            " (no NVIDIA driver on this machine? use PYSHMEM_BACKEND=cpu)";
    return;
  }
  auto get_proc = reinterpret_cast<GetProc>(::dlsym(lib, "cuGetProcAddress_v2"));
  if (!get_proc) {
    g_why = "the CUDA driver '" + library + "' has no cuGetProcAddress_v2: it is older than CUDA 12; update the driver";
    return;
  }
  Driver d;
  bool ok = true;
#define PYSHMEM_CU_FN(name)                                                                         \
  if (ok) {                                                                                         \
    void* fn = nullptr;                                                                             \
    CUdriverProcAddressQueryResult status{};                                                        \
    if (get_proc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || \
        !fn) {                                                                                      \
      g_why = std::string("the CUDA driver '") + library + "' lacks " + #name +                    \
              " for CUDA " + std::to_string(CUDA_VERSION / 1000) + ".x; update the driver";         \
      ok = false;                                                                                   \
    } else {                                                                                        \
      d.name = reinterpret_cast<decltype(d.name)>(fn);                                              \
    }                                                                                               \
  }
#include "cuda/driver_functions.def"
#undef PYSHMEM_CU_FN
  if (!ok) return;
  const CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    d.cuGetErrorString(r, &s);
    g_why = std::string("cuInit failed: ") + (s ? s : "unknown error") + " (CUDA error " + std::to_string(r) +
            "); use PYSHMEM_BACKEND=cpu to run without the GPU";
    return;
  }
  d.cuDriverGetVersion(&d.version);
  g_driver = d;
  g_loaded = true;
}

}  // namespace

const Driver* driver_load(const std::string& library, std::string* why) {
  std::call_once(g_once, [&] { load(library); });
  if (!g_loaded && why) *why = g_why;
  return g_loaded ? &g_driver : nullptr;
}

void check(const Driver& d, CUresult r, const char* call, const char* function) {
  if (r == CUDA_SUCCESS) return;
  const char* s = nullptr;
  if (d.cuGetErrorString(r, &s) != CUDA_SUCCESS) s = nullptr;
  fail(PYSHMEM_ERR_SYSTEM, call,
       std::string(function) + " failed: " + (s ? s : "unknown error") + " (CUDA error " + std::to_string(r) + ")");
}

}  // namespace cuda
}  // namespace pyshmem
