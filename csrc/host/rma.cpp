// host/rma.cpp: put/get, contiguous and strided, routed through the PE's transport.
#include <cstring>

#include "core/hang.h"
#include "core/trace.h"
#include "host/check.h"
#include "order/order_check.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

// Bytes spanned by nelems elements at `stride` elements apart; throws on overflow
// (a wrapped extent would pass the symmetric-range check and write out of bounds).
size_t strided_extent(const char* call, size_t nelems, ptrdiff_t stride, size_t elem) {
  if (nelems == 0) return 0;
  size_t span, elems, bytes;
  if (__builtin_mul_overflow(nelems - 1, static_cast<size_t>(stride), &span) ||
      __builtin_add_overflow(span, size_t(1), &elems) || __builtin_mul_overflow(elems, elem, &bytes))
    fail(PYSHMEM_ERR_INVALID_ARG, call, "nelems x stride x element size overflows the address space");
  return bytes;
}

void check_strides(const char* call, ptrdiff_t tst, ptrdiff_t sst, size_t elem) {
  if (tst < 1 || sst < 1)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "strides must be >= 1 element (got tst=" + std::to_string(tst) + ", sst=" + std::to_string(sst) + ")");
  if (elem == 0) fail(PYSHMEM_ERR_INVALID_ARG, call, "element size must be > 0");
}

void copy_strided(char* dst, const char* src, ptrdiff_t tst, ptrdiff_t sst, size_t nelems, size_t elem) {
  const size_t tb = static_cast<size_t>(tst) * elem, sb = static_cast<size_t>(sst) * elem;
  switch (elem) {  // constant sizes let the compiler turn each memcpy into one move
    case 4:
      for (size_t i = 0; i < nelems; ++i) std::memcpy(dst + i * tb, src + i * sb, 4);
      return;
    case 8:
      for (size_t i = 0; i < nelems; ++i) std::memcpy(dst + i * tb, src + i * sb, 8);
      return;
    default:
      for (size_t i = 0; i < nelems; ++i) std::memcpy(dst + i * tb, src + i * sb, elem);
  }
}

}  // namespace

void putmem(void* dest, const void* src, size_t nbytes, int pe, const char* call) {
  State& s = rma_prologue(call, pe);
  require_symmetric(call, "target", dest, nbytes);
  hang_note_op(PYSHMEM_OP_PUT, pe, dest, nbytes);
  const TraceSpan span(kTraceRma, call, pe, nbytes);
  if (!nbytes) return;
  if (order_holds(s, pe)) return order_put(s, dest, src, nbytes, pe, /*nbi=*/false);
  s.route[pe]->put(s, dest, src, nbytes, pe);
}

void putmem_nbi(void* dest, const void* src, size_t nbytes, int pe, const char* call) {
  State& s = rma_prologue(call, pe);
  require_symmetric(call, "target", dest, nbytes);
  hang_note_op(PYSHMEM_OP_PUT, pe, dest, nbytes);
  const TraceSpan span(kTraceRma, call, pe, nbytes);
  if (!nbytes) return;
  if (order_holds(s, pe)) return order_put(s, dest, src, nbytes, pe, /*nbi=*/true);
  const Transport* t = s.route[pe];
  (t->put_nbi ? t->put_nbi : t->put)(s, dest, src, nbytes, pe);
}

bool putmem_nbi_deferred(int pe) {
  const State& s = state();
  return s.initialized && pe >= 0 && pe < s.npes && s.route[pe] && (s.route[pe]->put_nbi || order_holds(s, pe));
}

bool nbi_deferred(int pe) {
  const State& s = state();
  return s.initialized && pe >= 0 && pe < s.npes && order_holds(s, pe);
}

void getmem(void* dest, const void* src, size_t nbytes, int pe, const char* call) {
  State& s = rma_prologue(call, pe);
  require_symmetric(call, "source", src, nbytes);
  hang_note_op(PYSHMEM_OP_GET, pe, src, nbytes);
  const TraceSpan span(kTraceRma, call, pe, nbytes);
  if (!nbytes) return;
  if (order_holds(s, pe)) order_blocking(s, pe);
  s.route[pe]->get(s, dest, src, nbytes, pe);
}

void getmem_nbi(void* dest, const void* src, size_t nbytes, int pe, const char* call) {
  if (!order_holds(state(), pe)) return getmem(dest, src, nbytes, pe, call);  // complete at once: allowed
  State& s = rma_prologue(call, pe);
  require_symmetric(call, "source", src, nbytes);
  hang_note_op(PYSHMEM_OP_GET, pe, src, nbytes);
  const TraceSpan span(kTraceRma, call, pe, nbytes);
  if (nbytes) order_get_nbi(s, dest, src, nbytes, pe);
}

// Strided transfer in either direction; `remote` is the symmetric side.
static void strided(bool is_put, void* dest, const void* src, ptrdiff_t tst, ptrdiff_t sst, size_t nelems,
                    size_t elem, int pe, const char* call) {
  State& s = rma_prologue(call, pe);
  check_strides(call, tst, sst, elem);
  const void* remote = is_put ? dest : src;
  require_symmetric(call, is_put ? "target" : "source", remote, strided_extent(call, nelems, is_put ? tst : sst, elem));
  strided_extent(call, nelems, is_put ? sst : tst, elem);  // the local side must not overflow either
  if (!nelems) return;
  hang_note_op(is_put ? PYSHMEM_OP_PUT : PYSHMEM_OP_GET, pe, remote, nelems * elem);
  const TraceSpan span(kTraceRma, call, pe, nelems * elem);
  if (order_holds(s, pe)) {
    if (is_put) return order_iput(s, dest, src, tst * static_cast<ptrdiff_t>(elem), sst * static_cast<ptrdiff_t>(elem), nelems, elem, pe);
    order_blocking(s, pe);
  }
  const Transport* t = s.route[pe];
  if (t->caps & kCapLoadStore) {
    char* peer = static_cast<char*>(sym_ptr(remote, pe, call));
    copy_strided(is_put ? peer : static_cast<char*>(dest), is_put ? static_cast<const char*>(src) : peer, tst, sst,
                 nelems, elem);
    return;
  }
  for (size_t i = 0; i < nelems; ++i) {
    char* d = static_cast<char*>(dest) + i * tst * elem;
    const char* x = static_cast<const char*>(src) + i * sst * elem;
    is_put ? t->put(s, d, x, elem, pe) : t->get(s, d, x, elem, pe);
  }
}

void iputmem(void* dest, const void* src, ptrdiff_t tst, ptrdiff_t sst, size_t nelems, size_t elem, int pe,
             const char* call) {
  strided(true, dest, src, tst, sst, nelems, elem, pe, call);
}

void igetmem(void* dest, const void* src, ptrdiff_t tst, ptrdiff_t sst, size_t nelems, size_t elem, int pe,
             const char* call) {
  strided(false, dest, src, tst, sst, nelems, elem, pe, call);
}

}  // namespace pyshmem
