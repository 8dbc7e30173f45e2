// python/gpu_hooks.h: the two host-API routes for GPU arrays that run a kernel, which
// Python builds (NVRTC through cuda.core) and launches.
//
// pyshmem.cuda imports pyshmem/_gpu_host_ops.py and pyshmem/_gpu_coll.py, which register
// the hooks. The binding parses and checks every argument first, with the same code as
// for host arrays, so a hook only launches. Copies of GPU arrays (put/get and their
// nbi, strided and signal forms) need no kernel and stay in C++ (cuda/gpu_heap.h).
#pragma once

#include <Python.h>

#include "python/args.h"

namespace pyshmem {
namespace py {

extern PyObject* g_gpu_amo;  // an atomic on a GPU array (python/amo_bind.cpp)
extern PyObject* g_gpu_coll; // a collective with stream= or GPU arrays (python/coll_bind.cpp)

// Atomic `op` (PYSHMEM_AMO_*) on PE pe's copy of the 1-element GPU array `t` (dtype
// `code`; value/cond: 8 bytes each) through g_gpu_amo; old[8] receives a fetched value.
// Returns false with a Python exception set.
bool gpu_atomic(const char* call, int op, int code, const Buffer& t, const unsigned char* value,
                const unsigned char* cond, bool fetching, int pe, unsigned char* old);

}  // namespace py
}  // namespace pyshmem
