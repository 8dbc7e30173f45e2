/* pyshmem/stdint.h: fixed-width integer types for the public headers, also under NVRTC
 * (runtime compilation has no C library headers; libcu++ provides the types). */
#ifndef PYSHMEM_STDINT_H
#define PYSHMEM_STDINT_H
#if defined(__CUDACC_RTC__)
#include <cuda/std/cstddef>
#include <cuda/std/cstdint>
typedef cuda::std::int8_t int8_t;
typedef cuda::std::int16_t int16_t;
typedef cuda::std::int32_t int32_t;
typedef cuda::std::int64_t int64_t;
typedef cuda::std::uint8_t uint8_t;
typedef cuda::std::uint16_t uint16_t;
typedef cuda::std::uint32_t uint32_t;
typedef cuda::std::uint64_t uint64_t;
typedef cuda::std::uintptr_t uintptr_t;
typedef cuda::std::ptrdiff_t ptrdiff_t;
#else
#include <stddef.h>
#include <stdint.h>
#endif
#endif /* PYSHMEM_STDINT_H */
