// The proxy FIFO on its own: producer threads push with the device API's producer code
// (pyshmem/device/proxy.cuh, CPU build), one consumer drains with proxy/fifo.h.
// Checks that no request is lost, duplicated, torn or reordered per producer across
// many wraps of a tiny ring; that every producer spin is bounded (timeout status, not a
// hang); that a failed proxy releases waiting producers with its status and message;
// the done/tail completion counters; and the hand-over of fetched values through the
// result cells. Prints "test_proxy_fifo: OK".
#include <pyshmem/device.cuh>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "proxy/fifo.h"

#define REQUIRE(cond)                                                                   \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);   \
      std::_Exit(1);                                                                    \
    }                                                                                   \
  } while (0)

using pyshmem::FifoRing;
using pyshmem::detail::entry;
using pyshmem::detail::fifo_push;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kMagic = 0x5a5a5a5a12345678ull;

// Request number `seq` of producer `id`: kind cycles through 1-, 2- and 3-slot kinds,
// and every slot carries values derived from (id, seq) so a torn or mixed request shows.
int make_request(int id, uint64_t seq, pyshmem_fifo_entry* req) {
  static const int kinds[] = {PYSHMEM_REQ_PUT, PYSHMEM_REQ_PUT_SIGNAL, PYSHMEM_REQ_FENCE, PYSHMEM_REQ_AMO,
                              PYSHMEM_REQ_P};
  const int kind = kinds[seq % 5];
  const int k = pyshmem_fifo_kind_slots(kind);
  req[0] = entry(seq, pyshmem_fifo_header_w1(kind, id, static_cast<uint32_t>(seq * 7)));
  for (int i = 1; i < k; ++i) req[i] = entry(seq ^ kMagic ^ static_cast<uint64_t>(i), (seq * 31 + i) & 0x7fffffffffffull);
  return k;
}

// The consumer's wait for the next complete request (fails the test at the deadline).
int next_request(FifoRing& ring, pyshmem_fifo_entry* got, Clock::time_point deadline) {
  for (;;) {
    REQUIRE(Clock::now() < deadline);
    const int k = ring.poll(got);
    REQUIRE(k >= 0);
    if (k > 0) return k;
    std::this_thread::yield();
  }
}

void test_many_producers() {
  constexpr int kProducers = 4;
  constexpr uint64_t kPerProducer = 20000;
  FifoRing ring(8, 30ull * 1000000000ull);  // 8 slots: thousands of wraps and full-ring waits
  pyshmem_proxy_fifo* f = ring.fifo();
  REQUIRE(f->capacity == 8);
  std::atomic<int> errors{0};
  std::vector<std::thread> producers;
  for (int id = 0; id < kProducers; ++id)
    producers.emplace_back([&, id] {
      pyshmem_fifo_entry req[PYSHMEM_FIFO_MAX_SLOTS];
      for (uint64_t seq = 0; seq < kPerProducer; ++seq) {
        const int k = make_request(id, seq, req);
        uint64_t ticket = 0;
        if (fifo_push(f, req, k, &ticket) != PYSHMEM_SUCCESS) ++errors;
      }
    });
  std::vector<uint64_t> next(kProducers, 0);
  uint64_t requests = 0, slots = 0;
  pyshmem_fifo_entry got[PYSHMEM_FIFO_MAX_SLOTS], want[PYSHMEM_FIFO_MAX_SLOTS];
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (requests < kProducers * kPerProducer) {
    const int k = next_request(ring, got, deadline);
    const int id = pyshmem_fifo_header_pe(got[0].w1);
    REQUIRE(id >= 0 && id < kProducers);
    const uint64_t seq = got[0].w0;
    REQUIRE(seq == next[id]);  // per producer: in order, none lost, none twice
    ++next[id];
    REQUIRE(make_request(id, seq, want) == k);
    for (int i = 0; i < k; ++i) REQUIRE(got[i].w0 == want[i].w0 && got[i].w1 == want[i].w1);
    ring.retire(k, true);
    ++requests;
    slots += static_cast<uint64_t>(k);
    REQUIRE(__atomic_load_n(&f->tail, __ATOMIC_ACQUIRE) == slots);
    REQUIRE(__atomic_load_n(&f->done, __ATOMIC_ACQUIRE) == slots);
  }
  for (auto& t : producers) t.join();
  REQUIRE(errors.load() == 0);
  REQUIRE(ring.idle());
  REQUIRE(ring.poll(got) == 0);  // nothing left behind
  for (int id = 0; id < kProducers; ++id) REQUIRE(next[id] == kPerProducer);
  std::printf("many producers: %llu requests, %llu slots through an 8-slot ring\n",
              static_cast<unsigned long long>(requests), static_cast<unsigned long long>(slots));
}

// Fetching requests hand their results back through the ring's result cells, which an
// 8-slot ring reuses every 8 tickets: 4 producers x 5000 G requests, each result a
// function of its request, none lost or given to the wrong producer; a proxy finding a
// cell still owned (its producer never collected it) times out instead of overwriting.
void test_result_cells() {
  constexpr int kProducers = 4;
  constexpr uint64_t kPerProducer = 5000;
  FifoRing ring(8, 30ull * 1000000000ull);
  pyshmem_proxy_fifo* f = ring.fifo();
  auto value_of = [](uint64_t w0) { return w0 * 0x9e3779b97f4a7c15ull + 1; };
  std::atomic<int> wrong{0};
  std::vector<std::thread> producers;
  for (int id = 0; id < kProducers; ++id)
    producers.emplace_back([&, id] {
      for (uint64_t seq = 0; seq < kPerProducer; ++seq) {
        const uint64_t w0 = (static_cast<uint64_t>(id) << 32) | seq;
        const pyshmem_fifo_entry req[1] = {entry(w0, pyshmem_fifo_header_w1(PYSHMEM_REQ_G, id, 8))};
        uint64_t t = 0;
        REQUIRE(fifo_push(f, req, 1, &t) == PYSHMEM_SUCCESS);
        if (pyshmem::detail::proxy_result("g", f, t, id) != value_of(w0)) ++wrong;
      }
    });
  pyshmem_fifo_entry got[PYSHMEM_FIFO_MAX_SLOTS];
  uint64_t served = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (served < kProducers * kPerProducer) {
    const int k = next_request(ring, got, deadline);
    REQUIRE(k == 1 && pyshmem_fifo_header_kind(got[0].w1) == PYSHMEM_REQ_G);
    REQUIRE(ring.put_result(ring.ticket(), value_of(got[0].w0)));
    ring.retire(k, true);
    ++served;
  }
  for (auto& t : producers) t.join();
  REQUIRE(wrong.load() == 0);
  for (uint32_t i = 0; i < f->capacity; ++i) REQUIRE(f->cells[i].ticket == 0);  // every result collected

  FifoRing small(4, 50ull * 1000000ull);  // 50 ms
  REQUIRE(small.put_result(0, 7));        // ticket 0's result, never collected...
  const auto start = Clock::now();
  REQUIRE(!small.put_result(4, 8));  // ...so ticket 4 (the same cell) cannot overwrite it
  REQUIRE(Clock::now() - start >= std::chrono::milliseconds(40));
  REQUIRE(small.fifo()->cells[0].value == 7);
  std::printf("result cells: %llu fetches through an 8-slot ring\n", static_cast<unsigned long long>(served));
}

void test_full_ring_times_out() {
  FifoRing ring(4, 200ull * 1000000ull);  // 0.2 s bound
  pyshmem_fifo_entry req[3];
  const int k = make_request(0, 1, req);  // PUT_SIGNAL: 3 slots
  REQUIRE(k == 3);
  uint64_t t = 99;
  REQUIRE(fifo_push(ring.fifo(), req, k, &t) == PYSHMEM_SUCCESS && t == 0);
  const auto t0 = Clock::now();
  REQUIRE(fifo_push(ring.fifo(), req, k, &t) == PYSHMEM_ERR_TIMEOUT);  // nobody drains
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  REQUIRE(waited >= 0.2 && waited < 5.0);
  // A request larger than the ring is refused at once.
  FifoRing tiny(1, 1000000000ull);
  REQUIRE(tiny.fifo()->capacity == 4);
  pyshmem_fifo_entry five[5] = {};
  REQUIRE(fifo_push(tiny.fifo(), five, 5, &t) == PYSHMEM_ERR_INVALID_ARG);
  // Completion waits are bounded too.
  REQUIRE(pyshmem::detail::fifo_wait_counter(ring.fifo(), &ring.fifo()->tail, 1) == PYSHMEM_ERR_TIMEOUT);
}

void test_failed_proxy_releases_producers() {
  FifoRing ring(4, 60ull * 1000000000ull);
  pyshmem_fifo_entry req[3];
  const int k = make_request(0, 1, req);
  uint64_t t = 0;
  REQUIRE(fifo_push(ring.fifo(), req, k, &t) == PYSHMEM_SUCCESS);
  std::atomic<int> status{-1};
  std::thread waiter([&] {
    uint64_t t2 = 0;
    status = fifo_push(ring.fifo(), req, k, &t2);  // ring full: waits for the proxy
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(status.load() == -1);
  const auto t0 = Clock::now();
  ring.fail(PYSHMEM_ERR_SYSTEM, "proxy: put request: transport failed");
  waiter.join();
  REQUIRE(status.load() == PYSHMEM_ERR_SYSTEM);
  REQUIRE(std::chrono::duration<double>(Clock::now() - t0).count() < 5.0);
  REQUIRE(std::strcmp(ring.fifo()->message, "proxy: put request: transport failed") == 0);
}

void test_completion_counters_and_malformed() {
  FifoRing ring(16, 1000000000ull);
  pyshmem_proxy_fifo* f = ring.fifo();
  pyshmem_fifo_entry req[3], got[3];
  uint64_t t = 0;
  const int k = make_request(0, 0, req);  // PUT: 2 slots
  REQUIRE(k == 2 && fifo_push(f, req, k, &t) == PYSHMEM_SUCCESS);
  REQUIRE(ring.poll(got) == 2);
  ring.retire(2, false);  // executed but not yet complete at the target
  REQUIRE(f->tail == 2 && f->done == 0);
  REQUIRE(fifo_push(f, req, k, &t) == PYSHMEM_SUCCESS && t == 2);
  REQUIRE(ring.poll(got) == 2);
  ring.retire(2, true);  // complete, but an earlier request is not: done stays behind
  REQUIRE(f->tail == 4 && f->done == 0);
  ring.mark_complete();  // a transport quiet completed everything
  REQUIRE(f->done == 4);
  pyshmem_fifo_entry bad = entry(0, pyshmem_fifo_header_w1(0x7f, 0, 0));
  REQUIRE(fifo_push(f, &bad, 1, &t) == PYSHMEM_SUCCESS);
  REQUIRE(ring.poll(got) == -1);  // an unknown kind is reported, not executed
}

}  // namespace

int main() {
  test_full_ring_times_out();
  test_failed_proxy_releases_producers();
  test_completion_counters_and_malformed();
  test_many_producers();
  test_result_cells();
  std::printf("test_proxy_fifo: OK\n");
  return 0;
}
