// python/coll_bind.cpp: the team collectives (coll/coll.h) for Python: sync(team),
// barrier(team), broadcast, collect, fcollect, alltoall, alltoalls and reduce, with
// shmem4py's signatures (target first, sizes in elements, team=None meaning the world).
//
// Arrays must be contiguous symmetric arrays of one element type; `size` defaults as
// in shmem4py. The waits inside run with the GIL released. Calls with GPU arrays or a
// `stream=` (a pyshmem extension, last parameter) go to pyshmem/_gpu_coll.py, which
// enqueues a kernel running the device collective.
#include <strings.h>

#include <cstring>

#include "coll/coll.h"
#include "host/host.h"
#include "python/args.h"
#include "python/errors.h"
#include "python/fast.h"
#include "python/gpu_hooks.h"
#include "pyshmem/team.h"
#include "team/team.h"

namespace pyshmem {
namespace py {

// pyshmem._gpu_coll.collective, set at import (python/gpu_hooks.h).
PyObject* g_gpu_coll = nullptr;

namespace {

// A stream or a GPU array sends a collective to the GPU path.
bool wants_gpu(PyObject* target, PyObject* source, PyObject* stream) {
  return (stream && stream != Py_None) || is_gpu_array(target) || is_gpu_array(source);
}

// Hands the call to the GPU path when there is a stream or a GPU array; *handled says
// whether it did. Returns the hook's result (nullptr with an exception on failure).
// a: the call's parsed arguments; `kind` names the collective for the hook.
PyObject* maybe_gpu(const char* call, const char* kind, PyObject* target, PyObject* source, PyObject* extra,
                    PyObject* size, PyObject* team, PyObject* stream, bool* handled) {
  *handled = wants_gpu(target, source, stream);
  if (!*handled) return nullptr;
  if (!g_gpu_coll)
    return raise(error_class(PYSHMEM_ERR_TYPE), call, "GPU arrays and stream= need pyshmem.cuda (import pyshmem.cuda)"),
           nullptr;
  PyObject* c = PyUnicode_FromString(call);
  PyObject* k = PyUnicode_FromString(kind);
  if (!c || !k) {
    Py_XDECREF(c);
    Py_XDECREF(k);
    return nullptr;
  }
  PyObject* argv[] = {c, k, target ? target : Py_None, source ? source : Py_None, extra ? extra : Py_None,
                      size ? size : Py_None, team ? team : Py_None, stream ? stream : Py_None};
  PyObject* r = PyObject_Vectorcall(g_gpu_coll, argv, 8, nullptr);
  Py_DECREF(c);
  Py_DECREF(k);
  return r;
}

// None -> TEAM_WORLD; a pyshmem.Team -> its handle (an int attribute `_handle`).
bool parse_team(const char* call, PyObject* obj, int* out) {
  if (!obj || obj == Py_None) {
    *out = PYSHMEM_TEAM_WORLD;
    return true;
  }
  static PyObject* name = PyUnicode_InternFromString("_handle");
  PyObject* h = PyObject_GetAttr(obj, name);
  if (!h) {
    PyErr_Clear();
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 std::string("team must be a pyshmem.Team or None, not ") + Py_TYPE(obj)->tp_name);
  }
  long long v = PyLong_AsLongLong(h);
  Py_DECREF(h);
  if (v == -1 && PyErr_Occurred()) PyErr_Clear();
  // Out of range: a handle no team has, which the core reports as not a live team.
  *out = v < INT32_MIN || v > INT32_MAX ? PYSHMEM_TEAM_INVALID : static_cast<int>(v);
  return true;
}

// Element count of a contiguous array argument.
bool get_array(const char* call, const char* role, PyObject* obj, bool writable, Buffer* b) {
  if (!get_buffer(call, role, obj, writable, b)) return false;
  if (!b->contiguous)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 std::string(role) + " must be a contiguous array (collectives move whole blocks)");
  return true;
}

// Reduction dtype: integers, float32/64, long double (NumPy's longdouble, 'g', where it
// is 16 bytes; where it is 8 it is float64) and complex64/128.
int reduce_dtype(const Buffer& b) {
  if (!b.native) return 0;
  if (b.kind == 'c' && b.itemsize == 8) return PYSHMEM_COMPLEX64;
  if (b.kind == 'c' && b.itemsize == 16) return PYSHMEM_COMPLEX128;
  if (b.kind == 'f' && b.itemsize == 16 && sizeof(long double) == 16) return PYSHMEM_LONGDOUBLE;
  return dtype_code(b);
}

bool parse_op(const char* call, PyObject* obj, int* out) {
  if (!obj) {
    *out = PYSHMEM_OP_SUM;
    return true;
  }
  if (PyUnicode_Check(obj)) {  // OP members are str enums: 'sum', 'max', ...
    const char* t = PyUnicode_AsUTF8(obj);
    if (!t) return false;
    for (int op = 0; op < PYSHMEM_OP_COUNT; ++op)
      if (strcasecmp(t, reduce_op_name(op)) == 0) return *out = op, true;
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 std::string("unknown reduction op '") + t + "'; use OP.AND/OR/XOR/MAX/MIN/SUM/PROD");
  }
  return raise(error_class(PYSHMEM_ERR_TYPE), call,
               std::string("op must be an OP member or its name, not ") + Py_TYPE(obj)->tp_name);
}

bool bad_size(const char* call, const std::string& msg) { return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call, msg); }

// team_size_of for a handle the binding got from Python (checked later by the core).
int team_size_or_one(int team) {
  int n = team_size_of(team);
  return n > 0 ? n : 1;
}

// This PE rejected a collective's arguments: it still meets the team (collective_reject
// in coll/coll.h), so the other members fail too instead of waiting for it or pairing
// their barriers with its next collective; then raises its own error.
PyObject* rejected(const char* call, int team) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  Py_BEGIN_ALLOW_THREADS
  collective_reject(team, call);
  Py_END_ALLOW_THREADS
  PyErr_Restore(type, value, tb);
  return nullptr;
}

PyObject* done(bool ok) {
  if (!ok) return nullptr;
  Py_RETURN_NONE;
}

PyObject* team_barrier(bool complete, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  static const char* const names[] = {"team", "stream"};
  const char* call = complete ? "pyshmem.barrier" : "pyshmem.sync";
  PyObject* a[2];
  int team;
  if (!parse_args(call + 8, args, nargs, kw, names, 2, 0, a) || !ensure_init(call)) return nullptr;
  bool gpu;
  PyObject* r = maybe_gpu(call, call + 8, nullptr, nullptr, nullptr, nullptr, a[0], a[1], &gpu);
  if (gpu) return r;
  if (!parse_team(call, a[0], &team)) return nullptr;
  return done(run_guarded_nogil(call, [&] { complete ? barrier(team, call) : team_sync(team, call); }));
}

PyObject* py_sync(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return team_barrier(false, args, nargs, kw);
}
PyObject* py_barrier(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return team_barrier(true, args, nargs, kw);
}

PyObject* py_broadcast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  static const char* const names[] = {"target", "source", "root", "size", "team", "stream"};
  const char* call = "pyshmem.broadcast";
  PyObject* a[6];
  Buffer t, s;
  long long root;
  Py_ssize_t size;
  int team;
  if (!parse_args("broadcast", args, nargs, kw, names, 6, 3, a) || !ensure_init(call)) return nullptr;
  bool gpu;
  PyObject* r = maybe_gpu(call, "broadcast", a[0], a[1], a[2], a[3], a[4], a[5], &gpu);
  if (gpu) return r;
  if (!parse_team(call, a[4], &team)) return nullptr;
  if (!get_array(call, "target", a[0], true, &t) || !get_array(call, "source", a[1], false, &s) ||
      !same_type(call, t, "target", s, "source") || !parse_int(call, "root", a[2], &root) ||
      !parse_size(call, a[3], &size))
    return rejected(call, team);
  if (root < 0 || root >= team_size_or_one(team))
    return raise(error_class(PYSHMEM_ERR_PE_RANGE), call,
                 "root " + std::to_string(root) + " is not a PE of the team (team PEs are 0.." +
                     std::to_string(team_size_or_one(team) - 1) + "); pass the root's team-relative PE number"),
           rejected(call, team);
  if (size < 0) size = t.nelems < s.nelems ? t.nelems : s.nelems;
  if (size > t.nelems || size > s.nelems)
    return bad_size(call, "size=" + std::to_string(size) + " exceeds target (" + std::to_string(t.nelems) +
                              ") or source (" + std::to_string(s.nelems) + ") elements"), rejected(call, team);
  return done(run_guarded_nogil(call, 
      [&] { broadcast(team, t.data(), s.data(), size_t(size) * t.itemsize, static_cast<int>(root), call); }));
}

PyObject* gather(bool fixed, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  static const char* const names[] = {"target", "source", "size", "team", "stream"};
  const char* call = fixed ? "pyshmem.fcollect" : "pyshmem.collect";
  PyObject* a[5];
  Buffer t, s;
  Py_ssize_t size;
  int team;
  if (!parse_args(call + 8, args, nargs, kw, names, 5, 2, a) || !ensure_init(call)) return nullptr;
  bool gpu;
  PyObject* r = maybe_gpu(call, call + 8, a[0], a[1], nullptr, a[2], a[3], a[4], &gpu);
  if (gpu) return r;
  if (!parse_team(call, a[3], &team)) return nullptr;
  if (!get_array(call, "target", a[0], true, &t) || !get_array(call, "source", a[1], false, &s) ||
      !same_type(call, t, "target", s, "source") || !parse_size(call, a[2], &size))
    return rejected(call, team);
  if (size < 0) size = s.nelems;
  if (size > s.nelems)
    return bad_size(call, "size=" + std::to_string(size) + " exceeds source (" + std::to_string(s.nelems) +
                              " elements)"), rejected(call, team);
  const size_t bytes = size_t(size) * s.itemsize;
  if (fixed) {
    const Py_ssize_t npes = team_size_or_one(team);
    if (size * npes > t.nelems)
      return bad_size(call, "target holds " + std::to_string(t.nelems) + " elements; fcollect of size=" +
                                std::to_string(size) + " over " + std::to_string(npes) + " PEs needs " +
                                std::to_string(size * npes)), rejected(call, team);
    return done(run_guarded_nogil(call, [&] { fcollect(team, t.data(), s.data(), bytes, call); }));
  }
  return done(run_guarded_nogil(call, 
      [&] { collect(team, t.data(), size_t(t.nelems) * t.itemsize, s.data(), bytes, size_t(t.itemsize), call); }));
}

PyObject* py_fcollect(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return gather(true, args, nargs, kw);
}
PyObject* py_collect(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return gather(false, args, nargs, kw);
}

PyObject* exchange(bool strided, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  static const char* const plain[] = {"target", "source", "size", "team", "stream"};
  static const char* const with_strides[] = {"target", "source", "tst", "sst", "size", "team", "stream"};
  const char* call = strided ? "pyshmem.alltoalls" : "pyshmem.alltoall";
  PyObject* a[7] = {};
  const int n = strided ? 7 : 5;
  if (!parse_args(call + 8, args, nargs, kw, strided ? with_strides : plain, n, 2, a) || !ensure_init(call))
    return nullptr;
  PyObject* size_obj = a[n - 3];
  PyObject* team_obj = a[n - 2];
  // alltoalls hands its strides to the GPU path as extra = (tst, sst).
  PyObject* strides = nullptr;
  if (strided && wants_gpu(a[0], a[1], a[n - 1]) &&
      !(strides = PyTuple_Pack(2, a[2] ? a[2] : Py_None, a[3] ? a[3] : Py_None)))
    return nullptr;
  bool gpu;
  PyObject* r = maybe_gpu(call, call + 8, a[0], a[1], strides, size_obj, team_obj, a[n - 1], &gpu);
  Py_XDECREF(strides);
  if (gpu) return r;
  int team;
  if (!parse_team(call, team_obj, &team)) return nullptr;
  long long tst = 1, sst = 1;
  if (strided && ((a[2] && !parse_int(call, "tst", a[2], &tst)) || (a[3] && !parse_int(call, "sst", a[3], &sst))))
    return rejected(call, team);
  if (tst < 1 || sst < 1)
    return bad_size(call, "strides must be >= 1 (tst=" + std::to_string(tst) + ", sst=" + std::to_string(sst) + ")"),
           rejected(call, team);
  Buffer t, s;
  Py_ssize_t size;
  if (!get_array(call, "target", a[0], true, &t) || !get_array(call, "source", a[1], false, &s) ||
      !same_type(call, t, "target", s, "source") || !parse_size(call, size_obj, &size))
    return rejected(call, team);
  const Py_ssize_t npes = team_size_or_one(team);
  const Py_ssize_t tcap = strided_count(t.nelems, tst), scap = strided_count(s.nelems, sst);
  if (size < 0) {
    const Py_ssize_t m = tcap < scap ? tcap : scap;
    if (m % npes)
      return bad_size(call, "cannot infer size: " + std::to_string(m) + " elements do not split evenly over " +
                                std::to_string(npes) + " PEs; pass size="), rejected(call, team);
    size = m / npes;
  }
  if (size * npes > tcap || size * npes > scap)
    return bad_size(call, "size=" + std::to_string(size) + " per PE x " + std::to_string(npes) + " PEs exceeds target (" +
                              std::to_string(tcap) + ") or source (" + std::to_string(scap) + ") elements"),
           rejected(call, team);
  if (strided)
    return done(run_guarded_nogil(call, [&] {
      alltoalls(team, t.data(), s.data(), tst, sst, size_t(size), size_t(t.itemsize), call);
    }));
  return done(run_guarded_nogil(call, [&] { alltoall(team, t.data(), s.data(), size_t(size) * t.itemsize, call); }));
}

PyObject* py_alltoall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return exchange(false, args, nargs, kw);
}
PyObject* py_alltoalls(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return exchange(true, args, nargs, kw);
}

PyObject* py_reduce(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  static const char* const names[] = {"target", "source", "op", "size", "team", "stream"};
  const char* call = "pyshmem.reduce";
  PyObject* a[6];
  Buffer t, s;
  Py_ssize_t size;
  int team, op;
  if (!parse_args("reduce", args, nargs, kw, names, 6, 2, a) || !ensure_init(call)) return nullptr;
  bool gpu;
  PyObject* r = maybe_gpu(call, "reduce", a[0], a[1], a[2], a[3], a[4], a[5], &gpu);
  if (gpu) return r;
  if (!parse_team(call, a[4], &team)) return nullptr;
  if (!get_array(call, "target", a[0], true, &t) || !get_array(call, "source", a[1], false, &s) ||
      !same_type(call, t, "target", s, "source") || !parse_op(call, a[2], &op) || !parse_size(call, a[3], &size))
    return rejected(call, team);
  const int dtype = reduce_dtype(s);
  if (!dtype)
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 "reductions take int8..int64, uint8..uint64, float32, float64, long double (float128), complex64 and "
                 "complex128 arrays, not " +
                     type_name(s)),
           rejected(call, team);
  if (!reduce_supported(dtype, op))
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 std::string("the '") + reduce_op_name(op) + "' reduction is not defined for " + type_name(s) +
                     (op <= PYSHMEM_OP_XOR ? " (and/or/xor take integer arrays)" : " (max/min take real arrays)")),
           rejected(call, team);
  if (size < 0) size = t.nelems < s.nelems ? t.nelems : s.nelems;
  if (size > t.nelems || size > s.nelems)
    return bad_size(call, "size=" + std::to_string(size) + " exceeds target (" + std::to_string(t.nelems) +
                              ") or source (" + std::to_string(s.nelems) + ") elements"), rejected(call, team);
  return done(run_guarded_nogil(call, [&] { reduce(team, t.data(), s.data(), size_t(size), dtype, op, call); }));
}

#define FAST(name, doc) \
  {#name, reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(py_##name)), METH_FASTCALL | METH_KEYWORDS, doc}

}  // namespace

PyMethodDef kCollMethods[] = {
    FAST(sync, "sync(team=None, stream=None)\n--\n\nWait until every PE of the team has entered sync (no quiet)."),
    FAST(barrier, "barrier(team=None, stream=None)\n--\n\nquiet(), then sync(team)."),
    FAST(broadcast, "broadcast(target, source, root, size=None, team=None, stream=None)\n--\n\n"
                    "Copy `size` elements of source on team PE `root` into target on every team PE."),
    FAST(collect, "collect(target, source, size=None, team=None, stream=None)\n--\n\n"
                  "Concatenate each team PE's `size` elements (sizes may differ) into target, in team order."),
    FAST(fcollect, "fcollect(target, source, size=None, team=None, stream=None)\n--\n\n"
                   "Concatenate each team PE's `size` elements (the same on every PE) into target, in team order."),
    FAST(alltoall, "alltoall(target, source, size=None, team=None, stream=None)\n--\n\n"
                   "Block j (size elements) of source goes to block (my team PE) of target on team PE j."),
    FAST(alltoalls, "alltoalls(target, source, tst=1, sst=1, size=None, team=None, stream=None)\n--\n\n"
                    "alltoall with element strides tst (target) and sst (source)."),
    FAST(reduce, "reduce(target, source, op=OP_SUM, size=None, team=None, stream=None)\n--\n\n"
                 "target[i] = op over the team PEs of source[i] (every PE gets the result)."),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace pyshmem
