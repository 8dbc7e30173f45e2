// python/args.h: argument parsing and buffer access for the fast-path functions.
//
// The hot functions (put/get/atomics/waits) are plain METH_FASTCALL functions rather
// than pybind11 wrappers: a call from Python then costs tens of nanoseconds instead of
// hundreds, which is most of an 8-byte put on shared memory.
#pragma once

#include <Python.h>

#include <cstdint>
#include <string>

namespace pyshmem {
namespace py {

// Maps positional + keyword arguments onto `out` (size n, names in `names`). Missing
// optional arguments stay NULL. Returns false with TypeError set on bad calls.
bool parse_args(const char* fname, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, const char* const* names,
                int n, int nrequired, PyObject** out);

// Element kinds as in NumPy: 'i' signed, 'u' unsigned, 'f' float, 'c' complex, 'b' bool,
// 'V' anything else (compared by exact format string).
struct Buffer {
  Py_buffer view{};
  bool held = false;  // view must be released (buffer-protocol path)
  char* ptr = nullptr;
  bool readonly = false;
  int ndim = 0;
  char kind = 'V';
  Py_ssize_t itemsize = 1;
  Py_ssize_t nelems = 0;
  bool contiguous = false;  // C or Fortran contiguous: elements are the bytes in order
  Py_ssize_t stride = 0;    // for a 1-D view: byte stride between elements
  bool native = true;       // native byte order
  bool gpu = false;         // a GPU array (__cuda_array_interface__): ptr is a device address
  PyObject* keep = nullptr;  // a reference that keeps the memory alive (a DLPack capsule)
  std::string format;

  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (held) PyBuffer_Release(&view);
    Py_XDECREF(keep);
  }
  char* data() const { return ptr; }
  // Strided 1-D view with a positive stride that is a multiple of the item size.
  bool strided_1d() const { return ndim == 1 && stride > 0 && stride % itemsize == 0; }
};

// Imports NumPy's C API (module init). Returns false with an exception set.
bool numpy_import();
// True for NumPy arrays (and subclasses, e.g. symmetric arrays).
bool is_ndarray(PyObject* obj);
// A NumPy array's base object (borrowed; null when it owns its data).
PyObject* array_base(PyObject* obj);
// A GPU array (CuPy, PyTorch, Numba, pyshmem.cuda.GpuArray: __cuda_array_interface__),
// not a NumPy array. False for null.
bool is_gpu_array(PyObject* obj);

// Gets a buffer from `obj` (NumPy arrays are read directly; PyTorch tensors, DLPack
// exporters and __array_interface__ objects through python/dlpack.h; other objects
// through the buffer protocol). `writable`: the caller will write into it (read-only views
// are rejected with a message naming `role`). Returns false with an exception set.
bool get_buffer(const char* call, const char* role, PyObject* obj, bool writable, Buffer* out,
                bool allow_gpu = false);

// Fails with a hint to use a[i:i+1] when obj is a NumPy scalar (used for arguments that
// must be symmetric elements: atomic targets, wait variables, signals, locks).
bool reject_scalar(const char* call, const char* role, PyObject* obj);

// Same element type? Sets TypeError naming both when not.
bool same_type(const char* call, const Buffer& a, const char* a_role, const Buffer& b, const char* b_role);

// Elements of an n-element array visited at `stride` (>= 1): ceil(n / stride), without
// the overflow of (n + stride - 1) / stride for huge strides.
inline Py_ssize_t strided_count(Py_ssize_t n, long long stride) {
  return n <= 0 ? 0 : 1 + static_cast<Py_ssize_t>((n - 1) / stride);
}

// "int32", "float64", ... for messages.
std::string type_name(const Buffer& b);

// pyshmem_dtype code of an integer/float buffer, or 0 when it has none.
int dtype_code(const Buffer& b);

// Reads optional `size` (element count) argument; -1 when None/NULL.
bool parse_size(const char* call, PyObject* obj, Py_ssize_t* out);
bool parse_int(const char* call, const char* role, PyObject* obj, long long* out);
bool parse_pe(const char* call, PyObject* obj, int* out);

// CU_STREAM_LEGACY: the legacy default stream as a stream handle.
constexpr uint64_t kLegacyStream = 1;
// The CUstream of a `stream=` argument: None (or null) is 0, no stream (the call
// completes on return, on pyshmem's private stream); an int handle, an object with
// __cuda_stream__ (cuda.core, the CUDA stream protocol), .cuda_stream (PyTorch) or .ptr
// (CuPy). Handle 0 (CUDA's null stream: stream=0, CuPy's Stream.null, PyTorch's default
// stream) is the legacy default stream, given as kLegacyStream so that the call is
// ordered on it as CUDA orders it. Returns false with TypeError (bool, other objects) or
// ValueError (a negative handle) set.
bool parse_stream(const char* call, PyObject* obj, uint64_t* out);

// Converts a Python number to one element of dtype `code`, range-checked, into out (8 bytes).
bool to_element(const char* call, const char* role, PyObject* obj, int code, void* out);
// Converts one element of dtype `code` to a Python int/float.
PyObject* from_element(int code, const void* p);

// Accepts CMP members/ints (0..5) and strings ('==', 'eq', 'NE', ...).
bool parse_cmp(const char* call, PyObject* obj, int* out);

// ctx: None, CTX_DEFAULT or a live context from Ctx.create. For a context made from a
// team, *pe (when pe is not null) is a PE of that team and becomes its world PE.
// Returns false with an exception set (destroyed/invalid context, PE outside the team).
bool check_ctx(const char* call, PyObject* ctx, int* pe);

// Prefix "<call> on PE <n>: " for messages raised from the binding.
std::string where(const char* call);

// Raises `exc` with where(call) + msg; returns false for chaining.
bool raise(PyObject* exc, const char* call, const std::string& msg);

}  // namespace py
}  // namespace pyshmem
