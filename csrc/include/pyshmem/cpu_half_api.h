// pyshmem/cpu_half_api.h: the functions and operators of CUDA's <cuda_fp16.h> and
// <cuda_bf16.h> on the types of pyshmem/cpu_half.h (which includes this; see there for
// how values are rounded). Each function exists for __half/__half2 and for
// __nv_bfloat16/__nv_bfloat162 under CUDA's names: overloads where CUDA overloads
// (__hadd, __hmax2, hsqrt, operators), the type's name in the name where CUDA has one
// (__float2half_rn, __float2bfloat16_rn, __half2int_rz, __bfloat162int_rz ...).
#pragma once

#include "pyshmem/cpu_half.h"

namespace pyshmem {
namespace cpu {
namespace fp {

template <class T>
struct F16;
template <>
struct F16<__half> : HalfFormat {};
template <>
struct F16<__nv_bfloat16> : Bf16Format {};

template <class T>
inline uint16_t raw(T h) {
  return bit_cast<uint16_t>(h);
}
template <class T>
inline T of_raw(uint16_t bits) {
  return bit_cast<T>(bits);
}
template <class T>
inline T rounded(float f, Round r = kNearest) {
  return of_raw<T>(F16<T>::from_float(f, r));
}
template <class T>
inline bool is_nan(T h) {
  return F16<T>::is_nan(raw(h));
}
// CUDA's _sat: clamped to [0, 1], NaN to +0.
template <class T>
inline T saturate(T h) {
  const float f = F16<T>::to_float(raw(h));
  return f > 0.0f ? (f < 1.0f ? h : rounded<T>(1.0f)) : of_raw<T>(0);
}
// CUDA's __hmax/__hmin (NaN loses to a number; +0 is the larger zero) and, with
// nan_wins, __hmax_nan/__hmin_nan; two NaNs, or any NaN with nan_wins, give canonical NaN.
template <class T>
inline T max_min(T a, T b, bool max, bool nan_wins) {
  const bool na = is_nan(a), nb = is_nan(b);
  if (na || nb) return (nan_wins || (na && nb)) ? of_raw<T>(F16<T>::kNan) : (na ? b : a);
  const float x = F16<T>::to_float(raw(a)), y = F16<T>::to_float(raw(b));
  if (x == y) return (std::signbit(x) == max) ? b : a;
  return (x > y) == max ? a : b;
}
template <class T>
inline T fma(T a, T b, T c) {
  return of_raw<T>(F16<T>::fma(raw(a), raw(b), raw(c)));
}
// CUDA's _relu: negative results to +0, NaN to canonical NaN.
template <class T>
inline T relu(T h) {
  if (is_nan(h)) return of_raw<T>(F16<T>::kNan);
  return (raw(h) & 0x8000) ? of_raw<T>(0) : h;
}
template <class I, class T>
inline I to_integer(T h, Round r) {
  return to_int<I>(F16<T>::to_float(raw(h)), r);
}
template <class T, class I>
inline T from_integer(I v, Round r) {
  return of_raw<T>(F16<T>::from_int(v, r));
}
inline uint32_t lane_mask(bool lo, bool hi) { return (lo ? 0xffffu : 0u) | (hi ? 0xffff0000u : 0u); }

// *p = op(*p, v) by compare-and-swap on the bits; returns the old value.
template <class T, class Bits, class Op>
inline T atomic_update(T* p, T v, Op op) {
  Bits* bits = reinterpret_cast<Bits*>(p);
  Bits old = __atomic_load_n(bits, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(bits, &old, bit_cast<Bits>(op(bit_cast<T>(old), v)), false, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST)) {
  }
  return bit_cast<T>(old);
}

}  // namespace fp
}  // namespace cpu
}  // namespace pyshmem

// A function of T from a T-valued expression of a (, b, c), and its pair form lane by lane.
#define PYSHMEM_CPU_F16_BINARY(T, T2, name, name2, expr)                                   \
  inline T name(T a, T b) { return expr; }                                                 \
  inline T2 name2(T2 a2, T2 b2) { return T2(name(a2.x, b2.x), name(a2.y, b2.y)); }
#define PYSHMEM_CPU_F16_UNARY(T, T2, name, name2, expr)                                    \
  inline T name(T a) { return expr; }                                                      \
  inline T2 name2(T2 a2) { return T2(name(a2.x), name(a2.y)); }
#define PYSHMEM_CPU_F16_TERNARY(T, T2, name, name2, expr)                                  \
  inline T name(T a, T b, T c) { return expr; }                                            \
  inline T2 name2(T2 a2, T2 b2, T2 c2) { return T2(name(a2.x, b2.x, c2.x), name(a2.y, b2.y, c2.y)); }
// A comparison: scalar bool; pair as T2 of 1.0/0.0 per lane (name2), bool of both lanes
// (bname2), and a mask of 0xffff per true lane (name2_mask).
#define PYSHMEM_CPU_F16_CMP(T, T2, name, name2, bname2, ordered, op)                                           \
  inline bool name(T a, T b) {                                                                                  \
    const float x = a, y = b;                                                                                   \
    const bool unordered = x != x || y != y;                                                                    \
    return ordered ? (!unordered && (x op y)) : (unordered || (x op y));                                        \
  }                                                                                                             \
  inline T2 name2(T2 a, T2 b) { return T2(T(name(a.x, b.x) ? 1.0f : 0.0f), T(name(a.y, b.y) ? 1.0f : 0.0f)); } \
  inline bool bname2(T2 a, T2 b) { return name(a.x, b.x) && name(a.y, b.y); }                                  \
  inline unsigned name2##_mask(T2 a, T2 b) { return ::pyshmem::cpu::fp::lane_mask(name(a.x, b.x), name(a.y, b.y)); }

// Math functions, computed in float and rounded.
#define PYSHMEM_CPU_F16_MATH(T, T2, name, fexpr) \
  PYSHMEM_CPU_F16_UNARY(T, T2, h##name, h2##name, ::pyshmem::cpu::fp::rounded<T>(fexpr))

// The integer conversions in the four modes (CUDA names them __half2int_rn,
// __int2half_rz, __bfloat162ll_ru ...).
#define PYSHMEM_CPU_F16_MODE(R, name, P, body, sfx, mode) \
  inline R name##sfx(P v) { return ::pyshmem::cpu::fp::body(v, ::pyshmem::cpu::fp::mode); }
#define PYSHMEM_CPU_F16_MODES(R, name, P, body)                                                   \
  PYSHMEM_CPU_F16_MODE(R, name, P, body, _rn, kNearest) PYSHMEM_CPU_F16_MODE(R, name, P, body, _rz, kZero) \
  PYSHMEM_CPU_F16_MODE(R, name, P, body, _ru, kUp) PYSHMEM_CPU_F16_MODE(R, name, P, body, _rd, kDown)
#define PYSHMEM_CPU_F16_INT(T, stem, sfx, I)                          \
  PYSHMEM_CPU_F16_MODES(I, __##stem##2##sfx, T, to_integer<I>)        \
  PYSHMEM_CPU_F16_MODES(T, __##sfx##2##stem, I, from_integer<T>)
#define PYSHMEM_CPU_F16_INTS(T, stem)                                                              \
  PYSHMEM_CPU_F16_INT(T, stem, short, short) PYSHMEM_CPU_F16_INT(T, stem, ushort, unsigned short)  \
  PYSHMEM_CPU_F16_INT(T, stem, int, int) PYSHMEM_CPU_F16_INT(T, stem, uint, unsigned int)          \
  PYSHMEM_CPU_F16_INT(T, stem, ll, long long) PYSHMEM_CPU_F16_INT(T, stem, ull, unsigned long long) \
  PYSHMEM_CPU_F16_MODE(signed char, __##stem##2char, T, to_integer<signed char>, _rz, kZero)       \
  PYSHMEM_CPU_F16_MODE(unsigned char, __##stem##2uchar, T, to_integer<unsigned char>, _rz, kZero)

#define PYSHMEM_CPU_F16_API(T, T2, stem)                                                                             \
  /* conversions */                                                                                                 \
  inline T __float2##stem(float f) { return ::pyshmem::cpu::fp::rounded<T>(f); }                                    \
  inline T __float2##stem##_rn(float f) { return ::pyshmem::cpu::fp::rounded<T>(f); }                               \
  inline T __float2##stem##_rz(float f) { return ::pyshmem::cpu::fp::rounded<T>(f, ::pyshmem::cpu::fp::kZero); }    \
  inline T __float2##stem##_ru(float f) { return ::pyshmem::cpu::fp::rounded<T>(f, ::pyshmem::cpu::fp::kUp); }      \
  inline T __float2##stem##_rd(float f) { return ::pyshmem::cpu::fp::rounded<T>(f, ::pyshmem::cpu::fp::kDown); }    \
  inline T __double2##stem(double d) { return T(d); }                                                               \
  inline float __##stem##2float(T h) { return float(h); }                                                           \
  inline T2 __float2##stem##2_rn(float f) { return T2(T(f), T(f)); }                                                \
  inline T2 __floats2##stem##2_rn(float a, float b) { return T2(T(a), T(b)); }                                      \
  inline T2 __float22##stem##2_rn(float2 f) { return T2(T(f.x), T(f.y)); }                                          \
  inline float2 __##stem##22float2(T2 h) { return make_float2(float(h.x), float(h.y)); }                            \
  inline float __low2float(T2 h) { return float(h.x); }                                                             \
  inline float __high2float(T2 h) { return float(h.y); }                                                            \
  inline T __low2##stem(T2 h) { return h.x; }                                                                       \
  inline T __high2##stem(T2 h) { return h.y; }                                                                      \
  inline T2 __low2##stem##2(T2 h) { return T2(h.x, h.x); }                                                          \
  inline T2 __high2##stem##2(T2 h) { return T2(h.y, h.y); }                                                         \
  inline T2 __lows2##stem##2(T2 a, T2 b) { return T2(a.x, b.x); }                                                   \
  inline T2 __highs2##stem##2(T2 a, T2 b) { return T2(a.y, b.y); }                                                  \
  inline T2 __halves2##stem##2(T a, T b) { return T2(a, b); }                                                       \
  inline T2 __##stem##2##stem##2(T a) { return T2(a, a); }                                                          \
  inline T2 __lowhigh2highlow(T2 h) { return T2(h.y, h.x); }                                                        \
  inline T2 make_##stem##2(T a, T b) { return T2(a, b); }                                                           \
  inline short __##stem##_as_short(T h) { return short(::pyshmem::cpu::fp::raw(h)); }                               \
  inline unsigned short __##stem##_as_ushort(T h) { return ::pyshmem::cpu::fp::raw(h); }                            \
  inline T __short_as_##stem(short v) { return ::pyshmem::cpu::fp::of_raw<T>(uint16_t(v)); }                        \
  inline T __ushort_as_##stem(unsigned short v) { return ::pyshmem::cpu::fp::of_raw<T>(v); }                        \
  PYSHMEM_CPU_F16_INTS(T, stem)                                                                                     \
  /* arithmetic */                                                                                                  \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hadd, __hadd2, ::pyshmem::cpu::fp::rounded<T>(float(a) + float(b)))               \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hsub, __hsub2, ::pyshmem::cpu::fp::rounded<T>(float(a) - float(b)))               \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hmul, __hmul2, ::pyshmem::cpu::fp::rounded<T>(float(a) * float(b)))               \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hdiv, __h2div, ::pyshmem::cpu::fp::rounded<T>(float(a) / float(b)))               \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hadd_rn, __hadd2_rn, __hadd(a, b))                                                \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hsub_rn, __hsub2_rn, __hsub(a, b))                                                \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hmul_rn, __hmul2_rn, __hmul(a, b))                                                \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hadd_sat, __hadd2_sat, ::pyshmem::cpu::fp::saturate(__hadd(a, b)))                \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hsub_sat, __hsub2_sat, ::pyshmem::cpu::fp::saturate(__hsub(a, b)))                \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hmul_sat, __hmul2_sat, ::pyshmem::cpu::fp::saturate(__hmul(a, b)))                \
  PYSHMEM_CPU_F16_TERNARY(T, T2, __hfma, __hfma2, ::pyshmem::cpu::fp::fma(a, b, c))                                 \
  PYSHMEM_CPU_F16_TERNARY(T, T2, __hfma_sat, __hfma2_sat, ::pyshmem::cpu::fp::saturate(__hfma(a, b, c)))            \
  PYSHMEM_CPU_F16_TERNARY(T, T2, __hfma_relu, __hfma2_relu, ::pyshmem::cpu::fp::relu(__hfma(a, b, c)))              \
  PYSHMEM_CPU_F16_UNARY(T, T2, __hneg, __hneg2, ::pyshmem::cpu::fp::of_raw<T>(::pyshmem::cpu::fp::raw(a) ^ 0x8000)) \
  PYSHMEM_CPU_F16_UNARY(T, T2, __habs, __habs2, ::pyshmem::cpu::fp::of_raw<T>(::pyshmem::cpu::fp::raw(a) & 0x7fff)) \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hmax, __hmax2, ::pyshmem::cpu::fp::max_min(a, b, true, false))                    \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hmin, __hmin2, ::pyshmem::cpu::fp::max_min(a, b, false, false))                   \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hmax_nan, __hmax2_nan, ::pyshmem::cpu::fp::max_min(a, b, true, true))             \
  PYSHMEM_CPU_F16_BINARY(T, T2, __hmin_nan, __hmin2_nan, ::pyshmem::cpu::fp::max_min(a, b, false, true))            \
  /* complex a*b + c on (re, im) pairs, as CUDA: ((a.x*b.x + c.x) - a.y*b.y, (a.x*b.y + c.y) + a.y*b.x) by fmas */    \
  inline T2 __hcmadd(T2 a, T2 b, T2 c) {                                                                             \
    return T2(__hfma(__hneg(a.y), b.y, __hfma(a.x, b.x, c.x)), __hfma(a.y, b.x, __hfma(a.x, b.y, c.y)));             \
  }                                                                                                                  \
  /* classification and comparisons (the u forms are unordered: true when either is NaN) */                          \
  inline bool __hisnan(T a) { return ::pyshmem::cpu::fp::is_nan(a); }                                                \
  inline T2 __hisnan2(T2 a) { return T2(T(__hisnan(a.x) ? 1.0f : 0.0f), T(__hisnan(a.y) ? 1.0f : 0.0f)); }           \
  inline int __hisinf(T a) {                                                                                        \
    const uint16_t bits = ::pyshmem::cpu::fp::raw(a);                                                              \
    return (bits & 0x7fff) != ::pyshmem::cpu::fp::F16<T>::kInf ? 0 : (bits & 0x8000) ? -1 : 1;                     \
  }                                                                                                                  \
  PYSHMEM_CPU_F16_CMP(T, T2, __heq, __heq2, __hbeq2, true, ==)                                                     \
  PYSHMEM_CPU_F16_CMP(T, T2, __hne, __hne2, __hbne2, true, !=)                                                     \
  PYSHMEM_CPU_F16_CMP(T, T2, __hlt, __hlt2, __hblt2, true, <)                                                      \
  PYSHMEM_CPU_F16_CMP(T, T2, __hle, __hle2, __hble2, true, <=)                                                     \
  PYSHMEM_CPU_F16_CMP(T, T2, __hgt, __hgt2, __hbgt2, true, >)                                                      \
  PYSHMEM_CPU_F16_CMP(T, T2, __hge, __hge2, __hbge2, true, >=)                                                     \
  PYSHMEM_CPU_F16_CMP(T, T2, __hequ, __hequ2, __hbequ2, false, ==)                                                 \
  PYSHMEM_CPU_F16_CMP(T, T2, __hneu, __hneu2, __hbneu2, false, !=)                                                 \
  PYSHMEM_CPU_F16_CMP(T, T2, __hltu, __hltu2, __hbltu2, false, <)                                                  \
  PYSHMEM_CPU_F16_CMP(T, T2, __hleu, __hleu2, __hbleu2, false, <=)                                                 \
  PYSHMEM_CPU_F16_CMP(T, T2, __hgtu, __hgtu2, __hbgtu2, false, >)                                                  \
  PYSHMEM_CPU_F16_CMP(T, T2, __hgeu, __hgeu2, __hbgeu2, false, >=)                                                 \
  /* math */                                                                                                         \
  PYSHMEM_CPU_F16_MATH(T, T2, sqrt, std::sqrt(float(a)))                                                           \
  PYSHMEM_CPU_F16_MATH(T, T2, rsqrt, 1.0f / std::sqrt(float(a)))                                                   \
  PYSHMEM_CPU_F16_MATH(T, T2, rcp, 1.0f / float(a))                                                                \
  PYSHMEM_CPU_F16_MATH(T, T2, exp, std::exp(float(a)))                                                             \
  PYSHMEM_CPU_F16_MATH(T, T2, exp2, std::exp2(float(a)))                                                           \
  PYSHMEM_CPU_F16_MATH(T, T2, exp10, std::pow(10.0f, float(a)))                                                    \
  PYSHMEM_CPU_F16_MATH(T, T2, log, std::log(float(a)))                                                             \
  PYSHMEM_CPU_F16_MATH(T, T2, log2, std::log2(float(a)))                                                           \
  PYSHMEM_CPU_F16_MATH(T, T2, log10, std::log10(float(a)))                                                         \
  PYSHMEM_CPU_F16_MATH(T, T2, sin, std::sin(float(a)))                                                             \
  PYSHMEM_CPU_F16_MATH(T, T2, cos, std::cos(float(a)))                                                             \
  PYSHMEM_CPU_F16_MATH(T, T2, tanh, std::tanh(float(a)))                                                           \
  PYSHMEM_CPU_F16_MATH(T, T2, floor, std::floor(float(a)))                                                         \
  PYSHMEM_CPU_F16_MATH(T, T2, ceil, std::ceil(float(a)))                                                           \
  PYSHMEM_CPU_F16_MATH(T, T2, trunc, std::trunc(float(a)))                                                         \
  PYSHMEM_CPU_F16_MATH(T, T2, rint, float(::pyshmem::cpu::fp::round_integral(float(a), ::pyshmem::cpu::fp::kNearest))) \
  /* operators: scalar comparisons are C++'s (!= is true for NaN), pair ones need both lanes */                       \
  inline T operator+(const T& a, const T& b) { return __hadd(a, b); }                                               \
  inline T operator-(const T& a, const T& b) { return __hsub(a, b); }                                               \
  inline T operator*(const T& a, const T& b) { return __hmul(a, b); }                                               \
  inline T operator/(const T& a, const T& b) { return __hdiv(a, b); }                                               \
  inline T& operator+=(T& a, const T& b) { return a = __hadd(a, b); }                                               \
  inline T& operator-=(T& a, const T& b) { return a = __hsub(a, b); }                                               \
  inline T& operator*=(T& a, const T& b) { return a = __hmul(a, b); }                                               \
  inline T& operator/=(T& a, const T& b) { return a = __hdiv(a, b); }                                               \
  inline T operator+(const T& a) { return a; }                                                                      \
  inline T operator-(const T& a) { return __hneg(a); }                                                              \
  inline T& operator++(T& a) { return a = __hadd(a, T(1.0f)); }                                                     \
  inline T& operator--(T& a) { return a = __hsub(a, T(1.0f)); }                                                     \
  inline T operator++(T& a, int) { const T old = a; ++a; return old; }                                              \
  inline T operator--(T& a, int) { const T old = a; --a; return old; }                                              \
  inline bool operator==(const T& a, const T& b) { return __heq(a, b); }                                            \
  inline bool operator!=(const T& a, const T& b) { return __hneu(a, b); }                                           \
  inline bool operator<(const T& a, const T& b) { return __hlt(a, b); }                                             \
  inline bool operator>(const T& a, const T& b) { return __hgt(a, b); }                                             \
  inline bool operator<=(const T& a, const T& b) { return __hle(a, b); }                                            \
  inline bool operator>=(const T& a, const T& b) { return __hge(a, b); }                                            \
  inline T2 operator+(const T2& a, const T2& b) { return __hadd2(a, b); }                                           \
  inline T2 operator-(const T2& a, const T2& b) { return __hsub2(a, b); }                                           \
  inline T2 operator*(const T2& a, const T2& b) { return __hmul2(a, b); }                                           \
  inline T2 operator/(const T2& a, const T2& b) { return __h2div(a, b); }                                           \
  inline T2& operator+=(T2& a, const T2& b) { return a = __hadd2(a, b); }                                           \
  inline T2& operator-=(T2& a, const T2& b) { return a = __hsub2(a, b); }                                           \
  inline T2& operator*=(T2& a, const T2& b) { return a = __hmul2(a, b); }                                           \
  inline T2& operator/=(T2& a, const T2& b) { return a = __h2div(a, b); }                                           \
  inline T2 operator+(const T2& a) { return a; }                                                                    \
  inline T2 operator-(const T2& a) { return __hneg2(a); }                                                           \
  inline T2& operator++(T2& a) { return a = __hadd2(a, T2(T(1.0f), T(1.0f))); }                                     \
  inline T2& operator--(T2& a) { return a = __hsub2(a, T2(T(1.0f), T(1.0f))); }                                     \
  inline T2 operator++(T2& a, int) { const T2 old = a; ++a; return old; }                                           \
  inline T2 operator--(T2& a, int) { const T2 old = a; --a; return old; }                                           \
  inline bool operator==(const T2& a, const T2& b) { return __hbeq2(a, b); }                                        \
  inline bool operator!=(const T2& a, const T2& b) { return __hbneu2(a, b); }                                       \
  inline bool operator<(const T2& a, const T2& b) { return __hblt2(a, b); }                                         \
  inline bool operator>(const T2& a, const T2& b) { return __hbgt2(a, b); }                                         \
  inline bool operator<=(const T2& a, const T2& b) { return __hble2(a, b); }                                        \
  inline bool operator>=(const T2& a, const T2& b) { return __hbge2(a, b); }                                        \
  /* atomicAdd (CUDA's: the pair's lanes are added together, one compare-and-swap) */                                \
  inline T atomicAdd(T* address, T val) {                                                                           \
    return ::pyshmem::cpu::fp::atomic_update<T, uint16_t>(address, val, [](T a, T b) { return __hadd(a, b); });     \
  }                                                                                                                  \
  inline T2 atomicAdd(T2* address, T2 val) {                                                                        \
    return ::pyshmem::cpu::fp::atomic_update<T2, uint32_t>(address, val, [](T2 a, T2 b) { return __hadd2(a, b); }); \
  }

PYSHMEM_CPU_F16_API(__half, __half2, half)
PYSHMEM_CPU_F16_API(__nv_bfloat16, __nv_bfloat162, bfloat16)

#undef PYSHMEM_CPU_F16_API
#undef PYSHMEM_CPU_F16_INTS
#undef PYSHMEM_CPU_F16_INT
#undef PYSHMEM_CPU_F16_MODES
#undef PYSHMEM_CPU_F16_MODE
#undef PYSHMEM_CPU_F16_MATH
#undef PYSHMEM_CPU_F16_CMP
#undef PYSHMEM_CPU_F16_TERNARY
#undef PYSHMEM_CPU_F16_UNARY
#undef PYSHMEM_CPU_F16_BINARY
