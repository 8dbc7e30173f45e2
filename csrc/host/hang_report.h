// host/hang_report.h: PYSHMEM_TIMEOUT's report (records: core/hang.h).
#pragma once

#include <cstdint>

#include "core/hang.h"

namespace pyshmem {

struct State;

// Reads PYSHMEM_TIMEOUT and installs hang_expired as core's hang hook; called by init
// once the heap (and its system area) and the transports exist.
void hang_init(State& s);

// A wait of the calling thread has lasted `waited_ns` > PYSHMEM_TIMEOUT: reads every
// PE's records, prints the report to stderr and ends the job through global_exit with
// kHangExitStatus. One PE reports per job (the first to claim PE 0's hang word).
[[noreturn]] void hang_expired(int64_t waited_ns);

}  // namespace pyshmem
