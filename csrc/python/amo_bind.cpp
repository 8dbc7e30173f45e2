// python/amo_bind.cpp: the shmem4py atomic_* functions, driven by one table.
//
// Each row names a function, its operation, which operands it takes and whether it
// fetches; signatures follow shmem4py: atomic_<op>(target, [cond,] [value,] pe, ctx=None)
// and atomic_<op>_nbi(fetch, target, [cond,] [value,] pe, ctx=None). The target is a
// 1-element symmetric array (a[i:i+1] or a 0-d array); fetching calls return a Python
// int or float, like shmem4py.
#include <cstring>

#include "core/state.h"
#include "cuda/gpu_heap.h"
#include "host/host.h"
#include "python/args.h"
#include "python/errors.h"
#include "python/fast.h"
#include "python/gpu_hooks.h"
#include "python/nbi_sources.h"

namespace pyshmem {
namespace py {

PyObject* g_gpu_amo = nullptr;

bool gpu_atomic(const char* call, int op, int code, const Buffer& t, const unsigned char* value,
                const unsigned char* cond, bool fetching, int pe, unsigned char* old) {
  if (!g_gpu_amo)
    return raise(error_class(PYSHMEM_ERR_TYPE), call, "GPU arrays need pyshmem.cuda (import pyshmem.cuda)");
  // Refused here, before the atomic's kernel runs: a kernel whose request the transport
  // refuses traps, and that ends the process's CUDA context.
  const std::string problem = gpu_atomics_problem(pe);
  if (!problem.empty())
    return raise(error_class(PYSHMEM_ERR_NOT_IMPLEMENTED), call,
                 "an atomic on PE " + std::to_string(pe) + "'s GPU memory: " + problem);
  uint64_t v = 0, c = 0;
  std::memcpy(&v, value, 8);
  std::memcpy(&c, cond, 8);
  PyObject* r = PyObject_CallFunction(g_gpu_amo, "iiKKKiOs", op, code, static_cast<unsigned long long>(
                                          reinterpret_cast<uintptr_t>(t.data())),
                                      static_cast<unsigned long long>(v), static_cast<unsigned long long>(c), pe,
                                      fetching ? Py_True : Py_False, call);
  if (!r) return false;
  if (fetching) {
    const uint64_t bits = PyLong_AsUnsignedLongLong(r);
    std::memcpy(old, &bits, 8);
  }
  Py_DECREF(r);
  return !PyErr_Occurred();
}

namespace {


enum AmoClass { kStandard, kExtended, kBitwise };

struct AmoRow {
  const char* name;
  int op;
  AmoClass cls;
  bool has_cond, has_value, fetching, nbi;
  const char* doc;
};

#define ROW(name, op, cls, cond, value, fetching, nbi, doc) \
  {"atomic_" #name, PYSHMEM_AMO_##op, cls, cond, value, fetching, nbi, doc}
const AmoRow kAmoRows[] = {
    ROW(fetch, FETCH, kExtended, false, false, true, false, "atomic_fetch(source, pe, ctx=None)\n--\n\nReturns value of source on pe."),
    ROW(set, SET, kExtended, false, true, false, false, "atomic_set(target, value, pe, ctx=None)\n--\n\nStore value atomically."),
    ROW(swap, SWAP, kExtended, false, true, true, false, "atomic_swap(target, value, pe, ctx=None)\n--\n\nReturns previous value."),
    ROW(compare_swap, COMPARE_SWAP, kStandard, true, true, true, false,
        "atomic_compare_swap(target, cond, value, pe, ctx=None)\n--\n\nReturns previous value; stores value if it equaled cond."),
    ROW(fetch_inc, INC, kStandard, false, false, true, false, "atomic_fetch_inc(target, pe, ctx=None)\n--\n\nReturns previous value."),
    ROW(inc, INC, kStandard, false, false, false, false, "atomic_inc(target, pe, ctx=None)\n--\n\nAdd 1."),
    ROW(fetch_add, ADD, kStandard, false, true, true, false, "atomic_fetch_add(target, value, pe, ctx=None)\n--\n\nReturns previous value."),
    ROW(add, ADD, kStandard, false, true, false, false, "atomic_add(target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_and, AND, kBitwise, false, true, true, false, "atomic_fetch_and(target, value, pe, ctx=None)\n--\n\nReturns previous value."),
    ROW(and, AND, kBitwise, false, true, false, false, "atomic_and(target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_or, OR, kBitwise, false, true, true, false, "atomic_fetch_or(target, value, pe, ctx=None)\n--\n\nReturns previous value."),
    ROW(or, OR, kBitwise, false, true, false, false, "atomic_or(target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_xor, XOR, kBitwise, false, true, true, false, "atomic_fetch_xor(target, value, pe, ctx=None)\n--\n\nReturns previous value."),
    ROW(xor, XOR, kBitwise, false, true, false, false, "atomic_xor(target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_nbi, FETCH, kExtended, false, false, true, true,
        "atomic_fetch_nbi(fetch, source, pe, ctx=None)\n--\n\nFetch[0] = source on pe, complete after quiet()."),
    ROW(swap_nbi, SWAP, kExtended, false, true, true, true, "atomic_swap_nbi(fetch, target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(compare_swap_nbi, COMPARE_SWAP, kStandard, true, true, true, true,
        "atomic_compare_swap_nbi(fetch, target, cond, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_inc_nbi, INC, kStandard, false, false, true, true, "atomic_fetch_inc_nbi(fetch, target, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_add_nbi, ADD, kStandard, false, true, true, true, "atomic_fetch_add_nbi(fetch, target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_and_nbi, AND, kBitwise, false, true, true, true, "atomic_fetch_and_nbi(fetch, target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_or_nbi, OR, kBitwise, false, true, true, true, "atomic_fetch_or_nbi(fetch, target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
    ROW(fetch_xor_nbi, XOR, kBitwise, false, true, true, true, "atomic_fetch_xor_nbi(fetch, target, value, pe, ctx=None)\n--\n\nSee the OpenSHMEM atomic of the same name; the target is a 1-element symmetric array."),
};
#undef ROW
constexpr int kNumRows = sizeof(kAmoRows) / sizeof(kAmoRows[0]);

bool type_allowed(const AmoRow& r, int code) {
  const size_t size = PYSHMEM_DTYPE_SIZE(code);
  const bool is_int = code && !(code & 0x20);
  if (is_int) return size == 4 || size == 8;
  return r.cls == kExtended && (code == PYSHMEM_FLOAT32 || code == PYSHMEM_FLOAT64);
}

const char* allowed_types(const AmoRow& r) {
  return r.cls == kExtended ? "int32, int64, uint32, uint64, float32 or float64"
                            : "int32, int64, uint32 or uint64";
}

PyObject* amo(const AmoRow& r, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  std::string call = std::string("pyshmem.") + r.name;
  const char* names[6];
  int n = 0;
  if (r.nbi) names[n++] = "fetch";
  names[n++] = r.op == PYSHMEM_AMO_FETCH ? "source" : "target";
  if (r.has_cond) names[n++] = "cond";
  if (r.has_value) names[n++] = "value";
  names[n++] = "pe";
  names[n++] = "ctx";
  PyObject* a[6];
  if (!parse_args(r.name, args, nargs, kwnames, names, n, n - 1, a)) return nullptr;
  if (!ensure_init(call.c_str())) return nullptr;
  int i = 0;
  PyObject* fetch_obj = r.nbi ? a[i++] : nullptr;
  PyObject* target_obj = a[i++];
  PyObject* cond_obj = r.has_cond ? a[i++] : nullptr;
  PyObject* value_obj = r.has_value ? a[i++] : nullptr;
  PyObject* pe_obj = a[i++];
  PyObject* ctx = a[i++];
  const char* c = call.c_str();
  Buffer t, f;
  int pe;
  if (!reject_scalar(c, names[r.nbi ? 1 : 0], target_obj) ||
      !get_buffer(c, names[r.nbi ? 1 : 0], target_obj, r.op != PYSHMEM_AMO_FETCH, &t, /*allow_gpu=*/true) ||
      !parse_pe(c, pe_obj, &pe) ||
      !check_ctx(c, ctx, &pe))
    return nullptr;
  if (t.nelems != 1)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), c,
                 std::string(names[r.nbi ? 1 : 0]) + " must be a 1-element symmetric array (e.g. a[i:i+1] or a 0-d array), got " +
                     std::to_string(t.nelems) + " elements"),
           nullptr;
  const int code = dtype_code(t);
  if (!type_allowed(r, code))
    return raise(error_class(PYSHMEM_ERR_TYPE), c,
                 std::string("atomics on ") + type_name(t) + " are not supported; use " + allowed_types(r)),
           nullptr;
  if (r.nbi) {
    if (!get_buffer(c, "fetch", fetch_obj, true, &f) || !same_type(c, f, "fetch", t, "target")) return nullptr;
    if (f.nelems != 1)
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), c, "fetch must be a 1-element array"), nullptr;
  }
  alignas(8) unsigned char value[8] = {}, cond[8] = {}, old[8] = {};
  if ((r.has_value && !to_element(c, "value", value_obj, code, value)) ||
      (r.has_cond && !to_element(c, "cond", cond_obj, code, cond)))
    return nullptr;
  void* fetch_ptr = r.fetching ? (r.nbi ? static_cast<void*>(f.data()) : static_cast<void*>(old)) : nullptr;
  if (t.gpu) {  // done (and fetched) on return; an nbi form's fetch is a host array written now
    if (!run_guarded(c, [&] { require_pe(c, pe); })) return nullptr;
    if (!gpu_atomic(c, r.op, code, t, value, cond, r.fetching, pe, old)) return nullptr;
    if (r.fetching && r.nbi) std::memcpy(fetch_ptr, old, PYSHMEM_DTYPE_SIZE(code));
    if (r.fetching && !r.nbi) return from_element(code, old);
    Py_RETURN_NONE;
  }
  // A fetching nbi form held by the ordering check writes `fetch` later: keep it alive.
  if (r.nbi && r.fetching && nbi_deferred(pe) && !nbi_source_hold(c, fetch_obj)) return nullptr;
  bool ok = run_guarded(c, [&] {
    atomic(r.op, code, t.data(), r.has_value ? value : nullptr, r.has_cond ? cond : nullptr, fetch_ptr, pe, c, r.nbi);
  });
  if (!ok) return nullptr;
  if (r.fetching && !r.nbi) return from_element(code, old);
  Py_RETURN_NONE;
}

template <int I>
PyObject* amo_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return amo(kAmoRows[I], args, nargs, kwnames);
}

template <int... Is>
struct MethodTable {
  static PyMethodDef build(int i) {
    using Fn = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);
    static const Fn fns[] = {amo_entry<Is>...};
    return PyMethodDef{kAmoRows[i].name, reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(fns[i])),
                       METH_FASTCALL | METH_KEYWORDS, kAmoRows[i].doc};
  }
};

template <int... Is>
void fill(PyMethodDef* out, std::integer_sequence<int, Is...>) {
  for (int i = 0; i < kNumRows; ++i) out[i] = MethodTable<Is...>::build(i);
  out[kNumRows] = PyMethodDef{nullptr, nullptr, 0, nullptr};
}

struct Init {
  Init(PyMethodDef* out) { fill(out, std::make_integer_sequence<int, kNumRows>{}); }
};

}  // namespace

PyMethodDef kAmoMethods[kNumRows + 1];
static Init g_init_amo_methods(kAmoMethods);

}  // namespace py
}  // namespace pyshmem
