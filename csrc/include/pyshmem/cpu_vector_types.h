// pyshmem/cpu_vector_types.h: CUDA's built-in vector types (char1 ... double4) and their
// make_* functions for CUDA C++ kernels built for the CPU (included by
// pyshmem/cpu_kernel.h, and by the CPU build's <vector_types.h>/<vector_functions.h>).
//
// Each type is a plain aggregate of members x, y, z, w with CUDA's size and alignment: the
// 2- and 4-element types are aligned to their whole size up to 16 bytes (float4, int4,
// double2, longlong2: 16; float2, int2: 8; short2: 4 ...), so a float4 load from a
// 16-byte aligned array reads one vector as on a GPU; the 1- and 3-element types have the
// alignment of their element (int3: 12 bytes, aligned 4). As on a GPU they have no
// arithmetic operators. uint3 and dim3 come from pyshmem/cpu_fibers.h (threadIdx's type),
// which pyshmem/cpu_kernel.h includes before this header.
#pragma once

#if defined(__CUDACC__)
#error "pyshmem/cpu_vector_types.h is for host compilers"
#endif

#define PYSHMEM_CPU_VEC1(name, T, A) \
  struct alignas(A) name {           \
    T x;                             \
  };                                 \
  inline name make_##name(T x) { return name{x}; }
#define PYSHMEM_CPU_VEC2(name, T, A) \
  struct alignas(A) name {           \
    T x, y;                          \
  };                                 \
  inline name make_##name(T x, T y) { return name{x, y}; }
#define PYSHMEM_CPU_VEC3(name, T, A) \
  struct alignas(A) name {           \
    T x, y, z;                       \
  };                                 \
  inline name make_##name(T x, T y, T z) { return name{x, y, z}; }
#define PYSHMEM_CPU_VEC4(name, T, A) \
  struct alignas(A) name {           \
    T x, y, z, w;                    \
  };                                 \
  inline name make_##name(T x, T y, T z, T w) { return name{x, y, z, w}; }

// All four widths of one element type: alignment of the 1-, 2-, 3- and 4-element types.
#define PYSHMEM_CPU_VECS(base, T, a1, a2, a3, a4) \
  PYSHMEM_CPU_VEC1(base##1, T, a1)                 \
  PYSHMEM_CPU_VEC2(base##2, T, a2)                 \
  PYSHMEM_CPU_VEC3(base##3, T, a3)                 \
  PYSHMEM_CPU_VEC4(base##4, T, a4)

PYSHMEM_CPU_VECS(char, signed char, 1, 2, 1, 4)
PYSHMEM_CPU_VECS(uchar, unsigned char, 1, 2, 1, 4)
PYSHMEM_CPU_VECS(short, short, 2, 4, 2, 8)
PYSHMEM_CPU_VECS(ushort, unsigned short, 2, 4, 2, 8)
PYSHMEM_CPU_VECS(int, int, 4, 8, 4, 16)
PYSHMEM_CPU_VEC1(uint1, unsigned int, 4)
PYSHMEM_CPU_VEC2(uint2, unsigned int, 8)
PYSHMEM_CPU_VEC4(uint4, unsigned int, 16)
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
// long is 8 bytes on the 64-bit hosts this builds for, as on a 64-bit CUDA host.
PYSHMEM_CPU_VECS(long, long int, alignof(long int), 2 * sizeof(long int), alignof(long int), 16)
PYSHMEM_CPU_VECS(ulong, unsigned long int, alignof(unsigned long int), 2 * sizeof(unsigned long int),
                 alignof(unsigned long int), 16)
PYSHMEM_CPU_VECS(longlong, long long int, 8, 16, 8, 16)
PYSHMEM_CPU_VECS(ulonglong, unsigned long long int, 8, 16, 8, 16)
PYSHMEM_CPU_VECS(float, float, 4, 8, 4, 16)
PYSHMEM_CPU_VECS(double, double, 8, 16, 8, 16)
// CUDA 13's explicitly aligned forms of the 32-byte types (it deprecates the plain names,
// which keep 16-byte alignment).
#define PYSHMEM_CPU_VEC4_ALIGNED(base, T) PYSHMEM_CPU_VEC4(base##4_16a, T, 16) PYSHMEM_CPU_VEC4(base##4_32a, T, 32)
PYSHMEM_CPU_VEC4_ALIGNED(long, long int)
PYSHMEM_CPU_VEC4_ALIGNED(ulong, unsigned long int)
PYSHMEM_CPU_VEC4_ALIGNED(longlong, long long int)
PYSHMEM_CPU_VEC4_ALIGNED(ulonglong, unsigned long long int)
PYSHMEM_CPU_VEC4_ALIGNED(double, double)
#undef PYSHMEM_CPU_VEC4_ALIGNED

#undef PYSHMEM_CPU_VECS
#undef PYSHMEM_CPU_VEC4
#undef PYSHMEM_CPU_VEC3
#undef PYSHMEM_CPU_VEC2
#undef PYSHMEM_CPU_VEC1

// CUDA's layout, checked: (size, alignment) of each type.
#define PYSHMEM_CPU_VEC_LAYOUT(T, size, align) \
  static_assert(sizeof(T) == (size) && alignof(T) == (align), #T " has CUDA's size and alignment");
PYSHMEM_CPU_VEC_LAYOUT(char1, 1, 1)
PYSHMEM_CPU_VEC_LAYOUT(char2, 2, 2)
PYSHMEM_CPU_VEC_LAYOUT(char3, 3, 1)
PYSHMEM_CPU_VEC_LAYOUT(char4, 4, 4)
PYSHMEM_CPU_VEC_LAYOUT(uchar3, 3, 1)
PYSHMEM_CPU_VEC_LAYOUT(uchar4, 4, 4)
PYSHMEM_CPU_VEC_LAYOUT(short2, 4, 4)
PYSHMEM_CPU_VEC_LAYOUT(short3, 6, 2)
PYSHMEM_CPU_VEC_LAYOUT(short4, 8, 8)
PYSHMEM_CPU_VEC_LAYOUT(ushort4, 8, 8)
PYSHMEM_CPU_VEC_LAYOUT(int1, 4, 4)
PYSHMEM_CPU_VEC_LAYOUT(int2, 8, 8)
PYSHMEM_CPU_VEC_LAYOUT(int3, 12, 4)
PYSHMEM_CPU_VEC_LAYOUT(int4, 16, 16)
PYSHMEM_CPU_VEC_LAYOUT(uint2, 8, 8)
PYSHMEM_CPU_VEC_LAYOUT(uint3, 12, 4)
PYSHMEM_CPU_VEC_LAYOUT(uint4, 16, 16)
PYSHMEM_CPU_VEC_LAYOUT(long2, 16, 16)
PYSHMEM_CPU_VEC_LAYOUT(long3, 24, 8)
PYSHMEM_CPU_VEC_LAYOUT(ulong4, 32, 16)
PYSHMEM_CPU_VEC_LAYOUT(longlong1, 8, 8)
PYSHMEM_CPU_VEC_LAYOUT(longlong2, 16, 16)
PYSHMEM_CPU_VEC_LAYOUT(longlong3, 24, 8)
PYSHMEM_CPU_VEC_LAYOUT(longlong4, 32, 16)
PYSHMEM_CPU_VEC_LAYOUT(ulonglong2, 16, 16)
PYSHMEM_CPU_VEC_LAYOUT(float1, 4, 4)
PYSHMEM_CPU_VEC_LAYOUT(float2, 8, 8)
PYSHMEM_CPU_VEC_LAYOUT(float3, 12, 4)
PYSHMEM_CPU_VEC_LAYOUT(float4, 16, 16)
PYSHMEM_CPU_VEC_LAYOUT(double1, 8, 8)
PYSHMEM_CPU_VEC_LAYOUT(double2, 16, 16)
PYSHMEM_CPU_VEC_LAYOUT(double3, 24, 8)
PYSHMEM_CPU_VEC_LAYOUT(double4, 32, 16)
PYSHMEM_CPU_VEC_LAYOUT(double4_16a, 32, 16)
PYSHMEM_CPU_VEC_LAYOUT(double4_32a, 32, 32)
PYSHMEM_CPU_VEC_LAYOUT(longlong4_32a, 32, 32)
#undef PYSHMEM_CPU_VEC_LAYOUT
