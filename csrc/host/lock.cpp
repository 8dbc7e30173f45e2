// host/lock.cpp: OpenSHMEM distributed locks as a ticket lock.
//
// The lock word is PE 0's copy of the symmetric int64: the high 32 bits hand out
// tickets, the low 32 bits say which ticket is served. Tickets make the lock fair (FIFO)
// and need one fetch-add to take a ticket plus polling of one word.
#include "core/backoff.h"
#include "host/check.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

constexpr int kHome = 0;
constexpr uint64_t kTicket = 1ull << 32;

uint64_t fetch_word(State& s, int64_t* lock) {
  uint64_t v = 0;
  s.route[kHome]->amo(s, AmoArgs{PYSHMEM_AMO_FETCH, PYSHMEM_UINT64, lock, nullptr, nullptr, &v, kHome});
  return v;
}

bool cas_word(State& s, int64_t* lock, uint64_t expect, uint64_t desired) {
  uint64_t old = 0;
  s.route[kHome]->amo(s, AmoArgs{PYSHMEM_AMO_COMPARE_SWAP, PYSHMEM_UINT64, lock, &desired, &expect, &old, kHome});
  return old == expect;
}

void check_lock(const char* call, int64_t* lock) {
  require_init(call);
  require_symmetric(call, "lock", lock, sizeof(int64_t));
  if (reinterpret_cast<uintptr_t>(lock) % 8) fail(PYSHMEM_ERR_INVALID_ARG, call, "lock is not 8-byte aligned; allocate locks with pyshmem.new_lock()");
}

}  // namespace

void set_lock(int64_t* lock, const char* call) {
  check_lock(call, lock);
  State& s = state();
  uint64_t old = 0;
  s.route[kHome]->amo(s, AmoArgs{PYSHMEM_AMO_ADD, PYSHMEM_UINT64, lock, &kTicket, nullptr, &old, kHome});
  const uint32_t mine = static_cast<uint32_t>(old >> 32);
  if (static_cast<uint32_t>(old) == mine) return;
  const WaitInfo info{call, lock, -1, -1, 0, kHome};  // waits for its ticket's turn
  const WaitScope scope(info);
  Backoff backoff(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
  try {
    while (static_cast<uint32_t>(fetch_word(s, lock)) != mine) backoff.pause();
  } catch (...) {
    // Interrupted (Ctrl-C) while queued: the ticket cannot be returned, so wait for
    // our turn without further interrupts and pass the lock on at once; otherwise every
    // later set_lock would wait forever for this ticket.
    Backoff finish(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
    finish.uninterruptible();
    while (static_cast<uint32_t>(fetch_word(s, lock)) != mine) finish.pause();
    clear_lock(lock, call);
    throw;
  }
}

bool test_lock(int64_t* lock, const char* call) {
  check_lock(call, lock);
  State& s = state();
  uint64_t w = fetch_word(s, lock);
  if (static_cast<uint32_t>(w >> 32) != static_cast<uint32_t>(w)) return false;  // held or queued
  return cas_word(s, lock, w, w + kTicket);
}

void clear_lock(int64_t* lock, const char* call) {
  check_lock(call, lock);
  State& s = state();
  quiet();  // updates made under the lock complete before the next holder gets it
  for (;;) {
    uint64_t w = fetch_word(s, lock);
    if (static_cast<uint32_t>(w >> 32) == static_cast<uint32_t>(w))
      fail(PYSHMEM_ERR_INVALID_ARG, call,
           "the lock is not held; call clear_lock once, after set_lock (or a test_lock that returned False) on "
           "the same lock");
    uint64_t next = (w & ~0xffffffffull) | static_cast<uint32_t>(static_cast<uint32_t>(w) + 1);
    if (cas_word(s, lock, w, next)) return;
  }
}

}  // namespace pyshmem
