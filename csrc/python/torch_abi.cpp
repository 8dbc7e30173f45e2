// python/torch_abi.cpp: torch tensors through libtorch's stable C ABI (python/torch_abi.h).
//
// A torch.Tensor's Python object (THPVariable) holds its at::Tensor right after the
// object header, and the shim's AtenTensorHandle is an at::Tensor*: so the handle of a
// tensor is the address just past its PyObject header. That placement is torch's
// internal layout (older releases held a MaybeOwned<at::Tensor> there), so it is
// checked, not assumed: at set-up the word there must equal the tensor's `_cdata` (its
// TensorImpl address, which an at::Tensor holds as its one member), and a strided probe
// read through the shim must report the address, shape, strides and type that torch
// reports from Python. Any difference leaves the fast path off for the process.
#include "python/torch_abi.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "core/env.h"
#include "core/error.h"
#include "python/dlpack.h"

namespace pyshmem {
namespace py {
namespace {

using Handle = void*;  // AtenTensorHandle
using GetI32 = int32_t (*)(Handle, int32_t*);
using GetI64 = int32_t (*)(Handle, int64_t*);
using GetArr = int32_t (*)(Handle, int64_t**);
using GetPtr = int32_t (*)(Handle, void**);
using Code = int32_t (*)();
using Bit = bool (*)(Handle);  // bool f(const at::Tensor&): a reference is a pointer in the C++ ABI

struct Shim {
  GetI32 layout, device_type, dtype;
  GetI64 dim;
  GetArr sizes, strides;
  GetPtr data_ptr;
  // at::compositeimplicitautograd::is_neg/is_conj: libtorch's C++ kernels that read the
  // two bits (no stable-ABI getter has them; torch.Tensor.is_neg from C costs ~80 ns).
  // Null when absent or when the probe disagrees: the caller asks Python.
  Bit is_neg = nullptr, is_conj = nullptr;
  int32_t strided = 0, cpu = 0, cuda = 0;
};

// pyshmem's view of each torch element type it takes (the DLPack path's mapping).
struct Elem {
  const char* code_fn;
  char kind;
  Py_ssize_t itemsize;
  const char* format;
  int32_t code;
};
Elem g_elems[] = {
    {"aoti_torch_dtype_float32", 'f', 4, "f", -1},     {"aoti_torch_dtype_float64", 'f', 8, "f", -1},
    {"aoti_torch_dtype_float16", 'f', 2, "f", -1},     {"aoti_torch_dtype_bfloat16", 'V', 2, "bfloat16", -1},
    {"aoti_torch_dtype_int64", 'i', 8, "i", -1},       {"aoti_torch_dtype_int32", 'i', 4, "i", -1},
    {"aoti_torch_dtype_int16", 'i', 2, "i", -1},       {"aoti_torch_dtype_int8", 'i', 1, "i", -1},
    {"aoti_torch_dtype_uint8", 'u', 1, "u", -1},       {"aoti_torch_dtype_uint16", 'u', 2, "u", -1},
    {"aoti_torch_dtype_uint32", 'u', 4, "u", -1},      {"aoti_torch_dtype_uint64", 'u', 8, "u", -1},
    {"aoti_torch_dtype_bool", 'b', 1, "b", -1},        {"aoti_torch_dtype_complex64", 'c', 8, "c", -1},
    {"aoti_torch_dtype_complex128", 'c', 16, "c", -1}, {"aoti_torch_dtype_complex32", 'c', 4, "c", -1},
};

Shim g_shim;
bool g_enabled = false;
const char* g_status = "torch has not been seen yet";  // why the path is off, or "on"
PyTypeObject* g_tensor = nullptr;     // torch.Tensor
PyTypeObject* g_parameter = nullptr;  // torch.nn.Parameter (same C layout)

Handle handle_of(PyObject* obj) { return reinterpret_cast<char*>(obj) + sizeof(PyObject); }

bool exact_tensor(PyObject* obj) {
  // Subclasses may wrap other tensors (__torch_dispatch__) or add their own rules: DLPack.
  PyTypeObject* t = Py_TYPE(obj);
  return g_enabled && (t == g_tensor || (g_parameter && t == g_parameter));
}

const Elem* elem_of(int32_t code) {
  for (const Elem& e : g_elems)
    if (e.code == code) return &e;
  return nullptr;
}

template <typename F>
bool sym(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

void* open_libtorch(PyObject* torch) {
  // Only a library the program loaded already (RTLD_NOLOAD): by soname, else by the path
  // torch was imported from.
  if (void* lib = dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD)) return lib;
  PyObject* file = PyObject_GetAttrString(torch, "__file__");
  const char* f = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : nullptr;
  void* lib = nullptr;
  if (f) {
    std::string path(f);
    path = path.substr(0, path.find_last_of('/') + 1) + "lib/libtorch_cpu.so";
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  }
  Py_XDECREF(file);
  return lib;
}

bool bind(void* lib) {
  Code strided, cpu, cuda;
  if (!sym(lib, "aoti_torch_get_layout", &g_shim.layout) || !sym(lib, "aoti_torch_get_device_type", &g_shim.device_type) ||
      !sym(lib, "aoti_torch_get_dtype", &g_shim.dtype) || !sym(lib, "aoti_torch_get_dim", &g_shim.dim) ||
      !sym(lib, "aoti_torch_get_sizes", &g_shim.sizes) || !sym(lib, "aoti_torch_get_strides", &g_shim.strides) ||
      !sym(lib, "aoti_torch_get_data_ptr", &g_shim.data_ptr) || !sym(lib, "aoti_torch_layout_strided", &strided) ||
      !sym(lib, "aoti_torch_device_type_cpu", &cpu) || !sym(lib, "aoti_torch_device_type_cuda", &cuda))
    return false;
  g_shim.strided = strided();
  g_shim.cpu = cpu();
  g_shim.cuda = cuda();
  for (Elem& e : g_elems) {
    Code fn;
    e.code = sym(lib, e.code_fn, &fn) ? fn() : -1;  // a torch without the type: never matched
  }
  if (!sym(lib, "_ZN2at25compositeimplicitautograd6is_negERKNS_6TensorE", &g_shim.is_neg) ||
      !sym(lib, "_ZN2at25compositeimplicitautograd7is_conjERKNS_6TensorE", &g_shim.is_conj))
    g_shim.is_neg = g_shim.is_conj = nullptr;
  return true;
}

// Runs `src` (Python, which makes `probes`) in a fresh namespace, with torch's dispatch
// and function modes (FakeTensorMode, a default device...) off: the probes run wherever
// the program first passes a tensor, and must read plain CPU tensors there. Returns the
// `probes` list (a new reference), or null with no exception set.
PyObject* probe_tensors(const char* src) {
  static const std::string prologue =
      "import contextlib as _cl\n"
      "import torch as _t\n"
      "try:\n"
      "    from torch.utils._python_dispatch import _disable_current_modes as _no_dispatch\n"
      "except ImportError:\n"
      "    _no_dispatch = _cl.nullcontext\n"
      "with _no_dispatch(), getattr(_t._C, 'DisableTorchFunction', _cl.nullcontext)():\n";
  std::string body = prologue;
  for (const char* line = src; *line;) {  // the probe's lines, indented into the with block
    const char* end = std::strchr(line, '\n');
    body += "    " + std::string(line, end ? end - line + 1 : std::strlen(line));
    line = end ? end + 1 : line + std::strlen(line);
  }
  PyObject* code = Py_CompileString(body.c_str(), "<pyshmem torch_abi probe>", Py_file_input);
  PyObject* ns = code ? PyDict_New() : nullptr;
  if (ns && PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) != 0) Py_CLEAR(ns);
  PyObject* r = ns ? PyEval_EvalCode(code, ns, ns) : nullptr;
  PyObject* probes = r ? PyDict_GetItemString(ns, "probes") : nullptr;
  Py_XINCREF(probes);
  Py_XDECREF(r);
  Py_XDECREF(ns);
  Py_XDECREF(code);
  PyErr_Clear();
  if (probes && PyList_Check(probes)) return probes;
  Py_XDECREF(probes);
  return nullptr;
}

// Element [i] of a probe's Python-level answers (a tuple of ints).
long long answer(PyObject* probes, Py_ssize_t row, Py_ssize_t i) {
  return PyLong_AsLongLong(PyTuple_GET_ITEM(PyList_GET_ITEM(probes, row), i));
}

// The layout probe: a float64 (4, 6) tensor's [1:, ::2] (a storage offset and strides)
// read through the shim against (_cdata, data_ptr()) from Python.
const char* layout_disagrees() {
  PyObject* probes = probe_tensors(
      "_p = _t.empty((4, 6), dtype=_t.float64, device='cpu')[1:, ::2]\n"
      "probes = [(_p, _p._cdata, _p.data_ptr())]\n");
  if (!probes) return "the layout probe could not be made";
  PyObject* t = PyTuple_GET_ITEM(PyList_GET_ITEM(probes, 0), 0);
  const char* why = "the layout probe read through the shim disagreed with torch";
  uintptr_t word;
  std::memcpy(&word, handle_of(t), sizeof word);
  if (Py_TYPE(t) != g_tensor || word != static_cast<uintptr_t>(answer(probes, 0, 1))) {
    why = "a torch.Tensor object does not hold its at::Tensor after the object header";
  } else {  // only now is the handle known to be an at::Tensor*
    Handle h = handle_of(t);
    int32_t layout = -1, dev = -1, dtype = -1;
    int64_t dim = 0, *sizes = nullptr, *strides = nullptr;
    void* ptr = nullptr;
    if (g_shim.layout(h, &layout) == 0 && layout == g_shim.strided && g_shim.device_type(h, &dev) == 0 &&
        dev == g_shim.cpu && g_shim.dtype(h, &dtype) == 0 && dtype == g_elems[1].code && g_shim.dim(h, &dim) == 0 &&
        dim == 2 && g_shim.sizes(h, &sizes) == 0 && sizes[0] == 3 && sizes[1] == 3 && g_shim.strides(h, &strides) == 0 &&
        strides[0] == 6 && strides[1] == 2 && g_shim.data_ptr(h, &ptr) == 0 &&
        reinterpret_cast<uintptr_t>(ptr) == static_cast<uintptr_t>(answer(probes, 0, 2)))
      why = nullptr;
  }
  Py_DECREF(probes);
  PyErr_Clear();
  return why;
}

// The bit readers against torch's own is_neg()/is_conj(): a plain tensor, a
// torch._neg_view, a complex conj() and its .imag (negative).
bool bits_agree() {
  if (!g_shim.is_neg) return false;
  PyObject* probes = probe_tensors(
      "_z, _r = _t.zeros(2, dtype=_t.complex64, device='cpu'), _t.zeros(3, device='cpu')\n"
      "probes = [(p, int(p.is_neg()), int(p.is_conj())) for p in (_r, _t._neg_view(_r), _z.conj(), _z.conj().imag)]\n"
      "assert [n + 2 * c for _, n, c in probes] == [0, 1, 2, 1]\n");
  bool ok = probes != nullptr;
  for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(probes); ++i) {
    Handle h = handle_of(PyTuple_GET_ITEM(PyList_GET_ITEM(probes, i), 0));
    ok = g_shim.is_neg(h) == (answer(probes, i, 1) != 0) && g_shim.is_conj(h) == (answer(probes, i, 2) != 0);
  }
  Py_XDECREF(probes);
  PyErr_Clear();
  return ok;
}

}  // namespace

void torch_abi_init(PyObject* torch, PyObject* tensor_type) {
  if (g_tensor || !PyType_Check(tensor_type)) return;
  g_tensor = reinterpret_cast<PyTypeObject*>(tensor_type);
  try {
    if (!config_from_env().TORCH_FAST_PATH) {
      g_status = "PYSHMEM_TORCH_FAST_PATH=0";
      return;
    }
  } catch (const Error&) {  // a bad PYSHMEM_* value: init reports it; this path stays at its default
  }
  // The handle is read from the object: the C struct must extend past it.
  if (g_tensor->tp_basicsize < static_cast<Py_ssize_t>(sizeof(PyObject) + sizeof(void*))) {
    g_status = "torch.Tensor's C struct is smaller than an object header and a pointer";
    return;
  }
  void* lib = open_libtorch(torch);
  if (!lib || !bind(lib)) {
    g_status = lib ? "libtorch_cpu.so lacks the AOTInductor shim's getters" : "libtorch_cpu.so is not loaded";
    PyErr_Clear();
    return;
  }
  if (PyObject* nn = PyObject_GetAttrString(torch, "nn")) {
    PyObject* p = PyObject_GetAttrString(nn, "Parameter");
    if (p && PyType_Check(p) && reinterpret_cast<PyTypeObject*>(p)->tp_basicsize == g_tensor->tp_basicsize)
      g_parameter = reinterpret_cast<PyTypeObject*>(p);  // kept: torch's types live as long as the process
    else
      Py_XDECREF(p);
    Py_DECREF(nn);
  }
  PyErr_Clear();
  // On ROCm torch calls HIP devices "cuda"; pyshmem's GPU path is CUDA's: DLPack (which
  // says ROCm) reports them.
  if (PyObject* version = PyObject_GetAttrString(torch, "version")) {
    PyObject* hip = PyObject_GetAttrString(version, "hip");
    if (hip && hip != Py_None) g_shim.cuda = -1;
    Py_XDECREF(hip);
    Py_DECREF(version);
  }
  PyErr_Clear();
  if ((g_status = layout_disagrees())) return;
  // Published last: the probes run Python, which may let another thread call in.
  if (!bits_agree()) {
    g_shim.is_neg = g_shim.is_conj = nullptr;
    g_status = "on; the negative/conjugate bits are asked of torch (its bit readers are absent or disagreed)";
  }
  g_enabled = true;
}

bool torch_abi_buffer(PyObject* obj, Buffer* out, int* lazy) {
  if (!exact_tensor(obj)) return false;
  Handle h = handle_of(obj);
  int32_t layout, dev, dtype;
  int64_t dim, *sizes, *strides;
  void* ptr;
  // A nonzero return is an exception torch caught (no storage, a nested tensor...).
  if (g_shim.layout(h, &layout) != 0 || layout != g_shim.strided || g_shim.device_type(h, &dev) != 0 ||
      (dev != g_shim.cpu && dev != g_shim.cuda) || g_shim.dtype(h, &dtype) != 0)
    return false;
  const Elem* e = elem_of(dtype);
  if (!e || g_shim.dim(h, &dim) != 0 || dim > 64 || g_shim.sizes(h, &sizes) != 0 || g_shim.strides(h, &strides) != 0 ||
      g_shim.data_ptr(h, &ptr) != 0)
    return false;
  if (!ptr) {  // no memory with elements (torch's zero tensors, functionalized ones): DLPack reports it
    bool empty = false;
    for (int64_t i = 0; i < dim; ++i) empty = empty || sizes[i] == 0;
    if (!empty) return false;
  }
  out->kind = e->kind;
  out->itemsize = e->itemsize;
  out->format = e->format;
  out->ptr = static_cast<char*>(ptr);
  out->gpu = dev == g_shim.cuda;
  out->native = true;
  buffer_layout(out, static_cast<int>(dim), sizes, strides);
  Py_INCREF(obj);
  out->keep = obj;
  *lazy = !g_shim.is_neg ? -1 : (g_shim.is_neg(h) ? 1 : (g_shim.is_conj(h) ? 2 : 0));
  return true;
}

int torch_abi_on_gpu(PyObject* obj) {
  int32_t dev;
  if (!exact_tensor(obj) || g_shim.device_type(handle_of(obj), &dev) != 0) return -1;
  return dev == g_shim.cuda ? 1 : 0;
}

PyObject* torch_abi_status() {
  return Py_BuildValue("{sOsOss}", "enabled", g_enabled ? Py_True : Py_False, "bits",
                       g_enabled && g_shim.is_neg ? Py_True : Py_False,
                       "status", g_enabled && g_shim.is_neg ? "on" : g_status);
}

PyObject* torch_abi_read(PyObject* tensor) {
  Buffer b;
  int lazy = -1;
  if (!torch_abi_buffer(tensor, &b, &lazy)) Py_RETURN_NONE;
  PyObject* d = buffer_fields(b);
  PyObject* v = d ? PyLong_FromLong(lazy) : nullptr;
  if (!v || PyDict_SetItemString(d, "lazy", v) != 0) Py_CLEAR(d);
  Py_XDECREF(v);
  return d;
}

}  // namespace py
}  // namespace pyshmem
