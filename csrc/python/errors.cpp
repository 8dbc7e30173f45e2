#include "python/errors.h"

#include "core/backoff.h"

namespace pyshmem {
namespace py {
namespace {

struct ErrorClass {
  const char* name;
  PyObject** base;
  const char* doc;
  PyObject* type;
};

// Each class derives from ShmemError and from the builtin a Python user would expect,
// so `except ValueError` and `except pyshmem.ShmemError` both work.
ErrorClass g_classes[] = {
    {"InvalidArgumentError", &PyExc_ValueError, "Bad argument: PE out of range, non-symmetric target, size mismatch.", nullptr},
    {"ShmemTypeError", &PyExc_TypeError, "Unsupported or mismatched element type.", nullptr},
    {"HeapExhaustedError", &PyExc_MemoryError, "The symmetric heap cannot satisfy an allocation.", nullptr},
    {"NotInitializedError", &PyExc_RuntimeError, "The runtime is not initialised, or was finalised.", nullptr},
    {"BootstrapError", &PyExc_ConnectionError, "The PEs could not reach or authenticate each other.", nullptr},
    {"ShmemOSError", &PyExc_OSError, "An operating-system call failed.", nullptr},
    {"ShmemNotImplementedError", &PyExc_NotImplementedError, "A feature that is not built yet.", nullptr},
    {"ShmemTimeoutError", &PyExc_TimeoutError, "A bounded wait or the rendezvous timed out.", nullptr},
    {"CollectiveMismatchError", &PyExc_RuntimeError, "PEs disagree in a collective call.", nullptr},
    {"InternalError", &PyExc_RuntimeError, "A bug in pyshmem; please report it.", nullptr},
    {"ValueOverflowError", &PyExc_OverflowError, "A value does not fit the array's element type.", nullptr},
};
PyObject* g_base = nullptr;

}  // namespace

PyObject* error_class(pyshmem_status st) {
  switch (st) {
    case PYSHMEM_ERR_INVALID_ARG:
    case PYSHMEM_ERR_PE_RANGE:
    case PYSHMEM_ERR_NOT_SYMMETRIC: return g_classes[0].type;
    case PYSHMEM_ERR_TYPE: return g_classes[1].type;
    case PYSHMEM_ERR_NOMEM: return g_classes[2].type;
    case PYSHMEM_ERR_NOT_INIT: return g_classes[3].type;
    case PYSHMEM_ERR_BOOTSTRAP: return g_classes[4].type;
    case PYSHMEM_ERR_SYSTEM: return g_classes[5].type;
    case PYSHMEM_ERR_NOT_IMPLEMENTED: return g_classes[6].type;
    case PYSHMEM_ERR_TIMEOUT: return g_classes[7].type;
    case PYSHMEM_ERR_MISMATCH: return g_classes[8].type;
    case PYSHMEM_ERR_OVERFLOW: return g_classes[10].type;
    default: return g_classes[9].type;
  }
}

namespace {

void interrupt_hook() {
  PyGILState_STATE g = PyGILState_Ensure();
  int rc = PyErr_CheckSignals();
  PyGILState_Release(g);
  if (rc != 0) throw PythonErrorAlreadySet{};
}

}  // namespace

bool errors_register(PyObject* module) {
  g_base = PyErr_NewExceptionWithDoc("pyshmem.ShmemError", "Base class of every pyshmem error.", PyExc_Exception, nullptr);
  if (!g_base || PyModule_AddObjectRef(module, "ShmemError", g_base) < 0) return false;
  for (auto& c : g_classes) {
    std::string qual = std::string("pyshmem.") + c.name;
    PyObject* bases = PyTuple_Pack(2, g_base, *c.base);
    if (!bases) return false;
    c.type = PyErr_NewExceptionWithDoc(qual.c_str(), c.doc, bases, nullptr);
    Py_DECREF(bases);
    if (!c.type || PyModule_AddObjectRef(module, c.name, c.type) < 0) return false;
  }
  return true;
}

void set_error(const Error& e, const char* call) {
  PyErr_SetString(error_class(e.status()), error_message(e, call).c_str());
}

void install_interrupt_hook() { g_interrupt_hook = interrupt_hook; }

}  // namespace py
}  // namespace pyshmem
