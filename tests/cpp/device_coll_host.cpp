// Device-API teams and collectives in the CPU build, under shmemrun: sync/barrier per
// team, broadcast, collect, fcollect, alltoall(s) and every reduction, over the world, TEAM_SHARED,
// a strided team and the rows of a 2-D split (teams made with the C ABI). Values are
// checked against what every PE computes from the inputs' formula. Host and device team
// syncs alternate on one team (they share the slot counters). Prints "OK pe=<k>".
//
// TEST_GPU_STATE=1 (cuda backend over the fake driver): the calls use the GPU device
// state, with objects in the GPU heap and the team table's GPU copy. With every peer
// remote (PYSHMEM_REMOTE_ONLY=1) the data collectives go through the proxy;
// reductions need load/store peers and are checked only on single-PE teams there.
#include <pyshmem/device.cuh>
#include <pyshmem/pyshmem.h>

#include "cuda/gpu_heap.h"  // the core's GPU heap (tests link the core statically)
#include <pyshmem/pyshmem_gpu.h>  // pyshmem_gpu_malloc (collective)

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define REQUIRE(cond)                                                                                  \
  do {                                                                                                 \
    if (!(cond)) {                                                                                     \
      std::fprintf(stderr, "PE %d: %s:%d: REQUIRE failed: %s\n", me, __FILE__, __LINE__, #cond);       \
      std::_Exit(1);                                                                                   \
    }                                                                                                  \
  } while (0)
#define CHECK_OK(call)                                                                                 \
  do {                                                                                                 \
    if ((call) != PYSHMEM_SUCCESS) {                                                                   \
      std::fprintf(stderr, "PE %d: %s failed: %s\n", me, #call, pyshmem_last_error());                \
      std::_Exit(1);                                                                                   \
    }                                                                                                  \
  } while (0)

static int me = -1;
static bool gpu_state = false;

template <class T>
T* sym_calloc(size_t n) {
  if (gpu_state) {
    void* p = nullptr;
    if (pyshmem_gpu_malloc(n * sizeof(T), 0, 1, &p) != 0) {
      std::fprintf(stderr, "pyshmem_gpu_malloc: %s\n", pyshmem_last_error());
      std::exit(1);
    }
    return static_cast<T*>(p);
  }
  void* p = nullptr;
  CHECK_OK(pyshmem_calloc(n, sizeof(T), &p));
  return static_cast<T*>(p);
}

// Element i of world PE pe's input in round r.
int64_t value(int pe, size_t i, int r) { return int64_t(pe + 1) * 3 + int64_t(i % 7) - 2 + r; }

struct Members {
  std::vector<int> world;  // world PE of each team index
};

Members members(pyshmem::team_t team) {
  Members m;
  int n = 0;
  CHECK_OK(pyshmem_team_n_pes(team, &n));
  for (int i = 0; i < n; ++i) {
    int w = -1;
    CHECK_OK(pyshmem_team_translate_pe(team, i, PYSHMEM_TEAM_WORLD, &w));
    REQUIRE(pyshmem::team_translate_pe(team, i, PYSHMEM_TEAM_WORLD) == w);  // device agrees with host
    m.world.push_back(w);
  }
  return m;
}

// Are all members load/store reachable (device reductions need it)?
bool all_direct(const Members& m, const void* sym) {
  for (int w : m.world)
    if (!pyshmem::detail::direct_ptr("test", sym, w)) return false;
  return true;
}

constexpr size_t kN = 37;
// Symmetric buffers, allocated once by every PE (allocation is collective over the world,
// and PEs outside a team must not be asked to allocate for it).
struct Buffers {
  int64_t* src;
  int64_t* dst;
  double* f;
  double* fd;
};

void exercise(pyshmem::team_t team, int round, const Buffers& b) {
  const Members m = members(team);
  const int n = static_cast<int>(m.world.size());
  const int mine = pyshmem::team_my_pe(team);
  REQUIRE(mine >= 0 && m.world[mine] == me && pyshmem::team_n_pes(team) == n);
  int64_t* src = b.src;
  int64_t* dst = b.dst;
  double* f = b.f;
  double* fd = b.fd;
  for (size_t i = 0; i < kN * n; ++i) src[i] = value(me, i, round);
  for (size_t i = 0; i < kN; ++i) f[i] = 0.5 * double(value(me, i, round));

  // broadcast from each root, thread and block variants
  for (int root = 0; root < n; ++root) {
    if (root % 2) pyshmem::broadcast_block(team, dst, src, kN, root);
    else pyshmem::broadcast(team, dst, src, kN, root);
    for (size_t i = 0; i < kN; ++i) REQUIRE(dst[i] == value(m.world[root], i, round));
  }
  // fcollect and alltoall
  pyshmem::fcollect_warp(team, dst, src, kN);
  for (int j = 0; j < n; ++j)
    for (size_t i = 0; i < kN; ++i) REQUIRE(dst[j * kN + i] == value(m.world[j], i, round));
  const size_t blk = kN / static_cast<size_t>(n) ? kN / static_cast<size_t>(n) : 1;
  pyshmem::alltoall(team, dst, src, blk);
  for (int j = 0; j < n; ++j)
    for (size_t i = 0; i < blk; ++i) REQUIRE(dst[j * blk + i] == value(m.world[j], mine * blk + i, round));
  // collect: member j brings j % 3 + 1 elements (sizes differ), block and thread variants
  for (int v = 0; v < 2; ++v) {
    const size_t cnt = size_t(mine % 3 + 1);
    if (v) pyshmem::collect_block(team, dst, src, cnt);
    else pyshmem::collect(team, dst, src, cnt);
    size_t at = 0;
    for (int j = 0; j < n; ++j)
      for (size_t i = 0; i < size_t(j % 3 + 1); ++i, ++at) REQUIRE(dst[at] == value(m.world[j], i, round));
  }
  // alltoalls: 2 elements per block, source stride 3, dest stride 2 (dest spans n*2*2)
  for (size_t i = 0; i < kN * n; ++i) dst[i] = -1;
  pyshmem::alltoalls_warp(team, dst, src, 2, 3, 2);
  for (int j = 0; j < n; ++j)
    for (size_t i = 0; i < 2; ++i) {
      REQUIRE(dst[(j * 2 + i) * 2] == value(m.world[j], (size_t(mine) * 2 + i) * 3, round));
      REQUIRE(dst[(j * 2 + i) * 2 + 1] == -1);  // the stride's gaps are left alone
    }
  // reductions, where every member is reachable by load/store
  if (all_direct(m, src)) {
    pyshmem::sum_reduce(team, dst, src, kN);
    for (size_t i = 0; i < kN; ++i) {
      int64_t want = 0;
      for (int w : m.world) want += value(w, i, round);
      REQUIRE(dst[i] == want);
    }
    pyshmem::max_reduce_block(team, fd, f, kN);
    pyshmem::prod_reduce(team, f, f, kN);  // in place
    for (size_t i = 0; i < kN; ++i) {
      double mx = -1e300, prod = 1;
      for (int w : m.world) {
        mx = std::max(mx, 0.5 * double(value(w, i, round)));
        prod *= 0.5 * double(value(w, i, round));
      }
      REQUIRE(fd[i] == mx && f[i] == prod);
    }
    pyshmem::xor_reduce_warp(team, src, src, kN);  // in place, integer-only op
    for (size_t i = 0; i < kN; ++i) {
      int64_t want = 0;
      for (int w : m.world) want ^= value(w, i, round);
      REQUIRE(src[i] == want);
    }
    pyshmem::reduce(team, dst, src, kN, PYSHMEM_OP_MIN);
  }
  // device and host team syncs alternate on the same counters (host heap only: with the
  // GPU state the device counters live in the GPU heap)
  for (int i = 0; i < 6; ++i) {
    if (i % 2 && !gpu_state) CHECK_OK(pyshmem_team_sync(team));
    else if (i % 3) pyshmem::sync(team);
    else pyshmem::barrier_warp(team);
  }
}

int main() {
  const char* gpu_env = std::getenv("TEST_GPU_STATE");
  gpu_state = gpu_env && std::string(gpu_env) == "1";
  CHECK_OK(pyshmem_init());
  REQUIRE(pyshmem::device_init() == PYSHMEM_SUCCESS);
  if (gpu_state) {
    REQUIRE(pyshmem::gpu_device_state() != nullptr);
    pyshmem::detail::h_state = pyshmem::gpu_device_state();
  }
  me = pyshmem::my_pe();
  const int npes = pyshmem::n_pes();
  REQUIRE(pyshmem::team_my_pe(PYSHMEM_TEAM_WORLD) == me && pyshmem::team_n_pes(PYSHMEM_TEAM_WORLD) == npes);
  REQUIRE(pyshmem::team_my_pe(PYSHMEM_TEAM_INVALID) == -1);

  const Buffers b{sym_calloc<int64_t>(kN * npes), sym_calloc<int64_t>(kN * npes), sym_calloc<double>(kN),
                  sym_calloc<double>(kN)};
  exercise(PYSHMEM_TEAM_WORLD, 0, b);
  exercise(PYSHMEM_TEAM_SHARED, 1, b);
  // The odd PEs (every PE when alone), then the rows of a 2-D split two wide.
  int odd = PYSHMEM_TEAM_INVALID;
  CHECK_OK(pyshmem_team_split_strided(PYSHMEM_TEAM_WORLD, npes > 1 ? 1 : 0, npes > 1 ? 2 : 1,
                                      npes > 1 ? npes / 2 : 1, nullptr, 0, &odd));
  REQUIRE((odd != PYSHMEM_TEAM_INVALID) == (npes == 1 || me % 2 == 1));
  if (odd != PYSHMEM_TEAM_INVALID) {
    REQUIRE(pyshmem::team_my_pe(odd) == (npes == 1 ? 0 : me / 2));
    exercise(odd, 2, b);
  }
  int row = PYSHMEM_TEAM_INVALID, col = PYSHMEM_TEAM_INVALID;
  CHECK_OK(pyshmem_team_split_2d(PYSHMEM_TEAM_WORLD, 2, nullptr, 0, nullptr, 0, &row, &col));
  REQUIRE(pyshmem::team_my_pe(row) == me % 2 && pyshmem::team_my_pe(col) == me / 2);
  exercise(row, 3, b);
  exercise(col, 4, b);
  // A destroyed team's handle is dead for the device API too.
  CHECK_OK(pyshmem_team_destroy(row));
  REQUIRE(pyshmem::team_my_pe(row) == -1 && pyshmem::team_n_pes(row) == -1);
  CHECK_OK(pyshmem_team_destroy(col));
  if (odd != PYSHMEM_TEAM_INVALID) CHECK_OK(pyshmem_team_destroy(odd));
  pyshmem::barrier_all();
  CHECK_OK(pyshmem_finalize());
  std::printf("OK pe=%d\n", me);
  return 0;
}
