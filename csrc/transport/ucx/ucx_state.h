// transport/ucx/ucx_state.h: the UCX transport's state and the helpers its files share
// (ucx.cpp: setup, RMA, fence, quiet and the transport table; ucx_amo.cpp: atomics).
// Internal to the transport: nothing outside csrc/transport/ucx/ includes it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "transport/transport.h"
#include "transport/ucx/ucp_lib.h"

namespace pyshmem {
namespace ucx_impl {

// Kept requests (see keep_pending) at which the completed ones are first freed.
constexpr size_t kReapAt = 4096;
// Bytes of kept puts that may be in flight: one more waits (progressing the worker)
// until at most half are. UCX queues what the network cannot take yet, and a deep queue
// is slow to drain: over tcp (two hosts, 64 KiB puts) ucx_perftest itself gave 4.9-5.0
// GB/s with up to 4 or 16 puts outstanding, 3.8 with 64 and 1.9 with 256; pyshmem's
// 2,000 put_nbi before a quiet ran at 2.3.
constexpr size_t kInFlightBytes = 1 << 20;

struct Ucx {
  const ucx::Ucp* u = nullptr;
  ucp_context_h ctx = nullptr;
  ucp_worker_h worker = nullptr;
  std::vector<ucp_ep_h> ep;  // per PE, null for PEs not reached by UCX
  // The registered heaps: the host heap, and the GPU heap with the cuda backend.
  struct Segment {
    uint64_t my_base = 0, size = 0;
    ucp_mem_h memh = nullptr;
    std::vector<ucp_rkey_h> rkey;  // per PE
    std::vector<uint64_t> base;    // per PE: its segment's address in its own process
  };
  std::vector<Segment> seg;
  // The GPU heap is CUDA memory to UCX (not host memory, as with the test driver): the
  // target's CPU cannot do atomics there, only a NIC can (see gpu_amo_check).
  bool gpu_seg_is_cuda = false;
  std::mutex amo_mu;
  std::vector<std::string> gpu_amo_problem;  // per PE; "?" until the endpoint was queried
  // Set by operations that may still be in flight to their target after their request
  // completed (puts, non-fetching atomics); quiet flushes only then, and only the
  // endpoints marked in dirty_pe (so a flush that cannot finish names its PE).
  std::atomic<bool> dirty{false};
  std::unique_ptr<std::atomic<uint8_t>[]> dirty_pe;
  // Requests that complete by the next quiet: non-blocking puts, small blocking puts
  // (from a copy of the source that lives here until then), and atomic sets (a SWAP
  // whose old value nobody reads: its reply buffer lives here).
  struct Pending {
    void* req;
    int pe;
    std::unique_ptr<char[]> buf;
    size_t bytes;  // a put's payload (counted against kInFlightBytes), else 0
  };
  std::mutex pending_mu;
  std::vector<Pending> pending;
  size_t pending_bytes = 0;  // sum of pending[i].bytes (under pending_mu)
  size_t reap_at = kReapAt;  // kept requests at which the completed ones are freed (under pending_mu)
  double timeout_s = 120;
  int efd = -1;  // the worker's event fd (owned by UCX), -1 without one
  ucs_status_t failed_pending = UCS_OK;  // a kept request freed before its quiet failed (under pending_mu)
};

extern Ucx g;  // one context and worker per process, like the runtime state

const ucx::Ucp& lib();

// Throws the transport's error for `st` (unlocated: the API call that reached UCX puts
// its name and PE in front); an unreachable peer gets PYSHMEM_ERR_BOOTSTRAP.
[[noreturn]] void ucx_fail(const char* what, ucs_status_t st, int pe = -1);
void check(const char* what, ucs_status_t st, int pe = -1);  // ucx_fail unless UCS_OK

// One ucp_worker_progress; returns the events it handled (the runtime's progress hook).
unsigned progress_hook();

using Clock = std::chrono::steady_clock;
Clock::time_point deadline_from_now();  // now + PYSHMEM_TRANSPORT_TIMEOUT

// Waits for a UCP request (progressing the worker) and frees it. A request still
// pending at `deadline` is left to UCX (RMA requests cannot be cancelled) and the wait
// fails with PYSHMEM_ERR_TIMEOUT naming `pe`. Null (completed in place) returns at once.
void wait(const char* what, ucs_status_ptr_t req, int pe, Clock::time_point deadline);
void wait(const char* what, ucs_status_ptr_t req, int pe);  // deadline_from_now()

// Marks `pe` as written since the last quiet (before the operation is issued, so a
// concurrent quiet either flushes it or leaves the mark for the next one).
void mark_dirty(int pe);

// Where symmetric `sym` (an address in one of my registered heaps) is on PE pe.
struct Remote {
  uint64_t addr;
  ucp_rkey_h rkey;
};
Remote remote(const void* sym, int pe);

// Keeps an issued request (and the buffer it reads or writes) for the next quiet: what
// ucp_*_nbx returned for `what` toward `pe`; null (completed in place) is dropped with
// `buf`, an error pointer throws (ucx_fail).
// `bytes`: a put's payload; kept puts beyond kInFlightBytes make this wait until the
// oldest complete (bounded by the transport timeout).
void keep_pending(const char* what, ucs_status_ptr_t req, int pe, std::unique_ptr<char[]> buf, size_t bytes = 0);

// The transport table's atomics (ucx_amo.cpp).
std::string ucx_gpu_atomics_check(State& s, int pe);
void ucx_amo(State& s, const AmoArgs& a);

}  // namespace ucx_impl
}  // namespace pyshmem
