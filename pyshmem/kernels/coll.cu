// pyshmem/kernels/coll.cu: collectives on a CUDA stream (the host API's stream= form).
//
// pyshmem.broadcast(..., stream=s) and friends on symmetric GPU arrays launch one of
// these one-block kernels on `s` (pyshmem/_gpu_coll.py builds them with NVRTC on first
// use). Each calls the device API's block-cooperative collective, so it is ordered with
// the other work on the stream and can be captured in a CUDA graph. Reductions have one
// kernel per element type and operator: pyshmem_coll_<op>_reduce_<type>.
#include <pyshmem/device.cuh>

#include <cuda/std/complex>

extern "C" __global__ void pyshmem_coll_sync(int team, int complete) {
  if (complete) pyshmem::barrier_block(team);
  else pyshmem::sync_block(team);
}

extern "C" __global__ void pyshmem_coll_broadcast(int team, void* dest, const void* source,
                                                  unsigned long long nbytes, int root) {
  pyshmem::broadcastmem_block(team, dest, source, nbytes, root);
}

extern "C" __global__ void pyshmem_coll_fcollect(int team, void* dest, const void* source, unsigned long long nbytes) {
  pyshmem::fcollectmem_block(team, dest, source, nbytes);
}

extern "C" __global__ void pyshmem_coll_alltoall(int team, void* dest, const void* source, unsigned long long nbytes) {
  pyshmem::alltoallmem_block(team, dest, source, nbytes);
}

// FN is the device call's full name (and_reduce, not and: `and` is an operator token).
#define PYSHMEM_COLL_REDUCE(FN, NAME, T)                                                                      \
  extern "C" __global__ void pyshmem_coll_##FN##_##NAME(int team, T* dest, const T* source,                \
                                                         unsigned long long nelems) {                     \
    pyshmem::FN##_block(team, dest, source, nelems);                                                         \
  }
#define PYSHMEM_COLL_ARITH(NAME, T) PYSHMEM_COLL_REDUCE(sum_reduce, NAME, T) PYSHMEM_COLL_REDUCE(prod_reduce, NAME, T)
#define PYSHMEM_COLL_ORDERED(NAME, T) \
  PYSHMEM_COLL_ARITH(NAME, T) PYSHMEM_COLL_REDUCE(max_reduce, NAME, T) PYSHMEM_COLL_REDUCE(min_reduce, NAME, T)
#define PYSHMEM_COLL_INTEGER(NAME, T)                                                               \
  PYSHMEM_COLL_ORDERED(NAME, T) PYSHMEM_COLL_REDUCE(and_reduce, NAME, T)                            \
  PYSHMEM_COLL_REDUCE(or_reduce, NAME, T) PYSHMEM_COLL_REDUCE(xor_reduce, NAME, T)

PYSHMEM_COLL_INTEGER(int8, signed char)
PYSHMEM_COLL_INTEGER(int16, short)
PYSHMEM_COLL_INTEGER(int32, int)
PYSHMEM_COLL_INTEGER(int64, long long)
PYSHMEM_COLL_INTEGER(uint8, unsigned char)
PYSHMEM_COLL_INTEGER(uint16, unsigned short)
PYSHMEM_COLL_INTEGER(uint32, unsigned int)
PYSHMEM_COLL_INTEGER(uint64, unsigned long long)
PYSHMEM_COLL_ORDERED(float32, float)
PYSHMEM_COLL_ORDERED(float64, double)
PYSHMEM_COLL_ARITH(complex64, cuda::std::complex<float>)
PYSHMEM_COLL_ARITH(complex128, cuda::std::complex<double>)
