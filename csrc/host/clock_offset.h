// host/clock_offset.h: every PE's PYSHMEM_TRACE clock against PE 0's, estimated at init,
// so that `python -m pyshmem trace` and `pyshmem.model replay` put the traces of PEs on
// different hosts (different CLOCK_MONOTONIC origins) on one time line.
#pragma once

namespace pyshmem {

struct State;

// Collective over all PEs, at the end of init. When every PE traces, PE 0 runs
// kClockRounds timestamp round trips with each other PE in turn, over the PEs' routes
// (a tagged set into the peer's system area, answered with the peer's trace clock and
// a tagged set back), the principle of NTP and IEEE 1588: for the round with the
// smallest delay d = t4 - t1, offset = t2 - (t1 + t4) / 2, uncertainty d / 2 (exact
// when the two directions take equally long). Each PE's trace header then holds its
// own offset and uncertainty (trace_set_clock); PE 0's are 0. When some PE does not
// trace, nobody measures (the estimates stay "not estimated"). Throws what a transport
// or the bootstrap throws; its waits are bounded by PYSHMEM_TIMEOUT like any other.
void trace_clock_estimate(State& s);

constexpr int kClockRounds = 16;

}  // namespace pyshmem
