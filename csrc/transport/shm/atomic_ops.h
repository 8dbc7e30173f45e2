// transport/shm/atomic_ops.h: OpenSHMEM atomic operations on memory this process can
// address (its own heap or a mapped peer segment), dispatched on the element type.
//
// All operations are sequentially consistent: an AMO is also a full fence for the
// issuing PE, which is stronger than OpenSHMEM requires and keeps the shm and (later)
// device paths simple to reason about.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "pyshmem/types.h"

namespace pyshmem {

template <class T>
T load_value(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Integer AMOs. Bitwise ops on signed types are done on the same bits.
template <class T>
void amo_int(int op, T* addr, const void* value, const void* cond, void* fetch) {
  constexpr int o = __ATOMIC_SEQ_CST;
  T v = value ? load_value<T>(value) : T(0);
  T old;
  switch (op) {
    case PYSHMEM_AMO_FETCH: old = __atomic_load_n(addr, o); break;
    case PYSHMEM_AMO_SET: __atomic_store_n(addr, v, o); return;
    case PYSHMEM_AMO_SWAP: old = __atomic_exchange_n(addr, v, o); break;
    case PYSHMEM_AMO_COMPARE_SWAP: {
      old = load_value<T>(cond);
      __atomic_compare_exchange_n(addr, &old, v, false, o, o);  // on failure `old` = current value
      break;
    }
    case PYSHMEM_AMO_ADD: old = __atomic_fetch_add(addr, v, o); break;
    case PYSHMEM_AMO_INC: old = __atomic_fetch_add(addr, T(1), o); break;
    case PYSHMEM_AMO_AND: old = __atomic_fetch_and(addr, v, o); break;
    case PYSHMEM_AMO_OR: old = __atomic_fetch_or(addr, v, o); break;
    case PYSHMEM_AMO_XOR: old = __atomic_fetch_xor(addr, v, o); break;
    default: fail_inner(PYSHMEM_ERR_INTERNAL, "atomics", "unknown atomic operation " + std::to_string(op));
  }
  if (fetch) std::memcpy(fetch, &old, sizeof old);
}

// Floating-point AMOs: OpenSHMEM's extended set (fetch, set, swap) on the bits.
template <class F, class U>
void amo_float(int op, F* addr, const void* value, void* fetch) {
  static_assert(sizeof(F) == sizeof(U), "bit type must match");
  U* bits = reinterpret_cast<U*>(addr);
  constexpr int o = __ATOMIC_SEQ_CST;
  U v = value ? load_value<U>(value) : U(0);
  U old;
  switch (op) {
    case PYSHMEM_AMO_FETCH: old = __atomic_load_n(bits, o); break;
    case PYSHMEM_AMO_SET: __atomic_store_n(bits, v, o); return;
    case PYSHMEM_AMO_SWAP: old = __atomic_exchange_n(bits, v, o); break;
    default:
      fail_inner(PYSHMEM_ERR_TYPE, nullptr,
                 "floating-point atomics support only fetch, set and swap (OpenSHMEM extended AMOs); "
                 "use an integer array for add/inc/compare_swap/bitwise operations");
  }
  if (fetch) std::memcpy(fetch, &old, sizeof old);
}

// Executes op on `addr` (an address this process can dereference).
inline void amo_local(int op, int dtype, void* addr, const void* value, const void* cond, void* fetch) {
  switch (dtype) {
    case PYSHMEM_INT8: return amo_int(op, static_cast<int8_t*>(addr), value, cond, fetch);
    case PYSHMEM_INT16: return amo_int(op, static_cast<int16_t*>(addr), value, cond, fetch);
    case PYSHMEM_INT32: return amo_int(op, static_cast<int32_t*>(addr), value, cond, fetch);
    case PYSHMEM_INT64: return amo_int(op, static_cast<int64_t*>(addr), value, cond, fetch);
    case PYSHMEM_UINT8: return amo_int(op, static_cast<uint8_t*>(addr), value, cond, fetch);
    case PYSHMEM_UINT16: return amo_int(op, static_cast<uint16_t*>(addr), value, cond, fetch);
    case PYSHMEM_UINT32: return amo_int(op, static_cast<uint32_t*>(addr), value, cond, fetch);
    case PYSHMEM_UINT64: return amo_int(op, static_cast<uint64_t*>(addr), value, cond, fetch);
    case PYSHMEM_FLOAT32: return amo_float<float, uint32_t>(op, static_cast<float*>(addr), value, fetch);
    case PYSHMEM_FLOAT64: return amo_float<double, uint64_t>(op, static_cast<double*>(addr), value, fetch);
    default:
      fail_inner(PYSHMEM_ERR_TYPE, nullptr,
                 "atomics take int8..int64, uint8..uint64, float32 and float64 elements (type code " +
                     std::to_string(dtype) + ")");
  }
}

}  // namespace pyshmem
