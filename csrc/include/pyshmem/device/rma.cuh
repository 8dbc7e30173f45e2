// pyshmem/device/rma.cuh: put/get from device code (and the CPU build), NVSHMEM order:
// put(dest, source, nelems, pe), get(dest, source, nelems, pe), p(dest, value, pe),
// g(source, pe), *mem byte forms, _nbi forms, iput/iget, and _warp/_block variants
// in which all threads of the group call with the same arguments and share the copy.
//
// Completion: a blocking put returns when `source` may be reused; the data is visible
// on `pe` after quiet() (or ordered by fence()). get returns with the data in `dest`.
// To load/store-reachable peers the _nbi forms complete immediately, which the model
// allows; to other peers they are requests on the proxy FIFO (device/proxy.cuh) that
// quiet() completes. Call quiet() in either case.
#pragma once

#include <cuda/std/type_traits>

#include "pyshmem/device/common.cuh"
#include "pyshmem/device/proxy.cuh"

namespace pyshmem {
inline namespace device_api {

PYSHMEM_HD int my_pe() { return detail::state().my_pe; }
PYSHMEM_HD int n_pes() { return detail::state().n_pes; }

// Address of `dest` on `pe` for direct loads/stores, or nullptr when not reachable.
PYSHMEM_HD void* ptr(const void* dest, int pe) { return detail::peer_ptr("ptr", dest, pe); }

namespace detail {

// Direct copy with the whole group, or one proxy request pushed by the group's leader.
template <Coop C>
PYSHMEM_HD void putmem_impl(const char* call, void* dest, const void* source, size_t nbytes, int pe, bool nbi) {
  coop_same_args<C>(call, PYSHMEM_U64(dest), PYSHMEM_U64(source), nbytes, static_cast<uint64_t>(pe));
  note_op(PYSHMEM_OP_PUT, pe, dest, nbytes);
  if (void* d = direct_ptr(call, dest, pe)) return copy_bytes<C>(d, source, nbytes);
  coop_sync<C>();
  if (coop_rank<C>() == 0) proxy_put(call, dest, source, nbytes, pe, !nbi);
  coop_sync<C>();
}

template <Coop C>
PYSHMEM_HD void getmem_impl(const char* call, void* dest, const void* source, size_t nbytes, int pe, bool nbi) {
  coop_same_args<C>(call, PYSHMEM_U64(dest), PYSHMEM_U64(source), nbytes, static_cast<uint64_t>(pe));
  note_op(PYSHMEM_OP_GET, pe, source, nbytes);
  if (void* s = direct_ptr(call, source, pe)) return copy_bytes<C>(dest, s, nbytes);
  coop_sync<C>();
  if (coop_rank<C>() == 0) proxy_get(call, dest, source, nbytes, pe, !nbi);
  coop_sync<C>();
}

}  // namespace detail

// putmem/getmem (bytes) and put/get (nelems of T), each blocking and _nbi, for a
// thread, a warp (_warp) and a block (_block).
#define PYSHMEM_DEFINE_RMA(NBI, SUFFIX, LEVEL, IS_NBI)                                              \
  PYSHMEM_HD void putmem##NBI##SUFFIX(void* dest, const void* source, size_t nbytes, int pe) {     \
    detail::putmem_impl<Coop::LEVEL>("putmem" #NBI #SUFFIX, dest, source, nbytes, pe, IS_NBI);     \
  }                                                                                                \
  PYSHMEM_HD void getmem##NBI##SUFFIX(void* dest, const void* source, size_t nbytes, int pe) {     \
    detail::getmem_impl<Coop::LEVEL>("getmem" #NBI #SUFFIX, dest, source, nbytes, pe, IS_NBI);     \
  }                                                                                                \
  template <class T>                                                                               \
  PYSHMEM_HD void put##NBI##SUFFIX(T* dest, const T* source, size_t nelems, int pe) {              \
    putmem##NBI##SUFFIX(dest, source, nelems * sizeof(T), pe);                                     \
  }                                                                                                \
  template <class T>                                                                               \
  PYSHMEM_HD void get##NBI##SUFFIX(T* dest, const T* source, size_t nelems, int pe) {              \
    getmem##NBI##SUFFIX(dest, source, nelems * sizeof(T), pe);                                     \
  }
PYSHMEM_FOR_EACH_COOP_NBI(PYSHMEM_DEFINE_RMA)
#undef PYSHMEM_DEFINE_RMA

// Single element: p stores `value` into dest on pe; g returns source on pe. For
// arithmetic types the access is one relaxed system-scope atomic (never torn, and not
// a data race when a peer polls the same word); other types are plain copies.
template <class T>
PYSHMEM_HD void p(T* dest, T value, int pe) {
  detail::note_op(PYSHMEM_OP_PUT, pe, dest, sizeof(T));
  T* d = static_cast<T*>(detail::direct_ptr("p", dest, pe));
  if (!d) {
    if constexpr (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
      return detail::proxy_p("p", dest, value, pe);
    } else {
#if defined(__CUDA_ARCH__)
      detail::trap("p", "values wider than 8 bytes to PEs behind the proxy: use put from global memory", pe);
#endif
      return detail::proxy_put("p", dest, &value, sizeof(T), pe, true);
    }
  }
  if constexpr (cuda::std::is_arithmetic<T>::value && sizeof(T) <= 8)
    detail::sys_atomic<T>(*d).store(value, cuda::std::memory_order_relaxed);
  else
    *d = value;
}
template <class T>
PYSHMEM_HD T g(const T* source, int pe) {
  detail::note_op(PYSHMEM_OP_GET, pe, source, sizeof(T));
  T* s = static_cast<T*>(detail::direct_ptr("g", source, pe));
  if (!s) {
    if constexpr (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
      return detail::proxy_g("g", source, pe);
    } else {
#if defined(__CUDA_ARCH__)
      detail::trap("g", "values wider than 8 bytes from PEs behind the proxy: use get into global memory", pe);
#endif
      T v;
      detail::proxy_get("g", &v, source, sizeof(T), pe, true);
      return v;
    }
  }
  if constexpr (cuda::std::is_arithmetic<T>::value && sizeof(T) <= 8)
    return detail::sys_atomic<T>(*s).load(cuda::std::memory_order_relaxed);
  else
    return *s;
}

namespace detail {
// Strided transfer of nelems elements of `elem` bytes: element i moves from
// s + i*sst*elem to d + i*dst*elem (strides in elements). Through the proxy each element
// is one request; a blocking call waits for the last one.
PYSHMEM_HD void strided(const char* call, bool is_put, char* d, const char* s, ptrdiff_t dst, ptrdiff_t sst,
                        size_t nelems, size_t elem, int pe) {
  if (dst < 1 || sst < 1) trap(call, "strides must be >= 1", pe);
  note_op(is_put ? PYSHMEM_OP_PUT : PYSHMEM_OP_GET, pe, is_put ? static_cast<const void*>(d) : s, nelems * elem);
  const size_t dstep = static_cast<size_t>(dst) * elem, sstep = static_cast<size_t>(sst) * elem;
  if (char* peer = static_cast<char*>(direct_ptr(call, is_put ? static_cast<const void*>(d) : s, pe))) {
    char* to = is_put ? peer : d;
    const char* from = is_put ? s : peer;
    for (size_t i = 0; i < nelems; ++i)
      for (size_t b = 0; b < elem; ++b) to[i * dstep + b] = from[i * sstep + b];
    return;
  }
  for (size_t i = 0; i < nelems; ++i) {
    if (is_put) proxy_put(call, d + i * dstep, s + i * sstep, elem, pe, i + 1 == nelems);
    else proxy_get(call, d + i * dstep, s + i * sstep, elem, pe, i + 1 == nelems);
  }
}
}  // namespace detail

// Strided: element i moves from source[i*sst] to dest[i*dst] (strides in elements).
template <class T>
PYSHMEM_HD void iput(T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {
  detail::strided("iput", true, reinterpret_cast<char*>(dest), reinterpret_cast<const char*>(source), dst, sst,
                  nelems, sizeof(T), pe);
}
template <class T>
PYSHMEM_HD void iget(T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {
  detail::strided("iget", false, reinterpret_cast<char*>(dest), reinterpret_cast<const char*>(source), dst, sst,
                  nelems, sizeof(T), pe);
}

}  // namespace device_api
}  // namespace pyshmem
