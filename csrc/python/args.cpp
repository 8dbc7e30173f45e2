#include "python/args.h"

#include <cstdlib>
#include <cstring>

#define PY_ARRAY_UNIQUE_SYMBOL pyshmem_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

#include "core/state.h"
#include "python/block.h"
#include "python/dlpack.h"
#include "python/errors.h"
#include "pyshmem/types.h"
#include "team/team.h"

namespace pyshmem {
namespace py {

PyObject* g_default_ctx = nullptr;  // set by pyshmem/team.py through _C._set_default_ctx

std::string where(const char* call) {
  const State& s = state();
  std::string w = call;
  if (s.pe >= 0) w += " on PE " + std::to_string(s.pe);
  return w + ": ";
}

bool raise(PyObject* exc, const char* call, const std::string& msg) {
  PyErr_SetString(exc, (where(call) + msg).c_str());
  return false;
}

bool parse_args(const char* fname, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, const char* const* names,
                int n, int nrequired, PyObject** out) {
  for (int i = 0; i < n; ++i) out[i] = nullptr;
  auto bad = [&](const std::string& msg) {
    const std::string call = std::string("pyshmem.") + fname;
    return raise(error_class(PYSHMEM_ERR_TYPE), call.c_str(), msg + "; see help(pyshmem." + fname + ")");
  };
  if (nargs > n)
    return bad(std::string(fname) + "() takes at most " + std::to_string(n) + " arguments (" + std::to_string(nargs) +
               " given)");
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  if (kwnames) {
    Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nk; ++k) {
      const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
      if (!key) return false;
      int slot = -1;
      for (int i = 0; i < n; ++i)
        if (std::strcmp(key, names[i]) == 0) slot = i;
      if (slot < 0) return bad(std::string(fname) + "() got an unexpected keyword argument '" + key + "'");
      if (out[slot]) return bad(std::string(fname) + "() got multiple values for argument '" + key + "'");
      out[slot] = args[nargs + k];
    }
  }
  for (int i = 0; i < nrequired; ++i)
    if (!out[i])
      return bad(std::string(fname) + "() missing required argument '" + names[i] + "' (pos " + std::to_string(i + 1) +
                 ")");
  for (int i = 0; i < n; ++i)
    if (out[i] == Py_None) out[i] = nullptr;
  return true;
}

namespace {

void classify(Buffer* b) {
  const char* f = b->view.format ? b->view.format : "B";
  b->native = true;
  while (*f == '@' || *f == '=' || *f == '<' || *f == '>' || *f == '!') {
    if ((*f == '>' || *f == '!') && PY_BIG_ENDIAN == 0) b->native = false;
    if (*f == '<' && PY_BIG_ENDIAN) b->native = false;
    ++f;
  }
  b->format = f;
  b->kind = 'V';
  if (std::strlen(f) == 1) {
    if (std::strchr("bhilqn", *f)) b->kind = 'i';
    else if (std::strchr("BHILQN", *f)) b->kind = 'u';
    else if (std::strchr("efdg", *f)) b->kind = 'f';
    else if (*f == '?') b->kind = 'b';
    else if (*f == 'c') b->kind = 'u';
  } else if (f[0] == 'Z' && std::strlen(f) == 2 && std::strchr("fdg", f[1])) {
    b->kind = 'c';
  }
}

}  // namespace

bool numpy_import() {
  if (PyArray_API) return true;
  import_array1(false);
  return true;
}

bool is_ndarray(PyObject* obj) { return PyArray_API && PyArray_Check(obj); }

PyObject* array_base(PyObject* obj) { return PyArray_BASE(reinterpret_cast<PyArrayObject*>(obj)); }

namespace {

// Reads a NumPy array's fields directly: a buffer-protocol export costs ~10x more and
// dominates a small put. Only plain numeric/bool dtypes take this path.
bool numpy_fast(PyObject* obj, Buffer* out) {
  if (!PyArray_API || !PyArray_Check(obj)) return false;
  PyArrayObject* a = reinterpret_cast<PyArrayObject*>(obj);
  PyArray_Descr* d = PyArray_DESCR(a);
  char kind = d->kind;
  if (kind != 'i' && kind != 'u' && kind != 'f' && kind != 'c' && kind != 'b') return false;
  out->ptr = static_cast<char*>(PyArray_DATA(a));
  out->readonly = !PyArray_ISWRITEABLE(a);
  out->ndim = PyArray_NDIM(a);
  out->kind = kind;
  out->itemsize = PyArray_ITEMSIZE(a);
  out->native = PyArray_ISNOTSWAPPED(a);
  out->nelems = PyArray_SIZE(a);
  const int flags = PyArray_FLAGS(a);
  out->contiguous = (flags & (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS)) != 0;
  out->stride = out->contiguous ? out->itemsize
                                : (out->ndim == 1 ? PyArray_STRIDES(a)[0] : (out->ndim == 0 ? out->itemsize : 0));
  out->format.assign(1, d->type);
  return true;
}

}  // namespace

bool reject_scalar(const char* call, const char* role, PyObject* obj) {
  // None arrives as null (parse_args): get_buffer, which every caller runs next, reports it.
  if (!obj || !PyArray_API || !PyArray_IsScalar(obj, Generic)) return true;
  return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
               std::string(role) +
                   " is a NumPy scalar (a[i] is a copy, not the symmetric element); pass a 1-element slice a[i:i+1]");
}

namespace {

// Fills `out` from a GPU array's __cuda_array_interface__ (version 2+: data, typestr,
// shape, strides). Returns false with an exception set.
bool gpu_buffer(const char* call, const char* role, PyObject* obj, Buffer* out) {
  if (!interface_buffer(call, role, obj, "__cuda_array_interface__", out)) return false;
  out->gpu = true;
  return true;
}

}  // namespace

namespace {
bool freed_view(const char* call, const char* role) {
  return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
               std::string(role) + " is a view of a symmetric allocation that was freed (pyshmem.free): its memory "
               "may belong to a newer object now; use an array allocated after the free");
}
}  // namespace

bool get_buffer(const char* call, const char* role, PyObject* obj, bool writable, Buffer* out, bool allow_gpu) {
  if (!obj)
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 std::string(role) + " is required (got None); pass a NumPy array (symmetric where the call needs it)");
  if (numpy_fast(obj, out)) {
    if (writable && out->readonly)
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                   std::string(role) + " is read-only; it is written by this call");
    if (block_released(obj)) return freed_view(call, role);
    return true;
  }
  int foreign = torch_tensor_buffer(call, role, obj, out);
  if (foreign == 0 && PyObject_GetBuffer(obj, &out->view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    if (PyObject_HasAttrString(obj, "__cuda_array_interface__") > 0) {
      if (!gpu_buffer(call, role, obj, out)) return false;
    } else {
      foreign = foreign_buffer(call, role, obj, out);
      if (foreign == 0)
        return raise(error_class(PYSHMEM_ERR_TYPE), call,
                     std::string(role) + " must be a NumPy array, a torch tensor or another array (the buffer "
                     "protocol, DLPack or __array_interface__), not " + Py_TYPE(obj)->tp_name);
    }
  } else if (foreign == 0) {
    out->held = true;
    if (block_released(obj)) return freed_view(call, role);
    out->ptr = static_cast<char*>(out->view.buf);
    out->readonly = out->view.readonly;
    out->ndim = out->view.ndim;
    classify(out);
    out->itemsize = out->view.itemsize > 0 ? out->view.itemsize : 1;
    out->nelems = out->view.len / out->itemsize;
    out->contiguous = PyBuffer_IsContiguous(&out->view, 'A');
    out->stride = out->view.ndim == 1 && out->view.strides ? out->view.strides[0]
                                                           : (out->view.ndim == 0 ? out->itemsize : 0);
    if (out->contiguous) out->stride = out->itemsize;
  }
  if (foreign < 0) return false;
  if (!out->ptr && out->nelems > 0)  // torch's zero tensors, functionalized tensors, odd exporters
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 std::string(role) + " has no memory: a null data pointer with " + std::to_string(out->nelems) +
                     " elements (torch's zero tensors and tensors inside torch.func.functionalize hold none); pass "
                     "a tensor with storage (x.clone() outside the transform)");
  if (out->gpu && !allow_gpu)
    return raise(error_class(PYSHMEM_ERR_NOT_IMPLEMENTED), call,
                 std::string(role) + " is a GPU array, which this argument does not take yet (locks, the fetch "
                 "buffer of the atomic *_nbi forms and the status/values of waits are host arrays). Do it inside a "
                 "kernel with the device API (pyshmem.cuda.Module, pyshmem.device), or use a host array");
  if (writable && out->readonly)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 std::string(role) + " is read-only; it is written by this call");
  return true;
}

std::string type_name(const Buffer& b) {
  std::string bits = std::to_string(b.itemsize * 8);
  switch (b.kind) {
    case 'i': return "int" + bits;
    case 'u': return "uint" + bits;
    case 'f': return "float" + bits;
    case 'c': return "complex" + bits;
    case 'b': return "bool";
    default: return "'" + b.format + "' (" + std::to_string(b.itemsize) + " bytes)";
  }
}

bool same_type(const char* call, const Buffer& a, const char* a_role, const Buffer& b, const char* b_role) {
  bool same = a.itemsize == b.itemsize && a.kind == b.kind && (a.kind != 'V' || a.format == b.format);
  if (same && a.native != b.native && a.itemsize > 1)
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 std::string("byte order mismatch: ") + (a.native ? b_role : a_role) +
                     " is not in native byte order; convert it with .astype(x.dtype.newbyteorder('='))");
  if (same) return true;
  return raise(error_class(PYSHMEM_ERR_TYPE), call,
               std::string("dtype mismatch: ") + a_role + " is " + type_name(a) + " but " + b_role + " is " +
                   type_name(b) + "; convert one with .astype()");
}

int dtype_code(const Buffer& b) {
  if (!b.native) return 0;
  if (b.kind == 'i' || b.kind == 'u') {
    int sz = static_cast<int>(b.itemsize);
    if (sz != 1 && sz != 2 && sz != 4 && sz != 8) return 0;
    return (b.kind == 'u' ? 0x10 : 0) | sz;
  }
  if (b.kind == 'f' && b.itemsize == 4) return PYSHMEM_FLOAT32;
  if (b.kind == 'f' && b.itemsize == 8) return PYSHMEM_FLOAT64;
  return 0;
}

namespace {
// obj as a long long through __index__ (exact ints take the fast path). Returns false
// with a ShmemTypeError naming `role` when obj is not an integer; *overflow is set
// when it does not fit.
bool as_index(const char* call, const char* role, PyObject* obj, long long* out, int* overflow) {
  *overflow = 0;
  if (PyLong_CheckExact(obj)) {
    *out = PyLong_AsLongLongAndOverflow(obj, overflow);
    return true;
  }
  PyObject* idx = PyNumber_Index(obj);
  if (!idx) {
    PyErr_Clear();
    return raise(error_class(PYSHMEM_ERR_TYPE), call, std::string(role) + " must be an integer, not " + Py_TYPE(obj)->tp_name);
  }
  *out = PyLong_AsLongLongAndOverflow(idx, overflow);
  Py_DECREF(idx);
  return true;
}
}  // namespace

bool parse_int(const char* call, const char* role, PyObject* obj, long long* out) {
  if (!obj) return raise(error_class(PYSHMEM_ERR_TYPE), call, std::string(role) + " is required");
  int overflow;
  if (!as_index(call, role, obj, out, &overflow)) return false;
  if (overflow)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 std::string(role) + " is out of range; it must fit in a signed 64-bit integer");
  return true;
}

bool parse_pe(const char* call, PyObject* obj, int* out) {
  if (!obj) return raise(error_class(PYSHMEM_ERR_TYPE), call, "pe is required (got None); pass a PE number");
  long long v;
  int overflow;
  if (!as_index(call, "pe", obj, &v, &overflow)) return false;
  const State& s = state();
  if (overflow) {
    PyObject* text = PyObject_Str(obj);
    std::string shown = text && PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : "?";
    Py_XDECREF(text);
    PyErr_Clear();
    return raise(error_class(PYSHMEM_ERR_PE_RANGE), call,
                 "PE " + shown + " is out of range; valid PEs are 0.." + std::to_string(s.npes - 1));
  }
  if (s.initialized && (v < 0 || v >= s.npes))
    return raise(error_class(PYSHMEM_ERR_PE_RANGE), call,
                 "PE " + std::to_string(v) + " is out of range; valid PEs are 0.." + std::to_string(s.npes - 1) +
                     " (n_pes() == " + std::to_string(s.npes) + ")");
  *out = static_cast<int>(v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v));
  return true;
}

bool parse_stream(const char* call, PyObject* obj, uint64_t* out) {
  *out = 0;
  if (!obj || obj == Py_None) return true;
  const std::string what = "stream must be None, a CUstream handle (int), or a CUDA stream object (cuda.core, CuPy, "
                           "PyTorch), not ";
  if (PyBool_Check(obj) || (PyArray_API && PyArray_IsScalar(obj, Bool)))
    return raise(error_class(PYSHMEM_ERR_TYPE), call, what + "bool");
  PyObject* handle = nullptr;
  if (PyLong_Check(obj) || (PyArray_API && PyArray_IsScalar(obj, Integer))) {
    handle = PyNumber_Index(obj);
  } else if (PyObject_HasAttrString(obj, "__cuda_stream__") > 0) {
    PyObject* pair = PyObject_CallMethod(obj, "__cuda_stream__", nullptr);  // (version, handle)
    PyObject* item = pair ? PySequence_GetItem(pair, 1) : nullptr;
    handle = item ? PyNumber_Long(item) : nullptr;
    Py_XDECREF(item);
    Py_XDECREF(pair);
  } else {
    for (const char* attr : {"cuda_stream", "ptr"}) {  // PyTorch, CuPy
      if (PyObject_HasAttrString(obj, attr) <= 0) continue;
      PyObject* v = PyObject_GetAttrString(obj, attr);
      handle = v ? PyNumber_Long(v) : nullptr;
      Py_XDECREF(v);
      break;
    }
    if (!handle && !PyErr_Occurred()) return raise(error_class(PYSHMEM_ERR_TYPE), call, what + Py_TYPE(obj)->tp_name);
  }
  if (!handle) return false;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(handle, &overflow);
  unsigned long long u = 0;
  if (overflow > 0) u = PyLong_AsUnsignedLongLong(handle);  // a handle above 2**63
  Py_DECREF(handle);
  if (PyErr_Occurred()) return false;
  if (overflow < 0 || (!overflow && v < 0))
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 "stream handle " + (overflow ? std::string("below -2**63") : std::to_string(v)) +
                     " is negative; pass a CUstream handle");
  const uint64_t h = overflow ? u : static_cast<uint64_t>(v);
  *out = h ? h : kLegacyStream;
  return true;
}

bool parse_size(const char* call, PyObject* obj, Py_ssize_t* out) {
  *out = -1;
  if (!obj) return true;
  long long v;
  if (!parse_int(call, "size", obj, &v)) return false;
  if (v < 0) return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call, "size must be >= 0 (got " + std::to_string(v) + ")");
  *out = static_cast<Py_ssize_t>(v);
  return true;
}

bool to_element(const char* call, const char* role, PyObject* obj, int code, void* out) {
  if (!obj) return raise(error_class(PYSHMEM_ERR_TYPE), call, std::string(role) + " is required");
  if (code == PYSHMEM_FLOAT32 || code == PYSHMEM_FLOAT64) {
    double d = PyFloat_AsDouble(obj);
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return raise(error_class(PYSHMEM_ERR_TYPE), call,
                   std::string(role) + " must be a number for a floating-point array, not " + Py_TYPE(obj)->tp_name);
    }
    if (code == PYSHMEM_FLOAT32) {
      float f = static_cast<float>(d);
      std::memcpy(out, &f, sizeof f);
    } else {
      std::memcpy(out, &d, sizeof d);
    }
    return true;
  }
  PyObject* idx = PyNumber_Index(obj);
  if (!idx) {
    PyErr_Clear();
    return raise(error_class(PYSHMEM_ERR_TYPE), call, std::string(role) + " must be an integer for an integer array, not " +
                                            Py_TYPE(obj)->tp_name);
  }
  const size_t size = PYSHMEM_DTYPE_SIZE(code);
  const bool is_unsigned = code & 0x10;
  bool fits;
  unsigned long long u = 0;
  long long s = 0;
  if (is_unsigned) {
    u = PyLong_AsUnsignedLongLong(idx);
    fits = !(u == static_cast<unsigned long long>(-1) && PyErr_Occurred());
    if (fits && size < 8) fits = u < (1ull << (size * 8));
  } else {
    int overflow = 0;
    s = PyLong_AsLongLongAndOverflow(idx, &overflow);
    fits = !overflow && !(s == -1 && PyErr_Occurred());
    if (fits && size < 8) {
      long long lim = 1ll << (size * 8 - 1);
      fits = s >= -lim && s < lim;
    }
  }
  if (!fits) {
    PyErr_Clear();
    PyObject* text = PyObject_Str(idx);
    const std::string shown = text && PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : "the value";
    Py_XDECREF(text);
    Py_DECREF(idx);
    PyErr_Clear();
    const int bits = static_cast<int>(size * 8);
    const std::string range = is_unsigned ? "0..2**" + std::to_string(bits) + "-1"
                                          : "-2**" + std::to_string(bits - 1) + "..2**" + std::to_string(bits - 1) + "-1";
    return raise(error_class(PYSHMEM_ERR_OVERFLOW), call,
                 std::string(role) + " " + shown + " does not fit in the array's element type (" +
                     (is_unsigned ? "uint" : "int") + std::to_string(bits) + ": " + range +
                     "); pass a value in that range or use a wider dtype");
  }
  Py_DECREF(idx);
  if (is_unsigned) std::memcpy(out, &u, size);  // little-endian: low bytes first
  else std::memcpy(out, &s, size);
  return true;
}

PyObject* from_element(int code, const void* p) {
  switch (code) {
    case PYSHMEM_INT8: return PyLong_FromLong(*static_cast<const int8_t*>(p));
    case PYSHMEM_INT16: return PyLong_FromLong(*static_cast<const int16_t*>(p));
    case PYSHMEM_INT32: return PyLong_FromLong(*static_cast<const int32_t*>(p));
    case PYSHMEM_INT64: return PyLong_FromLongLong(*static_cast<const int64_t*>(p));
    case PYSHMEM_UINT8: return PyLong_FromUnsignedLong(*static_cast<const uint8_t*>(p));
    case PYSHMEM_UINT16: return PyLong_FromUnsignedLong(*static_cast<const uint16_t*>(p));
    case PYSHMEM_UINT32: return PyLong_FromUnsignedLong(*static_cast<const uint32_t*>(p));
    case PYSHMEM_UINT64: return PyLong_FromUnsignedLongLong(*static_cast<const uint64_t*>(p));
    case PYSHMEM_FLOAT32: return PyFloat_FromDouble(*static_cast<const float*>(p));
    case PYSHMEM_FLOAT64: return PyFloat_FromDouble(*static_cast<const double*>(p));
    default: Py_RETURN_NONE;
  }
}

bool parse_cmp(const char* call, PyObject* obj, int* out) {
  if (!obj) return raise(error_class(PYSHMEM_ERR_TYPE), call, "cmp is required");
  if (PyUnicode_Check(obj)) {
    static const struct { const char* text; int cmp; } table[] = {
        {"==", PYSHMEM_CMP_EQ}, {"!=", PYSHMEM_CMP_NE}, {">", PYSHMEM_CMP_GT}, {"<=", PYSHMEM_CMP_LE},
        {"<", PYSHMEM_CMP_LT},  {">=", PYSHMEM_CMP_GE}, {"eq", PYSHMEM_CMP_EQ}, {"ne", PYSHMEM_CMP_NE},
        {"gt", PYSHMEM_CMP_GT}, {"le", PYSHMEM_CMP_LE}, {"lt", PYSHMEM_CMP_LT}, {"ge", PYSHMEM_CMP_GE}};
    const char* t = PyUnicode_AsUTF8(obj);
    if (!t) return false;
    for (const auto& e : table)
      if (strcasecmp(t, e.text) == 0) {
        *out = e.cmp;
        return true;
      }
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 std::string("unknown comparison '") + t + "'; use CMP.EQ/NE/GT/LE/LT/GE or '==', '!=', '>', '<=', '<', '>='");
  }
  long long v;
  if (!parse_int(call, "cmp", obj, &v)) return false;
  if (v < PYSHMEM_CMP_EQ || v > PYSHMEM_CMP_GE)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 "cmp=" + std::to_string(v) + " is not a comparison; use CMP.EQ/NE/GT/LE/LT/GE");
  *out = static_cast<int>(v);
  return true;
}

bool is_gpu_array(PyObject* obj) {
  if (!obj || is_ndarray(obj)) return false;
  const int tensor = torch_tensor_on_gpu(obj);
  if (tensor >= 0) return tensor == 1;
  return PyObject_HasAttrString(obj, "__cuda_array_interface__") > 0;
}

bool check_ctx(const char* call, PyObject* ctx, int* pe) {
  if (!ctx || ctx == Py_None || ctx == g_default_ctx) return true;
  if (!g_default_ctx || Py_TYPE(ctx) != Py_TYPE(g_default_ctx))
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 std::string("ctx must be a pyshmem.Ctx or None, not ") + Py_TYPE(ctx)->tp_name);
  const int truth = PyObject_IsTrue(ctx);
  if (truth < 0) return false;
  if (!truth)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 "ctx is CTX_INVALID or a destroyed context; create one with pyshmem.Ctx.create()");
  // A context made from a team numbers PEs within that team (OpenSHMEM 1.5 team contexts).
  static PyObject* name = PyUnicode_InternFromString("_team");
  PyObject* t = PyObject_GetAttr(ctx, name);
  if (!t) return false;
  const long team = PyLong_AsLong(t);
  Py_DECREF(t);
  if (team == -1 && PyErr_Occurred()) return false;
  if (!pe || team == PYSHMEM_TEAM_WORLD) return true;
  return run_guarded(call, [&] {
    const pyshmem_team_desc& d = team_member_desc(static_cast<int>(team), call);
    if (*pe < 0 || *pe >= d.size)
      fail(PYSHMEM_ERR_PE_RANGE, call,
           "pe " + std::to_string(*pe) + " is not a PE of the context's team (team PEs are 0.." +
               std::to_string(d.size - 1) + "); pass a team-relative PE number");
    *pe = team_world_pe(d, *pe);
  });
}

}  // namespace py
}  // namespace pyshmem
