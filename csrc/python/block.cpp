// python/block.cpp: SymmetricBlock, the Python object that exports the bytes of one
// symmetric allocation (pyshmem/memory.py hands out arrays over it).
//
// It exists so that a freed allocation can be recognised by its arrays, whose address
// alone cannot tell it from a newer allocation that reuses the memory: pyshmem.free()
// marks the block released, and every argument the binding reads (python/args.cpp) walks
// from the array to its block (two hops for slices) and refuses a released one.
#include "python/block.h"

#include "python/args.h"
#include "python/errors.h"
#include "pyshmem/types.h"

namespace pyshmem {
namespace py {
namespace {

struct Block {
  PyObject_HEAD
  char* addr;
  Py_ssize_t nbytes;
  int released;
};

int block_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  Block* b = reinterpret_cast<Block*>(self);
  if (b->released) {
    view->obj = nullptr;
    PyErr_SetString(error_class(PYSHMEM_ERR_INVALID_ARG),
                    "pyshmem: this symmetric allocation was freed (pyshmem.free); allocate a new array");
    return -1;
  }
  return PyBuffer_FillInfo(view, self, b->addr, b->nbytes, /*readonly=*/0, flags);
}

PyBufferProcs g_buffer = {block_getbuffer, nullptr};

PyObject* block_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  unsigned long long addr = 0;
  Py_ssize_t nbytes = 0;
  static const char* names[] = {"address", "nbytes", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Kn", const_cast<char**>(names), &addr, &nbytes)) return nullptr;
  if (nbytes < 0) return PyErr_SetString(PyExc_ValueError, "nbytes must be >= 0"), nullptr;
  Block* b = reinterpret_cast<Block*>(type->tp_alloc(type, 0));
  if (!b) return nullptr;
  b->addr = reinterpret_cast<char*>(static_cast<uintptr_t>(addr));
  b->nbytes = nbytes;
  b->released = 0;
  return reinterpret_cast<PyObject*>(b);
}

PyObject* block_release(PyObject* self, PyObject*) {
  reinterpret_cast<Block*>(self)->released = 1;
  Py_RETURN_NONE;
}

PyObject* get_address(PyObject* self, void*) {
  return PyLong_FromUnsignedLongLong(reinterpret_cast<uintptr_t>(reinterpret_cast<Block*>(self)->addr));
}
PyObject* get_nbytes(PyObject* self, void*) { return PyLong_FromSsize_t(reinterpret_cast<Block*>(self)->nbytes); }
PyObject* get_released(PyObject* self, void*) { return PyBool_FromLong(reinterpret_cast<Block*>(self)->released); }

PyMethodDef g_methods[] = {
    {"release", block_release, METH_NOARGS, "Mark the allocation freed: arrays over it are refused from now on."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_getset[] = {{"address", get_address, nullptr, "first byte of the allocation", nullptr},
                          {"nbytes", get_nbytes, nullptr, "bytes the allocation was asked for", nullptr},
                          {"released", get_released, nullptr, "True once pyshmem.free released it", nullptr},
                          {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject g_block_type = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "pyshmem._C.SymmetricBlock";
  t.tp_basicsize = sizeof(Block);
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "SymmetricBlock(address, nbytes): the bytes of one symmetric allocation (internal to pyshmem.memory).";
  t.tp_as_buffer = &g_buffer;
  t.tp_methods = g_methods;
  t.tp_getset = g_getset;
  t.tp_new = block_new;
  return t;
}();

}  // namespace

bool block_register(PyObject* module) {
  if (PyType_Ready(&g_block_type) < 0) return false;
  return PyModule_AddObjectRef(module, "SymmetricBlock", reinterpret_cast<PyObject*>(&g_block_type)) == 0;
}

bool block_released(PyObject* obj) {
  // An array's base chain: a slice's base is the array made over the block, whose base
  // is the block (NumPy stores the exporter of a memoryview buffer). A few hops at most.
  for (int hop = 0; obj && hop < 4; ++hop) {
    if (Py_TYPE(obj) == &g_block_type) return reinterpret_cast<Block*>(obj)->released != 0;
    if (PyMemoryView_Check(obj)) {
      obj = PyMemoryView_GET_BASE(obj);
    } else if (is_ndarray(obj)) {
      obj = array_base(obj);
    } else {
      return false;
    }
  }
  return false;
}

}  // namespace py
}  // namespace pyshmem
