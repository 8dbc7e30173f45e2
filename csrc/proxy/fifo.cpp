// proxy/fifo.cpp: the consumer side of the proxy FIFO.
#include "proxy/fifo.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace pyshmem {
namespace {

uint64_t load_acquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void store_release(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

uint32_t round_capacity(uint32_t want) {
  uint32_t cap = 4;  // >= PYSHMEM_FIFO_MAX_SLOTS
  while (cap < want && cap < (1u << 30)) cap <<= 1;
  return cap;
}

void* aligned_alloc64(size_t bytes) {
  void* p = nullptr;
  return posix_memalign(&p, 64, bytes) == 0 ? p : nullptr;
}

}  // namespace

// One block: the control struct, then the slots, then the result cells.
FifoRing::FifoRing(uint32_t capacity, uint64_t timeout_ns, const RingMemory* memory) {
  static_assert(PYSHMEM_FIFO_MAX_SLOTS <= 4, "round_capacity's minimum must hold the longest request");
  static_assert(sizeof(pyshmem_proxy_fifo) % 16 == 0, "slots follow the control struct");
  const uint32_t cap = round_capacity(capacity);
  const size_t bytes = sizeof(pyshmem_proxy_fifo) + (sizeof(pyshmem_fifo_entry) + sizeof(pyshmem_fifo_cell)) * cap;
  void* mem = memory ? memory->alloc(bytes) : aligned_alloc64(bytes);
  if (!mem) throw std::bad_alloc();
  free_ = memory ? memory->free : std::free;
  std::memset(mem, 0, bytes);  // lap 0 expects the flag set; cells start free
  f_ = static_cast<pyshmem_proxy_fifo*>(mem);
  entries_ = reinterpret_cast<pyshmem_fifo_entry*>(f_ + 1);
  f_->capacity = cap;
  f_->timeout_ns = timeout_ns;
  f_->entries = entries_;
  f_->cells = reinterpret_cast<pyshmem_fifo_cell*>(entries_ + cap);
  f_->doorbell_fd = -1;
  if (!memory) {
    f_->doorbell_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (f_->doorbell_fd < 0) {
      free_(f_);
      throw std::bad_alloc();  // out of file descriptors
    }
  }
}

FifoRing::~FifoRing() {
  if (f_->doorbell_fd >= 0) ::close(f_->doorbell_fd);
  free_(f_);
}

bool FifoRing::put_result(uint64_t t, uint64_t value) {
  pyshmem_fifo_cell& c = f_->cells[t & (f_->capacity - 1)];
  // The previous owner has not taken its value yet: it is waiting for it, so this is short.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(f_->timeout_ns);
  for (unsigned i = 1; load_acquire(&c.ticket) != 0; ++i) {
    if ((i & 1023) != 0) continue;
    if (std::chrono::steady_clock::now() > deadline) return false;
    sched_yield();
  }
  __atomic_store_n(&c.value, value, __ATOMIC_RELAXED);
  store_release(&c.ticket, t + 1);
  return true;
}

int FifoRing::poll(pyshmem_fifo_entry* req) const {
  const uint32_t cap = f_->capacity;
  const pyshmem_fifo_entry& h = entries_[tail_ & (cap - 1)];
  const uint64_t w1 = load_acquire(&h.w1);
  if ((w1 & PYSHMEM_FIFO_FLAG) != pyshmem_fifo_lap_flag(tail_, cap)) return 0;
  const int k = pyshmem_fifo_kind_slots(pyshmem_fifo_header_kind(w1));
  if (k == 0) return -1;
  req[0].w0 = __atomic_load_n(&h.w0, __ATOMIC_RELAXED);  // ordered by the acquire above
  req[0].w1 = w1 & PYSHMEM_FIFO_PAYLOAD_MASK;
  for (int i = 1; i < k; ++i) {
    const uint64_t t = tail_ + static_cast<uint64_t>(i);
    const pyshmem_fifo_entry& e = entries_[t & (cap - 1)];
    const uint64_t ew1 = load_acquire(&e.w1);
    if ((ew1 & PYSHMEM_FIFO_FLAG) != pyshmem_fifo_lap_flag(t, cap)) return 0;  // producer mid-write
    req[i].w0 = __atomic_load_n(&e.w0, __ATOMIC_RELAXED);
    req[i].w1 = ew1 & PYSHMEM_FIFO_PAYLOAD_MASK;
  }
  return k;
}

void FifoRing::retire(int k, bool complete) {
  const uint64_t before = tail_;
  tail_ += static_cast<uint64_t>(k);
  // done first: a waiter that sees the new tail must not find done lagging behind it
  // for a request that is complete.
  if (complete && load_acquire(&f_->done) == before) store_release(&f_->done, tail_);
  store_release(&f_->tail, tail_);
}

void FifoRing::mark_complete() { store_release(&f_->done, tail_); }

bool FifoRing::idle() const { return load_acquire(&f_->head) == tail_; }

void FifoRing::doze(long ns, const int* fds, int n) {
  __atomic_store_n(&f_->proxy_sleeping, 1u, __ATOMIC_SEQ_CST);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);  // pairs with the producer's fence after publishing
  pyshmem_fifo_entry req[PYSHMEM_FIFO_MAX_SLOTS];
  if (poll(req) == 0) {
    pollfd p[8];
    int k = 0;
    if (f_->doorbell_fd >= 0) p[k++] = {f_->doorbell_fd, POLLIN, 0};
    for (int i = 0; i < n && k < 8; ++i) p[k++] = {fds[i], POLLIN, 0};
    const timespec ts{ns / 1000000000L, ns % 1000000000L};
    if (k) {
      ::ppoll(p, static_cast<nfds_t>(k), &ts, nullptr);
    } else {
      ::nanosleep(&ts, nullptr);
    }
    uint64_t rings = 0;
    if (f_->doorbell_fd >= 0) {
      const ssize_t got = ::read(f_->doorbell_fd, &rings, sizeof rings);  // non-blocking: EAGAIN when unrung
      (void)got;
    }
  }
  __atomic_store_n(&f_->proxy_sleeping, 0u, __ATOMIC_RELAXED);
}

void FifoRing::ring_doorbell() {
  if (f_->doorbell_fd < 0) return;
  const uint64_t one = 1;
  const ssize_t wrote = ::write(f_->doorbell_fd, &one, sizeof one);
  (void)wrote;
}

void FifoRing::fail(int status, const std::string& message) {
  std::strncpy(f_->message, message.c_str(), sizeof f_->message - 1);
  f_->message[sizeof f_->message - 1] = '\0';
  __atomic_store_n(&f_->status, static_cast<uint32_t>(status), __ATOMIC_RELEASE);
}

}  // namespace pyshmem
