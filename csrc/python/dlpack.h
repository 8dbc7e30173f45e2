// python/dlpack.h: arguments that are not NumPy arrays or buffers: PyTorch tensors,
// objects exporting DLPack (__dlpack__: JAX, CuPy, TensorFlow, ...) and objects with
// the NumPy array interface (__array_interface__), read without copying.
#pragma once

#include <Python.h>

#include <cstdint>

#include "python/args.h"

namespace pyshmem {
namespace py {

// Fills `out` from `obj` when it is a torch.Tensor (found only when the program has
// imported torch), exports DLPack, or has __array_interface__. Returns 1 when filled,
// 0 when `obj` is none of these (nothing set), -1 with an exception set when it is one
// but cannot be used (a tensor with the negative or conjugate bit set, an unsupported
// device or element type). GPU memory (CUDA tensors, kDLCUDA) sets out->gpu; the caller
// decides whether the argument takes it. The capsule that keeps the memory alive is
// held in out->keep.
int foreign_buffer(const char* call, const char* role, PyObject* obj, Buffer* out);

// foreign_buffer for torch tensors only (0 for anything else): cheap enough to try
// before the buffer protocol, which a tensor does not have.
int torch_tensor_buffer(const char* call, const char* role, PyObject* obj, Buffer* out);

// 1 for a CUDA torch tensor, 0 for another torch tensor, -1 for anything else: what
// is_gpu_array asks without the __cuda_array_interface__ lookup, which a CPU tensor
// answers by raising (microseconds).
int torch_tensor_on_gpu(PyObject* obj);

// Fills `out` from the dict in obj.<attr>, which follows the NumPy array interface
// (version 3: data, typestr, shape, strides in bytes; __cuda_array_interface__ has the
// same fields). Returns false with an exception set.
bool interface_buffer(const char* call, const char* role, PyObject* obj, const char* attr, Buffer* out);

// Shape and strides (in elements; null strides: C-contiguous) into out's ndim, nelems,
// contiguous and stride, out->itemsize set. C- or Fortran-contiguous counts as
// contiguous, as for NumPy arrays.
void buffer_layout(Buffer* out, int ndim, const int64_t* shape, const int64_t* strides);

// A Buffer's fields as a dict (ptr, kind, itemsize, format, ndim, nelems, contiguous,
// stride, gpu), for tests.
PyObject* buffer_fields(const Buffer& b);

// For tests (pyshmem._lib): what the binding reads from torch tensor `tensor`, through
// the stable-ABI fast path (`fast`: python/torch_abi.h; None when it declines the
// tensor) or through torch's DLPack exporter (raises what a call would raise).
PyObject* torch_tensor_read(PyObject* tensor, bool fast);

// The fast path's state once torch is imported: python/torch_abi.h torch_abi_status.
PyObject* torch_fast_path_status();

}  // namespace py
}  // namespace pyshmem
