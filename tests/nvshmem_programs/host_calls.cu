// NVSHMEM called from host code, as applications and NVIDIA's host perftest do: RMA
// (put, get, p, g, the nbi forms completed by quiet), atomics, signals and waits on
// symmetric words another PE updates, and collectives (reduce, reducescatter, fcollect,
// broadcast, alltoall) from main(); the same data movement on a stream
// (putmem_nbi_on_stream + quiet_on_stream, reducescatter_on_stream); reducescatter from
// kernels by a thread, a warp and a block; and a buffer of the program's own (cuMemCreate
// + cuMemMap) registered as symmetric, written by peers through the returned address and
// read back through its own. "--require-npes N" makes it refuse other PE counts as
// NVIDIA's pt-to-pt perftests do. Each PE ends with "PE k of n: host calls OK". The host
// touches symmetric memory only through cudaMemcpy, so the same source runs on a GPU.
// Built with pyshmem-nvcc --cpu and run under shmemrun by tests/pe/test_nvshmem_compat.py,
// also under PYSHMEM_ORDER_CHECK=1; built with --gpu there too, and run by tests/gpu on a
// GPU (where registering the program's own buffers is refused, as documented).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda.h>
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "cuda_check.h"
#include "expect.h"


constexpr int kN = 96;

__global__ void reducescatter_kernels(int* dest, const int* src, int n, int which) {
  if (which == 0 && threadIdx.x == 0) nvshmem_int_sum_reducescatter(NVSHMEM_TEAM_WORLD, dest, src, n);
  if (which == 1 && threadIdx.x < 32) nvshmemx_int_max_reducescatter_warp(NVSHMEM_TEAM_WORLD, dest, src, n);
  if (which == 2) nvshmemx_int32_xor_reducescatter_block(NVSHMEM_TEAM_WORLD, dest, src, n);
}

static int value(int pe, int i) { return 1000 * pe + i; }

// This PE's copy of symmetric memory, read and written by the host (device memory on a GPU).
template <class T>
static void load(T* host, const T* sym, size_t n = 1) {
  CUDA_CHECK(cudaMemcpy(host, sym, n * sizeof(T), cudaMemcpyDeviceToHost));
}
template <class T>
static T load1(const T* sym) {
  T v;
  load(&v, sym);
  return v;
}
template <class T>
static void store(T* sym, const T* host, size_t n) {
  CUDA_CHECK(cudaMemcpy(sym, host, n * sizeof(T), cudaMemcpyHostToDevice));
}

static void check_rma(int me, int npes) {
  const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
  int* data = static_cast<int*>(nvshmem_malloc(kN * sizeof(int)));
  int* mine = static_cast<int*>(malloc(kN * sizeof(int)));
  for (int i = 0; i < kN; ++i) mine[i] = value(me, i);
  nvshmem_int_put(data, mine, kN, next);  // blocking: mine may be reused on return
  memset(mine, 0, kN * sizeof(int));
  nvshmem_barrier_all();  // completes the puts and synchronises
  int got[kN];
  load(got, data, kN);
  EXPECT(got[0] == value(prev, 0) && got[kN - 1] == value(prev, kN - 1));
  nvshmem_int_get(got, data, kN, next);  // next holds my values
  EXPECT(got[5] == value(me, 5));
  EXPECT(nvshmem_int_g(data + 7, prev) == value((prev + npes - 1) % npes, 7));
  nvshmem_barrier_all();
  nvshmem_int_p(data + 1, -me, next);
  nvshmem_putmem_nbi(data + 2, mine, sizeof(int), next);  // zeros
  nvshmem_quiet();
  nvshmem_barrier_all();
  load(got, data, 3);
  EXPECT(got[1] == -prev && got[2] == 0);
  nvshmem_getmem_nbi(got, data, 3 * sizeof(int), next);
  nvshmem_quiet();
  EXPECT(got[1] == -me && got[0] == value(me, 0));
  nvshmem_barrier_all();
  nvshmem_free(data);
  free(mine);
}

static void check_amo_signal_wait(int me, int npes) {
  const int next = (me + 1) % npes;
  long long* counter = static_cast<long long*>(nvshmem_calloc(1, sizeof(long long)));
  uint64_t* sig = static_cast<uint64_t*>(nvshmem_calloc(1, sizeof(uint64_t)));
  int* flag = static_cast<int*>(nvshmem_calloc(1, sizeof(int)));
  int* payload = static_cast<int*>(nvshmem_calloc(kN, sizeof(int)));
  int src[kN];
  for (int i = 0; i < kN; ++i) src[i] = value(me, i) + 1;
  nvshmem_barrier_all();
  const long long before = nvshmem_longlong_atomic_fetch_add(counter, me + 1, 0);
  EXPECT(before >= 0);
  nvshmem_barrier_all();
  if (me == 0) EXPECT(load1(counter) == npes * (npes + 1) / 2);
  EXPECT(nvshmem_longlong_atomic_fetch(counter, 0) == npes * (npes + 1) / 2);
  nvshmem_barrier_all();
  // Data, then a signal the data must be visible before; the receiver waits on it.
  nvshmem_int_put_signal(payload, src, kN, sig, 1, NVSHMEM_SIGNAL_ADD, next);
  EXPECT(nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, 1) == 1);
  const int prev = (me + npes - 1) % npes;
  int got[kN];
  load(got, payload, kN);
  EXPECT(got[0] == value(prev, 0) + 1 && got[kN - 1] == value(prev, kN - 1) + 1);
  // A word a peer sets with an atomic, waited for by value.
  nvshmem_int_atomic_set(flag, 42, next);
  nvshmem_int_wait_until(flag, NVSHMEM_CMP_EQ, 42);
  EXPECT(nvshmem_int_test(flag, NVSHMEM_CMP_EQ, 42) == 1);
  nvshmem_barrier_all();
  nvshmem_free(counter);
  nvshmem_free(sig);
  nvshmem_free(flag);
  nvshmem_free(payload);
}

static void check_collectives(int me, int npes) {
  int* src = static_cast<int*>(nvshmem_malloc(kN * npes * sizeof(int)));
  int* dst = static_cast<int*>(nvshmem_malloc(kN * npes * sizeof(int)));
  int* host = static_cast<int*>(malloc(kN * npes * sizeof(int)));
  for (int i = 0; i < kN * npes; ++i) host[i] = me + i;
  store(src, host, kN * npes);
  nvshmem_barrier_all();
  EXPECT(nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, dst, src, kN) == 0);
  load(host, dst, kN * npes);
  EXPECT(host[0] == npes * (npes - 1) / 2 && host[kN - 1] == npes * (npes - 1) / 2 + npes * (kN - 1));
  // reducescatter: dest[i] = sum over PEs of their src[me * kN + i]
  EXPECT(nvshmem_int_sum_reducescatter(NVSHMEM_TEAM_WORLD, dst, src, kN) == 0);
  load(host, dst, kN * npes);
  EXPECT(host[0] == npes * (npes - 1) / 2 + npes * me * kN && host[kN - 1] == host[0] + npes * (kN - 1));
  EXPECT(nvshmem_int_fcollect(NVSHMEM_TEAM_WORLD, dst, src, kN) == 0);
  load(host, dst, kN * npes);
  for (int pe = 0; pe < npes; ++pe) EXPECT(host[pe * kN + 3] == pe + 3);
  EXPECT(nvshmem_int_broadcast(NVSHMEM_TEAM_WORLD, dst, src, kN, npes - 1) == 0);
  load(host, dst, kN * npes);
  EXPECT(host[2] == npes - 1 + 2);
  EXPECT(nvshmem_int_alltoall(NVSHMEM_TEAM_WORLD, dst, src, kN) == 0);
  load(host, dst, kN * npes);
  for (int pe = 0; pe < npes; ++pe) EXPECT(host[pe * kN + 1] == pe + me * kN + 1);
  nvshmem_barrier_all();
  nvshmem_free(src);
  nvshmem_free(dst);
  free(host);
}

static void check_streams_and_kernels(int me, int npes) {
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
  int* src = static_cast<int*>(nvshmem_malloc(kN * npes * sizeof(int)));
  int* dst = static_cast<int*>(nvshmem_malloc(kN * npes * sizeof(int)));
  int* host = nullptr;
  CUDA_CHECK(cudaMallocHost(&host, kN * npes * sizeof(int)));
  for (int i = 0; i < kN * npes; ++i) host[i] = (me + 1) * (i + 1);
  store(src, host, kN * npes);
  nvshmemx_barrier_all_on_stream(s);
  nvshmemx_putmem_nbi_on_stream(dst, src, kN * sizeof(int), next, s);
  nvshmemx_quiet_on_stream(s);
  nvshmemx_barrier_all_on_stream(s);
  CUDA_CHECK(cudaMemcpyAsync(host, dst, kN * sizeof(int), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT(host[0] == prev + 1 && host[kN - 1] == (prev + 1) * kN);
  nvshmemx_int_sum_reducescatter_on_stream(NVSHMEM_TEAM_WORLD, dst, src, kN, s);
  CUDA_CHECK(cudaMemcpyAsync(host, dst, kN * sizeof(int), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  const int pes_sum = npes * (npes + 1) / 2;
  EXPECT(host[0] == pes_sum * (me * kN + 1) && host[kN - 1] == pes_sum * (me * kN + kN));
  // From kernels: a thread's sum, a warp's max, a block's xor.
  for (int which = 0; which < 3; ++which) {
    reducescatter_kernels<<<1, 128, 0, s>>>(dst, src, kN, which);
    CUDA_CHECK(cudaMemcpyAsync(host, dst, kN * sizeof(int), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < kN; i += 17) {
      int want = which == 1 ? npes * (me * kN + i + 1) : 0;
      if (which == 0) want = pes_sum * (me * kN + i + 1);
      if (which == 2)
        for (int pe = 0; pe < npes; ++pe) want ^= (pe + 1) * (me * kN + i + 1);
      EXPECT(host[i] == want);
    }
  }
  nvshmemx_barrier_all_on_stream(s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  nvshmem_free(src);
  nvshmem_free(dst);
  CUDA_CHECK(cudaFreeHost(host));
  CUDA_CHECK(cudaStreamDestroy(s));
}

// A buffer of the program's own memory (cuMem* calls, as NVIDIA's user-buffer example
// makes it) registered as symmetric: peers write it through the symmetric address, the
// program reads it through its own; after unregistering, the contents stay there.
static void check_user_buffer(int me, int npes) {
#if defined(PYSHMEM_GPU_PROGRAM)
  // The GPU build registers no buffers of the program's own: refused on every PE.
  (void)npes;
  EXPECT(nvshmemx_buffer_register_symmetric(&failures, sizeof failures, 0) == nullptr);
  EXPECT(nvshmemx_buffer_register(&failures, sizeof failures) != 0);
  (void)me;
#else
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t gran = 0;
  cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  const size_t bytes = gran;
  CUmemGenericAllocationHandle h;
  CUdeviceptr va = 0;
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  EXPECT(cuMemCreate(&h, bytes, &prop, 0) == CUDA_SUCCESS);
  EXPECT(cuMemAddressReserve(&va, bytes, 0, 0, 0) == CUDA_SUCCESS);
  EXPECT(cuMemMap(va, bytes, 0, h, 0) == CUDA_SUCCESS);
  EXPECT(cuMemSetAccess(va, bytes, &access, 1) == CUDA_SUCCESS);
  int* own = reinterpret_cast<int*>(va);
  own[0] = 7000 + me;  // kept through the registration
  int* sym = static_cast<int*>(nvshmemx_buffer_register_symmetric(own, bytes, 0));
  EXPECT(sym != nullptr);
  if (sym) {
    EXPECT(sym[0] == 7000 + me);
    const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    nvshmem_int_p(sym + 1, 100 + me, next);
    nvshmem_barrier_all();
    EXPECT(own[1] == 100 + prev && sym[1] == 100 + prev);
    EXPECT(nvshmemx_buffer_unregister_symmetric(sym, bytes) == 0);
    EXPECT(own[0] == 7000 + me && own[1] == 100 + prev);
  }
  // Every PE refuses a buffer that is not a cuMemMap mapping, and stays in step.
  EXPECT(nvshmemx_buffer_register_symmetric(me == 0 ? static_cast<void*>(&failures) : own, bytes, 0) == nullptr);
  EXPECT(cuMemUnmap(va, bytes) == CUDA_SUCCESS && cuMemAddressFree(va, bytes) == CUDA_SUCCESS);
  EXPECT(cuMemRelease(h) == CUDA_SUCCESS);
#endif
  nvshmem_barrier_all();
}

int main(int argc, char** argv) {
  nvshmem_init();
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (argc == 3 && strcmp(argv[1], "--require-npes") == 0 && npes != atoi(argv[2])) {
    fprintf(stderr, "This test requires exactly %s processes\n", argv[2]);
    nvshmem_finalize();
    return -1;
  }
  check_rma(me, npes);
  check_amo_signal_wait(me, npes);
  check_collectives(me, npes);
  check_streams_and_kernels(me, npes);
  check_user_buffer(me, npes);
  nvshmem_barrier_all();
  printf("PE %d of %d: host calls %s\n", me, npes, failures ? "FAILED" : "OK");
  nvshmem_finalize();
  return failures ? 1 : 0;
}
