// The GPU heap's C API (pyshmem/pyshmem_gpu.h), the calls a program built with
// pyshmem-nvcc --gpu makes in nvshmem_init/nvshmem_malloc/nvshmem_free. Built with
// pyshmem-nvcc --cpu (it needs only pyshmem's runtime) and run under shmemrun by
// tests/pe/test_nvshmem_gpu_programs.py against the fake CUDA driver.
//   ./c_api_gpu_heap        the cuda backend: every call, its errors, symmetric offsets
//   ./c_api_gpu_heap cpu    the cpu backend: every call refused, saying why
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pyshmem/pyshmem.h"
#include "pyshmem/pyshmem_gpu.h"

static int failures = 0;
#define CHECK(cond, ...)                                 \
  do {                                                   \
    if (!(cond)) {                                       \
      ++failures;                                        \
      fprintf(stderr, "line %d: %s: ", __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                      \
      fprintf(stderr, "\n");                             \
    }                                                    \
  } while (0)

// The call failed with `status` and a message naming `call` and containing `text`.
static void expect_failure(int rc, int status, const char* call, const char* text) {
  const char* msg = pyshmem_last_error();
  CHECK(rc == status, "%s returned %d, expected %d (%s)", call, rc, status, msg);
  CHECK(strstr(msg, call) != nullptr, "message does not name %s: %s", call, msg);
  CHECK(strstr(msg, text) != nullptr, "message of %s lacks '%s': %s", call, text, msg);
}

int main(int argc, char** argv) {
  const bool cpu = argc > 1 && strcmp(argv[1], "cpu") == 0;
  void* p = nullptr;
  expect_failure(pyshmem_gpu_malloc(64, 0, 0, &p), PYSHMEM_ERR_NOT_INIT, "pyshmem_gpu_malloc", "before init");
  if (pyshmem_init() != 0) {
    fprintf(stderr, "init: %s\n", pyshmem_last_error());
    return 2;
  }
  int me = -1, npes = 0, dev = -1;
  pyshmem_my_pe(&me);
  pyshmem_n_pes(&npes);
  pyshmem_device_state st;
  if (cpu) {
    expect_failure(pyshmem_gpu_device(&dev), PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem_gpu_device", "pyshmem-nvcc --cpu");
    expect_failure(pyshmem_gpu_malloc(64, 0, 0, &p), PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem_gpu_malloc", "no GPU heap");
    expect_failure(pyshmem_gpu_device_state(&st), PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem_gpu_device_state",
                   "no GPU heap");
    expect_failure(pyshmem_gpu_free(p), PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem_gpu_free", "no GPU heap");
  } else {
    CHECK(pyshmem_gpu_device(&dev) == 0 && dev >= 0, "device %d: %s", dev, pyshmem_last_error());
    CHECK(pyshmem_gpu_device_state(&st) == 0, "%s", pyshmem_last_error());
    CHECK(st.version == PYSHMEM_DEVICE_STATE_VERSION && st.my_pe == me && st.n_pes == npes,
          "state version %u pe %d of %d", st.version, st.my_pe, st.n_pes);
    const pyshmem_device_state* host = nullptr;
    pyshmem_device_state_get(&host);
    CHECK(host && host->heap_base != st.heap_base, "the GPU state is the host heap's");
    const uint64_t mine = st.heap_base + uint64_t(me) * st.heap_stride;

    void *a = nullptr, *b = nullptr, *c = nullptr;
    CHECK(pyshmem_gpu_malloc(1000, 0, 0, &a) == 0, "%s", pyshmem_last_error());
    CHECK(pyshmem_gpu_malloc(3000, 4096, 1, &b) == 0, "%s", pyshmem_last_error());
    CHECK(pyshmem_gpu_malloc(0, 0, 0, &c) == 0 && c != a && c != b, "zero bytes: %p", c);
    const uint64_t ua = uint64_t(a), ub = uint64_t(b);
    CHECK(ua >= mine + st.user_offset && ub + 3000 <= mine + st.heap_size, "outside this PE's GPU segment");
    CHECK(ub % 4096 == 0, "alignment: %p", b);
    // The same offsets on every PE: gather them through the host heap.
    uint64_t* mine_offsets = nullptr;
    uint64_t* all = nullptr;
    pyshmem_malloc(2 * sizeof(uint64_t), reinterpret_cast<void**>(&mine_offsets));
    pyshmem_malloc(2 * sizeof(uint64_t) * npes, reinterpret_cast<void**>(&all));
    mine_offsets[0] = ua - mine;
    mine_offsets[1] = ub - mine;
    pyshmem_fcollectmem(PYSHMEM_TEAM_WORLD, all, mine_offsets, 2 * sizeof(uint64_t));
    for (int pe = 0; pe < npes; ++pe)
      CHECK(all[2 * pe] == mine_offsets[0] && all[2 * pe + 1] == mine_offsets[1], "PE %d's offsets differ", pe);

    // Errors reach every PE alike (the job stays in step).
    expect_failure(pyshmem_gpu_malloc(64, 3, 0, &p), PYSHMEM_ERR_INVALID_ARG, "pyshmem_gpu_malloc", "power of two");
    expect_failure(pyshmem_gpu_malloc(size_t(1) << 40, 0, 0, &p), PYSHMEM_ERR_NOMEM, "pyshmem_gpu_malloc",
                   "PYSHMEM_CUDA_SYMMETRIC_SIZE");
    CHECK(pyshmem_gpu_free(a) == 0, "%s", pyshmem_last_error());
    expect_failure(pyshmem_gpu_free(a), PYSHMEM_ERR_INVALID_ARG, "pyshmem_gpu_free", "not a live symmetric GPU");
    CHECK(pyshmem_gpu_free(b) == 0 && pyshmem_gpu_free(c) == 0, "%s", pyshmem_last_error());
    // Freed space is reused: the heap does not leak.
    void* again = nullptr;
    CHECK(pyshmem_gpu_malloc(1000, 0, 0, &again) == 0 && again == a, "reuse: %p, first %p", again, a);
    pyshmem_gpu_free(again);
    pyshmem_free(all);
    pyshmem_free(mine_offsets);
  }
  pyshmem_finalize();
  if (failures) return 1;
  printf("PE %d of %d: GPU heap C API OK\n", me, npes);
  return 0;
}
