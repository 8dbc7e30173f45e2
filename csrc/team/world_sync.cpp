// team/world_sync.cpp: the barrier over all PEs (team_sync of the world team, and the
// host API's barrier_all/sync_all).
//
// A dissemination barrier over per-round counters in every PE's system area: in round k
// PE i bumps round-k counter of PE (i + 2^k) mod n and waits until its own round-k
// counter reaches the number of barriers it has entered. Counters only grow, so nothing
// is reset between barriers; ceil(log2 n) rounds. The device API's barrier_all counts in
// the same counters (pyshmem/device/sync.cuh), so host and device barriers may alternate.
#include "core/backoff.h"
#include "core/hang.h"
#include "core/state.h"
#include "team/team.h"
#include "transport/transport.h"

namespace pyshmem {

void world_sync(State& s, const char* call) {
  SysArea* mine = s.heap.sys(s.pe);
  const uint64_t epoch = ++mine->barrier_epoch;  // shared with the device API's barrier
  if (s.npes == 1) return;
  const uint64_t one = 1;
  int round = 0;
  for (int dist = 1; dist < s.npes && round < PYSHMEM_SYS_BARRIER_ROUNDS; dist <<= 1, ++round) {
    int to = (s.pe + dist) % s.npes;
    // Symmetric address of the counter: same offset in every PE's system area.
    s.route[to]->amo(s, AmoArgs{PYSHMEM_AMO_ADD, PYSHMEM_UINT64, &mine->barrier[round].value, &one, nullptr,
                                nullptr, to});
    uint64_t* flag = &mine->barrier[round].value;
    if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) >= epoch) continue;
    // The PE that signals this round is the one `dist` behind.
    const WaitInfo info{call, flag, PYSHMEM_UINT64, PYSHMEM_CMP_GE, epoch, (s.pe - dist % s.npes + s.npes) % s.npes};
    const WaitScope scope(info);
    Backoff backoff(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < epoch) backoff.pause();
  }
}

}  // namespace pyshmem
