// python/nbi_sources.h: source buffers of Python put_nbi calls still in flight.
//
// A put_nbi toward a PE reached by a transport with true non-blocking puts (UCX)
// returns before its source is read, and Python sources are often temporaries
// (put_nbi(x, a + 1, pe)) freed as soon as the call returns. So the binding keeps a
// buffer export of each such source until an operation that completes every put
// (quiet, barrier_all, clear_lock, finalize) has run. All functions need the GIL.
#pragma once

#include <Python.h>

namespace pyshmem {
namespace py {

// Keeps a buffer export of `buffer` (held like a memoryview: a bytearray cannot be
// resized meanwhile): a put_nbi's source, or a get_nbi's or fetching nbi atomic's
// destination the ordering check writes later. Past kMaxHeldNbiSources it first
// completes every operation (quiet, as OpenSHMEM allows) and drops the held ones, so a
// loop without quiet cannot grow memory forever. Returns false with a Python exception
// set (naming `call`).
bool nbi_source_hold(const char* call, PyObject* buffer);
constexpr size_t kMaxHeldNbiSources = 4096;

size_t nbi_sources_held();

// Drops every held source. Call only after the puts that read them are complete.
void nbi_sources_release();

}  // namespace py
}  // namespace pyshmem
