// core/hang.cpp: the records behind PYSHMEM_TIMEOUT's report (see core/hang.h).
#include "core/hang.h"

#include <time.h>

#include <cstdio>

#include "core/backoff.h"
#include "core/state.h"
#include "core/trace.h"

namespace pyshmem {

int64_t g_hang_timeout_ns = 0;
bool g_record_ops = false;
hang_hook_t g_hang_hook = nullptr;

namespace {

thread_local const WaitInfo* t_wait = nullptr;
thread_local bool t_published = false;

SysArea* my_sys() {
  const State& s = state();
  return s.pe >= 0 && s.heap.my_base ? s.heap.sys(s.pe) : nullptr;
}

}  // namespace

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

uint64_t hang_heap_offset(const void* sym) {
  const State& s = state();
  const char* p = static_cast<const char*>(sym);
  if (!p || !s.heap.my_base || p < s.heap.my_base || p >= s.heap.my_base + s.heap.size) return UINT64_MAX;
  return static_cast<uint64_t>(p - s.heap.my_base);
}

WaitScope::WaitScope(const WaitInfo& info) : prev_(t_wait) {
  t_wait = &info;
  if (g_trace_on) trace_t0_ = monotonic_ns();
}

WaitScope::~WaitScope() {
  if (t_published) hang_clear_wait();
  if (trace_t0_) trace_record(kTraceWait, t_wait->call, t_wait->peer, 0, trace_t0_, monotonic_ns());
  t_wait = prev_;
}

void hang_publish_wait() { hang_publish(t_wait); }

void hang_publish(const WaitInfo* info) {
  SysArea* a = my_sys();
  if (!a || t_proxy_thread || t_published) return;
  pyshmem_sys_wait w{};
  w.since_ns = monotonic_ns();
  w.offset = UINT64_MAX;
  w.dtype = w.cmp = w.peer = -1;
  std::snprintf(w.call, sizeof w.call, "%s", info ? info->call : "a pyshmem wait");
  if (info) {
    w.offset = hang_heap_offset(info->object);
    w.dtype = info->dtype;
    w.cmp = info->cmp;
    w.value = info->value;
    w.peer = info->peer;
  }
  a->wait = w;  // readers look at it only after `active` is set (release below)
  __atomic_store_n(&a->wait.active, 1, __ATOMIC_RELEASE);
  t_published = true;
}

void hang_clear_wait() {
  if (SysArea* a = my_sys()) __atomic_store_n(&a->wait.active, 0, __ATOMIC_RELEASE);
  t_published = false;
}

void hang_note_op_slow(int kind, int pe, const void* sym, size_t bytes) {
  SysArea* a = my_sys();
  if (!a) return;
  const uint64_t k = __atomic_fetch_add(&a->op_count, 1, __ATOMIC_ACQ_REL);
  pyshmem_sys_op& op = a->ops[k % PYSHMEM_SYS_OP_RING];
  op.t_ns = monotonic_ns();
  op.offset = hang_heap_offset(sym);
  op.bytes = bytes;
  op.kind = kind;
  op.pe = pe;
}

}  // namespace pyshmem
