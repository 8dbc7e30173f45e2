// The device API compiled for the host (the "CPU build"): several threads per PE call
// pyshmem::* device functions against the real runtime under shmemrun. Checks values,
// atomics under contention from all threads of all PEs, put_signal ordering, ping-pong,
// and that host and device barriers share their counters. Prints "OK pe=<k>".
//
// With TEST_GPU_STATE=1 (the cuda backend over the fake driver, whose "device memory"
// is host memory) the threads play GPU kernels: they use the GPU device state, objects
// in the GPU heap, and, for PEs on other nodes, the proxy ring GPU kernels push to.
#include <pyshmem/device.cuh>
#include <pyshmem/pyshmem.h>

#include "cuda/gpu_heap.h"  // the core's GPU heap (tests link the core statically)
#include <pyshmem/pyshmem_gpu.h>  // pyshmem_gpu_malloc (collective)

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define REQUIRE(cond)                                                                  \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "PE %d: %s:%d: REQUIRE failed: %s\n", me, __FILE__, __LINE__, #cond); \
      std::_Exit(1);                                                                   \
    }                                                                                  \
  } while (0)

constexpr int kThreads = 4;
constexpr int kBlock = 64;  // int64 elements per put_signal block
static int me = -1;
static bool gpu_state = false;  // TEST_GPU_STATE=1

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
  if (pyshmem_calloc(n, sizeof(T), &p) != PYSHMEM_SUCCESS) {
    std::fprintf(stderr, "calloc failed: %s\n", pyshmem_last_error());
    std::_Exit(1);
  }
  return static_cast<T*>(p);
}

template <class F>
void run_threads(F&& f) {
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) ts.emplace_back(f, t);
  for (auto& t : ts) t.join();
}

// A host barrier, or the device one where host and device state differ (GPU heap).
void host_barrier() {
  if (gpu_state) pyshmem::barrier_all();
  else pyshmem_barrier_all();
}

int main() {
  const char* gpu_env = std::getenv("TEST_GPU_STATE");
  gpu_state = gpu_env && std::string(gpu_env) == "1";
  REQUIRE(pyshmem::device_init() == PYSHMEM_ERR_NOT_INIT);  // before init: refused
  if (pyshmem_init() != PYSHMEM_SUCCESS) {
    std::fprintf(stderr, "pyshmem_init failed: %s\n", pyshmem_last_error());
    return 1;
  }
  REQUIRE(pyshmem::device_init() == PYSHMEM_SUCCESS);
  if (gpu_state) {
    REQUIRE(pyshmem::gpu_device_state() != nullptr);
    pyshmem::detail::h_state = pyshmem::gpu_device_state();
  }
  me = pyshmem::my_pe();
  const int n = pyshmem::n_pes();
  int host_me = -1;
  pyshmem_my_pe(&host_me);
  REQUIRE(host_me == me);
  const int right = (me + 1) % n, left = (me + n - 1) % n;

  auto* slots = sym_calloc<int64_t>(static_cast<size_t>(n) * kThreads);
  auto* counter = sym_calloc<int64_t>(1);
  auto* blocks = sym_calloc<int64_t>(kThreads * kBlock);
  auto* sigs = sym_calloc<uint64_t>(kThreads);
  auto* winner = sym_calloc<int32_t>(64);
  auto* ping = sym_calloc<int64_t>(1);
  auto* bits = sym_calloc<uint64_t>(1);
  auto* scratch = sym_calloc<int64_t>(2);

  // ptr() is an address exactly for the PEs whose memory is mapped here (all of them,
  // except with PYSHMEM_REMOTE_ONLY=1, where only this PE's own is).
  const char* remote_only = std::getenv("PYSHMEM_REMOTE_ONLY");
  const bool all_remote = remote_only && std::string(remote_only) == "1";
  for (int pe = 0; pe < n; ++pe) REQUIRE((pyshmem::ptr(slots, pe) != nullptr) == (pe == me || !all_remote));

  // 1. p / g / put / get from several threads.
  run_threads([&](int t) { pyshmem::p(&slots[me * kThreads + t], int64_t(me * 1000 + t), right); });
  pyshmem::barrier_all();
  for (int t = 0; t < kThreads; ++t) REQUIRE(slots[left * kThreads + t] == left * 1000 + t);
  run_threads([&](int t) {
    int64_t got[kThreads];
    pyshmem::get(got, &slots[me * kThreads], kThreads, right);  // right holds what this PE put
    for (int k = 0; k < kThreads; ++k) REQUIRE(got[k] == me * 1000 + k);
    REQUIRE(pyshmem::g(&slots[me * kThreads + t], right) == me * 1000 + t);
    int64_t mine[2] = {7, 8};
    pyshmem::put_nbi_warp(scratch, mine, 2, me);  // to self; in the CPU build a warp is this thread
    pyshmem::quiet();  // `mine` must outlive the nbi put (through the proxy it is read later)
  });
  REQUIRE(scratch[0] == 7 && scratch[1] == 8);
  host_barrier();  // host barrier after a device barrier: shared epoch

  // 2. Atomics under contention from every thread of every PE.
  constexpr int kAdds = 500;
  run_threads([&](int) {
    for (int i = 0; i < kAdds; ++i) {
      if (i % 2) pyshmem::atomic_fetch_add(counter, int64_t(1), 0);
      else pyshmem::atomic_inc(counter, 0);
    }
    pyshmem::atomic_or(bits, uint64_t(1) << me, 0);
  });
  pyshmem::barrier_all();
  if (me == 0) {
    REQUIRE(*counter == int64_t(n) * kThreads * kAdds);
    REQUIRE(*bits == (n >= 64 ? ~0ull : ((1ull << n) - 1)));
    REQUIRE(pyshmem::atomic_fetch(counter, 0) == *counter);
  }
  // compare_swap race: exactly one winner per round over all threads of all PEs.
  std::atomic<int> my_wins{0};
  run_threads([&](int t) {
    for (int r = 0; r < 64; ++r)
      if (pyshmem::atomic_compare_swap(&winner[r], int32_t(0), int32_t(me * kThreads + t + 1), 0) == 0) ++my_wins;
  });
  int64_t wins = my_wins.load();
  auto* win_total = sym_calloc<int64_t>(1);
  pyshmem::atomic_add(win_total, wins, 0);
  pyshmem::barrier_all();
  if (me == 0) REQUIRE(*win_total == 64);

  // 3. put_signal: the data is complete when its signal is seen. Each thread streams
  // rounds to its right neighbour and acknowledges its left neighbour's rounds.
  constexpr int kRounds = 50;
  auto* acks = sym_calloc<uint64_t>(kThreads);
  run_threads([&](int t) {
    std::vector<int64_t> payload(kBlock);
    for (int r = 1; r <= kRounds; ++r) {
      if (r > 1) pyshmem::signal_wait_until(&acks[t], PYSHMEM_CMP_GE, uint64_t(r - 1));  // right consumed r-1
      for (int i = 0; i < kBlock; ++i) payload[i] = int64_t(me) * 1000000 + r * 1000 + i;
      if (r % 2)
        pyshmem::put_signal(&blocks[t * kBlock], payload.data(), kBlock, &sigs[t], 1, PYSHMEM_SIGNAL_ADD, right);
      else
        pyshmem::putmem_signal_nbi_block(&blocks[t * kBlock], payload.data(), kBlock * sizeof(int64_t), &sigs[t], 1,
                                         PYSHMEM_SIGNAL_ADD, right);
      uint64_t seen = pyshmem::signal_wait_until(&sigs[t], PYSHMEM_CMP_GE, uint64_t(r));
      REQUIRE(seen == uint64_t(r));
      for (int i = 0; i < kBlock; ++i) REQUIRE(blocks[t * kBlock + i] == int64_t(left) * 1000000 + r * 1000 + i);
      pyshmem::signal_op(&acks[t], 1, PYSHMEM_SIGNAL_ADD, left);
    }
    pyshmem::quiet();  // the last round was an nbi put from `payload`: complete it before freeing
  });
  pyshmem::barrier_all();
  for (int t = 0; t < kThreads; ++t) REQUIRE(pyshmem::signal_fetch(&sigs[t]) == uint64_t(kRounds));

  // 4. Ping-pong between PE 0 and PE 1 with p + wait_until.
  if (n >= 2 && me < 2) {
    for (int64_t i = 1; i <= 1000; ++i) {
      if (me == 0) {
        pyshmem::p(ping, i, 1);
        pyshmem::wait_until(ping, PYSHMEM_CMP_EQ, i);
      } else {
        pyshmem::wait_until(ping, PYSHMEM_CMP_EQ, i);
        pyshmem::p(ping, i, 0);
      }
    }
    REQUIRE(pyshmem::test(ping, PYSHMEM_CMP_EQ, int64_t(1000)) == 1);
  }
  // 5. Alternate host and device barriers: they share the epoch counters.
  for (int i = 0; i < 20; ++i) {
    if (i % 2) host_barrier();
    else pyshmem::sync_all();
  }
  // 6. quiet() completes device puts, whatever path they took: a device put_nbi, quiet,
  // then a host-API signal (never proxied) must not overtake the data.
  constexpr size_t kBig = 1 << 16;
  auto* big = sym_calloc<int64_t>(kBig);
  auto* flag = sym_calloc<uint64_t>(1);
  {
    std::vector<int64_t> src(kBig);
    for (size_t i = 0; i < kBig; ++i) src[i] = int64_t(me) * 7 + int64_t(i);
    pyshmem::put_nbi(big, src.data(), kBig, right);
    pyshmem::quiet();
    if (gpu_state)  // host-API calls take host-heap objects only
      pyshmem::signal_op(flag, 1, PYSHMEM_SIGNAL_SET, right);
    else
      REQUIRE(pyshmem_putmem_signal(scratch, scratch, 0, flag, 1, PYSHMEM_SIGNAL_SET, right) == PYSHMEM_SUCCESS);
    pyshmem::signal_wait_until(flag, PYSHMEM_CMP_EQ, 1);
    for (size_t i = 0; i < kBig; ++i) REQUIRE(big[i] == int64_t(left) * 7 + int64_t(i));
  }
  pyshmem::quiet();
  pyshmem::fence();
  // Which path the calls took: with PYSHMEM_PROXY_ALL=1 every one was a proxy request.
  const pyshmem_proxy_fifo* fifo = pyshmem::detail::state().proxy;
  const unsigned long long proxied = fifo ? __atomic_load_n(&fifo->tail, __ATOMIC_ACQUIRE) : 0;
  REQUIRE(pyshmem_finalize() == PYSHMEM_SUCCESS);
  std::printf("OK pe=%d proxy=%s slots=%llu\n", me, fifo ? "yes" : "no", proxied);
  return 0;
}
