// core/trace.cpp: the PYSHMEM_TRACE ring and its file (see core/trace.h).
#include "core/trace.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/hang.h"
#include "core/state.h"

namespace pyshmem {

bool g_trace_on = false;

namespace {

int64_t g_skew_ns = 0;  // PYSHMEM_TRACE_TEST_CLOCK_SKEW_NS

constexpr int kMaxNames = 256;
constexpr size_t kNameBytes = 48;

struct Trace {
  std::vector<TraceEvent> ring;
  std::atomic<uint64_t> count{0};
  // Interned names: pointers seen (fast path) and their text (what the file holds).
  std::atomic<int> names{0};
  const char* name_ptr[kMaxNames] = {};
  char name_text[kMaxNames][kNameBytes] = {};
  std::atomic_flag name_lock = ATOMIC_FLAG_INIT;
  std::atomic<int> threads{0};
  TraceHeader header{};
  char path[4096] = {};
};
Trace* g_trace = nullptr;
thread_local int t_thread = -1;
struct sigaction g_old_term {};

uint32_t intern(const char* name) {
  Trace& t = *g_trace;
  const int n = t.names.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (t.name_ptr[i] == name) return static_cast<uint32_t>(i);
  while (t.name_lock.test_and_set(std::memory_order_acquire)) {
  }
  // One entry per distinct pointer (equal texts at two addresses get two entries; the
  // reader merges them by text).
  int m = t.names.load(std::memory_order_relaxed);
  int found = -1;
  for (int i = 0; i < m && found < 0; ++i)
    if (t.name_ptr[i] == name) found = i;
  if (found < 0 && m < kMaxNames) {
    std::snprintf(t.name_text[m], kNameBytes, "%s", name);
    t.name_ptr[m] = name;
    found = m;
    t.names.store(m + 1, std::memory_order_release);
  }
  t.name_lock.clear(std::memory_order_release);
  return found < 0 ? kMaxNames - 1 : static_cast<uint32_t>(found);  // the table is full: last name
}

void write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::write(fd, c, n);
    if (w <= 0) return;
    c += w;
    n -= static_cast<size_t>(w);
  }
}

// Creates `dir` and its missing parents (as `mkdir -p`; PEs racing to create it agree).
// Returns "" or what went wrong, naming the path that could not be made.
std::string make_dirs(const std::string& dir) {
  for (size_t end = 1; end <= dir.size(); ++end) {
    if (end < dir.size() && dir[end] != '/') continue;
    const std::string part = dir.substr(0, end);
    struct stat st {};
    if (::stat(part.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return "cannot create the directory " + part + ": it exists and is not a directory";
      continue;
    }
    if (::mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
      return "cannot create the directory " + part + " (" + std::strerror(errno) + ")";
  }
  return "";
}

void on_sigterm(int sig) {
  trace_flush();
  sigaction(sig, &g_old_term, nullptr);  // then whatever SIGTERM did before (usually: end)
  raise(sig);
}

}  // namespace

void trace_init(State& s) {
  const std::string& dir = s.config.TRACE;
  if (dir.empty() || g_trace) return;
  const long long n = s.config.TRACE_EVENTS;
  if (n < 1 || n > (1LL << 28))
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init", "PYSHMEM_TRACE_EVENTS=" + std::to_string(n) + " must be in 1..2^28");
  const std::string made = make_dirs(dir);
  if (!made.empty())
    fail(PYSHMEM_ERR_SYSTEM, "pyshmem.init",
         "PYSHMEM_TRACE=" + dir + ": " + made + "; set PYSHMEM_TRACE to a directory you can write, or unset it");
  auto* t = new Trace();  // leaked on purpose: flushed from exit paths and signal handlers
  t->ring.resize(static_cast<size_t>(n));
  std::snprintf(t->path, sizeof t->path, "%s/trace-pe%d.bin", dir.c_str(), s.pe);
  std::memcpy(t->header.magic, "PYSHTRC1", 8);
  t->header.version = 2;
  t->header.pe = s.pe;
  t->header.npes = s.npes;
  t->header.capacity = static_cast<uint64_t>(n);
  g_skew_ns = s.config.TRACE_TEST_CLOCK_SKEW_NS;
  t->header.t_sync_ns = trace_now_ns();
  t->header.clock_offset_ns = -1;
  t->header.clock_uncertainty_ns = -1;
  // A test-skewed clock is its own clock domain, as another host's would be.
  t->header.node = std::hash<std::string>{}(g_skew_ns ? s.node_id + "/test-clock-skew" : s.node_id);
  const int fd = ::open(t->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    fail(PYSHMEM_ERR_SYSTEM, "pyshmem.init",
         "PYSHMEM_TRACE=" + dir + ": cannot write " + t->path + " (" + std::strerror(errno) +
             "); set PYSHMEM_TRACE to a directory you can write, or unset it");
  ::close(fd);
  g_trace = t;
  g_trace_on = true;
  struct sigaction sa {};
  sa.sa_handler = on_sigterm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, nullptr, &g_old_term);
  if (!(g_old_term.sa_flags & SA_SIGINFO) && g_old_term.sa_handler == SIG_DFL) sigaction(SIGTERM, &sa, nullptr);
}

int64_t trace_now_ns() { return monotonic_ns() + g_skew_ns; }

void trace_set_clock(int64_t offset_ns, int64_t uncertainty_ns) {
  if (!g_trace) return;
  g_trace->header.clock_offset_ns = offset_ns;
  g_trace->header.clock_uncertainty_ns = uncertainty_ns;
}

void trace_record(TraceKind kind, const char* name, int peer, uint64_t bytes, int64_t t0_ns, int64_t t1_ns) {
  Trace* t = g_trace;
  if (!t) return;
  t0_ns += g_skew_ns;  // callers read CLOCK_MONOTONIC; the file holds the trace's clock
  t1_ns += g_skew_ns;
  if (t_thread < 0) t_thread = t->threads.fetch_add(1, std::memory_order_relaxed);
  const uint64_t k = t->count.fetch_add(1, std::memory_order_relaxed);
  TraceEvent& e = t->ring[k % t->ring.size()];
  e.t0_ns = t0_ns;
  e.t1_ns = t1_ns;
  e.bytes = bytes;
  e.name = intern(name ? name : "?");
  e.peer = peer;
  e.kind = kind;
  e.thread = static_cast<uint16_t>(t_thread);
}

void trace_flush() {
  Trace* t = g_trace;
  if (!t) return;
  const int fd = ::open(t->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  TraceHeader h = t->header;
  h.count = t->count.load(std::memory_order_acquire);
  h.names = static_cast<uint32_t>(t->names.load(std::memory_order_acquire));
  write_all(fd, &h, sizeof h);
  write_all(fd, t->name_text, kNameBytes * h.names);
  const uint64_t cap = t->ring.size();
  if (h.count <= cap) {
    write_all(fd, t->ring.data(), sizeof(TraceEvent) * h.count);
  } else {  // oldest first: from the slot after the newest around to it
    const uint64_t start = h.count % cap;
    write_all(fd, t->ring.data() + start, sizeof(TraceEvent) * (cap - start));
    write_all(fd, t->ring.data(), sizeof(TraceEvent) * start);
  }
  ::close(fd);
}

TraceSpan::TraceSpan(TraceKind kind, const char* name, int peer, uint64_t bytes)
    : name_(name), bytes_(bytes), peer_(peer), kind_(kind) {
  if (g_trace_on) t0_ = monotonic_ns();
}

TraceSpan::~TraceSpan() {
  if (t0_) trace_record(kind_, name_, peer_, bytes_, t0_, monotonic_ns());
}

}  // namespace pyshmem
