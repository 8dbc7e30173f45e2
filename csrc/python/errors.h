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

// Sets the Python error for a core error (maps status -> exception class).
void set_error(const Error& e);

// Thrown by the interrupt hook when a Python signal handler raised: the Python error
// is already set, the binding just returns NULL.
struct PythonErrorAlreadySet {};

// Runs `f` and converts C++ failures into a set Python error; returns false on failure.
template <class F>
bool run_guarded(F&& f) {
  try {
    f();
    return true;
  } catch (const PythonErrorAlreadySet&) {
    return false;
  } catch (const Error& e) {
    set_error(e);
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
bool run_guarded_nogil(F&& f) {
  std::exception_ptr err;
  Py_BEGIN_ALLOW_THREADS
  try {
    f();
  } catch (...) {
    err = std::current_exception();
  }
  Py_END_ALLOW_THREADS
  if (!err) return true;
  return run_guarded([&] { std::rethrow_exception(err); });
}

// Installs the core's interrupt hook: waits that sleep check Python signals (Ctrl-C).
void install_interrupt_hook();

}  // namespace py
}  // namespace pyshmem
