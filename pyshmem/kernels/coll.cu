// pyshmem/kernels/coll.cu: collectives on a CUDA stream (the host API's stream= form).
//
// pyshmem.broadcast(..., stream=s) and friends on symmetric GPU arrays launch one of
// these one-block kernels on `s` (pyshmem/_gpu_coll.py builds them with NVRTC on first
// use). Each calls the device API's block-cooperative collective, so it is ordered with
// the other work on the stream and can be captured in a CUDA graph. A reduction kernel,
// pyshmem_coll_<op>_reduce_<type>, is instantiated by a PYSHMEM_COLL_REDUCE line that the
// Python side appends for the one (op, type) a call needs, and built alone: all 70 in
// one module would cost a minute of NVRTC before the first collective.
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

// dest_bytes bounds the members' blocks together (every member traps with a message
// when they do not fit: the host cannot know the others' counts before the kernel runs).
extern "C" __global__ void pyshmem_coll_collect(int team, void* dest, unsigned long long dest_bytes,
                                                const void* source, unsigned long long nbytes) {
  pyshmem::detail::collect_impl<pyshmem::Coop::block>("collect (stream)", team, dest, dest_bytes, source, nbytes);
}

extern "C" __global__ void pyshmem_coll_alltoalls(int team, void* dest, const void* source, long long dst, long long sst,
                                                  unsigned long long nelems, unsigned long long elem) {
  pyshmem::detail::alltoalls_impl<pyshmem::Coop::block>("alltoalls (stream)", team, dest, source, dst, sst, nelems,
                                                        elem);
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
