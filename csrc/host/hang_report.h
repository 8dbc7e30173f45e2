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

// The device state's wait_hook (pyshmem/device_state.h): device-API waits of the CPU
// build publish, clear and expire through it, so the report covers them too.
void device_wait_hook(int phase, const char* call, const void* object, int32_t dtype, int32_t cmp, uint64_t value,
                      int32_t peer, uint64_t waited_ns);

// The device state's note_op: records a device-API operation in this PE's ring.
void device_note_op(int32_t kind, int32_t pe, const void* sym, uint64_t bytes);

}  // namespace pyshmem
