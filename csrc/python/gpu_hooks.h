// python/gpu_hooks.h: where the compiled host API hands GPU arrays to Python.
//
// pyshmem.cuda (pyshmem/_gpu_arrays.py, pyshmem/_gpu_host_ops.py) registers the hooks at
// import; the binding checks every argument first, so the hooks only act.
#pragma once

#include <Python.h>

#include "python/args.h"

namespace pyshmem {
namespace py {

extern PyObject* g_gpu_rma;  // put/get/put_nbi/get_nbi with a GPU array (python/rma_bind.cpp)
extern PyObject* g_gpu_amo;  // an atomic on a GPU array (python/amo_bind.cpp)
extern PyObject* g_gpu_coll; // a collective with stream= or GPU arrays (python/coll_bind.cpp)

// Atomic `op` (PYSHMEM_AMO_*) on PE pe's copy of the 1-element GPU array `t` (dtype
// `code`; value/cond: 8 bytes each) through g_gpu_amo; old[8] receives a fetched value.
// Returns false with a Python exception set.
bool gpu_atomic(const char* call, int op, int code, const Buffer& t, const unsigned char* value,
                const unsigned char* cond, bool fetching, int pe, unsigned char* old);

}  // namespace py
}  // namespace pyshmem
