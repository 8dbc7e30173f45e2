// core/trace.h: PYSHMEM_TRACE=dir: a per-PE timeline of API calls, waits, collectives
// and proxy operations, for `python -m pyshmem trace dir` (pyshmem/trace.py).
//
// Events go to a fixed ring in memory (PYSHMEM_TRACE_EVENTS, the newest kept) and reach
// dir/trace-pe<k>.bin at finalize, at a global exit (PYSHMEM_TIMEOUT included) and on
// SIGTERM (the launcher ending a job), written with async-signal-safe calls only. With
// tracing off every site costs one test of g_trace_on.
//
// File layout (little-endian; pyshmem/trace_file.py reads it): an 80-byte TraceHeader, then
// `names` NUL-padded 48-byte event names, then min(count, capacity) TraceEvents, oldest
// first.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pyshmem {

struct State;

enum TraceKind : uint16_t {
  kTraceRma = 1,     // put/get (and their nbi and strided forms)
  kTraceAmo = 2,     // atomics
  kTraceSignal = 3,  // put_signal
  kTraceWait = 4,    // a wait that did not succeed at once (wait_until, signal wait, barrier round, lock, quiet)
  kTraceColl = 5,    // a collective (barrier_all, sync, broadcast, reduce ...)
  kTraceProxy = 6,   // a device-API request executed by the proxy thread
  // Instants (t0 == t1), for where a round trip's time goes (pyshmem/trace_phases.py):
  kTraceDevice = 7,    // a CPU-build kernel thread issued a device-API operation
  kTraceProgress = 8,  // a transport progress call handled work (bytes: events it reported)
};

struct TraceEvent {
  int64_t t0_ns, t1_ns;  // CLOCK_MONOTONIC
  uint64_t bytes;
  uint32_t name;  // index into the file's name table
  int32_t peer;   // target PE, -1 when none
  uint16_t kind;  // TraceKind
  uint16_t thread;  // 0: the PE's first thread to record, then 1, 2 ... (the proxy has its own)
  uint32_t pad;
};
static_assert(sizeof(TraceEvent) == 40, "the trace file's event record");

struct TraceHeader {
  char magic[8];      // "PYSHTRC1"
  uint32_t version;   // 2 (1: 64 bytes, without the clock fields)
  int32_t pe, npes;
  uint32_t names;     // entries of the name table
  uint64_t count;     // events recorded (the ring keeps the last `capacity`)
  uint64_t capacity;
  int64_t t_sync_ns;  // CLOCK_MONOTONIC when init's final barrier returned
  uint64_t node;      // hash of the node's id: PEs with equal values share a clock (a
                      // PYSHMEM_TRACE_TEST_CLOCK_SKEW_NS clock gets a value of its own)
  uint64_t pad;
  // This PE's trace clock minus PE 0's, estimated at init (host/clock_offset.h), and
  // the estimate's uncertainty (half the fastest round trip); -1 when not estimated.
  int64_t clock_offset_ns;
  int64_t clock_uncertainty_ns;
};
static_assert(sizeof(TraceHeader) == 80, "the trace file's header");

extern bool g_trace_on;

// The trace's clock: CLOCK_MONOTONIC, shifted by PYSHMEM_TRACE_TEST_CLOCK_SKEW_NS.
int64_t trace_now_ns();
// Stores the clock-offset estimate in the header (written at every flush).
void trace_set_clock(int64_t offset_ns, int64_t uncertainty_ns);

// Reads PYSHMEM_TRACE / PYSHMEM_TRACE_EVENTS at the end of init.
void trace_init(State& s);
// Writes dir/trace-pe<k>.bin (again at every call: the newest state wins).
void trace_flush();

void trace_record(TraceKind kind, const char* name, int peer, uint64_t bytes, int64_t t0_ns, int64_t t1_ns);

// Records [construction, destruction) as one event when tracing.
class TraceSpan {
 public:
  TraceSpan(TraceKind kind, const char* name, int peer, uint64_t bytes);
  ~TraceSpan();
  void set_bytes(uint64_t bytes) { bytes_ = bytes; }
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  int64_t t0_ = 0;
  const char* name_;
  uint64_t bytes_;
  int peer_;
  TraceKind kind_;
};

}  // namespace pyshmem
