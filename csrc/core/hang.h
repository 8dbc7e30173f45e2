// core/hang.h: PYSHMEM_TIMEOUT: waits that explain themselves.
//
// Layering: this file (core) keeps the records; host/hang_report.cpp reads every PE's
// records, prints the report and ends the job (it needs the heap, the transports and
// global_exit), and is installed as g_hang_hook at init.
//
// Every PE keeps, in its own system area (pyshmem/device_state.h), what it is waiting
// for (a pyshmem_sys_wait record, written when a wait stops spinning, so fast waits
// cost nothing) and, while PYSHMEM_TIMEOUT or tracing is on, a ring of the last
// operations it issued (pyshmem_sys_op). A wait that lasts longer than PYSHMEM_TIMEOUT
// seconds (Backoff checks it between polls) stops the job: the PE reads every PE's
// records (load/store on the node, a transport get across nodes), prints one report
// naming who waits in which call on which symmetric object, the condition and the
// current value, and what the others last issued toward it, then ends every PE
// through global_exit with status kHangExitStatus.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pyshmem {

struct State;

// Exit status of a job stopped by PYSHMEM_TIMEOUT (every PE exits with it).
constexpr int kHangExitStatus = 124;

// 0 when PYSHMEM_TIMEOUT is unset (waits are unbounded, as OpenSHMEM requires).
extern int64_t g_hang_timeout_ns;
// Operations are recorded in the ring (PYSHMEM_TIMEOUT set).
extern bool g_record_ops;

// The report (host/hang_report.cpp, installed by init): called by Backoff when a wait
// has lasted `waited_ns` > g_hang_timeout_ns. Never returns.
using hang_hook_t = void (*)(int64_t waited_ns);
extern hang_hook_t g_hang_hook;

// CLOCK_MONOTONIC in nanoseconds.
int64_t monotonic_ns();

// What a wait is about; recorded when it stops spinning (Backoff's slow path). The
// object is a symmetric address of this PE (null: none), `value` the comparison value
// (its bits), `peer` the PE whose action would end the wait (-1: any).
struct WaitInfo {
  const char* call;
  const void* object;
  int dtype;  // pyshmem dtype code of the object, or -1
  int cmp;    // PYSHMEM_CMP_*, or -1
  uint64_t value;
  int peer;
};

// Marks the calling thread as waiting for `info` until destruction (nests: the inner
// wait is the one reported).
class WaitScope {
 public:
  explicit WaitScope(const WaitInfo& info);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  const WaitInfo* prev_;
  int64_t trace_t0_ = 0;  // PYSHMEM_TRACE: the wait is one event
};

// Publishes the calling thread's current wait in this PE's system area, once per wait
// (Backoff calls it when it stops spinning).
void hang_publish_wait();
// Publishes `info` (copied) as the calling thread's wait: for waits that are not in a
// WaitScope (the device API's CPU build, through the device state's wait_hook).
void hang_publish(const WaitInfo* info);
// Clears the published wait (the wait ended).
void hang_clear_wait();

// Records an operation this PE issued toward `pe` on symmetric address `sym` (kind: a
// PYSHMEM_OP_* code of device_state.h). Cheap and a no-op unless g_record_ops.
void hang_note_op_slow(int kind, int pe, const void* sym, size_t bytes);
inline void hang_note_op(int kind, int pe, const void* sym, size_t bytes) {
  if (g_record_ops) hang_note_op_slow(kind, pe, sym, bytes);
}

// The heap offset of symmetric address `sym` in this PE's segment (UINT64_MAX: none).
uint64_t hang_heap_offset(const void* sym);

}  // namespace pyshmem
