// python/block.h: SymmetricBlock, the exporter of one symmetric allocation's bytes
// (python/block.cpp), and the check that an argument is not a view of a freed one.
#pragma once

#include <Python.h>

namespace pyshmem {
namespace py {

// Adds the type to the module as SymmetricBlock. Returns false with an exception set.
bool block_register(PyObject* module);

// True when `obj` (an array, a memoryview, or a block) views a SymmetricBlock that
// pyshmem.free released. Cheap: a few pointer hops along the base chain, no lookup.
bool block_released(PyObject* obj);

}  // namespace py
}  // namespace pyshmem
