// python/rma_bind.cpp: put/get/iput/iget(+_nbi) and put_signal(+_nbi) from NumPy arrays.
//
// Argument order and keywords follow shmem4py: (target, source, pe, size=None, ctx=None)
// and iput/iget(target, source, pe, tst=1, sst=1, size=None, ctx=None). `size` counts
// elements. Contiguous arrays (C or Fortran order) are copied as their flat memory;
// 1-D strided views (a[::2]) are accepted on either side and moved element-wise.
#include <algorithm>
#include <cstring>

#include "cuda/gpu_heap.h"
#include "host/host.h"
#include "python/args.h"
#include "python/errors.h"
#include "python/fast.h"
#include "python/gpu_hooks.h"
#include "python/nbi_sources.h"

namespace pyshmem {
namespace py {


namespace {

enum RmaKind { kPut, kGet };


// Element stride of a buffer in elements (1 when contiguous), 0 when not usable.
Py_ssize_t elem_stride(const Buffer& b) {
  if (b.contiguous) return 1;
  if (b.strided_1d()) return b.stride / b.itemsize;
  return 0;
}

// Host copies below kReleaseGilBytes keep the GIL (a memcpy is shorter than releasing
// it); GPU copies always release it (gpu_*: they may wait for a stream, and a stream's
// host callback may need the GIL).
template <class F>
bool run_maybe_nogil(const char* call, Py_ssize_t bytes, F&& f) {
  return bytes < kReleaseGilBytes ? run_guarded(call, f) : run_guarded_nogil(call, f);
}

// put_signal(_nbi) with a GPU array as target, source or signal: the data with a GPU
// copy (or a host put), a fence (the data before the signal, also toward PEs behind a
// transport), then the signal: an atomic on the GPU (python/gpu_hooks.h) or the host.
// Complete on return, also for the nbi form.
PyObject* gpu_put_signal(const char* call, const Buffer& t, const Buffer& s, const Buffer& sig, size_t nbytes, bool flat,
                         uint64_t sigval, int sigop, int pe) {
  if (!flat)
    return raise(error_class(PYSHMEM_ERR_NOT_IMPLEMENTED), call,
                 "strided put_signal with GPU arrays is not built yet; pass contiguous arrays"),
           nullptr;
  if (!t.gpu && s.gpu)
    return raise(error_class(PYSHMEM_ERR_TYPE), call,
                 "source is a GPU array but target is host memory; put into a symmetric GPU array "
                 "(pyshmem.cuda.zeros) or copy the source to the host first"),
           nullptr;
  char* td = t.data();
  char* sd = s.data();
  uint64_t* sp = reinterpret_cast<uint64_t*>(sig.data());
  const int amo_op = sigop == PYSHMEM_SIGNAL_ADD ? PYSHMEM_AMO_ADD : PYSHMEM_AMO_SET;
  if (!run_guarded_nogil(call, [&] {
        if (t.gpu) gpu_put(reinterpret_cast<uint64_t>(td), reinterpret_cast<uint64_t>(sd), nbytes, pe, 0, call);
        else putmem(td, sd, nbytes, pe, call);
        fence();
        if (!sig.gpu) atomic(amo_op, PYSHMEM_UINT64, sp, &sigval, nullptr, nullptr, pe, call);
      }))
    return nullptr;
  if (sig.gpu) {
    unsigned char v[8], c[8] = {}, old[8];
    std::memcpy(v, &sigval, 8);
    if (!gpu_atomic(call, amo_op, PYSHMEM_UINT64, sig, v, c, false, pe, old)) return nullptr;
  }
  Py_RETURN_NONE;
}

// With a GPU array on either side, the symmetric side (target of a put, source of a
// get) must be the GPU array; the local side may be host or GPU memory.
bool gpu_sides_ok(const char* call, RmaKind kind, const Buffer& t, const Buffer& s) {
  const Buffer& sym = kind == kPut ? t : s;
  const Buffer& local = kind == kPut ? s : t;
  if (sym.gpu || !local.gpu) return true;
  return raise(error_class(PYSHMEM_ERR_TYPE), call,
               std::string(kind == kPut ? "source" : "target") + " is a GPU array but the symmetric " +
                   (kind == kPut ? "target" : "source") + " is host memory; use a symmetric GPU array "
                   "(pyshmem.cuda.zeros) or host arrays on both sides");
}

// put/get/put_nbi/get_nbi with a GPU array: one copy (cuda/gpu_heap.h gpu_put/gpu_get:
// a CUDA copy to a same-node PE, the transport to others). Without a stream it is
// complete on return (the nbi forms too); with one it is enqueued there.
PyObject* gpu_contiguous(const char* call, RmaKind kind, const Buffer& t, const Buffer& s, size_t nbytes, int pe,
                         uint64_t stream) {
  if (!gpu_sides_ok(call, kind, t, s)) return nullptr;
  const uint64_t td = reinterpret_cast<uint64_t>(t.data()), sd = reinterpret_cast<uint64_t>(s.data());
  if (!run_guarded_nogil(call, [&] {
        if (kind == kPut) gpu_put(td, sd, nbytes, pe, stream, call);
        else gpu_get(td, sd, nbytes, pe, stream, call);
      }))
    return nullptr;
  Py_RETURN_NONE;
}

// iput/iget with a GPU array: the symmetric side must be the GPU array (the local side
// may be host or GPU memory); one copy per element (a GPU copy, or UCX for other nodes).
PyObject* gpu_strided(const char* call, RmaKind kind, const Buffer& t, const Buffer& s, ptrdiff_t dst, ptrdiff_t sst,
                      size_t nelems, size_t elem, int pe) {
  if (!gpu_sides_ok(call, kind, t, s)) return nullptr;
  char* td = t.data();
  char* sd = s.data();
  const size_t dstep = static_cast<size_t>(dst) * elem, sstep = static_cast<size_t>(sst) * elem;
  if (!run_guarded_nogil(call, [&] {
        for (size_t i = 0; i < nelems; ++i) {
          const uint64_t to = reinterpret_cast<uint64_t>(td + i * dstep), from = reinterpret_cast<uint64_t>(sd + i * sstep);
          if (kind == kPut) gpu_put(to, from, elem, pe, 0, call);
          else gpu_get(to, from, elem, pe, 0, call);
        }
      }))
    return nullptr;
  Py_RETURN_NONE;
}

// Shared by every RMA entry point. `strided`: the call takes tst/sst; `nbi`: put_nbi.
PyObject* rma(const char* call, RmaKind kind, bool strided, bool with_signal, bool nbi, PyObject* const* args,
              Py_ssize_t nargs, PyObject* kwnames) {
  static const char* const plain[] = {"target", "source", "pe", "size", "ctx", "stream"};
  static const char* const istr[] = {"target", "source", "pe", "tst", "sst", "size", "ctx"};
  static const char* const sig[] = {"target", "source", "pe", "signal", "value", "sigop", "size", "ctx"};
  PyObject* a[8];
  const char* const* names = with_signal ? sig : (strided ? istr : plain);
  const bool plain_call = !with_signal && !strided;
  const int n = with_signal ? 8 : (strided ? 7 : 6);
  const int nreq = with_signal ? 6 : 3;
  if (!parse_args(call + 8, args, nargs, kwnames, names, n, nreq, a)) return nullptr;
  if (!ensure_init(call)) return nullptr;
  PyObject* size_obj = a[plain_call ? 3 : n - 2];
  PyObject* ctx = a[plain_call ? 4 : n - 1];
  Buffer t, s;
  int pe;
  Py_ssize_t size;
  // Every form takes GPU arrays (the cuda backend's heap): the same checks, then the
  // GPU route below.
  if (!get_buffer(call, "target", a[0], true, &t, true) || !get_buffer(call, "source", a[1], false, &s, true) ||
      !parse_pe(call, a[2], &pe) || !parse_size(call, size_obj, &size) || !check_ctx(call, ctx, &pe) ||
      !same_type(call, t, "target", s, "source"))
    return nullptr;
  uint64_t stream = 0;
  if (plain_call && a[5] && a[5] != Py_None) {
    if (!t.gpu && !s.gpu)
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                   "stream= orders copies of GPU arrays on a CUDA stream; these are host (NumPy) arrays"),
             nullptr;
    if (!parse_stream(call, a[5], &stream)) return nullptr;
  }
  long long tst = 1, sst = 1;
  if (strided) {
    if ((a[3] && !parse_int(call, "tst", a[3], &tst)) || (a[4] && !parse_int(call, "sst", a[4], &sst))) return nullptr;
    if (tst < 1 || sst < 1)
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                   "tst and sst must be >= 1 (got tst=" + std::to_string(tst) + ", sst=" + std::to_string(sst) + ")"),
             nullptr;
  }
  const Py_ssize_t tmax = strided_count(t.nelems, tst), smax = strided_count(s.nelems, sst);
  if (size < 0) size = std::min(tmax, smax);
  if (size > tmax || size > smax)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 "size=" + std::to_string(size) + " elements exceeds the " +
                     (size > tmax ? "target (" + std::to_string(tmax) : "source (" + std::to_string(smax)) +
                     " elements" + (strided ? " at this stride" : "") +
                     "); pass a smaller size=, or leave it out to move as many as both hold"),
           nullptr;
  const Py_ssize_t ts = elem_stride(t), ss = elem_stride(s);
  if (!ts || !ss)
    return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                 std::string(!ts ? "target" : "source") +
                     " is not contiguous (nor a 1-D strided view); pass np.ascontiguousarray(x) or use iput/iget"),
           nullptr;
  // size <= strided_count(n, stride) bounds ts*tst by the array's extent, except for
  // one element, which visits no stride: a huge tst/sst then just moves that element.
  const long long tstep = size <= 1 ? 1 : ts * tst, sstep = size <= 1 ? 1 : ss * sst;

  uint64_t sigval = 0;
  int sigop = 0;
  Buffer sigbuf;
  if (with_signal) {
    long long op;
    if (!reject_scalar(call, "signal", a[3]) || !get_buffer(call, "signal", a[3], true, &sigbuf, true) ||
        !to_element(call, "value", a[4], PYSHMEM_UINT64, &sigval) || !parse_int(call, "sigop", a[5], &op))
      return nullptr;
    // Validate everything before moving any data: a rejected call must not write.
    if (op != PYSHMEM_SIGNAL_SET && op != PYSHMEM_SIGNAL_ADD)
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                   "sigop must be SIGNAL_SET or SIGNAL_ADD (got " + std::to_string(op) + ")"),
             nullptr;
    if (reinterpret_cast<uintptr_t>(sigbuf.data()) % sizeof(uint64_t))
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call, "signal is not aligned to 8 bytes"), nullptr;
    if (sigbuf.gpu ? !gpu_is_symmetric(reinterpret_cast<uint64_t>(sigbuf.data()), sizeof(uint64_t))
                   : !is_symmetric(sigbuf.data(), sizeof(uint64_t)))
      return raise(error_class(PYSHMEM_ERR_NOT_SYMMETRIC), call,
                   "signal is not symmetric memory: allocate it with pyshmem.new_signal() (or pyshmem.array/empty/zeros/"
                   "new_array; a plain NumPy array exists only on this PE)"),
             nullptr;
    if (sigbuf.nelems != 1 || sigbuf.itemsize != 8 || sigbuf.kind != 'u')
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                   "signal must be a 1-element uint64 symmetric array (use pyshmem.new_signal())"),
             nullptr;
    sigop = static_cast<int>(op);
  }

  const size_t elem = static_cast<size_t>(t.itemsize);
  const size_t nbytes = static_cast<size_t>(size) * elem;
  const bool flat = tstep == 1 && sstep == 1;
  char* td = t.data();
  char* sd = s.data();
  if (with_signal && (t.gpu || s.gpu || sigbuf.gpu)) return gpu_put_signal(call, t, s, sigbuf, nbytes, flat, sigval, sigop, pe);
  if (plain_call && (t.gpu || s.gpu)) {
    if (!flat)
      return raise(error_class(PYSHMEM_ERR_INVALID_ARG), call,
                   std::string(tstep != 1 ? "target" : "source") +
                       " is not contiguous; copies of GPU arrays take contiguous arrays (iput/iget take strides)"),
             nullptr;
    return gpu_contiguous(call, kind, t, s, nbytes, pe, stream);
  }
  if (strided && (t.gpu || s.gpu))
    return gpu_strided(call, kind, t, s, tstep, sstep, static_cast<size_t>(size), elem, pe);
  if (nbi && kind == kPut && flat && !with_signal && nbytes && putmem_nbi_deferred(pe)) {
    // Truly non-blocking (UCX): the source is read after this call returns, so it is
    // held until a quiet; past a bound the puts are completed now (OpenSHMEM allows it).
    if (!nbi_source_hold(call, a[1])) return nullptr;
    // Large puts may still copy in the call (UCX's cma protocol is synchronous): let
    // other Python threads run meanwhile.
    if (!run_maybe_nogil(call, static_cast<Py_ssize_t>(nbytes), [&] { putmem_nbi(td, sd, nbytes, pe, call); })) return nullptr;
    Py_RETURN_NONE;
  }
  if (nbi && kind == kGet && flat && nbytes && nbi_deferred(pe)) {
    // Held by the ordering check: the target is written after this call returns.
    if (!nbi_source_hold(call, a[0])) return nullptr;
    if (!run_guarded(call, [&] { getmem_nbi(td, sd, nbytes, pe, call); })) return nullptr;
    Py_RETURN_NONE;
  }
  bool ok = run_maybe_nogil(call, static_cast<Py_ssize_t>(nbytes), [&] {
    if (with_signal && flat) {
      putmem_signal(td, sd, nbytes, reinterpret_cast<uint64_t*>(sigbuf.data()), sigval, sigop, pe, call);
    } else if (with_signal) {
      iputmem(td, sd, tstep, sstep, static_cast<size_t>(size), elem, pe, call);
      putmem_signal(td, sd, 0, reinterpret_cast<uint64_t*>(sigbuf.data()), sigval, sigop, pe, call);
    } else if (flat) {
      // put_nbi through load/store is a copy: complete on return, like put.
      kind == kPut ? putmem(td, sd, nbytes, pe, call) : getmem(td, sd, nbytes, pe, call);
    } else if (kind == kPut) {
      iputmem(td, sd, tstep, sstep, static_cast<size_t>(size), elem, pe, call);
    } else {
      igetmem(td, sd, tstep, sstep, static_cast<size_t>(size), elem, pe, call);
    }
  });
  if (!ok) return nullptr;
  Py_RETURN_NONE;
}

#define RMA_FN(fname, kind, strided, sig, nbi)                                                      \
  PyObject* py_##fname(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {    \
    return rma("pyshmem." #fname, kind, strided, sig, nbi, args, nargs, kwnames);                   \
  }
RMA_FN(put, kPut, false, false, false)
RMA_FN(get, kGet, false, false, false)
RMA_FN(put_nbi, kPut, false, false, true)
RMA_FN(get_nbi, kGet, false, false, true)
RMA_FN(iput, kPut, true, false, false)
RMA_FN(iget, kGet, true, false, false)
RMA_FN(put_signal, kPut, false, true, false)
RMA_FN(put_signal_nbi, kPut, false, true, true)
#undef RMA_FN

#define DEF(fname, doc) \
  {#fname, reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(py_##fname)), METH_FASTCALL | METH_KEYWORDS, doc}

}  // namespace

PyMethodDef kRmaMethods[] = {
    DEF(put, "put(target, source, pe, size=None, ctx=None, stream=None)\n--\n\n"
             "Copy `size` elements (default: as many as both hold) of local `source` into symmetric `target` on PE `pe`.\n\n"
             "Returns when `source` may be reused; the data is visible on `pe` after quiet() (or a barrier).\n"
             "GPU arrays (cuda backend): `target` a pyshmem.cuda array; with stream= the copy is stream-ordered.\n"
             "Raises ValueError (PE out of range, target not symmetric, size too large, read-only target),\n"
             "TypeError (dtype mismatch)."),
    DEF(get, "get(target, source, pe, size=None, ctx=None, stream=None)\n--\n\n"
             "Copy `size` elements of symmetric `source` on PE `pe` into local `target`. Complete on return."),
    DEF(put_nbi, "put_nbi(target, source, pe, size=None, ctx=None, stream=None)\n--\n\n"
                 "Non-blocking put: `source` may be reused and the data is visible after quiet()."),
    DEF(get_nbi, "get_nbi(target, source, pe, size=None, ctx=None, stream=None)\n--\n\n"
                 "Non-blocking get: `target` holds the data after quiet()."),
    DEF(iput, "iput(target, source, pe, tst=1, sst=1, size=None, ctx=None)\n--\n\n"
              "Strided put: element i of `source` at stride `sst` goes to element i of `target` at stride `tst` on `pe`."),
    DEF(iget, "iget(target, source, pe, tst=1, sst=1, size=None, ctx=None)\n--\n\n"
              "Strided get: element i of symmetric `source` (stride `sst`) on `pe` goes to local `target` (stride `tst`)."),
    DEF(put_signal, "put_signal(target, source, pe, signal, value, sigop, size=None, ctx=None)\n--\n\n"
                    "Put, then update `signal` on `pe` with `value` (sigop SIGNAL_SET or SIGNAL_ADD).\n"
                    "The data is visible on `pe` before the signal update."),
    DEF(put_signal_nbi, "put_signal_nbi(target, source, pe, signal, value, sigop, size=None, ctx=None)\n--\n\n"
                        "Non-blocking put_signal: complete after quiet(); the data is still visible before the signal."),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace pyshmem
