// python/errors.h: Python exception types of pyshmem and the translation of core errors.
#pragma once

#include <Python.h>

#include <exception>

#include "core/error.h"

namespace pyshmem {
namespace py {

// Creates the exception classes and adds them to `module`. Returns false on failure.
bool errors_register(PyObject* module);

// The exception class used for a status code.
PyObject* error_class(pyshmem_status st);

// Sets the Python error for a core error (maps status -> exception class). `call` names
// the API call for errors raised below the API that do not name it (Error::located).
void set_error(const Error& e, const char* call = nullptr);

// Thrown by the interrupt hook when a Python signal handler raised: the Python error
// is already set, the binding just returns NULL.
struct PythonErrorAlreadySet {};

// Runs `f` and converts C++ failures into a set Python error; returns false on failure.
// `call` ("pyshmem.put") is put in front of errors that do not name their call.
template <class F>
bool run_guarded(const char* call, F&& f) {
  try {
    f();
    return true;
  } catch (const PythonErrorAlreadySet&) {
    return false;
  } catch (const Error& e) {
    set_error(e, call);
    return false;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return false;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return false;
  }
}

// Runs `f` with the GIL released. C++ failures are captured without touching Python
// and translated after the GIL is back (setting a Python error without the GIL crashes).
template <class F>
bool run_guarded_nogil(const char* call, F&& f) {
  std::exception_ptr err;
  Py_BEGIN_ALLOW_THREADS
  try {
    f();
  } catch (...) {
    err = std::current_exception();
  }
  Py_END_ALLOW_THREADS
  if (!err) return true;
  return run_guarded(call, [&] { std::rethrow_exception(err); });
}

// Installs the core's interrupt hook: waits that sleep check Python signals (Ctrl-C).
void install_interrupt_hook();

}  // namespace py
}  // namespace pyshmem
