// pyshmem/device/sync.cuh: signals, waits, ordering and barriers from device code.
//
// Ordering (docs/memory_model.md): fence() orders this thread's puts/AMOs/signals per
// PE; quiet() completes them (for load/store peers both are a system-scope fence; for
// peers behind the proxy, fence relies on in-order execution and quiet waits for the
// proxy to complete every earlier request).
// put_signal makes the data visible before the signal. wait_until, test and
// signal_wait_until are acquire operations. barrier_all = quiet + barrier over all PEs
// and, on the CPU build, shares its counters with the host API's barrier_all, so host and
// device barriers may alternate (but not run concurrently on one PE). On a GPU the
// kernels' barriers count in the GPU heap's system area and host code's in the host
// heap's: each sequence is the same on every PE, so each stays consistent.
#pragma once

#include "pyshmem/device/amo.cuh"
#include "pyshmem/device/common.cuh"

namespace pyshmem {
inline namespace device_api {

PYSHMEM_HD void fence() {
  detail::fence_system();
  detail::proxy_fence();
}
PYSHMEM_HD void quiet() {
  detail::fence_system();
  detail::proxy_quiet("quiet");
}

namespace detail {
// A comparison other than PYSHMEM_CMP_* would never hold: a wait would hang and a test
// answer 0 for ever, so it traps naming the call instead.
PYSHMEM_HD void check_cmp(const char* call, int cmp) {
  if (cmp < PYSHMEM_CMP_EQ || cmp > PYSHMEM_CMP_GE)
    trap(call, "cmp must be one of PYSHMEM_CMP_EQ/NE/GT/LE/LT/GE (NVSHMEM_CMP_*)", -1);
}
}  // namespace detail

// ---- signals ----
// Updates sig_addr on pe: PYSHMEM_SIGNAL_SET stores, PYSHMEM_SIGNAL_ADD adds.
PYSHMEM_HD void signal_op(uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {
  if (sig_op != PYSHMEM_SIGNAL_ADD && sig_op != PYSHMEM_SIGNAL_SET)
    detail::trap("signal_op", "sig_op must be PYSHMEM_SIGNAL_SET or PYSHMEM_SIGNAL_ADD", pe);
  if (uint64_t* a = detail::direct_atomic("signal_op", sig_addr, pe, PYSHMEM_OP_SIGNAL)) {
    if (sig_op == PYSHMEM_SIGNAL_ADD) detail::sys_atomic<uint64_t>(*a).fetch_add(signal, detail::kSeqCst);
    else detail::sys_atomic<uint64_t>(*a).store(signal, detail::kSeqCst);
    return;
  }
  detail::proxy_amo<uint64_t>("signal_op", sig_op == PYSHMEM_SIGNAL_ADD ? PYSHMEM_AMO_ADD : PYSHMEM_AMO_SET, sig_addr,
                              signal, 0, pe, false);
}

// The local value of a signal (acquire).
PYSHMEM_HD uint64_t signal_fetch(const uint64_t* sig_addr) {
  return detail::sys_atomic<uint64_t>(*const_cast<uint64_t*>(sig_addr)).load(cuda::std::memory_order_acquire);
}

// Blocks until the local signal compares `cmp` to value; returns the signal's value.
PYSHMEM_HD uint64_t signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t value) {
  detail::check_cmp("signal_wait_until", cmp);
  const detail::WaitDesc w{"signal_wait_until", sig_addr, PYSHMEM_UINT64, cmp, value, -1};
  detail::Backoff b;
  for (;;) {
    uint64_t v = signal_fetch(sig_addr);
    if (detail::compare_t(v, cmp, value)) return v;
    b.pause(w);
  }
}

namespace detail {
template <Coop C>
PYSHMEM_HD void putmem_signal_impl(const char* call, void* dest, const void* source, size_t nbytes,
                                   uint64_t* sig_addr, uint64_t signal, int sig_op, int pe, bool nbi) {
  coop_same_args<C>(call, PYSHMEM_U64(dest), PYSHMEM_U64(source), nbytes,
                    PYSHMEM_U64(sig_addr) ^ (static_cast<uint64_t>(pe) << 48) ^ (static_cast<uint64_t>(sig_op) << 40),
                    signal);
  if (sig_op != PYSHMEM_SIGNAL_ADD && sig_op != PYSHMEM_SIGNAL_SET)
    trap(call, "sig_op must be PYSHMEM_SIGNAL_SET or PYSHMEM_SIGNAL_ADD", pe);
  note_op(PYSHMEM_OP_PUT, pe, dest, nbytes);
  if (void* d = direct_ptr(call, dest, pe)) {
    copy_bytes<C>(d, source, nbytes);  // synchronises the group
    if (coop_rank<C>() == 0) {
      fence_system();  // the data before the signal
      signal_op(sig_addr, signal, sig_op, pe);
    }
  } else {
    coop_sync<C>();
    // One request: the proxy puts, fences, then signals.
    if (coop_rank<C>() == 0) {
      note_op(PYSHMEM_OP_SIGNAL, pe, sig_addr, sizeof(uint64_t));
      proxy_put_signal(call, dest, source, nbytes, sig_addr, signal, sig_op, pe, !nbi);
    }
  }
  coop_sync<C>();
}
}  // namespace detail

// putmem_signal (bytes) and put_signal (nelems of T), blocking and _nbi, for a thread,
// a warp (_warp) and a block (_block).
#define PYSHMEM_DEFINE_PUT_SIGNAL(NBI, SUFFIX, LEVEL, IS_NBI)                                        \
  PYSHMEM_HD void putmem_signal##NBI##SUFFIX(void* dest, const void* source, size_t nbytes,         \
                                             uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) { \
    detail::putmem_signal_impl<Coop::LEVEL>("putmem_signal" #NBI #SUFFIX, dest, source, nbytes, sig_addr,   \
                                            signal, sig_op, pe, IS_NBI);                               \
  }                                                                                                  \
  template <class T>                                                                                 \
  PYSHMEM_HD void put_signal##NBI##SUFFIX(T* dest, const T* source, size_t nelems, uint64_t* sig_addr, \
                                          uint64_t signal, int sig_op, int pe) {                      \
    putmem_signal##NBI##SUFFIX(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);      \
  }
PYSHMEM_FOR_EACH_COOP_NBI(PYSHMEM_DEFINE_PUT_SIGNAL)
#undef PYSHMEM_DEFINE_PUT_SIGNAL

// ---- point-to-point synchronisation on local symmetric variables ----
template <class T>
PYSHMEM_HD int test(T* ivar, int cmp, T cmp_value) {
  detail::check_cmp("test", cmp);
  T v = detail::sys_atomic<T>(*ivar).load(cuda::std::memory_order_acquire);
  return detail::compare_t(v, cmp, cmp_value) ? 1 : 0;
}
template <class T>
PYSHMEM_HD void wait_until(T* ivar, int cmp, T cmp_value) {
  detail::check_cmp("wait_until", cmp);
  const detail::WaitDesc w{"wait_until", ivar, detail::dtype_of<T>(), cmp, detail::to_bits(cmp_value), -1};
  detail::Backoff b;
  while (!test(ivar, cmp, cmp_value)) b.pause(w);
}

// ---- barriers ----
namespace detail {
// Dissemination barrier over the counters in every PE's system area (same algorithm
// and counters as the host API's barrier, csrc/host/sync.cpp).
PYSHMEM_HD void barrier_rounds(const char* call) {
  const pyshmem_device_state& s = state();
  auto* base = reinterpret_cast<char*>(s.heap_base);
  auto* mine = reinterpret_cast<pyshmem_sys_area*>(base + static_cast<uint64_t>(s.my_pe) * s.heap_stride);
  const uint64_t epoch = ++mine->barrier_epoch;  // only this PE writes its epoch
  int round = 0;
  for (int dist = 1; dist < s.n_pes && round < PYSHMEM_SYS_BARRIER_ROUNDS; dist <<= 1, ++round) {
    const int to = (s.my_pe + dist) % s.n_pes;
    // The arrival goes to `to`'s copy of my counter (symmetric, in the system area).
    uint64_t* arrive = &mine->barrier[round].value;
    if (!(s.flags & PYSHMEM_STATE_PROXY_ALL) && (s.peer_flags[to] & PYSHMEM_PEER_LOAD_STORE)) {
      auto* peer = reinterpret_cast<pyshmem_sys_area*>(base + static_cast<uint64_t>(to) * s.heap_stride);
      sys_atomic<uint64_t>(peer->barrier[round].value).fetch_add(1, kSeqCst);
    } else {
      proxy_amo<uint64_t>(call, PYSHMEM_AMO_ADD, arrive, 1, 0, to, false);
    }
    const WaitDesc w{call, nullptr, -1, -1, 0, (s.my_pe + s.n_pes - dist) % s.n_pes};  // whose arrival this is
    Backoff b;
    while (sys_atomic<uint64_t>(mine->barrier[round].value).load(cuda::std::memory_order_acquire) < epoch) b.pause(w);
  }
}

template <Coop C>
PYSHMEM_HD void barrier_impl(const char* call, bool complete_puts) {
  coop_sync<C>();
  if (coop_rank<C>() == 0) {
    if (complete_puts) {
      fence_system();
      proxy_quiet(call);
    }
    barrier_rounds(call);
  }
  coop_sync<C>();
}
}  // namespace detail

// Collective over all PEs: one thread (or one warp/block with the variants) per PE.
#define PYSHMEM_DEFINE_BARRIER_ALL(SUFFIX, LEVEL)                                                   \
  PYSHMEM_HD void barrier_all##SUFFIX() { detail::barrier_impl<Coop::LEVEL>("barrier_all" #SUFFIX, true); } \
  PYSHMEM_HD void sync_all##SUFFIX() { detail::barrier_impl<Coop::LEVEL>("sync_all" #SUFFIX, false); }
PYSHMEM_FOR_EACH_COOP(PYSHMEM_DEFINE_BARRIER_ALL)
#undef PYSHMEM_DEFINE_BARRIER_ALL

}  // namespace device_api
}  // namespace pyshmem
