// pyshmem/cpu_math.h: CUDA's conversion intrinsics with their rounding modes
// (__float2int_rn ... __ull2double_rd, __double2float_rz), bit reinterpretations
// (__float_as_int ...), the explicitly rounded arithmetic (__fadd_rz, __fmaf_ru, __dsqrt_rd
// ...) and the fast-math forms (__expf, __sinf, __fdividef ...) for CUDA C++ kernels
// built for the CPU (included by pyshmem/cpu_kernel.h; host compilers only).
//
// Semantics are CUDA's: float-to-integer conversions saturate to the integer type's range
// and turn NaN into 0 (as PTX's cvt does); integer-to-float and narrowing float
// conversions round exactly once, in the mode the name says (see fp::encode); the _rz/_ru/
// _rd arithmetic is computed by the FPU in that IEEE rounding mode (fesetround around one
// operation, operands and result through volatile copies so the compiler cannot move the
// operation out of the mode); the _rn forms are plain C++ operations, which GCC does not
// contract into fma under -std=c++17. The fast-math forms are the ordinary, correctly or
// nearly correctly rounded libm functions: on a GPU they are approximations, so a kernel
// can only rely on their documented error bounds, which the exact values satisfy.
#pragma once

#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cmath>
#include <limits>

#if defined(__CUDACC__)
#error "pyshmem/cpu_math.h is for host compilers"
#endif

// glibc at least a.b (which declares some of C23's functions that CUDA also has).
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#define PYSHMEM_CPU_GLIBC_AT_LEAST(a, b) __GLIBC_PREREQ(a, b)
#else
#define PYSHMEM_CPU_GLIBC_AT_LEAST(a, b) 0
#endif

namespace pyshmem {
namespace cpu {
namespace fp {

enum Round { kNearest, kZero, kUp, kDown };

// The bits of (-1)^neg * m * 2^e in the binary format with M stored significand bits and
// E exponent bits (half: 10, 5; bfloat16: 7, 8; float: 23, 8; double: 52, 11), rounded once
// in mode r: IEEE subnormals, signed zero, and on overflow infinity or the largest finite
// value, whichever the mode gives. m holds the exact value (any 64-bit integer), so every
// conversion from an integer or a wider format is rounded directly, never twice.
template <int M, int E>
inline uint64_t encode(bool neg, uint64_t m, int e, Round r) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr int emin = 1 - bias;
  constexpr uint64_t inf = uint64_t((1 << E) - 1) << M;
  const uint64_t sign = uint64_t(neg) << (M + E);
  const bool away = r == kNearest || (r == kUp && !neg) || (r == kDown && neg);
  if (m == 0) return sign;
  const int exp = 63 - __builtin_clzll(m) + e;  // the value is in [2^exp, 2^(exp+1))
  if (exp > bias) return sign | (away ? inf : inf - 1);
  const int lsb = (exp < emin ? emin : exp) - M;  // weight of the result's last bit
  const int shift = lsb - e;                      // bits of m below that
  uint64_t q, rem = 0, half = 0;
  bool below_half = false;  // shift > 64: 0 < rem < half without computing them
  if (shift <= 0) {
    q = m << -shift;
  } else if (shift > 64) {
    q = 0;
    below_half = true;
  } else if (shift == 64) {
    q = 0, rem = m, half = uint64_t(1) << 63;
  } else {
    q = m >> shift, rem = m & ((uint64_t(1) << shift) - 1), half = uint64_t(1) << (shift - 1);
  }
  const bool inexact = below_half || rem != 0;
  bool up;
  if (r == kNearest) up = !below_half && (rem > half || (rem == half && half != 0 && (q & 1)));
  else up = inexact && away;
  q += up;  // a carry out of the significand moves into the exponent, as it should
  const uint64_t bits = q + (uint64_t((exp < emin ? emin : exp) - emin) << M);
  if (bits >= inf) return sign | (away ? inf : inf - 1);
  return sign | bits;
}

// A finite value of the format as (neg, m, e) for encode; false for infinity and NaN
// (neg and m then say which: m == 0 is infinity).
template <int M, int E>
inline bool decode(uint64_t bits, bool& neg, uint64_t& m, int& e) {
  constexpr int bias = (1 << (E - 1)) - 1;
  const uint64_t frac = bits & ((uint64_t(1) << M) - 1);
  const int biased = int((bits >> M) & ((1u << E) - 1));
  neg = (bits >> (M + E)) & 1;
  if (biased == (1 << E) - 1) {
    m = frac;
    return false;
  }
  m = biased == 0 ? frac : frac | (uint64_t(1) << M);
  e = (biased == 0 ? 1 : biased) - bias - M;
  return true;
}

// Narrows a value of format (MI, EI) to format (MO, EO) rounding in mode r; NaN becomes
// the output's `nan` bits (CUDA's canonical NaN), infinity stays infinity.
template <int MO, int EO, int MI, int EI>
inline uint64_t narrow(uint64_t bits, Round r, uint64_t nan) {
  bool neg;
  uint64_t m;
  int e;
  if (!decode<MI, EI>(bits, neg, m, e))
    return m != 0 ? nan : (uint64_t(neg) << (MO + EO)) | (uint64_t((1 << EO) - 1) << MO);
  return encode<MO, EO>(neg, m, e, r);
}

template <class To, class From>
inline To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To out;
  memcpy(static_cast<void*>(&out), &v, sizeof out);  // To is trivially copyable: plain bits
  return out;
}

inline float float_from_double(double x, Round r) {
  return bit_cast<float>(uint32_t(narrow<23, 8, 52, 11>(bit_cast<uint64_t>(x), r, 0x7fffffffu)));
}

// Integer value as float/double, rounded once in mode r.
template <class F, class I>
inline F from_int(I v, Round r) {
  const bool neg = v < 0;
  const uint64_t mag = neg ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  if constexpr (sizeof(F) == 4) return bit_cast<float>(uint32_t(encode<23, 8>(neg, mag, 0, r)));
  else return bit_cast<double>(encode<52, 11>(neg, mag, 0, r));
}

// x rounded to an integral value in mode r, independent of the FPU's rounding mode
// (kNearest: ties to even).
inline double round_integral(double x, Round r) {
  switch (r) {
    case kZero: return std::trunc(x);
    case kUp: return std::ceil(x);
    case kDown: return std::floor(x);
    default: {
      double t = std::trunc(x);
      const double frac = std::fabs(x - t);  // exact
      if (frac > 0.5 || (frac == 0.5 && std::fmod(t, 2.0) != 0.0)) t += std::copysign(1.0, x);
      return t;
    }
  }
}

// x rounded in mode r and converted to the integer type I as a GPU's cvt does: NaN gives
// 0, values beyond I's range give its minimum or maximum (0 for negatives when unsigned).
template <class I>
inline I to_int(double x, Round r) {
  using L = std::numeric_limits<I>;
  if (std::isnan(x)) return 0;
  const double t = round_integral(x, r);
  if (t <= double(L::min())) return L::min();
  if (t >= std::ldexp(1.0, L::digits)) return L::max();  // 2^digits is exact, L::max() may not be
  return I(t);
}

// f() computed with the FPU in IEEE rounding mode `mode` (FE_TOWARDZERO ...), then the mode
// restored. f reads its operands through volatile copies and the result is stored to a
// volatile, so neither the operation nor its operands move across the mode switches.
template <class T, class F>
inline T in_mode(int mode, F f) {
  const int old = fegetround();
  fesetround(mode);
  volatile T result = f();
  fesetround(old);
  return result;
}

}  // namespace fp
}  // namespace cpu
}  // namespace pyshmem

// ---- bit reinterpretation --------------------------------------------------------------

inline int __float_as_int(float x) { return ::pyshmem::cpu::fp::bit_cast<int>(x); }
inline float __int_as_float(int x) { return ::pyshmem::cpu::fp::bit_cast<float>(x); }
inline unsigned int __float_as_uint(float x) { return ::pyshmem::cpu::fp::bit_cast<unsigned int>(x); }
inline float __uint_as_float(unsigned int x) { return ::pyshmem::cpu::fp::bit_cast<float>(x); }
inline long long int __double_as_longlong(double x) { return ::pyshmem::cpu::fp::bit_cast<long long int>(x); }
inline double __longlong_as_double(long long int x) { return ::pyshmem::cpu::fp::bit_cast<double>(x); }
inline int __double2hiint(double x) { return int(uint64_t(__double_as_longlong(x)) >> 32); }
inline int __double2loint(double x) { return int(uint32_t(uint64_t(__double_as_longlong(x)))); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long int>((uint64_t(uint32_t(hi)) << 32) | uint32_t(lo)));
}

// ---- conversions with a rounding mode (rn: to nearest even, rz: toward zero, ru: up,
// rd: down) ---------------------------------------------------------------------------------

#define PYSHMEM_CPU_CVT4(name, R, P, body)                                                          \
  inline R name##_rn(P x) { constexpr ::pyshmem::cpu::fp::Round mode = ::pyshmem::cpu::fp::kNearest; body } \
  inline R name##_rz(P x) { constexpr ::pyshmem::cpu::fp::Round mode = ::pyshmem::cpu::fp::kZero; body }    \
  inline R name##_ru(P x) { constexpr ::pyshmem::cpu::fp::Round mode = ::pyshmem::cpu::fp::kUp; body }      \
  inline R name##_rd(P x) { constexpr ::pyshmem::cpu::fp::Round mode = ::pyshmem::cpu::fp::kDown; body }
#define PYSHMEM_CPU_TO_INT(name, R, P) PYSHMEM_CPU_CVT4(name, R, P, { return ::pyshmem::cpu::fp::to_int<R>(x, mode); })
#define PYSHMEM_CPU_FROM_INT(name, R, P) \
  PYSHMEM_CPU_CVT4(name, R, P, { return ::pyshmem::cpu::fp::from_int<R>(x, mode); })

PYSHMEM_CPU_TO_INT(__float2int, int, float)
PYSHMEM_CPU_TO_INT(__float2uint, unsigned int, float)
PYSHMEM_CPU_TO_INT(__float2ll, long long int, float)
PYSHMEM_CPU_TO_INT(__float2ull, unsigned long long int, float)
PYSHMEM_CPU_TO_INT(__double2int, int, double)
PYSHMEM_CPU_TO_INT(__double2uint, unsigned int, double)
PYSHMEM_CPU_TO_INT(__double2ll, long long int, double)
PYSHMEM_CPU_TO_INT(__double2ull, unsigned long long int, double)
PYSHMEM_CPU_FROM_INT(__int2float, float, int)
PYSHMEM_CPU_FROM_INT(__uint2float, float, unsigned int)
PYSHMEM_CPU_FROM_INT(__ll2float, float, long long int)
PYSHMEM_CPU_FROM_INT(__ull2float, float, unsigned long long int)
PYSHMEM_CPU_FROM_INT(__ll2double, double, long long int)
PYSHMEM_CPU_FROM_INT(__ull2double, double, unsigned long long int)
PYSHMEM_CPU_CVT4(__double2float, float, double, { return ::pyshmem::cpu::fp::float_from_double(x, mode); })
// Exact: every 32-bit integer is a double.
inline double __int2double_rn(int x) { return x; }
inline double __uint2double_rn(unsigned int x) { return x; }
#undef PYSHMEM_CPU_FROM_INT
#undef PYSHMEM_CPU_TO_INT
#undef PYSHMEM_CPU_CVT4

// ---- arithmetic with a rounding mode --------------------------------------------------------

// name_rn is the plain operation (FE_TONEAREST is the mode kernels run in); _rz/_ru/_rd
// run it in that IEEE mode (fp::in_mode). `expr` uses the volatile operands a, b, c.
#define PYSHMEM_CPU_RND(name, T, params, copies, expr)                                                    \
  inline T name##_rn params {                                                                            \
    copies;                                                                                              \
    return expr;                                                                                         \
  }                                                                                                      \
  inline T name##_rz params { return ::pyshmem::cpu::fp::in_mode<T>(FE_TOWARDZERO, [&] { copies; return T(expr); }); } \
  inline T name##_ru params { return ::pyshmem::cpu::fp::in_mode<T>(FE_UPWARD, [&] { copies; return T(expr); }); }     \
  inline T name##_rd params { return ::pyshmem::cpu::fp::in_mode<T>(FE_DOWNWARD, [&] { copies; return T(expr); }); }
#define PYSHMEM_CPU_RND2(name, T, expr) PYSHMEM_CPU_RND(name, T, (T x, T y), volatile T a = x; volatile T b = y, expr)
#define PYSHMEM_CPU_RND1(name, T, expr) PYSHMEM_CPU_RND(name, T, (T x), volatile T a = x, expr)

PYSHMEM_CPU_RND2(__fadd, float, a + b)
PYSHMEM_CPU_RND2(__fsub, float, a - b)
PYSHMEM_CPU_RND2(__fmul, float, a * b)
PYSHMEM_CPU_RND2(__fdiv, float, a / b)
PYSHMEM_CPU_RND1(__frcp, float, 1.0f / a)
PYSHMEM_CPU_RND1(__fsqrt, float, std::sqrt(float(a)))
PYSHMEM_CPU_RND(__fmaf, float, (float x, float y, float z), volatile float a = x; volatile float b = y;
                volatile float c = z, std::fma(float(a), float(b), float(c)))
PYSHMEM_CPU_RND2(__dadd, double, a + b)
PYSHMEM_CPU_RND2(__dsub, double, a - b)
PYSHMEM_CPU_RND2(__dmul, double, a * b)
PYSHMEM_CPU_RND2(__ddiv, double, a / b)
PYSHMEM_CPU_RND1(__drcp, double, 1.0 / a)
PYSHMEM_CPU_RND1(__dsqrt, double, std::sqrt(double(a)))
PYSHMEM_CPU_RND(__fma, double, (double x, double y, double z), volatile double a = x; volatile double b = y;
                volatile double c = z, std::fma(double(a), double(b), double(c)))
#undef PYSHMEM_CPU_RND1
#undef PYSHMEM_CPU_RND2
#undef PYSHMEM_CPU_RND

// 1/sqrt(x) rounded to nearest: computed in long double (at least 64 significant bits), so
// the one rounding to float that follows is the correctly rounded result.
inline float __frsqrt_rn(float x) { return float(1.0L / std::sqrt(static_cast<long double>(x))); }
#if !PYSHMEM_CPU_GLIBC_AT_LEAST(2, 42)  // later glibc has C23's rsqrt itself
inline float rsqrtf(float x) { return __frsqrt_rn(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
#endif
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }

// ---- fast-math forms: the ordinary functions ------------------------------------------------

inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x), *c = std::cos(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float fdividef(float x, float y) { return x / y; }
inline double fdivide(double x, double y) { return x / y; }
// Clamps to [0, 1]; NaN gives 0 (CUDA's definition).
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

// sin(pi x), cos(pi x): the argument is reduced exactly (fmod, then reflections that
// Sterbenz's lemma makes exact) to [-1/2, 1/2] before multiplying by pi, so integers and
// half-integers give exact zeros and ones and no precision is lost near them, as CUDA's
// sinpi/cospi promise. glibc 2.41 and later declare these C23 functions itself.
#if !PYSHMEM_CPU_GLIBC_AT_LEAST(2, 41)
namespace pyshmem {
namespace cpu {
namespace fp {
inline double sinpi(double x) {
  if (std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
  double r = std::fmod(x, 2.0);  // exact, in (-2, 2), the sign of x
  if (r > 1.0) r -= 2.0;
  if (r < -1.0) r += 2.0;  // now in [-1, 1]
  if (r > 0.5) r = 1.0 - r;
  if (r < -0.5) r = -1.0 - r;  // sin(pi r) unchanged, r in [-1/2, 1/2]
  if (r == 0.0) return std::copysign(0.0, x);
  return std::sin(3.14159265358979323846 * r);
}
inline double cospi(double x) {
  if (std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
  double r = std::fabs(std::fmod(x, 2.0));  // [0, 2)
  if (r > 1.0) r = 2.0 - r;                 // [0, 1], cos(pi r) unchanged
  return r > 0.5 ? -std::sin(3.14159265358979323846 * (r - 0.5)) : std::sin(3.14159265358979323846 * (0.5 - r));
}
}  // namespace fp
}  // namespace cpu
}  // namespace pyshmem
inline double sinpi(double x) { return ::pyshmem::cpu::fp::sinpi(x); }
inline double cospi(double x) { return ::pyshmem::cpu::fp::cospi(x); }
inline float sinpif(float x) { return float(::pyshmem::cpu::fp::sinpi(x)); }
inline float cospif(float x) { return float(::pyshmem::cpu::fp::cospi(x)); }
#endif
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x), *c = cospi(x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x), *c = cospif(x); }

// ---- integer averages (CUDA's __hadd/__rhadd on int, __uhadd/__urhadd): no overflow ----------

inline int __hadd(int x, int y) { return int((static_cast<long long>(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return int((static_cast<long long>(x) + y + 1) >> 1); }
inline unsigned int __uhadd(unsigned int x, unsigned int y) { return unsigned((uint64_t(x) + y) >> 1); }
inline unsigned int __urhadd(unsigned int x, unsigned int y) { return unsigned((uint64_t(x) + y + 1) >> 1); }
