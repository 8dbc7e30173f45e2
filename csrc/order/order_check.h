// order/order_check.h: the ordering-check mode (PYSHMEM_ORDER_CHECK=1), between the
// host API and the proxy above and the transports below.
//
// On the shared-memory path a put is a memcpy that is visible at once, so a program that
// forgets a fence or a quiet works here and breaks on a GPU or across nodes. In this
// mode the operations the memory model lets complete late really do: puts (blocking
// too: only quiet promises remote visibility), non-blocking gets, atomics without a
// fetched result and signals toward other PEs are held, and applied later (at this PE's
// later pyshmem calls, while it waits, or when a call needs them) in an order drawn
// from a seeded generator among the orders OpenSHMEM 1.5 allows:
//  - operations toward one PE issued after a fence are applied after those before it;
//  - put_signal applies its data before its signal;
//  - atomics on one address from this PE are applied in issue order (a fetching one
//    after the held ones): one ordered channel carries them on every transport pyshmem
//    targets (per-location coherence on a GPU, UCX's atomic lane). Atomics and puts,
//    or puts to overlapping bytes, are not ordered without a fence (UCX stripes puts
//    over lanes);
//  - quiet (so barrier_all, barrier(team), clear_lock, finalize) applies everything;
//  - a blocking get or fetching atomic toward a PE is performed after the operations
//    toward that PE that a fence put before it;
//  - nothing else orders them: sync_all/sync(team) and collectives complete no puts.
// An operation applied before one issued earlier to the same PE (a reordering) keeps
// the overtaken one back for PYSHMEM_ORDER_CHECK_DELAY_US, so that a consumer who acts
// on the early one really sees the late one missing.
//
// Only user operations come here (host API entry points and the proxy's execution of
// device-API requests, which this mode routes through the proxy for every peer);
// runtime traffic (barrier and team counters, collectives, hang reports) goes straight
// to the transports. Operations a PE issues toward itself are not held.
//
// Thread safety: one mutex; the entry points may be called from any thread (the proxy
// thread included). Errors of a transport while applying a held operation are thrown
// from the call that applied it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/state.h"

namespace pyshmem {

struct AmoArgs;

// True when operations of this PE toward `pe` are held by the ordering check.
inline bool order_holds(const State& s, int pe) { return s.order != nullptr && pe != s.pe; }

// Init (after the transports are set up): starts the mode when PYSHMEM_ORDER_CHECK=1.
// The generator is seeded from PYSHMEM_ORDER_CHECK_SEED (drawn when empty) and the PE.
// Throws INVALID_ARG with the cuda backend (GPU memory is not checked; mixing held host
// operations with GPU ones that complete at once would report false failures).
void order_check_start(State& s);
// Finalize, after the final barrier has applied everything: stops the mode.
void order_check_stop(State& s);
// The job's seed as a decimal string ("" when the mode is off).
std::string order_check_seed();

// Held operations. `dest`/`src`/`sig` on the remote side are symmetric addresses in this
// PE's heap, as for the transports. A blocking put copies its source now (it may be
// reused on return); a put_nbi reads it when applied (it must not change before quiet).
void order_put(State& s, void* dest, const void* src, size_t nbytes, int pe, bool nbi);
// Strided put: element i (elem bytes) from src + i*sst_bytes to dest + i*tst_bytes.
void order_iput(State& s, void* dest, const void* src, ptrdiff_t tst_bytes, ptrdiff_t sst_bytes, size_t nelems,
                size_t elem, int pe);
// get_nbi: `dest` (local) is written when applied, at the latest by quiet.
void order_get_nbi(State& s, void* dest, const void* src, size_t nbytes, int pe);
// An atomic without fetch, or a fetching nbi atomic (a.fetch is written when applied).
// Operations on the runtime's own words (the system area) are applied at once.
void order_amo(State& s, const AmoArgs& a);
// put_signal: the data (a blocking put: copied now) and the signal update `sig`, the
// signal applied after the data. With nbytes 0 (a strided put_signal, whose data went
// as an iput just before), the signal follows everything held toward sig.pe.
void order_put_signal(State& s, void* dest, const void* src, size_t nbytes, const AmoArgs& sig);
// Before a blocking get or fetching atomic toward pe: applies what a fence ordered
// before it, and for a fetching atomic (amo_dest: its target) the held atomics on the
// same address (and, at random, some of what was issued since).
void order_blocking(State& s, int pe, const void* amo_dest = nullptr);
// fence: later operations toward each PE are applied after the earlier ones.
void order_fence(State& s);
// quiet: applies every held operation (not with the test hook's "quiet" removed).
void order_quiet(State& s);
// Applies every held operation, test hook or not (finalize, before its barrier).
void order_drain(State& s);
// Delivers some held operations (waits, the idle proxy). Returns how many.
unsigned order_progress();

// Test hook (pyshmem._testing.break_guarantee): removes one guarantee so that the test
// written for it can be shown to fail. `what`: "fence", "quiet", "put_signal" (the
// fence between data and signal) or "" (restore all). Affects the transports' own
// fence/quiet too, so the normal mode loses the guarantee as well. Returns false for an
// unknown name.
bool order_break_guarantee(const std::string& what);

// Bits of the guarantees the test hook removed (0 normally: one relaxed load per check).
enum : uint32_t { kBrokenFence = 1, kBrokenQuiet = 2, kBrokenPutSignal = 4 };
extern std::atomic<uint32_t> g_broken_guarantees;
inline bool order_guarantee_broken(uint32_t bit) {
  return (g_broken_guarantees.load(std::memory_order_relaxed) & bit) != 0;
}

}  // namespace pyshmem
