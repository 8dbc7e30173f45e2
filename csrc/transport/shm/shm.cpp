// transport/shm/shm.cpp: same-node PEs by load/store on their mapped heap segments.
//
// put/get are memcpy; they complete locally on return. Because glibc's memcpy uses
// non-temporal stores for large copies, and those are weakly ordered even on x86,
// fence and quiet are full fences (mfence on x86), not just compiler barriers.
#include <atomic>
#include <cstring>

#include "core/state.h"
#include "transport/shm/atomic_ops.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

inline char* peer_addr(const State& s, const void* sym, int pe) { return s.heap.peer_addr(sym, s.pe, pe); }

bool shm_available(std::string*) { return true; }

bool shm_can_reach(const State& s, int pe) { return s.heap.peer_base[pe] != nullptr; }

void shm_put(State& s, void* dest, const void* src, size_t n, int pe) { std::memcpy(peer_addr(s, dest, pe), src, n); }

void shm_get(State& s, void* dest, const void* src, size_t n, int pe) { std::memcpy(dest, peer_addr(s, src, pe), n); }

void shm_amo(State& s, const AmoArgs& a) { amo_local(a.op, a.dtype, peer_addr(s, a.dest, a.pe), a.value, a.cond, a.fetch); }

void shm_fence(State&) { std::atomic_thread_fence(std::memory_order_seq_cst); }

void shm_quiet(State&) { std::atomic_thread_fence(std::memory_order_seq_cst); }

}  // namespace

const Transport kShmTransport = {"shm",   kCapLoadStore | kCapRma | kCapAmo,
                                 shm_available, shm_can_reach, shm_put, shm_get, shm_amo, shm_fence, shm_quiet,
                                 nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

}  // namespace pyshmem
