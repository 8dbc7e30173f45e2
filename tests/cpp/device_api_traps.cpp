// Bad input to the device API (CPU build) stops the program with a message naming the
// call, never a silent wrong answer. Run under shmemrun with one mode argument:
//   bad_pe        PYSHMEM_DEBUG=1: p() to PE n_pes traps "PE out of range"
//   not_symmetric PYSHMEM_DEBUG=1: put() to a stack address traps "not in the symmetric heap"
//   proxy_reject  PYSHMEM_PROXY_ALL=1, no debug checks: a put to a stack address reaches
//                 the proxy, which refuses it; the caller traps with the proxy's reason
//   ok            every PE finishes (control run)
// Each mode prints "REACHED <mode>" just before the bad call.
#include <pyshmem/device.cuh>
#include <pyshmem/pyshmem.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "ok";
  if (pyshmem_init() != PYSHMEM_SUCCESS || pyshmem::device_init() != PYSHMEM_SUCCESS) return 2;
  void* mem = nullptr;
  if (pyshmem_calloc(16, sizeof(long long), &mem) != PYSHMEM_SUCCESS) return 2;
  auto* sym = static_cast<long long*>(mem);
  long long local[16] = {};
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  pyshmem::barrier_all();
  std::printf("REACHED %s pe=%d\n", mode, me);
  std::fflush(stdout);
  if (std::strcmp(mode, "bad_pe") == 0) {
    pyshmem::p(sym, 1LL, n);
  } else if (std::strcmp(mode, "not_symmetric") == 0 || std::strcmp(mode, "proxy_reject") == 0) {
    pyshmem::put(local, sym, 16, (me + 1) % n);
  }
  pyshmem::barrier_all();
  pyshmem_finalize();
  std::printf("OK pe=%d\n", me);
  return 0;
}
