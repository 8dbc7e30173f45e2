// python/sync_bind.cpp: waits, tests, signals, ordering, barriers and locks.
//
// Every blocking call first checks its condition with the GIL held (the common fast
// case costs no GIL hand-off), then waits with the GIL released so other Python threads
// run; sleeping waits poll for Python signals so Ctrl-C interrupts them.
#include "host/host.h"
#include "python/args.h"
#include "python/errors.h"
#include "python/fast.h"
#include "python/nbi_sources.h"

namespace pyshmem {
namespace py {
namespace {

template <class F>
bool run_nogil(const char* call, F&& f) {
  return run_guarded_nogil(call, f);
}

// ivar: 1-element integer buffer; fills code.
bool get_ivar(const char* call, const char* role, PyObject* obj, Buffer* b, int* code, bool writable = false,
              bool allow_gpu = false) {
  if (!reject_scalar(call, role, obj) || !get_buffer(call, role, obj, writable, b, allow_gpu)) return false;
  if (b->nelems != 1)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 std::string(role) + " must be a 1-element symmetric array (e.g. a[i:i+1]), got " +
                     std::to_string(b->nelems) + " elements");
  *code = dtype_code(*b);
  if (!*code || (*code & 0x20) || PYSHMEM_DTYPE_SIZE(*code) < 2)
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 std::string(role) + " is " + type_name(*b) + "; wait/test variables must be int16/32/64 or uint16/32/64");
  return true;
}

PyObject* wait_or_test(bool blocking, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const char* call = blocking ? "pyshmem.wait_until" : "pyshmem.test";
  static const char* const names[] = {"ivar", "cmp", "value"};
  PyObject* a[3];
  if (!parse_args(call + 8, args, nargs, kwnames, names, 3, 3, a) || !ensure_init(call)) return nullptr;
  Buffer b;
  int code, cmp;
  alignas(8) unsigned char value[8] = {};
  if (!get_ivar(call, "ivar", a[0], &b, &code, false, /*allow_gpu=*/true) || !parse_cmp(call, a[1], &cmp) ||
      !to_element(call, "value", a[2], code, value))
    return nullptr;
  if (b.gpu) {  // symmetric GPU memory: each poll is a copy (host/gpu_wait.cpp)
    const uint64_t at = reinterpret_cast<uint64_t>(b.data());
    bool hit = false;
    if (!blocking) return run_guarded_nogil(call, [&] { hit = gpu_test(at, code, cmp, value, call); }) ? PyBool_FromLong(hit) : nullptr;
    if (!run_nogil(call, [&] { gpu_wait_until(at, code, cmp, value, call); })) return nullptr;
    Py_RETURN_NONE;
  }
  bool hit = false;
  if (!run_guarded(call, [&] { hit = test(b.data(), code, cmp, value, call); })) return nullptr;
  if (!blocking) return PyBool_FromLong(hit);
  if (!hit && !run_nogil(call, [&] { wait_until(b.data(), code, cmp, value, call); })) return nullptr;
  Py_RETURN_NONE;
}

PyObject* py_wait_until(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return wait_or_test(true, args, nargs, kw);
}
PyObject* py_test(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return wait_or_test(false, args, nargs, kw);
}

// _wait_vector(call, mode, blocking, ivars, cmp, values, vector, status)
// values: an array of ivars' dtype (1 element, or len(ivars) when vector); status: None
// or an int32 array. Returns bool (all), index or None (any), list (some).
PyObject* py_wait_vector(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 8) return PyErr_SetString(PyExc_TypeError, "_wait_vector takes 8 arguments"), nullptr;
  const char* call = PyUnicode_AsUTF8(args[0]);
  if (!call || !ensure_init(call)) return nullptr;
  long mode = PyLong_AsLong(args[1]);
  if (mode < kWaitAll || mode > kWaitSome)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call, "internal: bad wait mode"), nullptr;
  bool blocking = PyObject_IsTrue(args[2]);
  bool vector = PyObject_IsTrue(args[6]);
  Buffer iv, vals, st;
  int cmp;
  if (!get_buffer(call, "ivars", args[3], false, &iv, /*allow_gpu=*/true) || !parse_cmp(call, args[4], &cmp) ||
      !get_buffer(call, "values", args[5], false, &vals))
    return nullptr;
  const int code = dtype_code(iv);
  if (!code || (code & 0x20) || PYSHMEM_DTYPE_SIZE(code) < 2)
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 "ivars is " + type_name(iv) + "; wait/test variables must be int16/32/64 or uint16/32/64"),
           nullptr;
  if (!iv.contiguous) return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call, "ivars must be contiguous (a step-1 slice of a symmetric array)"), nullptr;
  const int* status = nullptr;
  if (args[7] != Py_None) {
    if (!get_buffer(call, "status", args[7], false, &st)) return nullptr;
    if (st.nelems < iv.nelems)
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                   "status has " + std::to_string(st.nelems) + " entries but ivars has " + std::to_string(iv.nelems) +
                       "; pass one status entry per ivar (0 = include it, 1 = skip it)"),
             nullptr;
    if (st.kind != 'i' || st.itemsize != sizeof(int) || !st.contiguous)
      return raise(error_class(PYSHMEM_ERR_TYPE), call, "status must be a contiguous array of C ints; pass np.zeros(len(ivars), dtype=np.intc)"), nullptr;
    status = reinterpret_cast<const int*>(st.data());
  }
  if (vals.itemsize != iv.itemsize || !vals.contiguous || (!vector && vals.nelems < 1))
    return raise(error_class(PYSHMEM_ERR_TYPE), call, "values must be a contiguous array of the ivars' dtype; pass np.asarray(values, dtype=ivars.dtype)"), nullptr;
  if (vector && vals.nelems < iv.nelems)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 "values has " + std::to_string(vals.nelems) + " entries but ivars has " + std::to_string(iv.nelems) +
                     "; the vector forms take one value per ivar"),
           nullptr;
  std::vector<size_t> idx;
  size_t r = 0;
  auto body = [&](bool block) {
    idx.clear();
    if (iv.gpu)  // symmetric GPU variables: each poll copies them (host/gpu_wait.cpp)
      r = gpu_wait_vector(static_cast<WaitMode>(mode), block, reinterpret_cast<uint64_t>(iv.data()),
                          static_cast<size_t>(iv.nelems), status, code, cmp, vals.data(), vector, &idx, call);
    else
      r = wait_vector(static_cast<WaitMode>(mode), block, iv.data(), static_cast<size_t>(iv.nelems), status, code,
                      cmp, vals.data(), vector, &idx, call);
  };
  // The first poll: host variables keep the GIL (a load); GPU ones copy, which may wait
  // behind the stream, so they release it like every GPU copy.
  if (!(iv.gpu ? run_guarded_nogil(call, [&] { body(false); }) : run_guarded(call, [&] { body(false); })))
    return nullptr;
  bool done = mode == kWaitAll ? r == 1 : (mode == kWaitAny ? r != SIZE_MAX : r > 0);
  if (blocking && !done) {
    // An all-excluded status set finishes immediately in body(false) already.
    if (!run_nogil(call, [&] { body(true); })) return nullptr;
  }
  if (mode == kWaitAll) return PyBool_FromLong(r == 1);
  if (mode == kWaitAny) {
    if (r == SIZE_MAX) Py_RETURN_NONE;
    return PyLong_FromSize_t(r);
  }
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(idx.size()));
  if (!list) return nullptr;
  for (size_t k = 0; k < idx.size(); ++k) {
    PyObject* v = PyLong_FromSize_t(idx[k]);
    if (!v) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(k), v);
  }
  return list;
}

bool get_signal(const char* call, PyObject* obj, Buffer* b) {
  if (!reject_scalar(call, "signal", obj) || !get_buffer(call, "signal", obj, false, b, /*allow_gpu=*/true)) return false;
  if (b->nelems != 1 || b->itemsize != 8 || b->kind != 'u')
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 "signal must be a 1-element uint64 symmetric array (use pyshmem.new_signal())");
  return true;
}

PyObject* py_signal_fetch(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  const char* call = "pyshmem.signal_fetch";
  static const char* const names[] = {"signal"};
  PyObject* a[1];
  Buffer b;
  if (!parse_args("signal_fetch", args, nargs, kw, names, 1, 1, a) || !ensure_init(call) || !get_signal(call, a[0], &b))
    return nullptr;
  uint64_t v = 0;
  if (b.gpu ? !run_guarded_nogil(call, [&] { v = gpu_signal_fetch(reinterpret_cast<uint64_t>(b.data()), call); })
            : !run_guarded(call, [&] { v = signal_fetch(reinterpret_cast<uint64_t*>(b.data()), call); }))
    return nullptr;
  return PyLong_FromUnsignedLongLong(v);
}

PyObject* py_signal_wait_until(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  const char* call = "pyshmem.signal_wait_until";
  static const char* const names[] = {"signal", "cmp", "value"};
  PyObject* a[3];
  Buffer b;
  int cmp;
  uint64_t value = 0, v = 0;
  if (!parse_args("signal_wait_until", args, nargs, kw, names, 3, 3, a) || !ensure_init(call) ||
      !get_signal(call, a[0], &b) || !parse_cmp(call, a[1], &cmp) || !to_element(call, "value", a[2], PYSHMEM_UINT64, &value))
    return nullptr;
  if (b.gpu) {
    if (!run_nogil(call, [&] { v = gpu_signal_wait_until(reinterpret_cast<uint64_t>(b.data()), cmp, value, call); }))
      return nullptr;
    return PyLong_FromUnsignedLongLong(v);
  }
  uint64_t* sig = reinterpret_cast<uint64_t*>(b.data());
  bool hit = false;
  if (!run_guarded(call, [&] {
        v = signal_fetch(sig, call);
        hit = compare(&v, PYSHMEM_UINT64, cmp, &value);
      }))
    return nullptr;
  if (!hit && !run_nogil(call, [&] { v = signal_wait_until(sig, cmp, value, call); })) return nullptr;
  return PyLong_FromUnsignedLongLong(v);
}

PyObject* ordering(const char* call, void (*op)(), PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  static const char* const names[] = {"ctx"};
  PyObject* a[1];
  if (!parse_args(call + 8, args, nargs, kw, names, 1, 0, a) || !ensure_init(call) || !check_ctx(call, a[0], nullptr)) return nullptr;
  if (!run_guarded(call, op)) return nullptr;
  if (op == quiet) nbi_sources_release();  // every put_nbi is complete: its source may go
  Py_RETURN_NONE;
}
PyObject* py_fence(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return ordering("pyshmem.fence", fence, args, nargs, kw);
}
PyObject* py_quiet(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return ordering("pyshmem.quiet", quiet, args, nargs, kw);
}

PyObject* barrier(const char* call, void (*op)(const char*), PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  if ((nargs || kw) && !parse_args(call + 8, args, nargs, kw, nullptr, 0, 0, nullptr)) return nullptr;
  if (!ensure_init(call)) return nullptr;
  if (!run_nogil(call, [&] { op(call); })) return nullptr;
  if (op == barrier_all) nbi_sources_release();  // barrier_all includes quiet
  Py_RETURN_NONE;
}
PyObject* py_barrier_all(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return barrier("pyshmem.barrier_all", barrier_all, args, nargs, kw);
}
PyObject* py_sync_all(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  return barrier("pyshmem.sync_all", sync_all, args, nargs, kw);
}

bool get_lock(const char* call, PyObject* const* args, Py_ssize_t nargs, PyObject* kw, Buffer* b) {
  static const char* const names[] = {"lock"};
  PyObject* a[1];
  if (!parse_args(call + 8, args, nargs, kw, names, 1, 1, a) || !ensure_init(call) ||
      !reject_scalar(call, "lock", a[0]) || !get_buffer(call, "lock", a[0], true, b))
    return false;
  if (b->nelems != 1 || b->itemsize != 8 || b->kind == 'f' || b->kind == 'c')
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 "lock must be a 1-element int64 symmetric array (use pyshmem.new_lock())");
  return true;
}
PyObject* py_set_lock(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  Buffer b;
  if (!get_lock("pyshmem.set_lock", args, nargs, kw, &b)) return nullptr;
  auto* lock = reinterpret_cast<int64_t*>(b.data());
  bool got = false;
  if (!run_guarded("pyshmem.set_lock", [&] { got = test_lock(lock, "pyshmem.set_lock"); })) return nullptr;
  // test_lock only takes a free lock; set_lock queues for a ticket instead.
  if (!got && !run_nogil("pyshmem.set_lock", [&] { set_lock(lock, "pyshmem.set_lock"); })) return nullptr;
  Py_RETURN_NONE;
}
PyObject* py_test_lock(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  Buffer b;
  if (!get_lock("pyshmem.test_lock", args, nargs, kw, &b)) return nullptr;
  bool got = false;
  if (!run_guarded("pyshmem.test_lock", [&] { got = test_lock(reinterpret_cast<int64_t*>(b.data()), "pyshmem.test_lock"); })) return nullptr;
  return PyBool_FromLong(!got);  // OpenSHMEM/shmem4py: False means "acquired"
}
PyObject* py_clear_lock(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) {
  Buffer b;
  if (!get_lock("pyshmem.clear_lock", args, nargs, kw, &b)) return nullptr;
  if (!run_guarded("pyshmem.clear_lock", [&] { clear_lock(reinterpret_cast<int64_t*>(b.data()), "pyshmem.clear_lock"); })) return nullptr;
  nbi_sources_release();  // clear_lock includes quiet
  Py_RETURN_NONE;
}

#define FAST(name, flags, doc) {#name, reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(py_##name)), flags, doc}
constexpr int KW = METH_FASTCALL | METH_KEYWORDS;

}  // namespace

PyMethodDef kSyncMethods[] = {
    FAST(wait_until, KW, "wait_until(ivar, cmp, value)\n--\n\nBlock until the local symmetric ivar (1 element) compares "
                         "`cmp` to value. Acquire: data written before the update that satisfied it is visible."),
    FAST(test, KW, "test(ivar, cmp, value)\n--\n\nReturns True when ivar compares `cmp` to value (acquire when True)."),
    FAST(wait_vector, METH_FASTCALL, "internal: vector waits/tests used by pyshmem.sync"),
    FAST(signal_fetch, KW, "signal_fetch(signal)\n--\n\nReturns the local value of a signal (acquire)."),
    FAST(signal_wait_until, KW, "signal_wait_until(signal, cmp, value)\n--\n\n"
                                "Block until the local signal compares `cmp` to value; returns the signal's value (int)."),
    FAST(fence, KW, "fence(ctx=None)\n--\n\nOrder puts, AMOs and signals issued before it to each PE before those after it."),
    FAST(quiet, KW, "quiet(ctx=None)\n--\n\nComplete every put/AMO/signal issued so far: visible on their target PEs."),
    FAST(barrier_all, METH_FASTCALL | METH_KEYWORDS, "barrier_all()\n--\n\nquiet(), then wait until every PE has entered barrier_all()."),
    FAST(sync_all, METH_FASTCALL | METH_KEYWORDS, "sync_all()\n--\n\nWait until every PE has entered sync_all() (no quiet)."),
    FAST(set_lock, KW, "set_lock(lock)\n--\n\nAcquire a distributed lock (FIFO); blocks."),
    FAST(test_lock, KW, "test_lock(lock)\n--\n\nTry to acquire the lock once; returns False when acquired, True when held by another."),
    FAST(clear_lock, KW, "clear_lock(lock)\n--\n\nquiet(), then release the lock."),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace pyshmem
