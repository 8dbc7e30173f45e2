// cuda/driver.h: the CUDA driver API, loaded at run time.
//
// pyshmem never links against libcuda: a wheel must import on machines without a GPU,
// and tests point PYSHMEM_CUDA_DRIVER at a fake driver. The library is dlopen'ed once
// and every entry point in cuda/driver_functions.def is resolved via cuGetProcAddress.
#pragma once

#include <cuda.h>

#include <string>

namespace pyshmem {
namespace cuda {

struct Driver {
#define PYSHMEM_CU_FN(name) decltype(&::name) name = nullptr;
#include "cuda/driver_functions.def"
#undef PYSHMEM_CU_FN
  int version = 0;  // cuDriverGetVersion, e.g. 13000
};

// Loads `library` (a path or a soname) and calls cuInit. Returns null and sets *why
// when that fails; later calls return the first result (the library cannot change).
const Driver* driver_load(const std::string& library, std::string* why);

// Throws Error(PYSHMEM_ERR_SYSTEM) "<call> on PE n: <function> failed: <reason> (CUDA
// error <code>)" unless r is CUDA_SUCCESS.
void check(const Driver& d, CUresult r, const char* call, const char* function);

}  // namespace cuda
}  // namespace pyshmem

// Calls a driver function through `d` and checks it, naming the call.
#define PYSHMEM_CU_CHECK(d, call, fn, ...) ::pyshmem::cuda::check((d), (d).fn(__VA_ARGS__), (call), #fn)
