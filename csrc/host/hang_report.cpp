// host/hang_report.cpp: the report PYSHMEM_TIMEOUT prints when a wait lasts too long.
//
// Installed as core's g_hang_hook by init (core/hang.h keeps the records it reads).
#include "host/hang_report.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/backoff.h"
#include "core/state.h"
#include "core/trace.h"
#include "heap/allocator.h"
#include "host/host.h"
#include "pyshmem/compare.h"
#include "pyshmem/pyshmem.h"
#include "transport/transport.h"

namespace pyshmem {

namespace {

const char* op_name(int kind) {
  switch (kind) {
    case PYSHMEM_OP_PUT: return "put";
    case PYSHMEM_OP_GET: return "get";
    case PYSHMEM_OP_AMO: return "atomic";
    case PYSHMEM_OP_SIGNAL: return "signal";
    default: return "operation";
  }
}

const char* cmp_text(int cmp) {
  switch (cmp) {
    case PYSHMEM_CMP_EQ: return "==";
    case PYSHMEM_CMP_NE: return "!=";
    case PYSHMEM_CMP_GT: return ">";
    case PYSHMEM_CMP_LE: return "<=";
    case PYSHMEM_CMP_LT: return "<";
    case PYSHMEM_CMP_GE: return ">=";
    default: return "?";
  }
}

// Signed value of `bits` read as dtype (wait variables are 16/32/64-bit integers).
std::string value_text(uint64_t bits, int dtype) {
  char buf[32];
  switch (dtype) {
    case PYSHMEM_INT16: std::snprintf(buf, sizeof buf, "%d", static_cast<int16_t>(bits)); break;
    case PYSHMEM_INT32: std::snprintf(buf, sizeof buf, "%d", static_cast<int32_t>(bits)); break;
    case PYSHMEM_INT64: std::snprintf(buf, sizeof buf, "%" PRId64, static_cast<int64_t>(bits)); break;
    case PYSHMEM_UINT16: std::snprintf(buf, sizeof buf, "%u", static_cast<uint16_t>(bits)); break;
    case PYSHMEM_UINT32: std::snprintf(buf, sizeof buf, "%u", static_cast<uint32_t>(bits)); break;
    default: std::snprintf(buf, sizeof buf, "%" PRIu64, bits);
  }
  return buf;
}

// "allocation #3 (8 bytes at heap offset 0x10000), element +0" or the system area.
std::string object_text(const State& s, uint64_t offset) {
  if (offset == UINT64_MAX) return "";
  char buf[160];
  size_t start = 0, size = 0;
  uint64_t serial = 0;
  if (offset < kSysAreaBytes) {
    std::snprintf(buf, sizeof buf, "pyshmem's barrier counters (system area +%" PRIu64 ")", offset);
  } else if (s.alloc && s.alloc->find(offset, &start, &size, &serial)) {
    std::snprintf(buf, sizeof buf, "allocation #%" PRIu64 " (%zu bytes at heap offset 0x%zx), byte +%" PRIu64, serial,
                  size, start, offset - start);
  } else if (offset >= static_cast<uint64_t>(s.heap.size - s.team_pool_bytes)) {
    std::snprintf(buf, sizeof buf, "a team's synchronisation slot (heap offset 0x%" PRIx64 ")", offset);
  } else {
    std::snprintf(buf, sizeof buf, "heap offset 0x%" PRIx64 " (not a live allocation)", offset);
  }
  return buf;
}

// PE p's wait record and operation ring: its own memory on this node, a get otherwise.
bool read_records(State& s, int p, pyshmem_sys_wait* wait, std::vector<pyshmem_sys_op>* ops, uint64_t* count) {
  SysArea* mine = s.heap.sys(s.pe);
  if (p == s.pe || s.heap.peer_base[p]) {
    const SysArea* a = s.heap.sys(p);
    std::memcpy(wait, &a->wait, sizeof *wait);
    *count = __atomic_load_n(&a->op_count, __ATOMIC_ACQUIRE);
    ops->assign(a->ops, a->ops + PYSHMEM_SYS_OP_RING);
    return true;
  }
  try {  // across nodes: the same offsets in PE p's segment (symmetric)
    s.route[p]->get(s, wait, &mine->wait, sizeof *wait, p);
    s.route[p]->get(s, count, &mine->op_count, sizeof *count, p);
    ops->resize(PYSHMEM_SYS_OP_RING);
    s.route[p]->get(s, ops->data(), mine->ops, sizeof(pyshmem_sys_op) * PYSHMEM_SYS_OP_RING, p);
    return true;
  } catch (...) {
    return false;
  }
}

// The value the wait compares, as it is now on PE p (its own copy of the object).
bool current_value(State& s, int p, const pyshmem_sys_wait& w, uint64_t* out) {
  if (w.offset == UINT64_MAX || w.dtype < 0) return false;
  const size_t bytes = PYSHMEM_DTYPE_SIZE(w.dtype);
  if (bytes == 0 || bytes > 8) return false;
  uint64_t v = 0;
  void* sym = s.heap.my_base + w.offset;
  try {
    if (p == s.pe || s.heap.peer_base[p]) std::memcpy(&v, s.heap.peer_addr(sym, s.pe, p), bytes);
    else s.route[p]->get(s, &v, sym, bytes, p);
  } catch (...) {
    return false;
  }
  *out = v;
  return true;
}

std::string seconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(ns) / 1e9);
  return buf;
}

// check_global_exit answers the probe two words after the global-exit word.
static_assert(offsetof(SysArea, hang_probe) == offsetof(SysArea, global_exit) + 2 * sizeof(uint64_t),
              "core/backoff.h's check_global_exit finds hang_probe next to global_exit");

constexpr int64_t kProbeNs = 1000000000;  // how long PEs on other nodes get to answer the probe

// Whether a PE runs: its wait record alone cannot tell a PE computing outside pyshmem
// from one whose threads do not run at all (SIGSTOP, a debugger).
enum Liveness { kRuns, kStopped, kSilent };

// PE p's copy of the system-area word `mine` points into: a load on this node, a get otherwise.
bool peer_word(State& s, int p, const uint64_t* mine, uint64_t* out) {
  try {
    if (p == s.pe || s.heap.peer_base[p]) {
      *out = __atomic_load_n(reinterpret_cast<const uint64_t*>(s.heap.peer_addr(mine, s.pe, p)), __ATOMIC_ACQUIRE);
    } else {
      s.route[p]->get(s, out, mine, sizeof *out, p);
    }
    return true;
  } catch (...) {
    return false;
  }
}

// The state letter of process `pid` in /proc (R, S, D, T, t, ...); 0 when unknown.
char process_state(uint64_t pid) {
  char path[48], buf[512];
  std::snprintf(path, sizeof path, "/proc/%" PRIu64 "/stat", pid);
  FILE* f = pid ? std::fopen(path, "r") : nullptr;
  if (!f) return 0;
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* end = std::strrchr(buf, ')');  // "pid (comm) S ...": comm may hold anything
  return end && end[1] == ' ' ? end[2] : 0;
}

// A PE on this node is looked up in /proc (its pid is in its system area). Those on
// other nodes are asked (hang_probe = 1) and given kProbeNs to answer (2): their
// check_global_exit answers, which their waits and their proxy thread (always running
// there: other nodes need it) pass every few microseconds.
std::vector<Liveness> liveness(State& s) {
  std::vector<Liveness> out(s.npes, kRuns);
  uint64_t* word = &s.heap.sys(s.pe)->hang_probe;  // symmetric: the same offset on every PE
  const uint64_t ask = 1;
  std::vector<int> asked;
  for (int p = 0; p < s.npes; ++p) {
    if (p == s.pe || !s.route[p]) continue;
    if (s.heap.peer_base[p]) {
      const char st = process_state(s.heap.sys(p)->pid);
      if (st == 'T' || st == 't') out[p] = kStopped;
      continue;
    }
    try {
      s.route[p]->amo(s, AmoArgs{PYSHMEM_AMO_SET, PYSHMEM_UINT64, word, &ask, nullptr, nullptr, p});
      asked.push_back(p);
      out[p] = kSilent;  // until it answers
    } catch (...) {
    }
  }
  for (const int64_t until = monotonic_ns() + kProbeNs; !asked.empty() && monotonic_ns() < until; usleep(1000)) {
    std::vector<int> still;
    for (const int p : asked) {
      uint64_t v = 0;
      if (peer_word(s, p, word, &v) && v == 2) out[p] = kRuns;
      else still.push_back(p);
    }
    asked.swap(still);
  }
  return out;
}

// One PE's line: what it waits for. `w.call` is NUL-terminated by the caller.
std::string wait_line(State& s, int p, const pyshmem_sys_wait& w, Liveness live, bool same_node, int64_t now) {
  const std::string why = live == kStopped ? "is stopped (SIGSTOP or a debugger): it cannot act until continued"
                          : live == kSilent ? "did not answer within " + seconds(kProbeNs) +
                                                  ": it may be stopped (SIGSTOP, a debugger) or stuck in native code"
                                            : "";
  if (!w.active)
    return (why.empty() ? "not waiting in pyshmem (running its own code, or already past the wait)" : why) + "\n";
  std::string out = std::string("waits in ") + w.call;
  if (same_node) out += " for " + seconds(now - w.since_ns);
  const std::string obj = object_text(s, w.offset);
  if (!obj.empty()) out += " on " + obj;
  if (w.cmp >= 0) {
    out += " until it is " + std::string(cmp_text(w.cmp)) + " " + value_text(w.value, w.dtype);
    uint64_t v;
    if (current_value(s, p, w, &v)) out += "; it holds " + value_text(v, w.dtype);
  }
  if (w.peer >= 0) out += "; needs PE " + std::to_string(w.peer) + " to act";
  if (!why.empty()) out += "; it " + why;
  return out + "\n";
}

std::string build_report(State& s, int64_t waited_ns) {
  const std::vector<Liveness> live = liveness(s);  // first: `now` is for the records read after it
  const int64_t now = monotonic_ns();
  const int me = s.pe;
  struct Records {
    bool ok = false;
    pyshmem_sys_wait wait{};
    std::vector<pyshmem_sys_op> ops;
    uint64_t count = 0;
  };
  std::vector<Records> r(s.npes);
  for (int p = 0; p < s.npes; ++p) {
    r[p].ok = read_records(s, p, &r[p].wait, &r[p].ops, &r[p].count);
    r[p].wait.call[sizeof r[p].wait.call - 1] = '\0';
  }
  std::string out = "pyshmem: PYSHMEM_TIMEOUT=" + seconds(g_hang_timeout_ns) + " expired on PE " + std::to_string(me) +
                    " after waiting " + seconds(waited_ns) + " in " +
                    (r[me].wait.active ? r[me].wait.call : "a pyshmem wait") +  // published by hang_expired
                    ". What every PE is doing:\n";
  for (int p = 0; p < s.npes; ++p) {
    const bool same_node = s.node_of_pe.empty() || s.node_of_pe[p] == s.node_of_pe[me];
    out += "  PE " + std::to_string(p) + ": ";
    if (!r[p].ok) {
      out += "(its records cannot be read: the PE is unreachable)\n";
      continue;
    }
    out += wait_line(s, p, r[p].wait, live[p], same_node, now);
    // Its last operations (newest first), marking those on an object a PE waits on.
    std::string lines;
    const uint64_t n = std::min<uint64_t>(r[p].count, PYSHMEM_SYS_OP_RING);
    for (uint64_t k = 0; k < std::min<uint64_t>(n, 4); ++k) {
      const pyshmem_sys_op& op = r[p].ops[(r[p].count - 1 - k) % PYSHMEM_SYS_OP_RING];
      lines += std::string("      ") + op_name(op.kind) + " of " + std::to_string(op.bytes) + " bytes to PE " +
               std::to_string(op.pe) + " on " + object_text(s, op.offset);
      if (same_node) lines += ", " + seconds(now - op.t_ns) + " ago";
      if (op.pe >= 0 && op.pe < s.npes && r[op.pe].wait.active && r[op.pe].wait.offset == op.offset)
        lines += "  <- what PE " + std::to_string(op.pe) + " waits on";
      lines += "\n";
    }
    if (r[p].count > 0)
      out += "    its last operations (newest first, " + std::to_string(r[p].count) + " recorded):\n" + lines;
    else
      out += "    it issued no put, get, atomic or signal since init (GPU kernels' operations are not "
             "recorded)\n";
  }
  out += "A wait that nobody can satisfy is a missing put/signal/atomic or a PE that never arrives. "
         "Every PE's Python stack follows (faulthandler). Unset PYSHMEM_TIMEOUT for unbounded waits.\n";
  return out;
}

}  // namespace

void device_wait_hook(int phase, const char* call, const void* object, int32_t dtype, int32_t cmp, uint64_t value,
                      int32_t peer, uint64_t waited_ns) {
  if (phase == PYSHMEM_WAIT_POLL) {
    check_global_exit();
    return;
  }
  if (phase == PYSHMEM_WAIT_END) {
    hang_clear_wait();
    return;
  }
  // "pyshmem::" marks the device API in the report (the host API's calls are "pyshmem.").
  char name[32];
  std::snprintf(name, sizeof name, "pyshmem::%s", call ? call : "wait");
  const WaitInfo info{name, object, dtype, cmp, value, peer};
  hang_publish(&info);
  if (phase == PYSHMEM_WAIT_EXPIRED) hang_expired(static_cast<int64_t>(waited_ns));
}

void device_note_op(int32_t kind, int32_t pe, const void* sym, uint64_t bytes) {
  hang_note_op(kind, pe, sym, static_cast<size_t>(bytes));
  if (g_trace_on) {
    const int64_t now = monotonic_ns();
    trace_record(kTraceDevice, op_name(kind), pe, bytes, now, now);
  }
}

void hang_init(State& s) {
  const double t = s.config.TIMEOUT;
  g_hang_timeout_ns = t > 0 ? static_cast<int64_t>(t * 1e9) : 0;
  g_record_ops = g_hang_timeout_ns > 0;
  g_hang_hook = hang_expired;
  s.heap.sys(s.pe)->pid = static_cast<uint64_t>(getpid());  // for a report on this node
  // shmemrun sends SIGUSR1 to ask every PE for its Python stack (pyshmem's Python layer
  // installs faulthandler for it); a PE without a handler (a C program) must not die
  // of that request.
  struct sigaction old {};
  if (s.config.LAUNCHER == "shmemrun" && sigaction(SIGUSR1, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
      old.sa_handler == SIG_DFL)
    signal(SIGUSR1, SIG_IGN);
}

void hang_expired(int64_t waited_ns) {
  State& s = state();
  static std::atomic<bool> reporting{false};
  if (reporting.exchange(true)) {  // another thread of this PE reports; it ends the process
    for (;;) pause();
  }
  hang_publish_wait();  // a no-op when already published
  // One report per job: the first PE to time out claims PE 0's word; the others wait
  // for its global exit (and report themselves only if it never comes).
  uint64_t claimed = 0;
  const uint64_t mine = static_cast<uint64_t>(s.pe) + 1, zero = 0;
  try {
    uint64_t* word = &s.heap.sys(s.pe)->hang_claim;
    s.route[0]->amo(s, AmoArgs{PYSHMEM_AMO_COMPARE_SWAP, PYSHMEM_UINT64, word, &mine, &zero, &claimed, 0});
  } catch (...) {
    claimed = 0;
  }
  if (claimed != 0 && claimed != mine) {
    const int64_t until = monotonic_ns() + 10 * 1000000000LL;
    while (monotonic_ns() < until) {
      check_global_exit();
      usleep(10000);
    }
  }
  const std::string report = build_report(s, waited_ns);
  fflush(stdout);
  ssize_t ignored = write(2, report.data(), report.size());
  (void)ignored;
  global_exit(kHangExitStatus);
}

}  // namespace pyshmem
