// coll/reduce.cpp: all-reduce over a team for every integer, floating (long double too)
// and complex type.
//
// Two algorithms (PYSHMEM_REDUCE_ALGO, chosen by size under "auto"):
//  - direct: every member combines all members' sources itself, block by block, in team
//    order. Two barriers; each member reads n * size bytes. Best for small arrays.
//  - rsag (reduce-scatter + all-gather): member i combines only chunk i of every source
//    into chunk i of its dest, then after a barrier copies the other chunks out of their
//    owners' dests. Three barriers; each member reads about 2 * size bytes. For large arrays.
// Both combine in team order 0, 1, ..., n-1, so every member gets the same bits.
#include <complex>
#include <cstring>
#include <type_traits>

#include "coll/coll.h"
#include "coll/coll_common.h"
#include "core/error.h"
#include "pyshmem/reduce_op.h"
#include "team/team.h"

namespace pyshmem {
namespace {

using CombineFn = void (*)(void* acc, const void* in, size_t n);

template <class T, int Op>
void combine(void* acc, const void* in, size_t n) {
  T* a = static_cast<T*>(acc);
  const T* b = static_cast<const T*>(in);
  for (size_t i = 0; i < n; ++i) a[i] = detail::reduce_combine<T, Op>(a[i], b[i]);
}

template <class T>
CombineFn for_type(int op) {
  constexpr bool integral = std::is_integral_v<T>;
  constexpr bool ordered = integral || std::is_floating_point_v<T>;
  switch (op) {
    case PYSHMEM_OP_SUM: return combine<T, PYSHMEM_OP_SUM>;
    case PYSHMEM_OP_PROD: return combine<T, PYSHMEM_OP_PROD>;
    case PYSHMEM_OP_MAX: if constexpr (ordered) return combine<T, PYSHMEM_OP_MAX>; break;
    case PYSHMEM_OP_MIN: if constexpr (ordered) return combine<T, PYSHMEM_OP_MIN>; break;
    case PYSHMEM_OP_AND: if constexpr (integral) return combine<T, PYSHMEM_OP_AND>; break;
    case PYSHMEM_OP_OR: if constexpr (integral) return combine<T, PYSHMEM_OP_OR>; break;
    case PYSHMEM_OP_XOR: if constexpr (integral) return combine<T, PYSHMEM_OP_XOR>; break;
  }
  return nullptr;
}

CombineFn combiner(int dtype, int op) {
  switch (dtype) {
    case PYSHMEM_INT8: return for_type<int8_t>(op);
    case PYSHMEM_INT16: return for_type<int16_t>(op);
    case PYSHMEM_INT32: return for_type<int32_t>(op);
    case PYSHMEM_INT64: return for_type<int64_t>(op);
    case PYSHMEM_UINT8: return for_type<uint8_t>(op);
    case PYSHMEM_UINT16: return for_type<uint16_t>(op);
    case PYSHMEM_UINT32: return for_type<uint32_t>(op);
    case PYSHMEM_UINT64: return for_type<uint64_t>(op);
    case PYSHMEM_FLOAT32: return for_type<float>(op);
    case PYSHMEM_FLOAT64: return for_type<double>(op);
    case PYSHMEM_COMPLEX64: return for_type<std::complex<float>>(op);
    case PYSHMEM_COMPLEX128: return for_type<std::complex<double>>(op);
    case PYSHMEM_LONGDOUBLE:
      if constexpr (sizeof(long double) == 16) return for_type<long double>(op);
      break;
  }
  return nullptr;
}

constexpr size_t kBlockBytes = 32 * 1024;  // combine in cache-sized blocks

// acc[0, nbytes) = member 0's source[off, off+nbytes) op member 1's ... (team order).
void combine_range(CollCall& c, CombineFn f, size_t esz, char* acc, const char* source, size_t off, size_t nbytes) {
  for (size_t b = 0; b < nbytes; b += kBlockBytes) {
    const size_t len = nbytes - b < kBlockBytes ? nbytes - b : kBlockBytes;
    for (int j = 0; j < c.size(); ++j) {
      const char* in = c.direct(source + off + b, j);
      if (!in) {
        char* tmp = coll_scratch(len, 1);
        sym_read(c.s(), tmp, source + off + b, len, c.world(j));
        in = tmp;
      }
      if (j == 0) std::memcpy(acc + b, in, len);
      else f(acc + b, in, len / esz);
    }
  }
}

}  // namespace

bool reduce_supported(int dtype, int op) { return combiner(dtype, op) != nullptr; }

const char* reduce_op_name(int op) {
#define PYSHMEM_REDUCE_OP_NAME(NAME, name, kind) name,
  static const char* const names[] = {PYSHMEM_REDUCE_OPS(PYSHMEM_REDUCE_OP_NAME)};
#undef PYSHMEM_REDUCE_OP_NAME
  return op >= 0 && op < PYSHMEM_OP_COUNT ? names[op] : "?";
}

void reduce(int team, void* dest, const void* source, size_t nelems, int dtype, int op, const char* call) {
  CollCall c(team, call);
  const CombineFn f = combiner(dtype, op);
  // A rejected call still meets the others (CollCall::begin), so they fail too.
  std::string err;
  pyshmem_status status = PYSHMEM_ERR_INVALID_ARG;
  if (!f && (op < 0 || op >= PYSHMEM_OP_COUNT)) {
    err = "op " + std::to_string(op) + " is not a reduction operator; use a PYSHMEM_OP_* code (OP.AND/OR/XOR/MAX/MIN/SUM/PROD)";
  } else if (!f) {
    status = PYSHMEM_ERR_TYPE;
    err = std::string("the '") + reduce_op_name(op) + "' reduction is not defined for this element type (" +
          ((op <= PYSHMEM_OP_XOR) ? "and/or/xor take integer types" : "max/min take integer and floating types") + ")";
  }
  const size_t esz = f ? PYSHMEM_DTYPE_SIZE(dtype) : 0, nbytes = nelems * esz;
  if (err.empty()) err = check_symmetric("source", source, nbytes);
  if (err.empty()) err = check_symmetric("target", dest, nbytes);
  if (err.empty() && dest != source) err = check_disjoint(dest, nbytes, source, nbytes);
  const std::string& algo = c.s().config.REDUCE_ALGO;
  if (err.empty() && algo != "auto" && algo != "direct" && algo != "rsag")
    err = "PYSHMEM_REDUCE_ALGO='" + algo + "' must be auto, direct or rsag";
  const bool rsag = c.size() > 1 && (algo == "rsag" || (algo == "auto" && nbytes >= c.s().config.REDUCE_RSAG_MIN));
  CollHeader h;
  h.kind = kCollReduce;
  h.nbytes = nbytes;
  h.dtype = static_cast<uint32_t>(dtype);
  h.op = static_cast<uint32_t>(op) | (rsag ? 0x100u : 0u);  // every member must pick the same algorithm
  const char* src = static_cast<const char*>(source);
  char* out = static_cast<char*>(dest);
  if (!c.begin(h, err, true, status)) return c.finish();
  if (!rsag) {
    const bool in_place = dest == source;
    char* acc = in_place ? coll_scratch(nbytes) : out;
    combine_range(c, f, esz, acc, src, 0, nbytes);
    c.finish();  // nobody reads my source any more
    if (in_place) std::memcpy(out, acc, nbytes);
    return;
  }
  // Chunk i: elements [nelems*i/n, nelems*(i+1)/n).
  auto lo = [&](int i) { return nelems * size_t(i) / size_t(c.size()) * esz; };
  const size_t my_lo = lo(c.me()), my_len = lo(c.me() + 1) - my_lo;
  char* acc = coll_scratch(my_len);
  combine_range(c, f, esz, acc, src, my_lo, my_len);
  std::memcpy(out + my_lo, acc, my_len);  // others read chunk i of my source only for i != me
  team_sync(team, call);
  for (int k = 1; k < c.size(); ++k) {
    const int j = (c.me() + k) % c.size();
    sym_read(c.s(), out + lo(j), out + lo(j), lo(j + 1) - lo(j), c.world(j));
  }
  c.finish();
}

}  // namespace pyshmem
