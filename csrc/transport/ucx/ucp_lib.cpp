// transport/ucx/ucp_lib.cpp: loading libucp and resolving its entry points.
#include "transport/ucx/ucp_lib.h"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>

namespace pyshmem {
namespace ucx {
namespace {

Ucp g_ucp;
std::string g_why;
bool g_loaded = false;
std::once_flag g_once;

bool try_load(const std::string& lib, std::string* err) {
  void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    *err = "cannot load " + lib + ": " + (e ? e : "unknown error");
    return false;
  }
  Ucp u;
  u.path = lib;
#define PYSHMEM_UCP_FN(name)                                                             \
  u.name = reinterpret_cast<decltype(u.name)>(::dlsym(h, #name));                        \
  if (!u.name) {                                                                         \
    *err = lib + " lacks " #name " (UCX older than 1.12?); install a newer UCX";         \
    return false;                                                                        \
  }
#include "transport/ucx/ucp_functions.def"
#undef PYSHMEM_UCP_FN
  // An older libucp has the symbols but not the API pyshmem was built against (UCX
  // itself only warns, then misbehaves): refuse it, so the next candidate is tried.
  unsigned major = 0, minor = 0;
  const char* version = u.ucp_get_version_string();
  if (std::sscanf(version ? version : "", "%u.%u", &major, &minor) != 2 ||
      (major << 16 | minor) < (UCP_API_MAJOR << 16 | UCP_API_MINOR)) {
    *err = lib + " is UCX " + (version ? version : "of unknown version") + ", older than the " +
           std::to_string(UCP_API_MAJOR) + "." + std::to_string(UCP_API_MINOR) + " pyshmem was built for";
    ::dlclose(h);
    return false;
  }
  g_ucp = u;
  return true;
}

}  // namespace

const Ucp* ucp_load(const std::string& library, bool prefer_system, std::string* why) {
  std::call_once(g_once, [&] {
    std::string err_wheel, err_system;
    const std::string system = "libucp.so.0";
    if (prefer_system || library.empty()) {
      g_loaded = try_load(system, &err_system) || (!library.empty() && try_load(library, &err_wheel));
    } else {
      g_loaded = try_load(library, &err_wheel) || try_load(system, &err_system);
    }
    if (!g_loaded)
      g_why = "UCX cannot be loaded (" + err_wheel + (err_wheel.empty() || err_system.empty() ? "" : "; ") +
              err_system + "): pip install libucx-cu13, or set PYSHMEM_UCX_LIBRARY to a libucp.so";
  });
  if (!g_loaded && why) *why = g_why;
  return g_loaded ? &g_ucp : nullptr;
}

}  // namespace ucx
}  // namespace pyshmem
