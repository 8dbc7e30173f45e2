// transport/ucx/ucp_lib.h: UCX's UCP library, loaded at run time.
//
// pyshmem never links against UCX: a run that needs no remote PE must work where UCX
// cannot load, and the library is chosen at run time (the libucx wheel's by default,
// a system UCX with PYSHMEM_UCX_PREFER_SYSTEM=1 for InfiniBand).
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace pyshmem {
namespace ucx {

struct Ucp {
#define PYSHMEM_UCP_FN(name) decltype(&::name) name = nullptr;
#include "transport/ucx/ucp_functions.def"
#undef PYSHMEM_UCP_FN
  std::string path;  // what was loaded
};

// Loads libucp once: PYSHMEM_UCX_LIBRARY (a path, set by pyshmem's Python layer and
// shmemrun to the libucx wheel's copy) or, with prefer_system or no path given, the
// system's libucp.so.0. Returns null with *why when UCX cannot be used.
const Ucp* ucp_load(const std::string& library, bool prefer_system, std::string* why);

}  // namespace ucx
}  // namespace pyshmem
