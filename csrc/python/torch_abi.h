// python/torch_abi.h: torch tensors read through libtorch's stable C ABI (the
// AOTInductor shim, aoti_torch_get_*), the fast path of python/dlpack.cpp.
//
// torch's C-level DLPack exporter allocates and frees a managed tensor per call (about
// 0.2 us); the shim's getters read the tensor in place (nanoseconds each). The build
// needs no torch headers: the symbols are looked up in the libtorch the program loaded,
// and the path is used only when a probe tensor read through it agrees with torch's own
// Python-level answers (see torch_abi.cpp); otherwise every tensor takes DLPack.
#pragma once

#include <Python.h>

#include "python/args.h"

namespace pyshmem {
namespace py {

// Sets the fast path up for the imported `torch` module; `tensor_type` is torch.Tensor.
// Called once, when the binding first finds torch. Never raises (a torch whose layout or
// symbols differ leaves the path off).
void torch_abi_init(PyObject* torch, PyObject* tensor_type);

// Fills `out` (address, element type, shape, contiguity, out->gpu for CUDA memory, a
// reference to `tensor` in out->keep) from a torch.Tensor or nn.Parameter in strided
// layout on the CPU or a CUDA device whose element type pyshmem takes. Returns true when
// filled; false with nothing set and no exception when the tensor is anything else (a
// subclass, sparse, meta, float8, no storage...) or the path is off: the caller reads it
// through DLPack, which reports what is wrong with it. The tensor's lazy bits go in
// `lazy`: 0 neither, 1 the negative bit, 2 the conjugate bit (the memory then does not
// hold the tensor's values: the caller rejects it), -1 when this torch's bits cannot be
// read here (the caller asks torch.Tensor.is_neg/is_conj).
bool torch_abi_buffer(PyObject* tensor, Buffer* out, int* lazy);

// 1 when `tensor` (a torch.Tensor) is on a CUDA device, 0 on another device, -1 when the
// fast path cannot tell (the caller asks torch).
int torch_abi_on_gpu(PyObject* tensor);

// {"enabled": bool, "bits": bool (the lazy bits are read here too), "status": "on" or
// why the path (or the bit reading) is off} (pyshmem._lib.torch_fast_path()).
PyObject* torch_abi_status();

// For tests: what the fast path reads from `tensor`, as a dict of the Buffer's fields
// and "lazy", or None when it declines the tensor.
PyObject* torch_abi_read(PyObject* tensor);

}  // namespace py
}  // namespace pyshmem
