// pyshmem/device/amo.cuh: atomic memory operations on a PE's copy of a symmetric
// object, NVSHMEM order: atomic_fetch_add(dest, value, pe), atomic_compare_swap(dest,
// cond, value, pe), ... All are sequentially consistent at system scope (libcu++
// cuda::atomic_ref), so they are also ordered with this thread's other operations.
// Types: 4- and 8-byte integers; fetch/set/swap also on float and double.
#pragma once

#include "pyshmem/device/common.cuh"

namespace pyshmem {
namespace detail {

template <class T>
PYSHMEM_HD sys_atomic<T> remote_atomic(const char* call, const T* dest, int pe) {
  return sys_atomic<T>(*static_cast<T*>(peer_ptr_required(call, dest, pe)));
}

constexpr auto kSeqCst = cuda::std::memory_order_seq_cst;

}  // namespace detail

template <class T>
PYSHMEM_HD T atomic_fetch(const T* source, int pe) {
  return detail::remote_atomic("atomic_fetch", source, pe).load(detail::kSeqCst);
}
template <class T>
PYSHMEM_HD void atomic_set(T* dest, T value, int pe) {
  detail::remote_atomic("atomic_set", dest, pe).store(value, detail::kSeqCst);
}
template <class T>
PYSHMEM_HD T atomic_swap(T* dest, T value, int pe) {
  return detail::remote_atomic("atomic_swap", dest, pe).exchange(value, detail::kSeqCst);
}
// Stores `value` if the target equals `cond`; returns the target's previous value.
template <class T>
PYSHMEM_HD T atomic_compare_swap(T* dest, T cond, T value, int pe) {
  detail::remote_atomic("atomic_compare_swap", dest, pe).compare_exchange_strong(cond, value, detail::kSeqCst);
  return cond;  // on failure compare_exchange wrote the current value into cond
}
template <class T>
PYSHMEM_HD T atomic_fetch_add(T* dest, T value, int pe) {
  return detail::remote_atomic("atomic_fetch_add", dest, pe).fetch_add(value, detail::kSeqCst);
}
template <class T>
PYSHMEM_HD void atomic_add(T* dest, T value, int pe) {
  detail::remote_atomic("atomic_add", dest, pe).fetch_add(value, detail::kSeqCst);
}
template <class T>
PYSHMEM_HD T atomic_fetch_inc(T* dest, int pe) {
  return detail::remote_atomic("atomic_fetch_inc", dest, pe).fetch_add(T(1), detail::kSeqCst);
}
template <class T>
PYSHMEM_HD void atomic_inc(T* dest, int pe) {
  detail::remote_atomic("atomic_inc", dest, pe).fetch_add(T(1), detail::kSeqCst);
}
template <class T>
PYSHMEM_HD T atomic_fetch_and(T* dest, T value, int pe) {
  return detail::remote_atomic("atomic_fetch_and", dest, pe).fetch_and(value, detail::kSeqCst);
}
template <class T>
PYSHMEM_HD void atomic_and(T* dest, T value, int pe) {
  detail::remote_atomic("atomic_and", dest, pe).fetch_and(value, detail::kSeqCst);
}
template <class T>
PYSHMEM_HD T atomic_fetch_or(T* dest, T value, int pe) {
  return detail::remote_atomic("atomic_fetch_or", dest, pe).fetch_or(value, detail::kSeqCst);
}
template <class T>
PYSHMEM_HD void atomic_or(T* dest, T value, int pe) {
  detail::remote_atomic("atomic_or", dest, pe).fetch_or(value, detail::kSeqCst);
}
template <class T>
PYSHMEM_HD T atomic_fetch_xor(T* dest, T value, int pe) {
  return detail::remote_atomic("atomic_fetch_xor", dest, pe).fetch_xor(value, detail::kSeqCst);
}
template <class T>
PYSHMEM_HD void atomic_xor(T* dest, T value, int pe) {
  detail::remote_atomic("atomic_xor", dest, pe).fetch_xor(value, detail::kSeqCst);
}

}  // namespace pyshmem
