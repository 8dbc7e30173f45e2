// proxy/fifo.h: the consumer side of the proxy FIFO (protocol in pyshmem/proxy_fifo.h;
// producers push with pyshmem/device/proxy.cuh).
//
// FifoRing owns the ring's memory and is driven by exactly one consumer thread: poll()
// returns the request at the tail once all its slots are written, retire() publishes
// that it has been executed. No locks: producers and the consumer meet only in the
// slots' lap flags and the head/tail/done counters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pyshmem/proxy_fifo.h"

namespace pyshmem {

// Where a ring's memory comes from: ordinary memory for host producers, pinned host
// memory mapped into the GPU for kernels (the CUDA backend provides that one).
struct RingMemory {
  void* (*alloc)(size_t bytes);  // 64-byte aligned, or null on failure
  void (*free)(void* p);
};

class FifoRing {
 public:
  // capacity: slots, rounded up to a power of two (at least PYSHMEM_FIFO_MAX_SLOTS).
  // memory: null for ordinary memory (host producers: the ring gets a doorbell), else
  // the GPU's pinned memory (GPU producers, who cannot ring one).
  FifoRing(uint32_t capacity, uint64_t timeout_ns, const RingMemory* memory = nullptr);
  ~FifoRing();
  FifoRing(const FifoRing&) = delete;
  FifoRing& operator=(const FifoRing&) = delete;

  pyshmem_proxy_fifo* fifo() { return f_; }

  // Copies the request at the tail into req (PYSHMEM_FIFO_MAX_SLOTS entries, lap flags
  // cleared) and returns its slot count, or 0 when no complete request is there yet.
  // Returns -1 for a malformed header (unknown kind). Idempotent until retire().
  int poll(pyshmem_fifo_entry* req) const;

  // The polled request of k slots is executed: tail += k. When `complete` (and nothing
  // before it is still incomplete) done follows tail.
  void retire(int k, bool complete);

  // Everything executed so far is complete at its target (after a transport quiet).
  void mark_complete();

  // Ticket of the polled request (the consumer's tail).
  uint64_t ticket() const { return tail_; }

  // Hands the result of the fetching request with ticket t to its producer through
  // the request's cell, first waiting (up to the ring's timeout) for the cell's
  // previous owner to take its value. Returns false on timeout.
  bool put_result(uint64_t t, uint64_t value);

  // No request reserved and unexecuted (tail == head).
  bool idle() const;

  // Idle wait of the consumer: up to `ns`, until a producer rings the doorbell (rings
  // with one), or until one of `fds` (n of them: transports' armed event fds) becomes
  // readable. Returns at once when a request is already waiting.
  void doze(long ns, const int* fds = nullptr, int n = 0);

  // Wakes a dozing consumer (used when stopping it).
  void ring_doorbell();

  // Records a failure: producers' waits return `status` and can print `message`.
  void fail(int status, const std::string& message);

 private:
  pyshmem_proxy_fifo* f_ = nullptr;
  pyshmem_fifo_entry* entries_ = nullptr;
  void (*free_)(void*) = nullptr;  // releases f_'s block
  uint64_t tail_ = 0;  // consumer's copy of f_->tail
};

}  // namespace pyshmem
