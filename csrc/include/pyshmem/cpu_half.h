// pyshmem/cpu_half.h: CUDA's half-precision types __half/__half2 (IEEE binary16) and
// __nv_bfloat16/__nv_bfloat162 (bfloat16) with the API of <cuda_fp16.h>/<cuda_bf16.h>,
// for CUDA C++ kernels built for the CPU (included by pyshmem/cpu_kernel.h, and by the
// CPU build's <cuda_fp16.h>/<cuda_bf16.h>; host compilers only).
//
// Storage is exact: one 16-bit word with the format's bits, so arrays are shared with a
// GPU or NumPy (np.float16) unchanged. Conversions from float, double and the integer
// types round once, directly from the exact value (pyshmem::cpu::fp::encode), in the mode
// of their name (_rn to nearest even, the default; _rz, _ru, _rd), with subnormals,
// infinities and overflow as IEEE says; NaN becomes CUDA's canonical NaN 0x7fff.
// Conversions to float are exact. Arithmetic computes in float and rounds once to the
// 16-bit format, which for + - * / is the correctly rounded result a GPU gives (float has
// more than 2p+2 bits for both formats, so the double rounding is harmless); fma is exact
// in double, rounded to odd, then rounded to the format, again one correct rounding. The
// math functions (hsqrt, hexp, hsin ...) compute in float and round. The overload set
// mirrors CUDA's: implicit conversions from float, double and integers, to float, the
// integer types and bool, so expressions that are ambiguous with CUDA's headers (h + 1.0f)
// are ambiguous here too.
#pragma once

#include <stdint.h>

#include <cmath>
#include <type_traits>

#include "pyshmem/cpu_math.h"
#include "pyshmem/cpu_vector_types.h"

#if defined(__CUDACC__)
#error "pyshmem/cpu_half.h is for host compilers"
#endif

namespace pyshmem {
namespace cpu {
namespace fp {

// Formats: M stored significand bits, E exponent bits.
template <int M, int E>
struct Format {
  static constexpr int kMant = M, kExp = E;
  static constexpr uint16_t kNan = 0x7fff;  // CUDA's canonical NaN, for both formats
  static constexpr uint16_t kInf = uint16_t(((1u << E) - 1) << M);

  static uint16_t from_float(float f, Round r) { return uint16_t(narrow<M, E, 23, 8>(bit_cast<uint32_t>(f), r, kNan)); }
  static uint16_t from_double(double d, Round r) {
    return uint16_t(narrow<M, E, 52, 11>(bit_cast<uint64_t>(d), r, kNan));
  }
  template <class I>
  static uint16_t from_int(I v, Round r) {
    const bool neg = v < 0;
    return uint16_t(encode<M, E>(neg, neg ? uint64_t(0) - uint64_t(v) : uint64_t(v), 0, r));
  }
  // Exact: every value of the format is a float (NaN keeps its sign and payload).
  static float to_float(uint16_t h) {
    if constexpr (E == 8) return bit_cast<float>(uint32_t(h) << 16);
    bool neg;
    uint64_t m;
    int e;
    if (!decode<M, E>(h, neg, m, e))
      return bit_cast<float>((uint32_t(neg) << 31) | 0x7f800000u | uint32_t(m << (23 - M)));
    return bit_cast<float>(uint32_t(encode<23, 8>(neg, m, e, kNearest)));
  }
  static bool is_nan(uint16_t h) { return (h & 0x7fff) > kInf; }
  // a * b + c rounded once to the format: the product is exact in double, the sum exact
  // by TwoSum, and the double result rounded to odd keeps the information a single
  // rounding to the (much narrower) format needs.
  static uint16_t fma(uint16_t a, uint16_t b, uint16_t c) {
    const double p = double(to_float(a)) * double(to_float(b)), z = to_float(c);
    double s = p + z;
    if (std::isfinite(s)) {
      const double bb = s - p, err = (p - (s - bb)) + (z - bb);
      if (err != 0.0 && (bit_cast<uint64_t>(s) & 1) == 0) s = std::nextafter(s, err > 0.0 ? INFINITY : -INFINITY);
    }
    return from_double(s, kNearest);
  }
};
using HalfFormat = Format<10, 5>;
using Bf16Format = Format<7, 8>;

}  // namespace fp
}  // namespace cpu
}  // namespace pyshmem

// One 16-bit floating-point type (T, its pair T2, their raw forms R and R2) with CUDA's
// members. The conversion operators to integers truncate (as a C++ cast of a float does;
// NaN gives 0); to bool: nonzero (NaN included).
#define PYSHMEM_CPU_F16_TYPES(T, T2, R, R2, FMT, O)                                                                  \
  struct R {                                                                                                        \
    unsigned short x;                                                                                               \
  };                                                                                                                \
  struct alignas(4) R2 {                                                                                            \
    unsigned short x, y;                                                                                            \
  };                                                                                                                \
  struct alignas(2) T {                                                                                             \
   protected:                                                                                                       \
    unsigned short __x;                                                                                             \
                                                                                                                    \
   public:                                                                                                          \
    T() = default;                                                                                                  \
    constexpr T(const R& r) : __x(r.x) {}                                                                           \
    constexpr operator R() const { return R{__x}; }                                                                 \
    /* Copies from a volatile object (a template, so the type stays trivially copyable). */                         \
    template <class V, class = std::enable_if_t<std::is_same<V, volatile T>::value>>                                \
    T(const V& v) : __x(v.__x) {}                                                                                   \
    template <class H, class = std::enable_if_t<std::is_same<H, T>::value>>                                         \
    volatile T& operator=(const H& h) volatile {                                                                    \
      __x = h.__x;                                                                                                  \
      return *this;                                                                                                 \
    }                                                                                                               \
    explicit T(const O& o); /* from the other 16-bit type, through float (exact) */                                 \
    T(float f) : __x(FMT::from_float(f, ::pyshmem::cpu::fp::kNearest)) {}                                           \
    T(double d) : __x(FMT::from_double(d, ::pyshmem::cpu::fp::kNearest)) {}                                         \
    T(short v) : __x(FMT::from_int(v, ::pyshmem::cpu::fp::kNearest)) {}                                            \
    T(unsigned short v) : __x(FMT::from_int(v, ::pyshmem::cpu::fp::kNearest)) {}                                   \
    T(int v) : __x(FMT::from_int(v, ::pyshmem::cpu::fp::kNearest)) {}                                              \
    T(unsigned int v) : __x(FMT::from_int(v, ::pyshmem::cpu::fp::kNearest)) {}                                     \
    T(long v) : __x(FMT::from_int(v, ::pyshmem::cpu::fp::kNearest)) {}                                             \
    T(unsigned long v) : __x(FMT::from_int(v, ::pyshmem::cpu::fp::kNearest)) {}                                    \
    T(long long v) : __x(FMT::from_int(v, ::pyshmem::cpu::fp::kNearest)) {}                                        \
    T(unsigned long long v) : __x(FMT::from_int(v, ::pyshmem::cpu::fp::kNearest)) {}                               \
    operator float() const { return FMT::to_float(__x); }                                                           \
    operator short() const { return ::pyshmem::cpu::fp::to_int<short>(float(*this), ::pyshmem::cpu::fp::kZero); } \
    operator unsigned short() const {                                                                               \
      return ::pyshmem::cpu::fp::to_int<unsigned short>(float(*this), ::pyshmem::cpu::fp::kZero);                  \
    }                                                                                                               \
    operator int() const { return ::pyshmem::cpu::fp::to_int<int>(float(*this), ::pyshmem::cpu::fp::kZero); }     \
    operator unsigned int() const {                                                                                 \
      return ::pyshmem::cpu::fp::to_int<unsigned int>(float(*this), ::pyshmem::cpu::fp::kZero);                    \
    }                                                                                                               \
    operator long long() const {                                                                                    \
      return ::pyshmem::cpu::fp::to_int<long long>(float(*this), ::pyshmem::cpu::fp::kZero);                       \
    }                                                                                                               \
    operator unsigned long long() const {                                                                           \
      return ::pyshmem::cpu::fp::to_int<unsigned long long>(float(*this), ::pyshmem::cpu::fp::kZero);              \
    }                                                                                                               \
    operator bool() const { return (__x & 0x7fff) != 0; }                                                           \
  };                                                                                                                \
  struct alignas(4) T2 {                                                                                            \
    T x, y;                                                                                                         \
    T2() = default;                                                                                                 \
    constexpr T2(const T& a, const T& b) : x(a), y(b) {}                                                            \
    constexpr T2(const R2& r) : x(R{r.x}), y(R{r.y}) {}                                                             \
    constexpr operator R2() const { return R2{R(x).x, R(y).x}; }                                                    \
  };                                                                                                                \
  static_assert(sizeof(T) == 2 && alignof(T) == 2 && sizeof(T2) == 4 && alignof(T2) == 4, #T " has CUDA's layout"); \
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_copyable<T2>::value, #T " is plain bits");

struct __half;
struct __nv_bfloat16;
PYSHMEM_CPU_F16_TYPES(__half, __half2, __half_raw, __half2_raw, ::pyshmem::cpu::fp::HalfFormat, __nv_bfloat16)
PYSHMEM_CPU_F16_TYPES(__nv_bfloat16, __nv_bfloat162, __nv_bfloat16_raw, __nv_bfloat162_raw,
                      ::pyshmem::cpu::fp::Bf16Format, __half)
#undef PYSHMEM_CPU_F16_TYPES
inline __half::__half(const __nv_bfloat16& o) : __half(float(o)) {}
inline __nv_bfloat16::__nv_bfloat16(const __half& o) : __nv_bfloat16(float(o)) {}

typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#include "pyshmem/cpu_half_api.h"
