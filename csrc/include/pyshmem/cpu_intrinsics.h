// pyshmem/cpu_intrinsics.h: CUDA's atomic functions, integer intrinsics and small
// helpers (warpSize, clock64, __nanosleep, min/max, __ldg) for CUDA C++ kernels built
// for the CPU (included by pyshmem/cpu_kernel.h; host compilers only).
//
// The overload sets are CUDA's own (e.g. atomicAdd on int, unsigned int, unsigned long
// long int, float and double; atomicMin/Max also on long long int), so a kernel that
// compiles here compiles for the GPU too. Atomics are sequentially consistent GCC/Clang
// __atomic builtins on ordinary memory (global or __shared__): at least as strong as a
// GPU's relaxed device-scope atomics; the _block and _system forms are the same
// operation. float/double atomicAdd is a compare-and-swap loop on the bit pattern.
#pragma once

#include <stdint.h>
#include <string.h>

#include <chrono>
#include <thread>

#include "pyshmem/cpu_fibers.h"

#if defined(__CUDACC__)
#error "pyshmem/cpu_intrinsics.h is for host compilers"
#endif

namespace pyshmem {
namespace cpu {
namespace intrinsics {

template <class T>
inline T fetch_op(T* p, T v, int op) {
  switch (op) {
    case 0: return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    case 1: return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);
    case 2: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
    case 3: return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
    case 4: return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
    default: return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
  }
}

// old = *p; *p = f(old); returns old. For operations no builtin does (min, max, inc,
// dec, floating-point add).
template <class T, class F>
inline T update(T* p, F f) {
  T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(p, &old, f(old), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}

template <class F, class Bits>
inline F float_add(F* p, F v) {
  static_assert(sizeof(F) == sizeof(Bits), "bit pattern of the same size");
  Bits* bits = reinterpret_cast<Bits*>(p);
  Bits old = __atomic_load_n(bits, __ATOMIC_SEQ_CST);
  for (;;) {
    F value;
    memcpy(&value, &old, sizeof value);
    value += v;
    Bits next;
    memcpy(&next, &value, sizeof next);
    if (__atomic_compare_exchange_n(bits, &old, next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
      memcpy(&value, &old, sizeof value);
      return value;
    }
  }
}

}  // namespace intrinsics
}  // namespace cpu
}  // namespace pyshmem

// ---- atomic functions (CUDA's overloads) -------------------------------------------

// The body is the variadic part: it may contain commas. Every atomic function is a
// switch point of the block's threads first (fibers::schedule_point: forward progress
// for spins on atomics, and the random schedule's switches).
#define PYSHMEM_CPU_ATOMIC_SCOPES(ret, name, params, ...)                           \
  inline ret name params { ::pyshmem::cpu::fibers::schedule_point(); __VA_ARGS__ } \
  inline ret name##_block params { ::pyshmem::cpu::fibers::schedule_point(); __VA_ARGS__ } \
  inline ret name##_system params { ::pyshmem::cpu::fibers::schedule_point(); __VA_ARGS__ }

#define PYSHMEM_CPU_FETCH_OP(name, T, op) \
  PYSHMEM_CPU_ATOMIC_SCOPES(T, name, (T * address, T val), { return ::pyshmem::cpu::intrinsics::fetch_op(address, val, op); })

PYSHMEM_CPU_FETCH_OP(atomicAdd, int, 0)
PYSHMEM_CPU_FETCH_OP(atomicAdd, unsigned int, 0)
PYSHMEM_CPU_FETCH_OP(atomicAdd, unsigned long long int, 0)
PYSHMEM_CPU_ATOMIC_SCOPES(float, atomicAdd, (float* address, float val),
                          { return ::pyshmem::cpu::intrinsics::float_add<float, uint32_t>(address, val); })
PYSHMEM_CPU_ATOMIC_SCOPES(double, atomicAdd, (double* address, double val),
                          { return ::pyshmem::cpu::intrinsics::float_add<double, uint64_t>(address, val); })
PYSHMEM_CPU_FETCH_OP(atomicSub, int, 1)
PYSHMEM_CPU_FETCH_OP(atomicSub, unsigned int, 1)
PYSHMEM_CPU_FETCH_OP(atomicExch, int, 2)
PYSHMEM_CPU_FETCH_OP(atomicExch, unsigned int, 2)
PYSHMEM_CPU_FETCH_OP(atomicExch, unsigned long long int, 2)
PYSHMEM_CPU_ATOMIC_SCOPES(float, atomicExch, (float* address, float val), {
  uint32_t bits, old;
  memcpy(&bits, &val, sizeof bits);
  old = __atomic_exchange_n(reinterpret_cast<uint32_t*>(address), bits, __ATOMIC_SEQ_CST);
  float out;
  memcpy(&out, &old, sizeof out);
  return out;
})
PYSHMEM_CPU_FETCH_OP(atomicAnd, int, 3)
PYSHMEM_CPU_FETCH_OP(atomicAnd, unsigned int, 3)
PYSHMEM_CPU_FETCH_OP(atomicAnd, unsigned long long int, 3)
PYSHMEM_CPU_FETCH_OP(atomicOr, int, 4)
PYSHMEM_CPU_FETCH_OP(atomicOr, unsigned int, 4)
PYSHMEM_CPU_FETCH_OP(atomicOr, unsigned long long int, 4)
PYSHMEM_CPU_FETCH_OP(atomicXor, int, 5)
PYSHMEM_CPU_FETCH_OP(atomicXor, unsigned int, 5)
PYSHMEM_CPU_FETCH_OP(atomicXor, unsigned long long int, 5)

#define PYSHMEM_CPU_MINMAX(T)                                                                    \
  PYSHMEM_CPU_ATOMIC_SCOPES(T, atomicMin, (T * address, T val), {                                \
    return ::pyshmem::cpu::intrinsics::update(address, [val](T old) { return val < old ? val : old; }); \
  })                                                                                             \
  PYSHMEM_CPU_ATOMIC_SCOPES(T, atomicMax, (T * address, T val), {                                \
    return ::pyshmem::cpu::intrinsics::update(address, [val](T old) { return val > old ? val : old; }); \
  })
PYSHMEM_CPU_MINMAX(int)
PYSHMEM_CPU_MINMAX(unsigned int)
PYSHMEM_CPU_MINMAX(long long int)
PYSHMEM_CPU_MINMAX(unsigned long long int)

// CUDA's wrapping counters: inc gives ((old >= val) ? 0 : old + 1), dec gives
// ((old == 0 || old > val) ? val : old - 1).
PYSHMEM_CPU_ATOMIC_SCOPES(unsigned int, atomicInc, (unsigned int* address, unsigned int val), {
  return ::pyshmem::cpu::intrinsics::update(address, [val](unsigned int old) { return old >= val ? 0u : old + 1; });
})
PYSHMEM_CPU_ATOMIC_SCOPES(unsigned int, atomicDec, (unsigned int* address, unsigned int val), {
  return ::pyshmem::cpu::intrinsics::update(address,
                                            [val](unsigned int old) { return old == 0 || old > val ? val : old - 1; });
})

#define PYSHMEM_CPU_CAS(T)                                                                         \
  PYSHMEM_CPU_ATOMIC_SCOPES(T, atomicCAS, (T * address, T compare, T val), {                       \
    __atomic_compare_exchange_n(address, &compare, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    return compare; /* the old value, whether or not it was swapped */                              \
  })
PYSHMEM_CPU_CAS(int)
PYSHMEM_CPU_CAS(unsigned int)
PYSHMEM_CPU_CAS(unsigned long long int)
PYSHMEM_CPU_CAS(unsigned short int)

#undef PYSHMEM_CPU_CAS
#undef PYSHMEM_CPU_MINMAX
#undef PYSHMEM_CPU_FETCH_OP
#undef PYSHMEM_CPU_ATOMIC_SCOPES

// ---- integer intrinsics --------------------------------------------------------------

inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long int x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long int x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long int x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long int __brevll(unsigned long long int x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}
inline int __mulhi(int x, int y) { return static_cast<int>((static_cast<long long>(x) * y) >> 32); }
inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32);
}
inline long long int __mul64hi(long long int x, long long int y) {
  return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
inline unsigned long long int __umul64hi(unsigned long long int x, unsigned long long int y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
inline int __mul24(int x, int y) { return ((x << 8) >> 8) * ((y << 8) >> 8); }
inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xffffffu) * (y & 0xffffffu); }

// ---- the rest kernels commonly use ---------------------------------------------------

constexpr int warpSize = 32;

// Nanoseconds of a steady clock (a GPU counts SM cycles: only differences mean
// anything). CUDA's 32-bit clock() is not provided: the C library's clock() has that name
// in host code; use clock64().
inline long long int clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A pause in a spin loop: lets the block's other runnable threads run (as a GPU's other
// warps would), else sleeps about `ns`.
inline void __nanosleep(unsigned int ns) {
  if (!::pyshmem::cpu::fibers::poll_yield(false)) std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
}

// Loads and stores with cache hints (read-only, cache-global, streaming, ...): plain
// accesses on the CPU.
template <class T>
inline T __ldg(const T* p) {
  return *p;
}
#define PYSHMEM_CPU_LOAD_HINT(name) \
  template <class T>                \
  inline T name(const T* p) {       \
    return *p;                      \
  }
#define PYSHMEM_CPU_STORE_HINT(name) \
  template <class T>                 \
  inline void name(T* p, T v) {      \
    *p = v;                          \
  }
PYSHMEM_CPU_LOAD_HINT(__ldcg)
PYSHMEM_CPU_LOAD_HINT(__ldca)
PYSHMEM_CPU_LOAD_HINT(__ldcs)
PYSHMEM_CPU_LOAD_HINT(__ldlu)
PYSHMEM_CPU_LOAD_HINT(__ldcv)
PYSHMEM_CPU_STORE_HINT(__stwb)
PYSHMEM_CPU_STORE_HINT(__stcg)
PYSHMEM_CPU_STORE_HINT(__stcs)
PYSHMEM_CPU_STORE_HINT(__stwt)
#undef PYSHMEM_CPU_LOAD_HINT
#undef PYSHMEM_CPU_STORE_HINT

// CUDA's min/max overloads (host and device in CUDA too), mixed signedness included:
// an operand pair of one signed and one unsigned type of the same width compares, and
// returns, as the unsigned type; float with double as double.
#define PYSHMEM_CPU_MINMAX_FN(R, A, B)                                              \
  inline R min(A a, B b) { return static_cast<R>(b) < static_cast<R>(a) ? static_cast<R>(b) : static_cast<R>(a); } \
  inline R max(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(b) : static_cast<R>(a); }
PYSHMEM_CPU_MINMAX_FN(int, int, int)
PYSHMEM_CPU_MINMAX_FN(unsigned int, unsigned int, unsigned int)
PYSHMEM_CPU_MINMAX_FN(unsigned int, int, unsigned int)
PYSHMEM_CPU_MINMAX_FN(unsigned int, unsigned int, int)
PYSHMEM_CPU_MINMAX_FN(long int, long int, long int)
PYSHMEM_CPU_MINMAX_FN(unsigned long int, unsigned long int, unsigned long int)
PYSHMEM_CPU_MINMAX_FN(unsigned long int, long int, unsigned long int)
PYSHMEM_CPU_MINMAX_FN(unsigned long int, unsigned long int, long int)
PYSHMEM_CPU_MINMAX_FN(long long int, long long int, long long int)
PYSHMEM_CPU_MINMAX_FN(unsigned long long int, unsigned long long int, unsigned long long int)
PYSHMEM_CPU_MINMAX_FN(unsigned long long int, long long int, unsigned long long int)
PYSHMEM_CPU_MINMAX_FN(unsigned long long int, unsigned long long int, long long int)
PYSHMEM_CPU_MINMAX_FN(float, float, float)
PYSHMEM_CPU_MINMAX_FN(double, double, double)
PYSHMEM_CPU_MINMAX_FN(double, float, double)
PYSHMEM_CPU_MINMAX_FN(double, double, float)
#undef PYSHMEM_CPU_MINMAX_FN
