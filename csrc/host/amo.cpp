// host/amo.cpp: atomic memory operations, routed through the PE's transport.
#include "core/hang.h"
#include "core/trace.h"
#include "host/check.h"
#include "order/order_check.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

bool is_float(int dtype) { return dtype == PYSHMEM_FLOAT32 || dtype == PYSHMEM_FLOAT64; }

bool known_dtype(int dtype) {
  switch (dtype) {
    case PYSHMEM_INT8: case PYSHMEM_INT16: case PYSHMEM_INT32: case PYSHMEM_INT64:
    case PYSHMEM_UINT8: case PYSHMEM_UINT16: case PYSHMEM_UINT32: case PYSHMEM_UINT64:
    case PYSHMEM_FLOAT32: case PYSHMEM_FLOAT64:
      return true;
    default:
      return false;
  }
}

}  // namespace

void atomic(int op, int dtype, void* dest, const void* value, const void* cond, void* fetch, int pe, const char* call,
            bool nbi) {
  State& s = rma_prologue(call, pe);
  if (!known_dtype(dtype)) fail(PYSHMEM_ERR_TYPE, call, "unsupported element type for atomics; use int8..int64, uint8..uint64, float32 or float64");
  if (op < PYSHMEM_AMO_FETCH || op > PYSHMEM_AMO_XOR)
    fail(PYSHMEM_ERR_INVALID_ARG, call, "unknown atomic operation " + std::to_string(op) + "; use a PYSHMEM_AMO_* code");
  if (is_float(dtype) && op != PYSHMEM_AMO_FETCH && op != PYSHMEM_AMO_SET && op != PYSHMEM_AMO_SWAP)
    fail(PYSHMEM_ERR_TYPE, call,
         "floating-point atomics support only fetch, set and swap (OpenSHMEM extended AMOs); "
         "use an integer array for add/inc/compare_swap/bitwise operations");
  size_t elem = PYSHMEM_DTYPE_SIZE(dtype);
  require_symmetric(call, "target", dest, elem);
  if (reinterpret_cast<uintptr_t>(dest) % elem)
    fail(PYSHMEM_ERR_INVALID_ARG, call, "atomic target is not aligned to its element size (a view at an odd byte offset?)");
  if (op == PYSHMEM_AMO_COMPARE_SWAP && !cond) fail(PYSHMEM_ERR_INVALID_ARG, call, "compare_swap needs a condition");
  hang_note_op(PYSHMEM_OP_AMO, pe, dest, elem);
  const TraceSpan span(kTraceAmo, call, pe, elem);
  const AmoArgs args{op, dtype, dest, value, cond, fetch, pe};
  if (order_holds(s, pe)) {
    if (!fetch || nbi) return order_amo(s, args);  // complete later: held
    order_blocking(s, pe, dest);
  }
  s.route[pe]->amo(s, args);
}

}  // namespace pyshmem
