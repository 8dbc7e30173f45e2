// pyshmem/device/amo.cuh: atomic memory operations on a PE's copy of a symmetric
// object, NVSHMEM order: atomic_fetch_add(dest, value, pe), atomic_compare_swap(dest,
// cond, value, pe), ... To load/store-reachable peers all are sequentially consistent at
// system scope (libcu++ cuda::atomic_ref), so they are also ordered with this thread's
// other operations. To other peers they are proxy requests: fetching forms return the
// fetched value; non-fetching forms are ordered by fence() and completed by quiet().
// Types: 4- and 8-byte integers; fetch/set/swap also on float and double.
#pragma once

#include "pyshmem/device/common.cuh"
#include "pyshmem/device/proxy.cuh"

namespace pyshmem {
inline namespace device_api {
namespace detail {

// The target word for a direct atomic, or nullptr when the call goes through the proxy.
// Every atomic and signal update starts here, so this is where it is recorded.
template <class T>
PYSHMEM_HD T* direct_atomic(const char* call, const T* dest, int pe, int kind = PYSHMEM_OP_AMO) {
  note_op(kind, pe, dest, sizeof(T));
  return static_cast<T*>(direct_ptr(call, dest, pe));
}

constexpr auto kSeqCst = cuda::std::memory_order_seq_cst;

}  // namespace detail

template <class T>
PYSHMEM_HD T atomic_fetch(const T* source, int pe) {
  if (T* a = detail::direct_atomic("atomic_fetch", source, pe)) {
    return detail::sys_atomic<T>(*a).load(detail::kSeqCst);
  }
  return detail::proxy_amo<T>("atomic_fetch", PYSHMEM_AMO_FETCH, const_cast<T*>(source), T(), T(), pe, true);
}
template <class T>
PYSHMEM_HD void atomic_set(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_set", dest, pe)) {
    detail::sys_atomic<T>(*a).store(value, detail::kSeqCst);
    return;
  }
  detail::proxy_amo<T>("atomic_set", PYSHMEM_AMO_SET, dest, value, T(), pe, false);
}
template <class T>
PYSHMEM_HD T atomic_swap(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_swap", dest, pe)) {
    return detail::sys_atomic<T>(*a).exchange(value, detail::kSeqCst);
  }
  return detail::proxy_amo<T>("atomic_swap", PYSHMEM_AMO_SWAP, dest, value, T(), pe, true);
}
// Stores `value` if the target equals `cond`; returns the target's previous value.
template <class T>
PYSHMEM_HD T atomic_compare_swap(T* dest, T cond, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_compare_swap", dest, pe)) {
    detail::sys_atomic<T>(*a).compare_exchange_strong(cond, value, detail::kSeqCst);
    return cond;  // on failure compare_exchange wrote the current value into cond
  }
  return detail::proxy_amo<T>("atomic_compare_swap", PYSHMEM_AMO_COMPARE_SWAP, dest, value, cond, pe, true);
}
template <class T>
PYSHMEM_HD T atomic_fetch_add(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_fetch_add", dest, pe)) {
    return detail::sys_atomic<T>(*a).fetch_add(value, detail::kSeqCst);
  }
  return detail::proxy_amo<T>("atomic_fetch_add", PYSHMEM_AMO_ADD, dest, value, T(), pe, true);
}
template <class T>
PYSHMEM_HD void atomic_add(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_add", dest, pe)) {
    detail::sys_atomic<T>(*a).fetch_add(value, detail::kSeqCst);
    return;
  }
  detail::proxy_amo<T>("atomic_add", PYSHMEM_AMO_ADD, dest, value, T(), pe, false);
}
template <class T>
PYSHMEM_HD T atomic_fetch_inc(T* dest, int pe) {
  if (T* a = detail::direct_atomic("atomic_fetch_inc", dest, pe)) {
    return detail::sys_atomic<T>(*a).fetch_add(T(1), detail::kSeqCst);
  }
  return detail::proxy_amo<T>("atomic_fetch_inc", PYSHMEM_AMO_INC, dest, T(), T(), pe, true);
}
template <class T>
PYSHMEM_HD void atomic_inc(T* dest, int pe) {
  if (T* a = detail::direct_atomic("atomic_inc", dest, pe)) {
    detail::sys_atomic<T>(*a).fetch_add(T(1), detail::kSeqCst);
    return;
  }
  detail::proxy_amo<T>("atomic_inc", PYSHMEM_AMO_INC, dest, T(), T(), pe, false);
}
template <class T>
PYSHMEM_HD T atomic_fetch_and(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_fetch_and", dest, pe)) {
    return detail::sys_atomic<T>(*a).fetch_and(value, detail::kSeqCst);
  }
  return detail::proxy_amo<T>("atomic_fetch_and", PYSHMEM_AMO_AND, dest, value, T(), pe, true);
}
template <class T>
PYSHMEM_HD void atomic_and(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_and", dest, pe)) {
    detail::sys_atomic<T>(*a).fetch_and(value, detail::kSeqCst);
    return;
  }
  detail::proxy_amo<T>("atomic_and", PYSHMEM_AMO_AND, dest, value, T(), pe, false);
}
template <class T>
PYSHMEM_HD T atomic_fetch_or(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_fetch_or", dest, pe)) {
    return detail::sys_atomic<T>(*a).fetch_or(value, detail::kSeqCst);
  }
  return detail::proxy_amo<T>("atomic_fetch_or", PYSHMEM_AMO_OR, dest, value, T(), pe, true);
}
template <class T>
PYSHMEM_HD void atomic_or(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_or", dest, pe)) {
    detail::sys_atomic<T>(*a).fetch_or(value, detail::kSeqCst);
    return;
  }
  detail::proxy_amo<T>("atomic_or", PYSHMEM_AMO_OR, dest, value, T(), pe, false);
}
template <class T>
PYSHMEM_HD T atomic_fetch_xor(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_fetch_xor", dest, pe)) {
    return detail::sys_atomic<T>(*a).fetch_xor(value, detail::kSeqCst);
  }
  return detail::proxy_amo<T>("atomic_fetch_xor", PYSHMEM_AMO_XOR, dest, value, T(), pe, true);
}
template <class T>
PYSHMEM_HD void atomic_xor(T* dest, T value, int pe) {
  if (T* a = detail::direct_atomic("atomic_xor", dest, pe)) {
    detail::sys_atomic<T>(*a).fetch_xor(value, detail::kSeqCst);
    return;
  }
  detail::proxy_amo<T>("atomic_xor", PYSHMEM_AMO_XOR, dest, value, T(), pe, false);
}

}  // namespace device_api
}  // namespace pyshmem
