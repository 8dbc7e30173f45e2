// python/coll_bind.cpp: the team collectives (coll/coll.h) for Python: sync(team),
// barrier(team), broadcast, collect, fcollect, alltoall, alltoalls and reduce, with
// shmem4py's signatures (target first, sizes in elements, team=None meaning the world).
//
// Arrays must be contiguous symmetric arrays of one element type; `size` defaults as
// in shmem4py. The waits inside run with the GIL released. Calls with GPU arrays or a
// `stream=` (a pyshmem extension, last parameter) are checked by the same code and then
// take the GPU route: one block of the device API's collective on the stream, which
// pyshmem/_gpu_coll.py launches (the kernels are built with NVRTC, from Python).
#include <strings.h>

#include <cstring>

#include "coll/coll.h"
#include "cuda/gpu_heap.h"
#include "host/host.h"
#include "python/args.h"
#include "python/errors.h"
#include "python/fast.h"
#include "python/gpu_hooks.h"
#include "pyshmem/team.h"
#include "team/team.h"

namespace pyshmem {
namespace py {

// pyshmem._gpu_coll.launch, set at import (python/gpu_hooks.h).
PyObject* g_gpu_coll = nullptr;

namespace {

// A stream or a GPU array sends a collective to the GPU route.
bool wants_gpu(PyObject* target, PyObject* source, PyObject* stream) {
  return (stream && stream != Py_None) || is_gpu_array(target) || is_gpu_array(source);
}

// The GPU route, once every argument is checked: pyshmem._gpu_coll.launch(call, kernel,
// reduction, team, args, stream) runs `kernel` of pyshmem/kernels/coll.cu (one block)
// with (team, *args); `reduction` is null or (op, dtype) naming the reduction kernel to
// instantiate; stream None: on the legacy default stream, waited for.
PyObject* gpu_collective(const char* call, const char* kernel, PyObject* reduction, int team,
                         std::initializer_list<unsigned long long> args, PyObject* stream_obj) {
  if (!g_gpu_coll)
    return raise(error_class(PYSHMEM_ERR_TYPE), call, "GPU arrays and stream= need pyshmem.cuda (import pyshmem.cuda)"),
           nullptr;
  uint64_t handle = 0;
  if (!parse_stream(call, stream_obj, &handle)) return nullptr;
  PyObject* ints = PyTuple_New(static_cast<Py_ssize_t>(args.size()));
  if (!ints) return nullptr;
  Py_ssize_t i = 0;
  for (unsigned long long v : args) {
    PyObject* o = PyLong_FromUnsignedLongLong(v);
    if (!o) return Py_DECREF(ints), nullptr;
    PyTuple_SET_ITEM(ints, i++, o);
  }
  PyObject* stream = handle ? PyLong_FromUnsignedLongLong(handle) : (Py_INCREF(Py_None), Py_None);
  PyObject* r = stream ? PyObject_CallFunction(g_gpu_coll, "ssOiOO", call, kernel, reduction ? reduction : Py_None,
                                               team, ints, stream)
                       : nullptr;
  Py_DECREF(ints);
  Py_XDECREF(stream);
  return r;
}

// The GPU route runs on this PE's members only: a team it is not in is an error here
// (on the host route the core reports it).
bool gpu_member(const char* call, int team) {
  return run_guarded(call, [&] { team_member_desc(team, call); });
}

// A GPU array argument of the GPU route: in this PE's GPU heap, contiguous.
bool gpu_array(const char* call, const char* role, PyObject* obj, bool writable, Buffer* b) {
  if (!is_gpu_array(obj))
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 std::string("with stream= or GPU arrays, ") + role +
                     " must be a symmetric GPU array (pyshmem.cuda.empty/zeros), not " + Py_TYPE(obj)->tp_name);
  if (!get_buffer(call, role, obj, writable, b, true)) return false;
  if (!b->contiguous)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 std::string(role) + " must be a contiguous array (collectives move whole blocks)");
  if (!gpu_is_symmetric(reinterpret_cast<uint64_t>(b->data()), static_cast<size_t>(b->nelems * b->itemsize)))
    return raise(error_class(PYSHMEM_ERR_NOT_SYMMETRIC), call,
                 std::string(role) + " is not in the symmetric GPU heap (or runs past its end); use arrays from "
                 "pyshmem.cuda.empty/zeros");
  return true;
}

uint64_t addr(const Buffer& b) { return reinterpret_cast<uint64_t>(b.data()); }

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

// A contiguous array argument: host memory, or on the GPU route a symmetric GPU array.
bool get_array(const char* call, const char* role, PyObject* obj, bool writable, Buffer* b, bool gpu) {
  if (gpu) return gpu_array(call, role, obj, writable, b);
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
PyObject* reject_and_raise(const char* call, int team) {
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
  if (!parse_team(call, a[0], &team)) return nullptr;
  if (wants_gpu(nullptr, nullptr, a[1]))
    return gpu_member(call, team) ? gpu_collective(call, "pyshmem_coll_sync", nullptr, team, {complete ? 1ull : 0ull}, a[1])
                                  : nullptr;
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
  const bool gpu = wants_gpu(a[0], a[1], a[5]);
  if (!parse_team(call, a[4], &team)) return nullptr;
  if (gpu && !gpu_member(call, team)) return nullptr;
  // The GPU route raises without meeting the team: its members meet in the kernel.
  auto rejected = [gpu](const char* c, int tm) { return gpu ? nullptr : reject_and_raise(c, tm); };
  if (!get_array(call, "target", a[0], true, &t, gpu) || !get_array(call, "source", a[1], false, &s, gpu) ||
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
  if (gpu)
    return gpu_collective(call, "pyshmem_coll_broadcast", nullptr, team,
                          {addr(t), addr(s), size_t(size) * t.itemsize, static_cast<unsigned long long>(root)}, a[5]);
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
  const bool gpu = wants_gpu(a[0], a[1], a[4]);
  if (!parse_team(call, a[3], &team)) return nullptr;
  if (gpu && !gpu_member(call, team)) return nullptr;
  auto rejected = [gpu](const char* c, int tm) { return gpu ? nullptr : reject_and_raise(c, tm); };
  if (!get_array(call, "target", a[0], true, &t, gpu) || !get_array(call, "source", a[1], false, &s, gpu) ||
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
    if (gpu) return gpu_collective(call, "pyshmem_coll_fcollect", nullptr, team, {addr(t), addr(s), bytes}, a[4]);
    return done(run_guarded_nogil(call, [&] { fcollect(team, t.data(), s.data(), bytes, call); }));
  }
  // The members' counts meet only inside the kernel on the GPU route: it traps when they
  // overflow target.
  if (gpu)
    return gpu_collective(call, "pyshmem_coll_collect", nullptr, team,
                          {addr(t), size_t(t.nelems) * t.itemsize, addr(s), bytes}, a[4]);
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
  const bool gpu = wants_gpu(a[0], a[1], a[n - 1]);
  int team;
  if (!parse_team(call, team_obj, &team)) return nullptr;
  if (gpu && !gpu_member(call, team)) return nullptr;
  auto rejected = [gpu](const char* c, int tm) { return gpu ? nullptr : reject_and_raise(c, tm); };
  long long tst = 1, sst = 1;
  if (strided && ((a[2] && !parse_int(call, "tst", a[2], &tst)) || (a[3] && !parse_int(call, "sst", a[3], &sst))))
    return rejected(call, team);
  if (tst < 1 || sst < 1)
    return bad_size(call, "strides must be >= 1 (tst=" + std::to_string(tst) + ", sst=" + std::to_string(sst) + ")"),
           rejected(call, team);
  Buffer t, s;
  Py_ssize_t size;
  if (!get_array(call, "target", a[0], true, &t, gpu) || !get_array(call, "source", a[1], false, &s, gpu) ||
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
  if (gpu && strided)
    return gpu_collective(call, "pyshmem_coll_alltoalls", nullptr, team,
                          {addr(t), addr(s), static_cast<unsigned long long>(tst), static_cast<unsigned long long>(sst),
                           size_t(size), size_t(t.itemsize)},
                          a[n - 1]);
  if (gpu)
    return gpu_collective(call, "pyshmem_coll_alltoall", nullptr, team, {addr(t), addr(s), size_t(size) * t.itemsize},
                          a[n - 1]);
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
  const bool gpu = wants_gpu(a[0], a[1], a[5]);
  if (!parse_team(call, a[4], &team)) return nullptr;
  if (gpu && !gpu_member(call, team)) return nullptr;
  auto rejected = [gpu](const char* c, int tm) { return gpu ? nullptr : reject_and_raise(c, tm); };
  if (!get_array(call, "target", a[0], true, &t, gpu) || !get_array(call, "source", a[1], false, &s, gpu) ||
      !same_type(call, t, "target", s, "source") || !parse_op(call, a[2], &op) || !parse_size(call, a[3], &size))
    return rejected(call, team);
  const int dtype = reduce_dtype(s);
  if (gpu && (!dtype || dtype == PYSHMEM_LONGDOUBLE))  // the GPU route's own list of types
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 "reductions on GPU arrays take int8..int64, uint8..uint64, float32, float64, complex64 and complex128, "
                 "not " + type_name(s)),
           nullptr;
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
  if (gpu) {
    const std::string type = type_name(s), kernel = std::string("pyshmem_coll_") + reduce_op_name(op) + "_reduce_" + type;
    PyObject* reduction = Py_BuildValue("(ss)", reduce_op_name(op), type.c_str());
    if (!reduction) return nullptr;
    PyObject* r = gpu_collective(call, kernel.c_str(), reduction, team, {addr(t), addr(s), size_t(size)}, a[5]);
    Py_DECREF(reduction);
    return r;
  }
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
