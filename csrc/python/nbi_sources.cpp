// python/nbi_sources.cpp: see nbi_sources.h.
#include "python/nbi_sources.h"

#include <vector>

#include "host/host.h"
#include "python/errors.h"

namespace pyshmem {
namespace py {
namespace {

std::vector<PyObject*> g_held;  // memoryviews; guarded by the GIL

}  // namespace

bool nbi_source_hold(const char* call, PyObject* buffer) {
  if (g_held.size() >= kMaxHeldNbiSources) {
    if (!run_guarded_nogil(call, [] { quiet(); })) return false;
    nbi_sources_release();
  }
  PyObject* view = PyMemoryView_FromObject(buffer);
  if (!view) return false;
  g_held.push_back(view);
  return true;
}

size_t nbi_sources_held() { return g_held.size(); }

void nbi_sources_release() {
  std::vector<PyObject*> held;
  held.swap(g_held);  // a release that runs Python code (a buffer's destructor) may re-enter
  for (PyObject* v : held) Py_DECREF(v);
}

}  // namespace py
}  // namespace pyshmem
