// python/fast.h: shared declarations of the METH_FASTCALL entry points.
#pragma once

#include <Python.h>

namespace pyshmem {
namespace py {

// Initialises the runtime on first use (calls pyshmem's Python-level init so atexit
// and excepthook handling are installed). After finalize, raises NotInitializedError
// naming `call`. Returns false with an exception set.
bool ensure_init(const char* call);

// Copies of at least this many bytes run with the GIL released.
constexpr Py_ssize_t kReleaseGilBytes = 64 * 1024;

// Method tables, terminated by a zeroed entry.
extern PyMethodDef kRmaMethods[];
extern PyMethodDef kAmoMethods[];
extern PyMethodDef kSyncMethods[];
extern PyMethodDef kCollMethods[];  // coll_bind.cpp

}  // namespace py
}  // namespace pyshmem
