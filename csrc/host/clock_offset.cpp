// host/clock_offset.cpp: the init-time trace clock estimate (see clock_offset.h).
#include "host/clock_offset.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/backoff.h"
#include "core/hang.h"
#include "core/state.h"
#include "core/trace.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

constexpr const char* kCall = "pyshmem.init (trace clock offsets)";

// Sets `pe`'s copy of the symmetric system-area word `sym` and completes it, so the
// next word set after it arrives after it.
void set_word(State& s, void* sym, uint64_t value, int pe) {
  s.route[pe]->amo(s, AmoArgs{PYSHMEM_AMO_SET, PYSHMEM_UINT64, sym, &value, nullptr, nullptr, pe});
  if (s.route[pe]->quiet) s.route[pe]->quiet(s);
}

void wait_word(State& s, const uint64_t* word, uint64_t value, int peer) {
  if (__atomic_load_n(word, __ATOMIC_ACQUIRE) >= value) return;
  const WaitInfo info{kCall, word, PYSHMEM_UINT64, PYSHMEM_CMP_GE, value, peer};
  const WaitScope scope(info);
  Backoff backoff(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value) backoff.pause();
}

// Round r of PE k carries tag k << 32 | r: tags only grow, so a wait for ">= tag" never
// mistakes an earlier round's answer for this one's.
uint64_t tag(int pe, int round) { return static_cast<uint64_t>(pe) << 32 | static_cast<uint64_t>(round); }

}  // namespace

void trace_clock_estimate(State& s) {
  if (s.npes == 1) {
    trace_set_clock(0, 0);
    return;
  }
  const std::vector<std::string> tracing = s.boot->allgather(g_trace_on ? "1" : "0");
  for (const std::string& t : tracing)
    if (t != "1") return;
  SysArea* mine = s.heap.sys(s.pe);
  // offsets[k], uncertainties[k] in ns, PE 0's view; sent to every PE by one bcast.
  std::vector<int64_t> est(2 * static_cast<size_t>(s.npes), 0);
  if (s.pe == 0) {
    for (int k = 1; k < s.npes; ++k) {
      int64_t best_delay = INT64_MAX, best_offset = 0;
      for (int r = 1; r <= kClockRounds; ++r) {
        const int64_t t1 = trace_now_ns();
        set_word(s, &mine->clock_ping, tag(k, r), k);  // symmetric: PE k's copy
        wait_word(s, &mine->clock_pong, tag(k, r), k);
        const int64_t t4 = trace_now_ns();
        const int64_t t2 = __atomic_load_n(&mine->clock_stamp, __ATOMIC_ACQUIRE);
        if (t4 - t1 < best_delay) best_delay = t4 - t1, best_offset = t2 - t1 - (t4 - t1) / 2;
      }
      est[2 * k] = best_offset;
      est[2 * k + 1] = best_delay / 2;
    }
  } else {
    for (int r = 1; r <= kClockRounds; ++r) {
      wait_word(s, &mine->clock_ping, tag(s.pe, r), 0);
      const int64_t t2 = trace_now_ns();
      set_word(s, &mine->clock_stamp, static_cast<uint64_t>(t2), 0);  // PE 0's copy, completed first
      set_word(s, &mine->clock_pong, tag(s.pe, r), 0);
    }
  }
  std::string blob(est.size() * sizeof(int64_t), '\0');
  std::memcpy(blob.data(), est.data(), blob.size());
  blob = s.boot->bcast(blob, 0);
  if (blob.size() != est.size() * sizeof(int64_t)) return;  // cannot happen: PE 0 sent npes pairs
  std::memcpy(est.data(), blob.data(), blob.size());
  trace_set_clock(est[2 * s.pe], est[2 * s.pe + 1]);
}

}  // namespace pyshmem
