// python/dlpack.cpp: PyTorch tensors, DLPack exporters and __array_interface__ objects
// as Buffers (python/dlpack.h).
//
// A torch.Tensor has neither the buffer protocol nor (on the CPU) an array interface;
// torch's own C-level exporter (torch._C._to_dlpack, what torch.utils.dlpack.to_dlpack
// is) gives its address, type, shape and strides in one call, which is several times
// cheaper than tensor.__dlpack__() (a Python method) or reading the attributes one by
// one. The capsule is held for the call and never consumed, so its destructor returns
// the tensor to torch.
#include "python/dlpack.h"

#include <cstdint>
#include <cstring>

#include "python/errors.h"
#include "python/torch_abi.h"
#include "pyshmem/types.h"

namespace pyshmem {
namespace py {
namespace {

// The DLPack ABI (dlpack.h, v1.x; the unversioned DLManagedTensor of v0.x has the same
// DLTensor). Declared here so that the build needs no framework's headers.
struct DLDevice {
  int32_t device_type;  // kDLCPU 1, kDLCUDA 2, kDLCUDAHost 3, kDLCUDAManaged 13
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLComplex 5, kDLBool 6
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null: C-contiguous
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;  // bit 0: read-only
  DLTensor dl_tensor;
};
static_assert(sizeof(DLTensor) == 48, "DLTensor is 48 bytes in the DLPack ABI");
static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor is 64 bytes in the DLPack ABI");
static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "DLManagedTensorVersioned's tensor is at 32");
constexpr uint64_t kDLFlagReadOnly = 1;

bool fail(PyObject* exc, const char* call, const char* role, const std::string& msg) {
  return raise(exc, call, std::string(role) + msg);
}

// The element type as a Buffer's kind/itemsize/format.
bool dl_dtype(const char* call, const char* role, DLDataType t, Buffer* out) {
  if (t.lanes != 1 || t.bits == 0 || t.bits % 8 != 0)
    return fail(error_class(PYSHMEM_ERR_TYPE), call, role,
                " has a vector or sub-byte DLPack element type (code " + std::to_string(t.code) + ", " +
                    std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) + " lanes); pyshmem takes scalar "
                    "element types");
  out->itemsize = t.bits / 8;
  switch (t.code) {
    case 0: out->kind = 'i'; break;
    case 1: out->kind = 'u'; break;
    case 2: out->kind = 'f'; break;
    case 5: out->kind = 'c'; break;
    case 6: out->kind = 'b'; break;
    case 4: out->kind = 'V'; out->format = "bfloat16"; return true;
    default:
      return fail(error_class(PYSHMEM_ERR_TYPE), call, role,
                  " has DLPack element type code " + std::to_string(t.code) + ", which pyshmem does not take (it "
                  "takes ints, uints, floats, bfloat16, complex and bool)");
  }
  out->format.assign(1, out->kind);
  return true;
}

// Shape and strides (in elements when `stride_unit` is the item size, else bytes) into
// ndim/nelems/contiguous/stride. C- or Fortran-contiguous counts as contiguous, as for
// NumPy arrays (python/args.cpp).
template <typename Dim>
void layout(Buffer* out, int ndim, const Dim* shape, const Dim* strides, Py_ssize_t stride_unit) {
  out->ndim = ndim;
  out->nelems = 1;
  for (int i = 0; i < ndim; ++i) out->nelems *= static_cast<Py_ssize_t>(shape[i]);
  if (!strides || out->nelems == 0) {
    out->contiguous = true;
  } else {
    bool c_order = true, f_order = true;
    Py_ssize_t c = out->itemsize, f = out->itemsize;
    for (int i = ndim - 1; i >= 0; --i) {
      if (shape[i] > 1 && static_cast<Py_ssize_t>(strides[i]) * stride_unit != c) c_order = false;
      c *= static_cast<Py_ssize_t>(shape[i]);
    }
    for (int i = 0; i < ndim; ++i) {
      if (shape[i] > 1 && static_cast<Py_ssize_t>(strides[i]) * stride_unit != f) f_order = false;
      f *= static_cast<Py_ssize_t>(shape[i]);
    }
    out->contiguous = c_order || f_order;
  }
  out->stride = out->contiguous ? out->itemsize
                                : (ndim == 1 ? static_cast<Py_ssize_t>(strides[0]) * stride_unit : (ndim == 0 ? out->itemsize : 0));
}

// Fills `out` from a DLPack capsule (steals the reference into out->keep).
bool from_capsule(const char* call, const char* role, PyObject* capsule, Buffer* out) {
  out->keep = capsule;
  const DLTensor* t = nullptr;
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
    if (m->version.major != 1)
      return fail(error_class(PYSHMEM_ERR_TYPE), call, role,
                  " exports DLPack " + std::to_string(m->version.major) + "." + std::to_string(m->version.minor) +
                      ", which pyshmem cannot read (it reads 0.x and 1.x)");
    out->readonly = (m->flags & kDLFlagReadOnly) != 0;
    t = &m->dl_tensor;
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    t = &static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"))->dl_tensor;
  } else {
    return fail(error_class(PYSHMEM_ERR_TYPE), call, role,
                ": __dlpack__() returned something other than an unconsumed DLPack capsule");
  }
  switch (t->device.device_type) {
    case 1: case 3: break;  // CPU memory, CUDA pinned host memory
    case 2: case 13: out->gpu = true; break;
    default:
      return fail(error_class(PYSHMEM_ERR_TYPE), call, role,
                  " is on DLPack device type " + std::to_string(t->device.device_type) + "; pyshmem takes host (CPU) "
                  "memory and, on the cuda backend, CUDA memory");
  }
  if (!dl_dtype(call, role, t->dtype, out)) return false;
  out->ptr = static_cast<char*>(t->data) + t->byte_offset;
  layout(out, t->ndim, t->shape, t->strides, out->itemsize);
  out->native = true;
  return true;
}

// torch.Tensor and torch._C._to_dlpack, once the program has imported torch (pyshmem
// never imports it); null before.
PyObject* g_tensor_type = nullptr;
PyObject* g_to_dlpack = nullptr;
PyObject* g_is_neg = nullptr;   // torch.Tensor.is_neg, called unbound: no attribute lookup per call
PyObject* g_is_conj = nullptr;

bool torch_found() {
  if (g_tensor_type) return true;
  PyObject* name = PyUnicode_InternFromString("torch");
  PyObject* torch = name ? PyImport_GetModule(name) : nullptr;  // no import: a lookup in sys.modules
  Py_XDECREF(name);
  if (!torch) {
    PyErr_Clear();
    return false;
  }
  PyObject* type = PyObject_GetAttrString(torch, "Tensor");
  PyObject* c = PyObject_GetAttrString(torch, "_C");
  PyObject* fn = c ? PyObject_GetAttrString(c, "_to_dlpack") : nullptr;
  PyObject* neg = type ? PyObject_GetAttrString(type, "is_neg") : nullptr;
  PyObject* conj = type ? PyObject_GetAttrString(type, "is_conj") : nullptr;
  Py_XDECREF(c);
  if (!type || !fn || !neg || !conj || !PyType_Check(type)) {  // torch still importing, or one without them
    for (PyObject* o : {type, fn, neg, conj}) Py_XDECREF(o);
    Py_DECREF(torch);
    PyErr_Clear();
    return false;
  }
  g_to_dlpack = fn;
  g_is_neg = neg;
  g_is_conj = conj;
  g_tensor_type = type;  // last: the others are set when this is
  // After: its probes run Python, where another thread may call in (and find torch set).
  torch_abi_init(torch, type);  // leaves no exception set
  Py_DECREF(torch);
  return true;
}

std::string pending_message() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject* text = value ? PyObject_Str(value) : nullptr;
  std::string msg = text && PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : "unknown error";
  Py_XDECREF(text);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  PyErr_Clear();
  return msg;
}

int tensor_buffer(const char* call, const char* role, PyObject* obj, Buffer* out) {
  int lazy = -1;
  if (!torch_abi_buffer(obj, out, &lazy)) {
    PyObject* capsule = PyObject_CallOneArg(g_to_dlpack, obj);
    if (!capsule)
      return fail(error_class(PYSHMEM_ERR_TYPE), call, role,
                  " is a torch tensor pyshmem cannot read (" + pending_message() + "); pass a dense (strided) CPU "
                  "tensor, or a CUDA tensor on the cuda backend"), -1;
    if (!from_capsule(call, role, capsule, out)) return -1;
  }
  // A lazily negated or conjugated view (x.conj() of a complex tensor, its .imag) holds
  // memory that is not its values, and torch exports it as it is: reading it raw would
  // be a silent wrong answer. The conjugate bit exists only on complex tensors.
  for (PyObject* check : {g_is_neg, out->kind == 'c' ? g_is_conj : nullptr}) {
    if (!check) continue;
    int set = lazy < 0 ? -1 : (lazy == (check == g_is_neg ? 1 : 2));
    if (set < 0) {
      PyObject* r = PyObject_CallOneArg(check, obj);
      if (!r) return -1;
      set = PyObject_IsTrue(r);
      Py_DECREF(r);
    }
    if (set)
      return fail(error_class(PYSHMEM_ERR_TYPE), call, role,
                  std::string(" is a torch tensor with the ") + (check == g_is_neg ? "negative" : "conjugate") +
                      " bit set (a lazy view whose memory does not hold its values); pass " +
                      (check == g_is_neg ? "x.resolve_neg()" : "x.resolve_conj()") + " (a copy) instead"), -1;
  }
  return 1;
}

int dlpack_buffer(const char* call, const char* role, PyObject* obj, Buffer* out) {
  static PyObject* dunder = PyUnicode_InternFromString("__dlpack__");
  static PyObject* kwnames = Py_BuildValue("(s)", "max_version");
  static PyObject* version = Py_BuildValue("(ii)", 1, 1);
  // A consumer asks for the newest version it reads; a producer older than DLPack 1.0
  // rejects the keyword with TypeError, and is asked again without it.
  PyObject* args[] = {obj, version};
  PyObject* capsule = PyObject_VectorcallMethod(dunder, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
  if (!capsule && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    capsule = PyObject_CallMethodNoArgs(obj, dunder);
  }
  if (!capsule)
    return fail(error_class(PYSHMEM_ERR_TYPE), call, role,
                std::string(" (") + Py_TYPE(obj)->tp_name + ") failed to export DLPack: " + pending_message()), -1;
  return from_capsule(call, role, capsule, out) ? 1 : -1;
}

}  // namespace

void buffer_layout(Buffer* out, int ndim, const int64_t* shape, const int64_t* strides) {
  layout(out, ndim, shape, strides, out->itemsize);
}

bool interface_buffer(const char* call, const char* role, PyObject* obj, const char* attr, Buffer* out) {
  PyObject* cai = PyObject_GetAttrString(obj, attr);
  if (!cai) return false;
  auto bad = [&](const char* what) {
    Py_DECREF(cai);
    return raise(error_class(PYSHMEM_ERR_TYPE), call, std::string(role) + ": " + attr + " " + what);
  };
  if (!PyDict_Check(cai)) return bad("is not a dict");
  PyObject* data = PyDict_GetItemString(cai, "data");
  PyObject* typestr = PyDict_GetItemString(cai, "typestr");
  PyObject* shape = PyDict_GetItemString(cai, "shape");
  PyObject* strides = PyDict_GetItemString(cai, "strides");
  PyObject* mask = PyDict_GetItemString(cai, "mask");
  if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2 || !typestr || !PyUnicode_Check(typestr) || !shape ||
      !PyTuple_Check(shape))
    return bad("lacks data (a (pointer, read-only) tuple), typestr or shape");
  if (mask && mask != Py_None) return bad("has a mask, which pyshmem does not take");
  const char* ts = PyUnicode_AsUTF8(typestr);
  if (!ts || std::strlen(ts) < 3 || !std::strchr("iufcb", ts[1])) return bad("has a typestr pyshmem does not take");
  out->ptr = reinterpret_cast<char*>(static_cast<uintptr_t>(PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0))));
  out->readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1;
  out->native = ts[0] == '|' || ts[0] == '=' || (ts[0] == '<' && !PY_BIG_ENDIAN) || (ts[0] == '>' && PY_BIG_ENDIAN);
  out->kind = ts[1];
  out->itemsize = std::atoi(ts + 2);
  if (out->itemsize <= 0) return bad("has a typestr with no item size");
  const int ndim = static_cast<int>(PyTuple_GET_SIZE(shape));
  Py_ssize_t dims[64], steps[64];
  if (ndim > 64) return bad("has more than 64 dimensions");
  const bool strided = strides && strides != Py_None;
  if (strided && (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != ndim)) return bad("has strides unlike its shape");
  for (int i = 0; i < ndim; ++i) {
    dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
    if (strided) steps[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i));
  }
  Py_DECREF(cai);
  if (PyErr_Occurred()) return false;
  layout(out, ndim, dims, strided ? steps : nullptr, 1);  // this protocol's strides are in bytes
  out->format.assign(1, out->kind);
  return true;
}

int torch_tensor_buffer(const char* call, const char* role, PyObject* obj, Buffer* out) {
  if (!torch_found() || !PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(g_tensor_type))) return 0;
  return tensor_buffer(call, role, obj, out);
}

int torch_tensor_on_gpu(PyObject* obj) {
  if (!obj || !torch_found() || !PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(g_tensor_type))) return -1;
  const int fast = torch_abi_on_gpu(obj);
  if (fast >= 0) return fast;
  static PyObject* is_cuda = PyUnicode_InternFromString("is_cuda");
  PyObject* r = PyObject_GetAttr(obj, is_cuda);
  const int v = r ? PyObject_IsTrue(r) : 0;
  Py_XDECREF(r);
  PyErr_Clear();
  return v == 1 ? 1 : 0;
}

PyObject* buffer_fields(const Buffer& b) {
  return Py_BuildValue("{sKsCsnsssisnsOsnsO}", "ptr", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(b.ptr)),
                       "kind", static_cast<int>(b.kind), "itemsize", b.itemsize, "format", b.format.c_str(), "ndim",
                       b.ndim, "nelems", b.nelems, "contiguous", b.contiguous ? Py_True : Py_False, "stride", b.stride,
                       "gpu", b.gpu ? Py_True : Py_False);
}

PyObject* torch_tensor_read(PyObject* tensor, bool fast) {
  if (!torch_found() || !PyObject_TypeCheck(tensor, reinterpret_cast<PyTypeObject*>(g_tensor_type)))
    return raise(error_class(PYSHMEM_ERR_TYPE), "_torch_tensor_read", "takes a torch tensor"), nullptr;
  if (fast) return torch_abi_read(tensor);
  PyObject* capsule = PyObject_CallOneArg(g_to_dlpack, tensor);
  Buffer b;
  if (!capsule || !from_capsule("_torch_tensor_read", "tensor", capsule, &b)) return nullptr;
  return buffer_fields(b);
}

PyObject* torch_fast_path_status() {
  torch_found();
  return torch_abi_status();
}

int foreign_buffer(const char* call, const char* role, PyObject* obj, Buffer* out) {
  const int t = torch_tensor_buffer(call, role, obj, out);
  if (t != 0) return t;
  if (PyObject_HasAttrString(obj, "__dlpack__") > 0) return dlpack_buffer(call, role, obj, out);
  if (PyObject_HasAttrString(obj, "__array_interface__") > 0)
    return interface_buffer(call, role, obj, "__array_interface__", out) ? 1 : -1;
  return 0;
}

}  // namespace py
}  // namespace pyshmem
