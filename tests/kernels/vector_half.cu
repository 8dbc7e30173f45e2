// Kernels for tests/unit/test_cpu_vector_half.py: CUDA's vector types, half and bfloat16
// and the conversion/rounding intrinsics. The same source compiles for the GPU (NVRTC,
// sm_90) and for the CPU build (pyshmem.cuda.Module(target="cpu")); the test checks the
// CPU build's values against NumPy and exact rational arithmetic.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <pyshmem/device.cuh>

#define GRID_STRIDE(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

// float -> half in the four rounding modes, and back; double -> half. out[4 i + mode].
extern "C" __global__ void half_convert(const float* in, const double* din, unsigned short* out, float* back,
                                        unsigned short* from_double, int n) {
  GRID_STRIDE(i, n) {
    out[4 * i + 0] = __half_as_ushort(__float2half_rn(in[i]));
    out[4 * i + 1] = __half_as_ushort(__float2half_rz(in[i]));
    out[4 * i + 2] = __half_as_ushort(__float2half_ru(in[i]));
    out[4 * i + 3] = __half_as_ushort(__float2half_rd(in[i]));
    const __half h = in[i];  // the implicit conversion: round to nearest
    if (__half_as_ushort(h) != out[4 * i]) out[4 * i] = 0xdead;
    back[i] = __half2float(__ushort_as_half(static_cast<unsigned short>(i & 0xffff)));
    from_double[i] = __half_as_ushort(__double2half(din[i]));
  }
}

extern "C" __global__ void bf16_convert(const float* in, const double* din, unsigned short* out, float* back,
                                        unsigned short* from_double, int n) {
  GRID_STRIDE(i, n) {
    out[4 * i + 0] = __bfloat16_as_ushort(__float2bfloat16_rn(in[i]));
    out[4 * i + 1] = __bfloat16_as_ushort(__float2bfloat16_rz(in[i]));
    out[4 * i + 2] = __bfloat16_as_ushort(__float2bfloat16_ru(in[i]));
    out[4 * i + 3] = __bfloat16_as_ushort(__float2bfloat16_rd(in[i]));
    if (__bfloat16_as_ushort(__float2bfloat16(in[i])) != out[4 * i]) out[4 * i] = 0xdead;
    back[i] = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(i & 0xffff)));
    from_double[i] = __bfloat16_as_ushort(__double2bfloat16(din[i]));
  }
}

// The arithmetic of one 16-bit type on a[i], b[i], c[i]: out[16 i + k] are the results'
// bits, cmp[i] a bit mask of the comparisons.
#define ARITH(T, T2, AS_BITS, HALVES, LOW, HIGH)                                                                     \
  GRID_STRIDE(i, n) {                                                                              \
    const T x = a[i], y = b[i], z = c[i];                                                          \
    unsigned short* o = out + 16 * i;                                                              \
    o[0] = AS_BITS(__hadd(x, y));                                                                  \
    o[1] = AS_BITS(__hsub(x, y));                                                                  \
    o[2] = AS_BITS(__hmul(x, y));                                                                  \
    o[3] = AS_BITS(__hdiv(x, y));                                                                  \
    o[4] = AS_BITS(__hfma(x, y, z));                                                               \
    o[5] = AS_BITS(__hmax(x, y));                                                                  \
    o[6] = AS_BITS(__hmin(x, y));                                                                  \
    o[7] = AS_BITS(x * y + z); /* two roundings */                                                 \
    o[8] = AS_BITS(-x);                                                                            \
    o[9] = AS_BITS(__habs(x));                                                                     \
    T acc = x;                                                                                     \
    acc += y;                                                                                      \
    o[10] = AS_BITS(acc);                                                                          \
    o[11] = AS_BITS(__hadd_sat(x, y));                                                             \
    const T2 p = HALVES(x, y), q = HALVES(y, z);                                                   \
    const T2 s = __hfma2(p, q, p);                                                                 \
    o[12] = AS_BITS(LOW(s));                                                                       \
    o[13] = AS_BITS(HIGH(s));                                                                      \
    o[14] = AS_BITS(__hmax_nan(x, y));                                                             \
    o[15] = AS_BITS(T(float(x) * 0.5f));                                                           \
    cmp[i] = __heq(x, y) | __hne(x, y) << 1 | __hlt(x, y) << 2 | __hle(x, y) << 3 |                \
             __hgt(x, y) << 4 | __hge(x, y) << 5 | __hequ(x, y) << 6 | __hneu(x, y) << 7 |          \
             __hltu(x, y) << 8 | __hgeu(x, y) << 9 | (x == y) << 10 | (x != y) << 11 |              \
             (x < y) << 12 | __hisnan(x) << 13 | (__hisinf(x) + 1) << 14 | __hbeq2(p, p) << 16 |    \
             __hblt2(p, q) << 17 | (__heq2_mask(p, q) == 0xffffffffu) << 18;                       \
  }

extern "C" __global__ void half_arith(const __half* a, const __half* b, const __half* c, unsigned short* out,
                                      unsigned* cmp, int n) {
  ARITH(__half, __half2, __half_as_ushort, __halves2half2, __low2half, __high2half)
}
extern "C" __global__ void bf16_arith(const __nv_bfloat16* a, const __nv_bfloat16* b, const __nv_bfloat16* c,
                                      unsigned short* out, unsigned* cmp, int n) {
  ARITH(__nv_bfloat16, __nv_bfloat162, __bfloat16_as_ushort, __halves2bfloat162, __low2bfloat16, __high2bfloat16)
}

// float/double -> integer in the four modes: ints[4 i + mode] ...
extern "C" __global__ void float_to_int(const float* f, const double* d, int* ints, unsigned* uints, long long* lls,
                                  int* dints, unsigned long long* dulls, short* hshorts, int n) {
  GRID_STRIDE(i, n) {
    const float x = f[i];
    const double y = d[i];
    ints[4 * i] = __float2int_rn(x), ints[4 * i + 1] = __float2int_rz(x);
    ints[4 * i + 2] = __float2int_ru(x), ints[4 * i + 3] = __float2int_rd(x);
    uints[4 * i] = __float2uint_rn(x), uints[4 * i + 1] = __float2uint_rz(x);
    uints[4 * i + 2] = __float2uint_ru(x), uints[4 * i + 3] = __float2uint_rd(x);
    lls[4 * i] = __float2ll_rn(x), lls[4 * i + 1] = __float2ll_rz(x);
    lls[4 * i + 2] = __float2ll_ru(x), lls[4 * i + 3] = __float2ll_rd(x);
    dints[4 * i] = __double2int_rn(y), dints[4 * i + 1] = __double2int_rz(y);
    dints[4 * i + 2] = __double2int_ru(y), dints[4 * i + 3] = __double2int_rd(y);
    dulls[4 * i] = __double2ull_rn(y), dulls[4 * i + 1] = __double2ull_rz(y);
    dulls[4 * i + 2] = __double2ull_ru(y), dulls[4 * i + 3] = __double2ull_rd(y);
    const __half h = __float2half_rn(x);
    hshorts[4 * i] = __half2short_rn(h), hshorts[4 * i + 1] = __half2short_rz(h);
    hshorts[4 * i + 2] = __half2short_ru(h), hshorts[4 * i + 3] = __half2short_rd(h);
  }
}

// 64-bit integers -> float, double, half in the four modes (bits out[.. 4 i + mode]).
extern "C" __global__ void int_to_float(const long long* v, unsigned* f, unsigned long long* d, unsigned* fi,
                                    unsigned short* h, int n) {
  GRID_STRIDE(i, n) {
    const long long x = v[i];
    const int xi = static_cast<int>(x);
    f[4 * i] = __float_as_uint(__ll2float_rn(x)), f[4 * i + 1] = __float_as_uint(__ll2float_rz(x));
    f[4 * i + 2] = __float_as_uint(__ll2float_ru(x)), f[4 * i + 3] = __float_as_uint(__ll2float_rd(x));
    d[4 * i] = __double_as_longlong(__ll2double_rn(x)), d[4 * i + 1] = __double_as_longlong(__ll2double_rz(x));
    d[4 * i + 2] = __double_as_longlong(__ll2double_ru(x)), d[4 * i + 3] = __double_as_longlong(__ll2double_rd(x));
    fi[4 * i] = __float_as_uint(__int2float_rn(xi)), fi[4 * i + 1] = __float_as_uint(__int2float_rz(xi));
    fi[4 * i + 2] = __float_as_uint(__int2float_ru(xi)), fi[4 * i + 3] = __float_as_uint(__int2float_rd(xi));
    h[4 * i] = __half_as_ushort(__int2half_rn(xi)), h[4 * i + 1] = __half_as_ushort(__int2half_rz(xi));
    h[4 * i + 2] = __half_as_ushort(__int2half_ru(xi)), h[4 * i + 3] = __half_as_ushort(__int2half_rd(xi));
  }
}

// Rounded arithmetic: out[16 i + 4 op + mode] for op add, mul, div, fma (float, as bits);
// dout[8 i + 4 op + mode] for double add, mul.
extern "C" __global__ void rounded_ops(const float* a, const float* b, const float* c, const double* da,
                                       const double* db, unsigned* out, unsigned long long* dout, int n) {
  GRID_STRIDE(i, n) {
    const float x = a[i], y = b[i], z = c[i];
    unsigned* o = out + 16 * i;
    o[0] = __float_as_uint(__fadd_rn(x, y)), o[1] = __float_as_uint(__fadd_rz(x, y));
    o[2] = __float_as_uint(__fadd_ru(x, y)), o[3] = __float_as_uint(__fadd_rd(x, y));
    o[4] = __float_as_uint(__fmul_rn(x, y)), o[5] = __float_as_uint(__fmul_rz(x, y));
    o[6] = __float_as_uint(__fmul_ru(x, y)), o[7] = __float_as_uint(__fmul_rd(x, y));
    o[8] = __float_as_uint(__fdiv_rn(x, y)), o[9] = __float_as_uint(__fdiv_rz(x, y));
    o[10] = __float_as_uint(__fdiv_ru(x, y)), o[11] = __float_as_uint(__fdiv_rd(x, y));
    o[12] = __float_as_uint(__fmaf_rn(x, y, z)), o[13] = __float_as_uint(__fmaf_rz(x, y, z));
    o[14] = __float_as_uint(__fmaf_ru(x, y, z)), o[15] = __float_as_uint(__fmaf_rd(x, y, z));
    const double u = da[i], v = db[i];
    unsigned long long* p = dout + 8 * i;
    p[0] = __double_as_longlong(__dadd_rn(u, v)), p[1] = __double_as_longlong(__dadd_rz(u, v));
    p[2] = __double_as_longlong(__dadd_ru(u, v)), p[3] = __double_as_longlong(__dadd_rd(u, v));
    p[4] = __double_as_longlong(__dmul_rn(u, v)), p[5] = __double_as_longlong(__dmul_rz(u, v));
    p[6] = __double_as_longlong(__dmul_ru(u, v)), p[7] = __double_as_longlong(__dmul_rd(u, v));
  }
}

// Fast-math and other float functions on x = a[i]: out[8 i + k].
extern "C" __global__ void fast_math(const float* a, float* out, int n) {
  GRID_STRIDE(i, n) {
    const float x = a[i];
    float* o = out + 8 * i;
    o[0] = __expf(x), o[1] = __logf(x), o[2] = __sinf(x), o[3] = __cosf(x);
    o[4] = __powf(x, 1.5f), o[5] = __fdividef(x, 3.0f), o[6] = __saturatef(x), o[7] = rsqrtf(x);
  }
}

// Vector loads and stores: one float4 and one int4 per thread.
extern "C" __global__ void vectors(const float4* fin, float4* fout, const int4* iin, int4* iout, double2* dout,
                                   int n) {
  GRID_STRIDE(i, n) {
    const float4 v = fin[i];
    fout[i] = make_float4(v.w, v.z * 2.0f, v.y + 1.0f, v.x);
    const int4 w = iin[i];
    iout[i] = make_int4(w.y, w.x, w.w - w.z, static_cast<int>(threadIdx.x));
    const float2 lo = make_float2(v.x, v.y);
    dout[i] = make_double2(lo.x, static_cast<double>(blockIdx.x));
  }
}

// sizeof and alignof of the vector and 16-bit types, in the test's order.
#define LAYOUT(T) out[k++] = sizeof(T), out[k++] = alignof(T);
extern "C" __global__ void layout(unsigned long long* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int k = 0;
  LAYOUT(char1) LAYOUT(char2) LAYOUT(char3) LAYOUT(char4) LAYOUT(uchar2) LAYOUT(uchar4)
  LAYOUT(short1) LAYOUT(short2) LAYOUT(short3) LAYOUT(short4) LAYOUT(ushort2) LAYOUT(ushort4)
  LAYOUT(int1) LAYOUT(int2) LAYOUT(int3) LAYOUT(int4) LAYOUT(uint1) LAYOUT(uint2) LAYOUT(uint3) LAYOUT(uint4)
  LAYOUT(long1) LAYOUT(long2) LAYOUT(long3) LAYOUT(ulong2)
  LAYOUT(longlong1) LAYOUT(longlong2) LAYOUT(longlong3) LAYOUT(ulonglong2)
  LAYOUT(float1) LAYOUT(float2) LAYOUT(float3) LAYOUT(float4)
  LAYOUT(double1) LAYOUT(double2) LAYOUT(double3)
  LAYOUT(__half) LAYOUT(__half2) LAYOUT(__nv_bfloat16) LAYOUT(__nv_bfloat162)
}

// atomicAdd on __half from every thread, and on __half2.
extern "C" __global__ void half_atomics(__half* sum, __half2* sum2) {
  atomicAdd(sum, __float2half(1.0f));
  atomicAdd(sum2, __floats2half2_rn(0.5f, 2.0f));
}
