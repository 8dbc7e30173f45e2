// pyshmem/device/rma.cuh: put/get from device code (and the CPU build), NVSHMEM order:
// put(dest, source, nelems, pe), get(dest, source, nelems, pe), p(dest, value, pe),
// g(source, pe), *mem byte forms, _nbi forms, iput/iget, and _warp/_block variants
// in which all threads of the group call with the same arguments and share the copy.
//
// Completion: a blocking put returns when `source` may be reused; the data is visible
// on `pe` after quiet() (or ordered by fence()). get returns with the data in `dest`.
// To load/store-reachable peers the _nbi forms complete immediately, which the model
// allows; call quiet() anyway.
#pragma once

#include <cuda/std/type_traits>

#include "pyshmem/device/common.cuh"

namespace pyshmem {

PYSHMEM_HD int my_pe() { return detail::state().my_pe; }
PYSHMEM_HD int n_pes() { return detail::state().n_pes; }

// Address of `dest` on `pe` for direct loads/stores, or nullptr when not reachable.
PYSHMEM_HD void* ptr(const void* dest, int pe) { return detail::peer_ptr("ptr", dest, pe); }

namespace detail {

template <Coop C>
PYSHMEM_HD void putmem_impl(const char* call, void* dest, const void* source, size_t nbytes, int pe) {
  copy_bytes<C>(peer_ptr_required(call, dest, pe), source, nbytes);
}

template <Coop C>
PYSHMEM_HD void getmem_impl(const char* call, void* dest, const void* source, size_t nbytes, int pe) {
  copy_bytes<C>(dest, peer_ptr_required(call, source, pe), nbytes);
}

}  // namespace detail

// ---- byte forms ----
PYSHMEM_HD void putmem(void* dest, const void* source, size_t nbytes, int pe) {
  detail::putmem_impl<Coop::thread>("putmem", dest, source, nbytes, pe);
}
PYSHMEM_HD void putmem_warp(void* dest, const void* source, size_t nbytes, int pe) {
  detail::putmem_impl<Coop::warp>("putmem_warp", dest, source, nbytes, pe);
}
PYSHMEM_HD void putmem_block(void* dest, const void* source, size_t nbytes, int pe) {
  detail::putmem_impl<Coop::block>("putmem_block", dest, source, nbytes, pe);
}
PYSHMEM_HD void getmem(void* dest, const void* source, size_t nbytes, int pe) {
  detail::getmem_impl<Coop::thread>("getmem", dest, source, nbytes, pe);
}
PYSHMEM_HD void getmem_warp(void* dest, const void* source, size_t nbytes, int pe) {
  detail::getmem_impl<Coop::warp>("getmem_warp", dest, source, nbytes, pe);
}
PYSHMEM_HD void getmem_block(void* dest, const void* source, size_t nbytes, int pe) {
  detail::getmem_impl<Coop::block>("getmem_block", dest, source, nbytes, pe);
}
PYSHMEM_HD void putmem_nbi(void* dest, const void* source, size_t nbytes, int pe) { putmem(dest, source, nbytes, pe); }
PYSHMEM_HD void putmem_nbi_warp(void* dest, const void* source, size_t nbytes, int pe) {
  putmem_warp(dest, source, nbytes, pe);
}
PYSHMEM_HD void putmem_nbi_block(void* dest, const void* source, size_t nbytes, int pe) {
  putmem_block(dest, source, nbytes, pe);
}
PYSHMEM_HD void getmem_nbi(void* dest, const void* source, size_t nbytes, int pe) { getmem(dest, source, nbytes, pe); }
PYSHMEM_HD void getmem_nbi_warp(void* dest, const void* source, size_t nbytes, int pe) {
  getmem_warp(dest, source, nbytes, pe);
}
PYSHMEM_HD void getmem_nbi_block(void* dest, const void* source, size_t nbytes, int pe) {
  getmem_block(dest, source, nbytes, pe);
}

// ---- typed forms ----
template <class T>
PYSHMEM_HD void put(T* dest, const T* source, size_t nelems, int pe) { putmem(dest, source, nelems * sizeof(T), pe); }
template <class T>
PYSHMEM_HD void put_warp(T* dest, const T* source, size_t nelems, int pe) {
  putmem_warp(dest, source, nelems * sizeof(T), pe);
}
template <class T>
PYSHMEM_HD void put_block(T* dest, const T* source, size_t nelems, int pe) {
  putmem_block(dest, source, nelems * sizeof(T), pe);
}
template <class T>
PYSHMEM_HD void get(T* dest, const T* source, size_t nelems, int pe) { getmem(dest, source, nelems * sizeof(T), pe); }
template <class T>
PYSHMEM_HD void get_warp(T* dest, const T* source, size_t nelems, int pe) {
  getmem_warp(dest, source, nelems * sizeof(T), pe);
}
template <class T>
PYSHMEM_HD void get_block(T* dest, const T* source, size_t nelems, int pe) {
  getmem_block(dest, source, nelems * sizeof(T), pe);
}
template <class T>
PYSHMEM_HD void put_nbi(T* dest, const T* source, size_t nelems, int pe) { put(dest, source, nelems, pe); }
template <class T>
PYSHMEM_HD void put_nbi_warp(T* dest, const T* source, size_t nelems, int pe) { put_warp(dest, source, nelems, pe); }
template <class T>
PYSHMEM_HD void put_nbi_block(T* dest, const T* source, size_t nelems, int pe) { put_block(dest, source, nelems, pe); }
template <class T>
PYSHMEM_HD void get_nbi(T* dest, const T* source, size_t nelems, int pe) { get(dest, source, nelems, pe); }
template <class T>
PYSHMEM_HD void get_nbi_warp(T* dest, const T* source, size_t nelems, int pe) { get_warp(dest, source, nelems, pe); }
template <class T>
PYSHMEM_HD void get_nbi_block(T* dest, const T* source, size_t nelems, int pe) { get_block(dest, source, nelems, pe); }

// Single element: p stores `value` into dest on pe; g returns source on pe. For
// arithmetic types the access is one relaxed system-scope atomic (never torn, and not
// a data race when a peer polls the same word); other types are plain copies.
template <class T>
PYSHMEM_HD void p(T* dest, T value, int pe) {
  T* d = static_cast<T*>(detail::peer_ptr_required("p", dest, pe));
  if constexpr (cuda::std::is_arithmetic<T>::value && sizeof(T) <= 8)
    detail::sys_atomic<T>(*d).store(value, cuda::std::memory_order_relaxed);
  else
    *d = value;
}
template <class T>
PYSHMEM_HD T g(const T* source, int pe) {
  T* s = static_cast<T*>(detail::peer_ptr_required("g", source, pe));
  if constexpr (cuda::std::is_arithmetic<T>::value && sizeof(T) <= 8)
    return detail::sys_atomic<T>(*s).load(cuda::std::memory_order_relaxed);
  else
    return *s;
}

// Strided: element i moves from source[i*sst] to dest[i*dst] (strides in elements).
template <class T>
PYSHMEM_HD void iput(T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {
  if (dst < 1 || sst < 1) detail::trap("iput", "strides must be >= 1", pe);
  T* d = static_cast<T*>(detail::peer_ptr_required("iput", dest, pe));
  for (size_t i = 0; i < nelems; ++i) d[i * dst] = source[i * sst];
}
template <class T>
PYSHMEM_HD void iget(T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {
  if (dst < 1 || sst < 1) detail::trap("iget", "strides must be >= 1", pe);
  const T* s = static_cast<const T*>(detail::peer_ptr_required("iget", source, pe));
  for (size_t i = 0; i < nelems; ++i) dest[i * dst] = s[i * sst];
}

}  // namespace pyshmem
